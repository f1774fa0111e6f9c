"""Markdown table of Ember's BFV or BGV operations against Phantom (same run, same device).

usage: python bench/compare_integer.py bench_bfv.json [phantom_bfv_bgv.jsonl]
Both sides are device time per operation: Ember's time_runs and Phantom's batch10_median_us.
"""

import sys
from pathlib import Path

from ember.report.sources import load_sources
from ember.report.tables import integer_table

src = load_sources([p for p in sys.argv[1:] if Path(p).exists()])  # peers optional
doc = (src.ember.get("bfv") or src.ember.get("bgv"))[-1]
print(integer_table(doc, src.peer("phantom")).markdown())
