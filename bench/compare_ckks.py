"""Markdown table of Ember's CKKS operations against Phantom and DESILO (same run, same device).

usage: python bench/compare_ckks.py bench_ckks.json [phantom_ckks.jsonl] [desilo_ckks.jsonl]
(`ember bench report` writes the same table with its figures; this is its command-line piece.)
"""

import sys
from pathlib import Path

from ember.report.sources import load_sources
from ember.report.tables import ckks_table

src = load_sources([p for p in sys.argv[1:] if Path(p).exists()])  # peers optional
print(ckks_table(src.latest("ckks"), src.peer("phantom"), src.peer("desilo")).markdown())
