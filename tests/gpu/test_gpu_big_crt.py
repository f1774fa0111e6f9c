"""The big-integer CRT and inverse CRT (HEAAN's), CPU vs GPU and both against Python integers.

On the GPU both run on the integer tensor cores (byte-matrix products with carries); the CPU runs
the multi-word rows. The words must agree exactly for every width, basis size and reading: inputs
of 64 to 5120 bits read unsigned and centered, bases of 7 to 160 primes, outputs of 60 to 5100
bits (each instance of the kernels' block counts is reached).

Skipped without a GPU by this directory's conftest; EMBER_EQUIV_DEVICE=cpu runs it CPU against CPU.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DEVICE_SPEC
from ember import _ember

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from bigref import from_words, to_words

N = 64
PRIMES = _ember.generate_ntt_primes(30, N, 160)


@pytest.fixture(scope="module")
def ring():
    return _ember.RingContext.create(N, PRIMES)


def basis(ring, m):
    return _ember.RnsBasis(ring, list(range(m)))


@pytest.mark.parametrize(
    "bits, m", [(64, 7), (250, 40), (1200, 81), (1201, 122), (2400, 122), (3000, 160), (5120, 160)]
)
@pytest.mark.parametrize("centered", [False, True])
def test_crt_residues_equal_cpu_and_python(ring, bits, m, centered):
    rng = random.Random(bits * 1000 + m + centered)
    values = [rng.randrange(1 << bits) for _ in range(N)]
    values[0], values[1] = 0, (1 << bits) - 1  # the extremes: zero, and -1 read centered
    values[2] = 1 << (bits - 1)  # the most negative centered value
    b = basis(ring, m)
    mult = _ember.BigMultiplier(ring)
    words = to_words(values, bits)
    cpu = mult.to_rns(_ember.BigPoly.from_numpy(words, bits, "cpu"), b, centered).to_numpy()
    got = mult.to_rns(_ember.BigPoly.from_numpy(words, bits, DEVICE_SPEC), b, centered).to_numpy()
    np.testing.assert_array_equal(got, cpu)
    for c in (0, 1, 2, 3, N - 1):
        x = values[c] - (1 << bits) if centered and values[c] >> (bits - 1) else values[c]
        assert [int(got[i, c]) for i in range(m)] == [x % p for p in PRIMES[:m]]


@pytest.mark.parametrize(
    "m, out_bits", [(7, 60), (40, 200), (81, 1200), (122, 2400), (122, 2399), (160, 5100)]
)
def test_inverse_crt_words_equal_cpu_and_python(ring, m, out_bits):
    rng = random.Random(m * 7 + out_bits)
    product = 1
    for p in PRIMES[:m]:
        product *= p
    bound = product // 4 - 1  # the inverse CRT is exact for |x| < P / 4
    values = [rng.randrange(-bound, bound + 1) for _ in range(N)]
    values[0], values[1], values[2] = 0, bound, -bound
    values[3] = rng.randrange(-(1 << 40), 1 << 40)  # small: the multiple k is 0 or 1
    residues = np.array([[x % p for x in values] for p in PRIMES[:m]], dtype=np.uint32)
    b = basis(ring, m)
    mult = _ember.BigMultiplier(ring)
    cpu = mult.from_rns(_ember.RnsPoly32.from_numpy(b, residues, "coeff", "cpu"), out_bits)
    got = mult.from_rns(_ember.RnsPoly32.from_numpy(b, residues, "coeff", DEVICE_SPEC), out_bits)
    np.testing.assert_array_equal(got.to_numpy(), cpu.to_numpy())
    assert from_words(got.to_numpy()) == [x % (1 << out_bits) for x in values]


def test_crt_round_trip_at_n16_over_the_gpu_tensor_cores():
    """A full-size ring (N = 2^16, HEAAN's 1200-bit coefficients over 81 primes): CRT then inverse
    CRT gives the input back, on the GPU as on the CPU."""
    n, bits, m = 1 << 16, 1200, 81
    ring = _ember.RingContext.create(n, _ember.generate_ntt_primes(30, n, m))
    mult = _ember.BigMultiplier(ring)
    rng = np.random.default_rng(5)
    words = rng.integers(0, 2**63, (n, (bits + 63) // 64), dtype=np.uint64) * 2
    words[:, -1] &= np.uint64((1 << (bits % 64)) - 1)
    b = _ember.RnsBasis(ring, list(range(m)))
    res = mult.to_rns(_ember.BigPoly.from_numpy(words, bits, DEVICE_SPEC), b, True)
    cpu = mult.to_rns(_ember.BigPoly.from_numpy(words, bits, "cpu"), b, True)
    np.testing.assert_array_equal(res.to_numpy(), cpu.to_numpy())
    np.testing.assert_array_equal(mult.from_rns(res, bits).to_numpy(), words)
