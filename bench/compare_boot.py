"""Markdown table of one full-slot bootstrap: Ember (``ember bench boot`` JSON) against DESILO
FHE's bootstrap from the same run (JSON lines of the peer harness; optional).

    python bench/compare_boot.py bench_boot.json [desilo_boot.jsonl]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    ember = json.loads(Path(argv[1]).read_text())
    peers = []
    if len(argv) > 2 and Path(argv[2]).exists():
        for line in Path(argv[2]).read_text().splitlines():
            rec = json.loads(line)
            if rec.get("op") and "median_ms" in rec:
                peers.append(rec)
    print(
        f"Device: {ember['device_name']}, {ember['date']}, preset {ember['preset']} "
        f"(N = 2^{ember['log_n']}, {ember['slots']} slots, log2 QP = {ember['log_qp']}, "
        f"dnum {ember['dnum']})\n"
    )
    print(
        "| library | bootstrap ms | precision mean / min bits | levels left | key memory GB "
        "| Ember speedup |"
    )
    print("|---|---|---|---|---|---|")
    ms = ember["bootstrap_ms"]
    print(
        f"| Ember | {ms:.1f} | {ember['precision_mean_bits']:.1f} / "
        f"{ember['precision_min_bits']:.1f} | {ember['levels_left']} | "
        f"{ember['key_memory_mb'] / 1024:.1f} (+ {ember['diagonal_memory_mb'] / 1024:.1f} "
        "diagonals) | 1.00x |"
    )
    for p in peers:
        key = p.get("key_nbytes")
        key_gb = f"{key / 2**30:.1f}" if key else "-"
        print(
            f"| DESILO {p['op']} | {p['median_ms']:.1f} | {p['precision_mean_bits']:.1f} / "
            f"{p['precision_min_bits']:.1f} | {p.get('output_level', '-')} | {key_gb} | "
            f"{p['median_ms'] / ms:.2f}x |"
        )
    sp = ember.get("sparse")
    if sp:
        print(
            f"| Ember, sparse {sp['slots']} slots | {sp['bootstrap_ms']:.1f} | "
            f"{sp['precision_mean_bits']:.1f} / {sp['precision_min_bits']:.1f} | "
            f"{ember['levels_left']} | - | - |"
        )
    phases = ", ".join(f"{k} {v:.1f}" for k, v in ember["phases_ms"].items())
    print(
        f"\nEmber phases (ms, synchronized): {phases}. Amortized multiplication time per slot "
        f"(Jung et al.): {ember['amortized_mult_us_per_slot']:.3f} us. Key generation: "
        f"{ember['keygen_s']:.2f} s for {ember['eval_keys']} keys."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
