"""CKKS on 32-bit words (CkksContext32) on the GPU: keys, encryption, products, relinearization,
rescaling (levels of one prime and of two), rotations and ModRaise give the CPU's words, and the
64-bit context's over the same primes."""

from __future__ import annotations

import numpy as np
import pytest
from ember import _ember, ring

KEY = bytes(range(32))
# (log N, Q prime bits, P primes, dnum, primes per level): one-prime digits and levels; at
# N = 2^14 and 2^16 digits of several primes (the GPU fuses their transform with the key product
# from N = 2^14 on, in chunks of 2^7 and 2^8 values), levels alternating two primes and one, and
# levels of two
SETS = [
    (12, [29] + [27] * 5, 2, 6, ()),
    (14, [29] * 2 + [28] * 6, 3, 3, (2, 1, 2, 1, 2)),
    (16, [29] * 2 + [28] * 14, 4, 4, (2,) * 8),
]


def _primes(n, q_bits, p_count):
    taken = []
    for b in q_bits + [30] * p_count:
        taken += ring.generate_ntt_primes(b, n, 1, taken)
    return taken[: len(q_bits)], taken[len(q_bits) :]


def _run(cls, n, q, p, dnum, groups, device, x, y):
    """Every operation's ciphertexts, as numpy words, in a fixed order."""
    ctx = cls(n, q, p, dnum, device, None, list(groups))
    s = ring.Sampler(KEY)
    sk = ctx.keygen(s)
    pk, relin, rot = ctx.public_key(sk, s), ctx.relin_key(sk, s), ctx.galois_key(sk, 5, s)
    top, scale = ctx.max_level, float(q[-1]) * float(q[-2])

    def enc(v):
        pt, _, _ = ctx.encode_slots(v, top, scale)
        ct = ctx.encrypt(pt, pk, s)
        ct.scale = scale
        return ct

    a, b = enc(x), enc(y)
    prod = ctx.multiply(a, b, relin)
    outs = [
        a,
        prod,
        ctx.rescale(prod),
        ctx.multiply_divide(a, b, relin),
        ctx.apply_galois(a, rot),
        ctx.mod_raise(ctx.drop_level(a, 0), top),
    ]
    words = [
        np.stack([c.poly(i).to_numpy().astype(np.uint64) for i in range(c.size)]) for c in outs
    ]
    m = ctx.decrypt_core(ctx.rescale(prod), sk, ctx.rows(top - 1))
    return words, m


@pytest.mark.parametrize(
    "log_n,q_bits,p_count,dnum,groups", SETS, ids=["N12", "N14_alternating", "N16_pairs"]
)
def test_ckks32_matches_the_cpu_and_the_64_bit_context(gpu, log_n, q_bits, p_count, dnum, groups):
    n = 1 << log_n
    q, p = _primes(n, q_bits, p_count)
    rng = np.random.default_rng(log_n)
    x = rng.uniform(-1, 1, n // 2)
    y = rng.uniform(-1, 1, n // 2)
    on_gpu, m = _run(_ember.CkksContext32, n, q, p, dnum, groups, gpu, x, y)
    on_cpu, _ = _run(_ember.CkksContext32, n, q, p, dnum, groups, "cpu", x, y)
    wide_gpu, _ = _run(_ember.CkksContext, n, q, p, dnum, groups, gpu, x, y)
    for k, (g, c, w) in enumerate(zip(on_gpu, on_cpu, wide_gpu)):
        np.testing.assert_array_equal(g, c, err_msg=f"output {k}: GPU != CPU")
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}: 32-bit != 64-bit")
    assert m.to_numpy().dtype == np.uint32
