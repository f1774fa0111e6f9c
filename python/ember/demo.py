"""The flagship demo: RLWE encryption built from Ember's ring primitives, on the GPU when present.

Encrypts a message polynomial under a ternary secret with Gaussian noise (b = -a s + e + D m),
decrypts it, and checks that the GPU computed exactly the words the CPU computes.
"""

from __future__ import annotations

import time

import numpy as np

from . import backends, resolve_device, ring


def _encrypt_decrypt(device: str, log_n: int, primes: list[int], key: bytes, message: np.ndarray):
    ctx = ring.RingContext.create(1 << log_n, primes)
    basis = ring.RnsBasis.all(ctx)
    sampler = ring.Sampler(key)
    t0 = time.perf_counter()
    s = sampler.ternary(basis, device).ntt()
    a = sampler.uniform(basis, device)
    e = sampler.gaussian(basis, device).ntt()
    q = 1
    for p in primes:
        q *= p
    delta = q // 256  # the message lives in the top 8 bits
    m = ring.to_rns([int(v) * delta for v in message], basis, device).ntt()
    b = (e + m) - a * s  # encryption
    dec = (b + a * s).intt()  # decryption: D m + e
    elapsed = time.perf_counter() - t0
    values = ring.from_rns(dec, centered=False)
    decoded = np.array([round(v / delta) % 256 for v in values], dtype=np.int64)
    return decoded, b.to_numpy(), elapsed


def main(device: str | None = "auto") -> int:
    dev = resolve_device(device)
    log_n = 14
    primes = ring.generate_ntt_primes(50, 1 << log_n, 8)
    key = bytes(range(32))  # a fixed demo key, so that CPU and GPU draw the same stream
    rng = np.random.default_rng()
    message = rng.integers(0, 256, size=1 << log_n)
    print(
        f"Ember demo: RLWE encryption, N=2^{log_n}, {len(primes)} x 50-bit primes, "
        f"device={dev} (backends: {', '.join(backends())})"
    )
    decoded, ct, t = _encrypt_decrypt(dev, log_n, primes, key, message)
    ok = bool((decoded == message).all())
    print(f"  encrypt + decrypt on {dev}: {t * 1e3:.1f} ms, message recovered: {ok}")
    if dev != "cpu":
        _, ct_cpu, t_cpu = _encrypt_decrypt("cpu", log_n, primes, key, message)
        same = bool((ct_cpu == ct).all())
        print(f"  same on cpu: {t_cpu * 1e3:.1f} ms, ciphertexts bit-identical: {same}")
        ok = ok and same
    print("demo OK" if ok else "demo FAILED")
    return 0 if ok else 1
