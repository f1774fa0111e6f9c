"""Markdown table of one full-slot bootstrap, of complex and of real values: Ember (``ember bench
boot`` JSON) against DESILO FHE's bootstrap from the same run (JSON lines of the peer harness,
optional; each line's "values" says which input it bootstrapped, real when absent).

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
        "| library | values | bootstrap ms | precision mean / min bits | levels left "
        "| key memory GB | Ember speedup |"
    )
    print("|---|---|---|---|---|---|---|")
    # Ember's figure for each kind of input: the complex circuit, the real variant.
    ours = {"complex": ember}
    if ember.get("real"):
        ours["real"] = ember["real"]
    if ember.get("real_pair"):
        ours["real pair"] = ember["real_pair"]
    keys = (
        f"{ember['key_memory_mb'] / 1024:.1f} (+ {ember['diagonal_memory_mb'] / 1024:.1f} "
        "diagonals)"
    )
    for kind, rec in ours.items():
        print(
            f"| Ember | {kind} | {rec['bootstrap_ms']:.1f} | {rec['precision_mean_bits']:.1f} / "
            f"{rec['precision_min_bits']:.1f} | {ember['levels_left']} | {keys} | 1.00x |"
        )
    for p in peers:
        kind = p.get("values", "real")
        key = p.get("key_nbytes")
        key_gb = f"{key / 2**30:.1f}" if key else "-"
        mine = ours.get(kind, ember)["bootstrap_ms"]
        print(
            f"| DESILO {p['op']} | {kind} | {p['median_ms']:.1f} | "
            f"{p['precision_mean_bits']:.1f} / {p['precision_min_bits']:.1f} | "
            f"{p.get('output_level', '-')} | {key_gb} | {p['median_ms'] / mine:.2f}x |"
        )
    sp = ember.get("sparse")
    if sp:
        print(
            f"| Ember, sparse {sp['slots']} slots | complex | {sp['bootstrap_ms']:.1f} | "
            f"{sp['precision_mean_bits']:.1f} / {sp['precision_min_bits']:.1f} | "
            f"{ember['levels_left']} | - | - |"
        )
    if "real pair" in ours:
        print(
            f"\nA real pair is two ciphertexts of real values in one bootstrap "
            f"({ours['real pair']['per_ciphertext_ms']:.1f} ms per ciphertext for Ember)."
        )
    for kind, rec in ours.items():
        if "phases_ms" not in rec:
            continue
        phases = ", ".join(f"{k} {v:.1f}" for k, v in rec["phases_ms"].items())
        print(f"\nEmber phases, {kind} values (ms, synchronized): {phases}.")
    print(
        f"Amortized multiplication time per slot (Jung et al., complex circuit): "
        f"{ember['amortized_mult_us_per_slot']:.3f} us. Key generation: "
        f"{ember['keygen_s']:.2f} s for {ember['eval_keys']} keys."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
