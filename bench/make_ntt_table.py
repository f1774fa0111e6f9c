"""Writes the CUDA NTT autotune tables (src/backend/cuda/launch/ntt_tuned_table.h) from two runs
of `ember bench ntt --device cuda --json FILE`: one with primes of at most 50 bits (the FP64
path; the default --prime-bits 50) and one with larger primes (the integer path, e.g.
--prime-bits 60). For each measured (log N, limbs) the schedule with the lowest forward time and
the one with the lowest inverse time (they differ: the warp-shuffle chunks suit the forward
transform, whose last phase they are); sizes in between take the nearest measured limb count.

usage: python bench/make_ntt_table.py fp64_sweep.json int_sweep.json
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/backend/cuda/launch/ntt_tuned_table.h"
FLOAT_BITS = 50  # kMaxFloatModulusBits
# Sizes with a cluster schedule (launch/ntt_cluster.cu); elsewhere "cluster" runs the warp-shuffle
# one, so a measured win there is noise and is not kept.
CLUSTER_LOG_N = range(12, 17)
# On the integer path the cluster schedule is kept only where it beats every other one by this
# factor: inside a scheme's chain of kernels a cluster waits for 8 or 16 free block slots in one
# GPC while the previous kernel drains, which the isolated benchmark does not see. Measured on an
# H200 (2026-11-22) with ties taken: BFV N14 (integer path) relinearization and rotation 14 %
# slower, while on the FP64 path the ties made CKKS N14 and BGV N13 rotations 2-12 % faster.
CLUSTER_MARGIN_INT = 0.95


def table(data: dict, name: str, cluster_margin: float) -> str:
    # Per size and direction, the fastest cluster measurement and the fastest of the others; the
    # cluster schedule is taken where it is at least 1 / cluster_margin times as fast.
    fastest: dict = {}
    for r in data["results"]:
        if r["variant"].startswith("auto") or not r["roundtrip_ok"]:
            continue
        if r["variant"] == "cluster" and r["log_n"] not in CLUSTER_LOG_N:
            continue
        kind = "cluster" if r["variant"] == "cluster" else "other"
        for direction in ("forward", "inverse"):
            t = r[f"{direction}_us"]
            slot = fastest.setdefault((r["log_n"], r["limbs"], direction), {})
            if kind not in slot or t < slot[kind][1]:
                slot[kind] = (r["variant"], t)
    best: dict = {}
    for (log_n, limbs, direction), slot in fastest.items():
        other, cluster = slot.get("other"), slot.get("cluster")
        keep_cluster = cluster and (not other or cluster[1] <= cluster_margin * other[1])
        best.setdefault((log_n, limbs), {})[direction] = cluster if keep_cluster else other
    rows = "\n".join(
        f'    {{{log_n}, {limbs}, "{e["forward"][0]}", "{e["inverse"][0]}"}},'
        f"  // {e['forward'][1]:.1f} / {e['inverse'][1]:.1f} us"
        for (log_n, limbs), e in sorted(best.items())
    )
    source = f"{data['device_name']}, {data['date']}, {data['prime_bits']}-bit primes"
    return f"// {source}\ninline constexpr TunedNtt {name}[] = {{\n{rows}\n}};\n"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    fp64, integer = (json.loads(Path(a).read_text()) for a in argv[1:3])
    if fp64["prime_bits"] > FLOAT_BITS or integer["prime_bits"] <= FLOAT_BITS:
        print(f"the first sweep needs primes of at most {FLOAT_BITS} bits, the second larger ones")
        return 2
    OUT.write_text(f"""// Measured fastest NTT schedule per (log N, limbs in one launch) and direction, on the FP64
// path (batches with a prime of at most 50 bits) and on the integer path (the others); generated
// by bench/make_ntt_table.py.
#pragma once

namespace ember::cuda {{

struct TunedNtt {{
  int log_n;
  int limbs;
  const char* forward;
  const char* inverse;
}};

{table(fp64, "kTunedNttFloat", 1.0)}
{table(integer, "kTunedNttInt", CLUSTER_MARGIN_INT)}
}}  // namespace ember::cuda
""")
    if shutil.which("clang-format"):  # the repo's style (aligned comments)
        subprocess.run(["clang-format", "-i", str(OUT)], check=False)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
