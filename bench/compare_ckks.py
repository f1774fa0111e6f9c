"""Markdown table of Ember's CKKS operations against Phantom and DESILO (same run, same device).

usage: python bench/compare_ckks.py bench_ckks.json [phantom_ckks.jsonl] [desilo_ckks.jsonl]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Ember set name -> Phantom's benchmark set with the same primes.
PHANTOM_SET = {"N14": "14_8m1s", "N15": "15_18m2s", "N16_36+4": "16_36m4s", "N16_42+1": "16_42m1s"}
# Ember op -> (Phantom op, DESILO op); None where the peer has no equivalent.
OPS = [
    ("encode_ms", "encode", "encode"),
    ("encrypt_ms", "encrypt", "encrypt"),
    ("add_ms", "add", "add"),
    ("multiply_relin_ms", "multiply_relin", None),
    ("relinearize_ms", "relinearize", "relinearize"),
    ("rescale_ms", "rescale", "rescale"),
    ("rotate_ms", "rotate", "rotate"),
    ("hoisted_rotate8_ms", "rotate8", "rotate8_batch"),
]


def load_jsonl(path: str | None) -> list[dict]:
    if not path or not Path(path).exists():
        return []
    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.startswith("{")]


def main(argv: list[str]) -> int:
    ember = json.loads(Path(argv[1]).read_text())
    phantom = load_jsonl(argv[2] if len(argv) > 2 else None)
    desilo = load_jsonl(argv[3] if len(argv) > 3 else None)
    p_ops = {(r["set"], r["op"]): r["batch10_median_us"] / 1e3 for r in phantom if "op" in r}
    d_ops = {
        (r["config"], r["op"]): r["batch10_median_ms"]
        for r in desilo
        if "op" in r and "@" not in r["op"]
    }
    print(f"CKKS on {ember['device_name']} ({ember['date']}), ms per operation, top level\n")
    print("| set | op | Ember | Phantom | Phantom/Ember | DESILO (16:4, level 35) | DESILO/Ember |")
    print("|---|---|---|---|---|---|---|")

    def cell(v):
        return f"{v:.3f}" if v is not None else "-"

    for r in ember["results"]:
        pset = PHANTOM_SET.get(r["name"])
        for ours, pop, dop in OPS:
            e = r[ours]
            p = p_ops.get((pset, pop))
            d = d_ops.get(("16:4", dop)) if r["name"] == "N16_36+4" and dop else None

            def ratio(v, e=e):
                return f"{v / e:.2f}x" if v is not None else "-"

            print(
                f"| {r['name']} | {ours[:-3]} | {e:.3f} | {cell(p)} | {ratio(p)} | {cell(d)} | "
                f"{ratio(d)} |"
            )
        # The fused product (one division by P q_l) when the run measured it.
        e = r.get("multiply_relin_rescale_ms", r["multiply_relin_ms"] + r["rescale_ms"])

        def ratio(v, e=e):
            return f"{v / e:.2f}x" if v is not None else "-"

        p = p_ops.get((pset, "multiply_relin"))
        p = p + p_ops[(pset, "rescale")] if p is not None else None
        d = d_ops.get(("16:4", "multiply_relin_rescale")) if r["name"] == "N16_36+4" else None
        print(
            f"| {r['name']} | multiply_relin + rescale | {e:.3f} | {cell(p)} | {ratio(p)} | "
            f"{cell(d)} | {ratio(d)} |"
        )
        print(
            f"| {r['name']} | key-read floor of one key switch | {r['key_read_floor_ms']:.3f} "
            "| | | | |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
