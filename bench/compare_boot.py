"""Markdown table of one full-slot bootstrap, of complex and of real values: Ember (``ember bench
boot`` JSON) against DESILO FHE's bootstrap from the same run (JSON lines, optional).

    python bench/compare_boot.py bench_boot.json [desilo_boot.jsonl]
"""

import sys
from pathlib import Path

from ember.report.sources import load_sources
from ember.report.tables import boot_table

src = load_sources([p for p in sys.argv[1:] if Path(p).exists()])  # peers optional
print(boot_table(src.latest("boot"), src.peer("desilo")).markdown())
