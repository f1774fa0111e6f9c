"""Exact big-integer <-> RNS conversion (ring.to_rns / ring.from_rns, CrtConverter)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import ring
from ringref import Crt, centered, distinct_primes, product, random_residues


def big_values(rng, n, bits, signed):
    """n Python ints of up to `bits` bits (random lengths), with the sign mixed in if asked."""
    out = []
    for _ in range(n):
        b = int(rng.integers(1, bits + 1))
        v = int.from_bytes(rng.bytes((b + 7) // 8), "little") >> ((8 - b % 8) % 8)
        if signed and rng.integers(0, 2):
            v = -v
        out.append(v)
    return out


def to_words(values, words):
    raw = b"".join(int(v).to_bytes(8 * words, "little") for v in values)
    return np.frombuffer(raw, dtype="<u8").reshape(len(values), words).astype(np.uint64)


@pytest.fixture(scope="module")
def wide_ring():
    """N = 16 over 60 primes of 60 bits: Q has about 3600 bits."""
    n = 16
    primes = ring.generate_ntt_primes(60, n, 60)
    _ctx, basis = ring.make_ring(n, primes)
    return basis, [int(p) for p in primes]


def edge_values(qm):
    half = qm // 2
    return [
        0,
        1,
        -1,
        half,
        -half,
        half - 1,
        -(half - 1),
        qm - 1 - half,
        2**64 - 1,
        2**64,
        -(2**64),
        2**128 + 3,
        qm // 3,
        -(qm // 7),
    ]


def test_to_rns_matches_python_mod_and_roundtrips_centered(wide_ring, rng, device):
    basis, primes = wide_ring
    qm = product(primes)
    assert qm.bit_length() > 3550
    n = basis.n
    for trial in range(3):
        values = big_values(rng, n, qm.bit_length() - 2, signed=True)
        if trial == 0:
            values = edge_values(qm) + values[: n - len(edge_values(qm))]
        p = ring.to_rns(values, basis, device=device)
        assert p.form == "coeff" and p.device == device
        arr = p.to_numpy()
        expect = np.array([[v % q for v in values] for q in primes], dtype=np.uint64)
        np.testing.assert_array_equal(arr, expect)
        # Centered values of magnitude below Q/2 come back exactly.
        assert ring.from_rns(p) == [centered(v, qm) for v in values]
        assert ring.from_rns(p, centered=True) == values
        assert ring.from_rns(p, centered=False) == [v % qm for v in values]


def test_unsigned_roundtrip_full_range(wide_ring, rng, device):
    basis, primes = wide_ring
    qm = product(primes)
    n = basis.n
    values = [int.from_bytes(rng.bytes(460), "little") % qm for _ in range(n)]
    values[0], values[1], values[2] = 0, qm - 1, qm // 2
    p = ring.to_rns(values, basis, device=device)
    assert ring.from_rns(p, centered=False) == values
    # From random residues: from_rns equals the textbook CRT.
    res = random_residues(rng, primes, n)
    p2 = ring.poly(basis, res, device=device)
    assert ring.from_rns(p2, centered=False) == Crt(primes).values(res)


def test_values_at_or_above_q_are_reduced(wide_ring, rng, device):
    basis, primes = wide_ring
    qm = product(primes)
    n = basis.n
    values = [qm, qm + 1, 2 * qm - 1, -qm, 5 * qm + 17, qm**2 + 3] + big_values(
        rng, n - 6, 2 * qm.bit_length(), signed=True
    )
    p = ring.to_rns(values, basis, device=device)
    np.testing.assert_array_equal(
        p.to_numpy(), np.array([[v % q for v in values] for q in primes], dtype=np.uint64)
    )
    assert ring.from_rns(p, centered=False) == [v % qm for v in values]


@pytest.mark.parametrize("bits", [[61], [30, 61], [45, 59, 33, 61, 50]], ids=["1", "2", "5"])
def test_small_bases(bits, rng, device):
    n = 64
    primes = distinct_primes(bits, n)
    _, basis = ring.make_ring(n, primes)
    qm = product(primes)
    values = [int(v) for v in big_values(rng, n, qm.bit_length() - 2, signed=True)]
    p = ring.to_rns(values, basis, device=device)
    np.testing.assert_array_equal(
        p.to_numpy(), np.array([[v % q for v in values] for q in primes], dtype=np.uint64)
    )
    assert ring.from_rns(p) == [centered(v, qm) for v in values]


def test_crt_converter_direct(wide_ring, rng, device):
    basis, primes = wide_ring
    qm = product(primes)
    n = basis.n
    conv = ring.CrtConverter(basis)
    # Arbitrary words: values need not be below Q (here up to 2 * 60 words = 7680 bits).
    for words in (1, 2, 7, 60, 120):
        raw = rng.integers(0, 2**64, size=(n, words), dtype=np.uint64)
        raw[0] = 0
        raw[1] = np.uint64(2**64 - 1)
        values = [sum(int(raw[i, k]) << (64 * k) for k in range(words)) for i in range(n)]
        p = conv.to_rns(raw, device)
        assert p.form == "coeff" and p.basis == basis
        np.testing.assert_array_equal(
            p.to_numpy(),
            np.array([[v % q for v in values] for q in primes], dtype=np.uint64),
            err_msg=f"words={words}",
        )
        # from_rns: len(basis) words per value, the residue class representative in [0, Q).
        out = conv.from_rns(p)
        assert out.shape == (n, len(primes)) and out.dtype == np.uint64
        got = [sum(int(out[i, k]) << (64 * k) for k in range(out.shape[1])) for i in range(n)]
        assert got == [v % qm for v in values]


def test_crt_converter_permuted_sub_basis(rng, device):
    n = 32
    primes = distinct_primes([61, 40, 50, 59, 31], n)
    ctx = ring.RingContext.create(n, primes)
    basis = ring.RnsBasis(ctx, [3, 1, 4])
    sub = [primes[3], primes[1], primes[4]]
    qm = product(sub)
    res = random_residues(rng, sub, n)
    p = ring.poly(basis, res, device=device)
    assert ring.from_rns(p, centered=False) == Crt(sub).values(res)
    values = big_values(rng, n, qm.bit_length() - 2, signed=True)
    assert ring.from_rns(ring.to_rns(values, basis, device=device)) == values


def test_crt_errors(wide_ring, device):
    basis, _primes = wide_ring
    conv = ring.CrtConverter(basis)
    with pytest.raises(ember.ParameterError):
        ring.to_rns([1, 2, 3], basis, device=device)
    with pytest.raises(ember.ParameterError):
        conv.to_rns(np.zeros((basis.n + 1, 2), dtype=np.uint64), device)
    with pytest.raises(ember.ParameterError):
        conv.to_rns(np.zeros((basis.n, 0), dtype=np.uint64), device)
    with pytest.raises(ember.MismatchError):
        conv.from_rns(ring.RnsPoly.zeros(basis, "eval", device))
    other = ring.make_ring(16, bits=40, count=2)[1]
    with pytest.raises(ember.MismatchError):
        conv.from_rns(ring.RnsPoly.zeros(other, "coeff", device))
    with pytest.raises(ember.MismatchError):
        ring.from_rns(ring.RnsPoly.zeros(basis, "eval", device))


def test_larger_ring_roundtrip(rng, device):
    # N = 2048 over 24 primes: exercises the parallel paths of both directions.
    n = 2048
    primes = [int(p) for p in ring.generate_ntt_primes(58, n, 24)]
    _, basis = ring.make_ring(n, primes)
    qm = product(primes)
    values = big_values(rng, n, qm.bit_length() - 2, signed=True)
    p = ring.to_rns(values, basis, device=device)
    cols = rng.integers(0, n, 64)
    arr = p.to_numpy()
    for c in cols:
        assert [int(arr[l, c]) for l in range(len(primes))] == [values[c] % q for q in primes]
    assert ring.from_rns(p) == values
