"""Ring arithmetic with Ember: an RLWE encryption of a byte vector built from ring primitives.

Run: python examples/01_ring_arithmetic.py [--device cpu|cuda|auto]
"""

import argparse

import numpy as np
from ember import ring


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="auto")
    parser.add_argument("--log-n", type=int, default=12)
    args = parser.parse_args()

    n = 1 << args.log_n
    _ctx, basis = ring.make_ring(n, bits=50, count=4)
    q = 1
    for p in basis.primes:
        q *= p
    delta = q // 256

    sampler = ring.Sampler()  # OS-keyed ChaCha20
    s = sampler.ternary(basis, args.device).ntt()  # secret key, ternary
    a = sampler.uniform(basis, args.device)  # public randomness, eval form
    e = sampler.gaussian(basis, args.device).ntt()  # noise, sigma 3.2

    message = np.random.default_rng().integers(0, 256, size=n)
    m = ring.to_rns([int(v) * delta for v in message], basis, args.device).ntt()
    b = e + m - a * s  # ciphertext (a, b)

    noisy = ring.from_rns((b + a * s).intt(), centered=False)  # D m + e
    decoded = np.array([round(v / delta) % 256 for v in noisy])
    assert (decoded == message).all(), "decryption failed"
    print(f"N={n}, {len(basis)} limbs on {a.device}: {n} bytes encrypted and recovered exactly")


if __name__ == "__main__":
    main()
