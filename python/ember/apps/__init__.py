"""ARCTYREX's applications as shipped examples: C programs in examples/circuits compiled to CGGI
circuits, checked against their native build, run encrypted (see docs/applications.md)."""

from __future__ import annotations

from .cache import cache_dir, compile_cached
from .programs import APPS, App
from .runner import check_native, circuits_dir, compile_app, get_app, run_app

__all__ = [
    "APPS",
    "App",
    "cache_dir",
    "check_native",
    "circuits_dir",
    "compile_app",
    "compile_cached",
    "get_app",
    "run_app",
]
