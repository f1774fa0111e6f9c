"""Markdown table of Ember's NTT against the one-pass floor and Phantom (same run, same device).

usage: python bench/compare_ntt.py bench_ntt.json [phantom_ntt.jsonl]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def load_phantom(path: str | None) -> dict:
    out = {}
    if not path or not Path(path).exists():
        return out
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("peer") != "phantom" or r.get("skipped"):
            continue
        key = (r["log_n"], r["limbs"])
        # Ember times 10 back-to-back runs per sample; Phantom's batch10 figure is the same method.
        out.setdefault(key, {})[r["op"]] = r.get("batch10_median_us", r["median_us"])
    return out


def main(argv: list[str]) -> int:
    ember = json.loads(Path(argv[1]).read_text())
    phantom = load_phantom(argv[2] if len(argv) > 2 else None)
    print(
        f"NTT on {ember['device_name']} ({ember['date']}), {ember['prime_bits']}-bit primes, "
        f"copy bandwidth {ember['copy_gbps']:.0f} GB/s (read + write)\n"
    )
    print(
        "| log N | limbs | schedule | fwd us | inv us | fwd cold us | floor us | fwd/floor "
        "| Phantom fwd us | Phantom inv us | Phantom/Ember fwd | Phantom/Ember inv |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in ember["results"]:
        if not r["variant"].startswith("auto"):
            continue
        p = phantom.get((r["log_n"], r["limbs"]), {})
        pf, pi = p.get("ntt_forward"), p.get("ntt_inverse")
        fmt = lambda v: f"{v:.1f}" if v is not None else "-"
        ratio = lambda a, b: f"{a / b:.2f}x" if a is not None else "-"
        print(
            f"| {r['log_n']} | {r['limbs']} | {r['variant'][5:]} | {r['forward_us']:.1f} | "
            f"{r['inverse_us']:.1f} | {r['forward_cold_us']:.1f} | {r['floor_us']:.1f} | "
            f"{r['forward_over_floor']:.2f} | {fmt(pf)} | {fmt(pi)} | "
            f"{ratio(pf, r['forward_us'])} | {ratio(pi, r['inverse_us'])} |"
        )
    print("\nAll schedules (fwd us / inv us, hot):\n")
    variants = sorted(
        {r["variant"] for r in ember["results"] if not r["variant"].startswith("auto")}
    )
    print("| log N | limbs | " + " | ".join(variants) + " | fastest |")
    print("|---|---|" + "---|" * len(variants) + "---|")
    table: dict = {}
    for r in ember["results"]:
        table.setdefault((r["log_n"], r["limbs"]), {})[r["variant"]] = r
    for (log_n, limbs), rs in table.items():
        cells = []
        for v in variants:
            r = rs.get(v)
            ok = "" if r is None or r["roundtrip_ok"] else " FAIL"
            cells.append(f"{r['forward_us']:.1f} / {r['inverse_us']:.1f}{ok}" if r else "-")
        best = ember["fastest_variant"].get(f"{log_n}x{limbs}", "-")
        print(f"| {log_n} | {limbs} | " + " | ".join(cells) + f" | {best} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
