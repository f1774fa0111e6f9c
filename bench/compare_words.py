"""Markdown tables of CKKS on 32- and 64-bit words (issue 33): Ember's bootstraps (``ember bench
boot`` JSON, one per preset) beside Cheddar's bootstrap from the same run, and HMult at the top
of N = 2^16 chains (``ember bench ckks32`` JSON) beside Phantom's sets (JSON lines).

    python bench/compare_words.py bench_boot_*.json bench_ckks32.json [cheddar_boot.jsonl] \\
        [phantom_ckks.jsonl]
"""

import sys
from pathlib import Path

from ember.report.sources import load_sources
from ember.report.tables import boot_words_table, hmult_words_table

src = load_sources([p for p in sys.argv[1:] if Path(p).exists()])  # peers optional
if src.ember.get("boot"):
    print(boot_words_table(src.ember["boot"], src.peer("cheddar")).markdown())
if src.latest("ckks32"):
    print(hmult_words_table(src.latest("ckks32"), src.peer("phantom")).markdown())
