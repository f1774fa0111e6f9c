"""Makes tests/kat/ring_kat.json: SHA-256 digests of ring outputs for fixed keys and inputs.

The digests freeze the sampler stream layout, the NTT tables and order, and the conversions, so a
change that would alter stored seeds or serialized data is caught. Regenerate only on purpose:
    python tests/kat/make_kat.py
"""

import hashlib
import json
from pathlib import Path

import numpy as np
from ember import ring

KEY = bytes(range(32))
CASES = [(4, 1), (10, 3), (13, 2)]


def digest(arr) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, dtype="<u8").tobytes()).hexdigest()


def compute(device: str = "cpu") -> dict:
    out = {}
    for log_n, limbs in CASES:
        n = 1 << log_n
        _ctx, basis = ring.make_ring(n, bits=50, count=limbs)
        s = ring.Sampler(KEY)
        u = s.uniform(basis, device, "coeff")
        t = s.ternary(basis, device)
        h = s.ternary_hamming(basis, device, hamming_weight=n // 2)
        g = s.gaussian(basis, device)
        key = f"N{n}_L{limbs}"
        out[key] = {
            "primes": list(basis.primes),
            "uniform": digest(u.to_numpy()),
            "ternary": digest(t.to_numpy()),
            "ternary_hamming": digest(h.to_numpy()),
            "gaussian": digest(g.to_numpy()),
            "ntt_of_uniform": digest(u.ntt().to_numpy()),
            "automorphism5_eval": digest(u.ntt().automorphism(5).to_numpy()),
            "icrt_of_uniform": digest(ring.CrtConverter(basis).from_rns(u)),
        }
    return out


def main() -> None:
    data = {"key": KEY.hex(), "cases": compute()}
    path = Path(__file__).with_name("ring_kat.json")
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
