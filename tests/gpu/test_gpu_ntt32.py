"""The NTT on 32-bit words (big-integer CKKS's residues) on the GPU: bit-identical to the CPU's,
and to the 64-bit transforms over the same primes (the same code instantiated for u32)."""

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
        b = bits[i % len(bits)]
        primes += _ember.generate_ntt_primes(b, n, 1, primes)
    return _ember.RnsBasis.all(_ember.RingContext.create(n, primes)), primes


def _words(primes, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = np.stack([rng.integers(0, q, n, dtype=np.uint64) for q in primes]).astype(np.uint32)
    w[:, 0] = np.array(primes, dtype=np.uint64) - 1  # the largest residue of each row
    return w


@pytest.mark.parametrize("log_n,limbs", SIZES)
def test_forward_and_inverse_equal_the_cpu_and_the_64_bit_transform(gpu, log_n, limbs):
    basis, primes = _basis(log_n, limbs)
    words = _words(primes, 1 << log_n, log_n * 100 + limbs)
    fwd_gpu = basis.ntt32(words, True, gpu)
    fwd_cpu = basis.ntt32(words, True, "cpu")
    np.testing.assert_array_equal(fwd_gpu, fwd_cpu)
    wide = _ember.RnsPoly.from_numpy(basis, words.astype(np.uint64), "coeff", gpu).ntt()
    np.testing.assert_array_equal(fwd_gpu.astype(np.uint64), wide.to_numpy())
    inv_gpu = basis.ntt32(words, False, gpu)
    np.testing.assert_array_equal(inv_gpu, basis.ntt32(words, False, "cpu"))
    np.testing.assert_array_equal(basis.ntt32(fwd_gpu, False, gpu), words)


def test_primes_of_30_bits_or_more_are_refused(gpu):
    n = 1024
    primes = _ember.generate_ntt_primes(31, n, 1)
    basis = _ember.RnsBasis.all(_ember.RingContext.create(n, primes))
    with pytest.raises(ValueError, match="below 2\\^30"):
        basis.ntt32(np.zeros((1, n), dtype=np.uint32), True, gpu)
