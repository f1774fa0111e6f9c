"""Polynomials on 32-bit words (RnsPoly32: big-integer CKKS's residues) on the GPU: the NTT and the
pointwise arithmetic bit-identical to the CPU's, and to the 64-bit RnsPoly's over the same primes
(the same code instantiated for u32)."""

from __future__ import annotations

import numpy as np
import pytest
from ember import _ember

# N = 2^10 .. 2^13 run as one chunk kernel, 2^14 .. 2^17 as columns then chunks.
SIZES = [(10, 3), (12, 5), (13, 2), (14, 7), (15, 4), (16, 9), (17, 3)]


def _basis(log_n: int, limbs: int):
    n = 1 << log_n
    bits = [30, 29, 28, 24, 20]
    primes = []
    for i in range(limbs):
        primes += _ember.generate_ntt_primes(bits[i % len(bits)], n, 1, primes)
    return _ember.RnsBasis.all(_ember.RingContext.create(n, primes)), primes


def _words(primes, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = np.stack([rng.integers(0, q, n, dtype=np.uint64) for q in primes]).astype(np.uint32)
    w[:, 0] = np.array(primes, dtype=np.uint64) - 1  # the largest residue of each row
    return w


def _both(basis, words, form, device):
    """The same words as an RnsPoly32 and as an RnsPoly on `device`."""
    return (
        _ember.RnsPoly32.from_numpy(basis, words, form, device),
        _ember.RnsPoly.from_numpy(basis, words.astype(np.uint64), form, device),
    )


@pytest.mark.parametrize("log_n,limbs", SIZES)
def test_transforms_equal_the_cpu_and_the_64_bit_ones(gpu, log_n, limbs):
    basis, primes = _basis(log_n, limbs)
    words = _words(primes, 1 << log_n, log_n * 100 + limbs)
    narrow, wide = _both(basis, words, "coeff", gpu)
    fwd = narrow.ntt().to_numpy()
    np.testing.assert_array_equal(fwd, _ember.RnsPoly32.from_numpy(basis, words).ntt().to_numpy())
    np.testing.assert_array_equal(fwd.astype(np.uint64), wide.ntt().to_numpy())
    inv = _ember.RnsPoly32.from_numpy(basis, words, "eval", gpu).intt().to_numpy()
    cpu = _ember.RnsPoly32.from_numpy(basis, words, "eval").intt().to_numpy()
    np.testing.assert_array_equal(inv, cpu)
    back = _ember.RnsPoly32.from_numpy(basis, fwd, "eval", gpu).intt().to_numpy()
    np.testing.assert_array_equal(back, words)


@pytest.mark.parametrize("log_n,limbs", [(12, 5), (16, 9)])
def test_pointwise_arithmetic_equals_the_cpu_and_the_64_bit_ones(gpu, log_n, limbs):
    basis, primes = _basis(log_n, limbs)
    n = 1 << log_n
    x, y, z = (_words(primes, n, s) for s in (1, 2, 3))
    results = {}
    for device in ("cpu", gpu):
        a32, a64 = _both(basis, x, "eval", device)
        b32, b64 = _both(basis, y, "eval", device)
        c32, c64 = _both(basis, z, "eval", device)
        c32.multiply_accumulate_inplace(a32, b32)
        c64.multiply_accumulate_inplace(a64, b64)
        got = [a32.add(b32), a32.sub(b32), a32.negate(), a32.multiply(b32), c32]
        want = [a64.add(b64), a64.sub(b64), a64.negate(), a64.multiply(b64), c64]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.to_numpy().astype(np.uint64), w.to_numpy())
        results[device] = [g.to_numpy() for g in got]
    for g, c in zip(results[gpu], results["cpu"]):
        np.testing.assert_array_equal(g, c)


def test_primes_of_30_bits_or_more_are_refused(gpu):
    n = 1024
    primes = _ember.generate_ntt_primes(31, n, 1)
    basis = _ember.RnsBasis.all(_ember.RingContext.create(n, primes))
    with pytest.raises(ValueError, match="below 2\\^30"):
        _ember.RnsPoly32.from_numpy(basis, np.zeros((1, n), dtype=np.uint32), "coeff", gpu)


