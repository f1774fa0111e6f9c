"""Command line of the deserialization fuzzing harness (see harness.py for what it classifies).

    python -m tests.fuzz.run --inputs 20000 --seed 1 [--kinds ckks-ct bgv-ek ...] [--mac] [--json]

(from the repository root, or ``python fuzz/run.py`` from tests/). Prints a table of outcomes by
kind and mutation class; exits with status 1 when a rule is broken (a crash, an accepted mutation
with --mac, or an accepted-and-different input where the meaning is checkable).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `fuzz` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from fuzz import harness
else:
    from . import harness


def table(counts: harness.Counts) -> str:
    head = f"{'kind':<8} {'class':<16}{'inputs':>8}" + "".join(f"{o:>16}" for o in harness.OUTCOMES)
    lines = [head + "  note", "-" * (len(head) + 14)]
    for (kind, cls), row in sorted(counts.table.items()):
        note = "unverifiable without a MAC" if harness.unverifiable(kind, cls) else ""
        cells = "".join(f"{row[o]:>16}" for o in harness.OUTCOMES)
        lines.append(f"{kind:<8} {cls:<16}{sum(row.values()):>8}{cells}  {note}")
    totals = "".join(f"{counts.total(o):>16}" for o in harness.OUTCOMES)
    lines.append(f"{'total':<25}{sum(sum(r.values()) for r in counts.table.values()):>8}{totals}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", type=int, default=1000, help="mutated inputs per kind")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", nargs="+", default=list(harness.KINDS), choices=harness.KINDS)
    ap.add_argument("--mac", action="store_true", help="blobs carry a keyed MAC")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    counts = harness.run_campaign(args.kinds, args.inputs, args.seed, args.mac)
    failures = counts.failures(args.mac)
    if args.json:
        rows = [{"kind": k, "class": c, **row} for (k, c), row in sorted(counts.table.items())]
        out = {"inputs_per_kind": args.inputs, "seed": args.seed, "mac": args.mac, "rows": rows}
        out |= {"failures": failures, "crashes": counts.crashes}
        print(json.dumps(out, indent=1))
    else:
        print(table(counts))
        print(f"{time.perf_counter() - start:.1f} s; " + ("; ".join(failures) or "no failures"))
        for kind, cls, detail in counts.crashes:
            print(f"crash: {kind} {cls}: {detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
