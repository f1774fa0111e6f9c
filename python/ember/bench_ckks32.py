"""``ember bench ckks32``: CKKS on 32-bit words against the same operations on 64-bit words, at
the top level of N = 2^16 rings (a JSON-ready dictionary, never a test condition).

Three contexts in one run: 32-bit words over a Cheddar-sized chain (38 primes of 28-30 bits in Q
grouped in levels of two, 10 of 30 bits in P, dnum 4), the 64-bit context over the very same
primes and levels (the word width alone), and N16_boot's 64-bit chain (the set bootstrapping uses
today). Each times HMult (tensor and relinearization), the rescale after it, the fused
HMult-and-rescale, a rotation and the tensor alone, as medians of hot runs timed to the device's
synchronize."""

from __future__ import annotations

import time

import numpy as np

from . import _ember, ckks, resolve_device, ring

KEY = bytes(range(32))


def _median(values):
    return sorted(values)[len(values) // 2]


def _primes(n: int, q_bits: list[int], p_bits: list[int]) -> tuple[list[int], list[int]]:
    taken: list[int] = []
    for b in q_bits + p_bits:
        taken += ring.generate_ntt_primes(b, n, 1, taken)
    return taken[: len(q_bits)], taken[len(q_bits) :]


def _time(dev: str, fn, runs: int) -> float:
    """Median milliseconds of fn() (after one warm-up), each run waited for on the device."""
    fn()
    _ember.synchronize(dev)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        _ember.synchronize(dev)
        times.append(time.perf_counter() - t)
    return round(_median(times) * 1e3, 4)


def _measure(cls, name: str, n: int, q, p, dnum: int, dev: str, runs: int, pairs: bool) -> dict:
    groups = [2] * (len(q) // 2) if pairs else []
    ctx = cls(n, list(q), list(p), dnum, dev, None, groups)
    s = ring.Sampler(KEY)
    sk = ctx.keygen(s)
    pk, relin, rot = ctx.public_key(sk, s), ctx.relin_key(sk, s), ctx.galois_key(sk, 5, s)
    top = ctx.max_level
    scale = float(q[-1]) * (float(q[-2]) if pairs else 1.0)
    x = np.random.default_rng(1).uniform(-1, 1, n // 2)
    pt, _, _ = ctx.encode_slots(x, top, scale)
    a = ctx.encrypt(pt, pk, s)
    a.scale = scale
    prod = ctx.multiply(a, a, relin)
    row = {
        "name": name,
        "words": 32 if cls is _ember.CkksContext32 else 64,
        "log_n": n.bit_length() - 1,
        "q_primes": len(q),
        "p_primes": len(p),
        "log_qp": round(sum(np.log2(float(v)) for v in list(q) + list(p)), 1),
        "primes_per_level": 2 if pairs else 1,
        "dnum": ctx.dnum,
        "hmult_ms": _time(dev, lambda: ctx.multiply(a, a, relin), runs),
        "rescale_ms": _time(dev, lambda: ctx.rescale(prod), runs),
        "hmult_rescale_fused_ms": _time(dev, lambda: ctx.multiply_divide(a, a, relin), runs),
        "hrot_ms": _time(dev, lambda: ctx.apply_galois(a, rot), runs),
        "tensor_ms": _time(dev, lambda: ctx.multiply_no_relin(a, a), runs),
    }
    # Correctness of what was timed: x^2 back at the rescaled scale.
    c = ctx.multiply_divide(a, a, relin)
    m = ctx.decrypt_core(c, sk, ctx.rows(c.level))
    got = ctx.decode_slots(m, c.scale, True, n // 2, False, False)
    row["max_error"] = float(np.max(np.abs(got - x * x)))
    return row


def bench_ckks32(device: str | None = None, quick: bool = False) -> dict:
    dev = resolve_device(device)
    cuda = dev.startswith("cuda")
    log_n = 16 if cuda and not quick else 12
    n = 1 << log_n
    runs = 20 if cuda else 3
    q_count, p_count = (38, 10) if log_n == 16 else (12, 3)
    q, p = _primes(n, [29, 29] + [28, 30] * ((q_count - 2) // 2), [30] * p_count)
    dnum = 4
    boot = ckks.Params.preset("N16_boot" if log_n == 16 else "N12_boot_insecure")
    configs = [
        (_ember.CkksContext32, "30-bit chain", q, p, dnum, True),
        (_ember.CkksContext, "30-bit chain", q, p, dnum, True),
        (_ember.CkksContext, boot.name, boot.q_primes, boot.p_primes, boot.dnum, False),
    ]
    # Two rounds in turn, each figure the lower of the two medians (clocks and caches warm alike).
    rounds = [
        [_measure(c, name, n, qs, ps, d, dev, runs, pairs) for c, name, qs, ps, d, pairs in configs]
        for _ in range(2)
    ]
    rows = [
        {k: (min(a[k], b[k]) if k.endswith("_ms") else a[k]) for k in a} for a, b in zip(*rounds)
    ]
    narrow, wide = rows[0], rows[1]
    return {
        "benchmark": "ckks32",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "results": rows,
        "speedup_32_over_64_same_primes": {
            k: round(wide[k] / narrow[k], 3)
            for k in ("hmult_ms", "rescale_ms", "hmult_rescale_fused_ms", "hrot_ms", "tensor_ms")
        },
    }