@pytest.mark.parametrize("log_n,from_limbs,to_limbs", [(12, 3, 2), (14, 9, 4), (16, 40, 5)])
def test_base_conversion_equals_the_cpu_and_the_64_bit_one(gpu, log_n, from_limbs, to_limbs):
    """Fast, exact and centered (with maps) conversions on 32-bit words: the GPU's words equal
    the CPU's and the 64-bit conversion's."""
    n = 1 << log_n
    primes = _ember.generate_ntt_primes(30, n, from_limbs)
    primes += _ember.generate_ntt_primes(29, n, to_limbs, primes)
    ring = _ember.RingContext.create(n, primes)
    qb = _ember.RnsBasis(ring, list(range(from_limbs)))
    pb = _ember.RnsBasis(ring, list(range(from_limbs, from_limbs + to_limbs)))
    words = _words(primes[:from_limbs], 1 << log_n, log_n + from_limbs)
    rng = np.random.default_rng(log_n)
    in_mul = [int(v) for v in rng.integers(1, 1 << 20, from_limbs)]
    out_mul = [int(v) for v in rng.integers(1, 1 << 20, to_limbs)]
    converters = [
        _ember.BaseConverter(qb, pb, False),
        _ember.BaseConverter(qb, pb, True),
        _ember.BaseConverter.centered(qb, pb, in_mul, out_mul),
    ]
    for conv in converters:
        on_gpu = conv.convert(_ember.RnsPoly32.from_numpy(qb, words, "coeff", gpu)).to_numpy()
        on_cpu = conv.convert(_ember.RnsPoly32.from_numpy(qb, words)).to_numpy()
        wide = conv.convert(_ember.RnsPoly.from_numpy(qb, words.astype(np.uint64), "coeff", gpu))
        np.testing.assert_array_equal(on_gpu, on_cpu)
        np.testing.assert_array_equal(on_gpu.astype(np.uint64), wide.to_numpy())


@pytest.mark.parametrize("log_n,q_limbs,t_limbs", [(12, 4, 1), (16, 20, 2)])
def test_division_and_scalars_equal_the_cpu_and_the_64_bit_ones(gpu, log_n, q_limbs, t_limbs):
    """DivideRound by one or two trailing primes (a rescale, a prime-pair rescale) and
    multiply_scalar on 32-bit words: the GPU's words equal the CPU's and the 64-bit ones."""
    n = 1 << log_n
    primes = _ember.generate_ntt_primes(30, n, q_limbs + t_limbs)
    ring = _ember.RingContext.create(n, primes)
    qb = _ember.RnsBasis(ring, list(range(q_limbs)))
    tb = _ember.RnsBasis(ring, list(range(q_limbs, q_limbs + t_limbs)))
    x_q, x_t = _words(primes[:q_limbs], n, 7), _words(primes[q_limbs:], n, 8)
    div = _ember.DivideRound(qb, tb)
    out = {}
    for device in ("cpu", gpu):
        a_q = _ember.RnsPoly32.from_numpy(qb, x_q, "coeff", device)
        a_t = _ember.RnsPoly32.from_numpy(tb, x_t, "coeff", device)
        out[device] = [
            div.divide(a_q, a_t).to_numpy(),
            a_q.multiply_scalar(2**61 + 12345).to_numpy(),
        ]
    wide = div.divide(
        _ember.RnsPoly.from_numpy(qb, x_q.astype(np.uint64), "coeff", gpu),
        _ember.RnsPoly.from_numpy(tb, x_t.astype(np.uint64), "coeff", gpu),
    ).to_numpy()
    for g, c in zip(out[gpu], out["cpu"]):
        np.testing.assert_array_equal(g, c)
    np.testing.assert_array_equal(out[gpu][0].astype(np.uint64), wide)
