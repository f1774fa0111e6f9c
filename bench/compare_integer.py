"""Markdown table of Ember's BFV or BGV operations against Phantom (same run, same device).

usage: python bench/compare_integer.py bench_bfv.json [phantom_bfv_bgv.jsonl]
Both sides are device time per operation: Ember's time_runs and Phantom's batch10_median_us
(10 back-to-back operations queued behind a spin kernel, divided by 10).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from compare_ckks import load_jsonl

# Ember preset -> the peer harness's set with the same prime sizes.
PHANTOM_SET = {
    ("bfv", "N12_t65537"): "bfv_N12_Q109",
    ("bfv", "N13_t65537"): "bfv_N13_Q152",
    ("bfv", "N14_t65537"): "bfv_N14_Q237",
    ("bfv", "N15_Q496_t65537"): "bfv_N15_Q496",
    ("bfv", "N15_t65537"): "bfv_N15_Q880",
    ("bgv", "N13_t65537"): "bgv_N13_Q218",
    ("bgv", "N14_t65537"): "bgv_N14_Q438",
    ("bgv", "N15_t65537"): "bgv_N15_Q880",
}
OPS = [
    "keygen_sk",
    "keygen_pk",
    "keygen_relin",
    "encrypt",
    "encrypt_symmetric",
    "decrypt",
    "add",
    "multiply",
    "relinearize",
    "multiply_relin",
    "mod_switch",
    "multiply_relin_modswitch",
    "rotate",
    "rotate_columns",
]


def main(argv: list[str]) -> int:
    ember = json.loads(Path(argv[1]).read_text())
    phantom = load_jsonl(argv[2] if len(argv) > 2 else None)
    scheme = ember["benchmark"]
    p_ops = {(r["set"], r["op"]): r["batch10_median_us"] / 1e3 for r in phantom if "op" in r}
    checks = [r for r in phantom if "check" in r and r.get("scheme") == scheme]
    bad = [f"{r['set']}:{r['check']}" for r in checks if not r.get("ok")]
    print(f"{scheme.upper()} on {ember['device_name']} ({ember['date']}), ms per operation\n")
    if phantom:
        print(f"Phantom correctness checks: {len(checks) - len(bad)}/{len(checks)} ok {bad}\n")
    print("| set | log2 QP | op | Ember | Phantom | Phantom/Ember |")
    print("|---|---|---|---|---|---|")
    for r in ember["results"]:
        pset = PHANTOM_SET.get((scheme, r["name"]))
        for op in OPS:
            if f"{op}_ms" not in r:
                continue
            e = r[f"{op}_ms"]
            p = p_ops.get((pset, op))
            ps = f"{p:.4f}" if p is not None else "-"
            ratio = f"{p / e:.2f}x" if p is not None else "-"
            print(f"| {r['name']} | {r['log_qp']:.0f} | {op} | {e:.4f} | {ps} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
