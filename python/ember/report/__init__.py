"""Benchmark reports: Ember's figures beside its peers' from the same run, as Markdown tables and
PNG figures (`ember bench report`; matplotlib is needed for the figures)."""

from .build import KINDS, make_report
from .sources import load_sources
from .tables import Pair, Table

__all__ = ["KINDS", "Pair", "Table", "load_sources", "make_report"]
