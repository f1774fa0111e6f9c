"""Markdown tables of Ember's NTT against the one-pass floor and Phantom (same run, same device),
and of every schedule.

usage: python bench/compare_ntt.py bench_ntt.json [phantom_ntt.jsonl]
"""

import sys
from pathlib import Path

from ember.report.sources import load_sources
from ember.report.tables import ntt_schedules_table, ntt_table

src = load_sources([p for p in sys.argv[1:] if Path(p).exists()])  # peers optional
doc = src.latest("ntt")
print(ntt_table(doc, src.peer("phantom")).markdown())
print(ntt_schedules_table(doc).markdown())
