"""Negacyclic NTT of RnsPoly: products against an independent negacyclic multiplication,
round trips up to N = 2^17 x 64 limbs, the documented evaluation order, and linearity."""

from __future__ import annotations

import numpy as np
import pytest
from ember import ring
from ringref import (
    bitrev,
    distinct_primes,
    negacyclic_mul,
    negacyclic_mul_rns,
    poly_eval,
    random_residues,
    schoolbook_negacyclic,
)

# Prime sizes per case: 1..3 limbs of 30..61 bits.
PRIME_SETS = {
    "1x30": [30],
    "1x61": [61],
    "2x45_59": [45, 59],
    "3x61_50_30": [61, 50, 30],
    "3x36_61_41": [36, 61, 41],
}


def _mk(n, bits):
    primes = distinct_primes(bits, n)
    ctx, basis = ring.make_ring(n, primes)
    return ctx, basis, primes


def test_reference_multiplication_agrees_with_schoolbook(rng):
    # The chunked-convolution reference against the plain Python-int schoolbook product.
    for n, q in [(16, (1 << 61) - 1), (32, 998244353), (64, (1 << 61) - 1), (128, 12289)]:
        a = [int(x) for x in rng.integers(0, q, n)]
        b = [int(x) for x in rng.integers(0, q, n)]
        a[0], b[-1] = q - 1, q - 1
        assert negacyclic_mul(a, b, q) == schoolbook_negacyclic(a, b, q)
    # X^(N-1) * X = X^N = -1.
    n, q = 16, 97
    x_top = [0] * n
    x_top[-1] = 1
    x1 = [0] * n
    x1[1] = 1
    assert schoolbook_negacyclic(x_top, x1, q) == [q - 1] + [0] * (n - 1)


@pytest.mark.parametrize("log_n", range(4, 13))
@pytest.mark.parametrize("primes_key", ["1x61", "2x45_59", "3x61_50_30"])
def test_ntt_product_equals_negacyclic_product(log_n, primes_key, rng, device):
    n = 1 << log_n
    _, basis, primes = _mk(n, PRIME_SETS[primes_key])
    a = random_residues(rng, primes, n)
    b = random_residues(rng, primes, n)
    pa = ring.poly(basis, a, device=device).ntt()
    pb = ring.poly(basis, b, device=device).ntt()
    prod = pa.multiply(pb).intt()
    assert prod.form == "coeff"
    np.testing.assert_array_equal(prod.to_numpy(), negacyclic_mul_rns(a, b, primes))


@pytest.mark.parametrize("primes_key", ["1x30", "3x36_61_41"])
@pytest.mark.parametrize("log_n", [4, 7, 10])
def test_ntt_product_more_prime_sizes(log_n, primes_key, rng, device):
    n = 1 << log_n
    _, basis, primes = _mk(n, PRIME_SETS[primes_key])
    a = random_residues(rng, primes, n)
    b = random_residues(rng, primes, n)
    # Worst-case words: all q - 1.
    a[:, : n // 4] = np.array(primes, dtype=np.uint64)[:, None] - 1
    b[:, n // 8 : n // 2] = np.array(primes, dtype=np.uint64)[:, None] - 1
    prod = ring.poly(basis, a, device=device).ntt() * ring.poly(basis, b, device=device).ntt()
    np.testing.assert_array_equal(prod.intt().to_numpy(), negacyclic_mul_rns(a, b, primes))


def test_ntt_product_on_a_permuted_sub_basis(rng, device):
    # A basis that uses primes (2, 0) of a 3-prime ring: each limb must use its own prime's tables.
    n = 256
    primes = distinct_primes([61, 40, 50], n)
    ctx = ring.RingContext.create(n, primes)
    basis = ring.RnsBasis(ctx, [2, 0])
    sub = [primes[2], primes[0]]
    assert list(basis.primes) == sub
    a = random_residues(rng, sub, n)
    b = random_residues(rng, sub, n)
    prod = ring.poly(basis, a, device=device).ntt() * ring.poly(basis, b, device=device).ntt()
    np.testing.assert_array_equal(prod.intt().to_numpy(), negacyclic_mul_rns(a, b, sub))


def test_monomial_products(device):
    # X^i * X^j = +-X^(i+j mod N): checks signs of the wrap exactly.
    n = 32
    _, basis, primes = _mk(n, [50, 33])
    for i, j in [(0, 0), (1, n - 1), (n - 1, n - 1), (5, 7), (17, 20)]:
        a = np.zeros((2, n), dtype=np.uint64)
        b = np.zeros((2, n), dtype=np.uint64)
        a[:, i] = 1
        b[:, j] = 1
        got = ring.poly(basis, a, device=device).ntt() * ring.poly(basis, b, device=device).ntt()
        got = got.intt().to_numpy()
        expect = np.zeros((2, n), dtype=np.uint64)
        k = i + j
        for l, q in enumerate(primes):
            expect[l, k % n] = 1 if k < n else q - 1
        np.testing.assert_array_equal(got, expect)


ROUNDTRIP_CASES = [
    (16, 1, 61),
    (64, 2, 30),
    (1 << 10, 3, 55),
    (1 << 12, 8, 50),
    (1 << 13, 13, 45),
    (1 << 14, 16, 60),
    (1 << 15, 5, 61),
    (1 << 16, 2, 40),
    (1 << 17, 1, 61),
    (1 << 17, 64, 50),
]


@pytest.mark.parametrize(
    "n,limbs,bits", ROUNDTRIP_CASES, ids=[f"N{c[0]}x{c[1]}" for c in ROUNDTRIP_CASES]
)
def test_intt_of_ntt_is_identity(n, limbs, bits, rng, device):
    primes = ring.generate_ntt_primes(bits, n, limbs)
    _, basis = ring.make_ring(n, primes)
    a = random_residues(rng, primes, n)
    p = ring.poly(basis, a, device=device)
    e = p.ntt()
    assert e.form == "eval" and p.form == "coeff"
    ev = e.to_numpy()
    # NTT output is fully reduced, and not the input (a sanity check that something happened).
    assert (ev < np.array(primes, dtype=np.uint64)[:, None]).all()
    assert not np.array_equal(ev, a)
    back = e.intt()
    np.testing.assert_array_equal(back.to_numpy(), a)
    # The in-place variants agree with the copying ones.
    p.ntt_inplace()
    assert p.form == "eval"
    np.testing.assert_array_equal(p.to_numpy(), ev)
    p.intt_inplace()
    np.testing.assert_array_equal(p.to_numpy(), a)


@pytest.mark.parametrize("n,bits", [(16, [61, 30]), (64, [50, 41]), (256, [59])])
def test_eval_slot_order_is_bit_reversed_odd_powers(n, bits, rng, device):
    # Documented: slot j of eval form holds a(psi^(2*bitrev(j)+1)) with psi = RingContext.psi(id).
    ctx, basis, primes = _mk(n, bits)
    log_n = n.bit_length() - 1
    a = random_residues(rng, primes, n)
    ev = ring.poly(basis, a, device=device).ntt().to_numpy()
    for l, q in enumerate(primes):
        psi = int(ctx.psi(l))
        assert pow(psi, n, q) == q - 1 and pow(psi, 2 * n, q) == 1
        assert psi == ring.primitive_root_2n(q, n)
        coeffs = [int(x) for x in a[l]]
        expect = [poly_eval(coeffs, pow(psi, 2 * bitrev(j, log_n) + 1, q), q) for j in range(n)]
        assert [int(x) for x in ev[l]] == expect


@pytest.mark.parametrize("log_n,bits", [(13, [61, 40]), (15, [50]), (17, [61, 36])])
def test_eval_slots_at_large_n(log_n, bits, rng, device):
    # A sample of slots at large N, each checked by Horner evaluation with Python integers.
    n = 1 << log_n
    ctx, basis, primes = _mk(n, bits)
    a = random_residues(rng, primes, n)
    ev = ring.poly(basis, a, device=device).ntt().to_numpy()
    slots = [0, 1, n // 2, n - 1] + [int(j) for j in rng.integers(0, n, 4)]
    for l, q in enumerate(primes):
        psi = int(ctx.psi(l))
        coeffs = [int(x) for x in a[l]]
        for j in slots:
            assert int(ev[l, j]) == poly_eval(coeffs, pow(psi, 2 * bitrev(j, log_n) + 1, q), q), j


def test_ntt_product_at_n_16384(rng, device):
    n = 1 << 14
    _, basis, primes = _mk(n, [61])
    a = random_residues(rng, primes, n)
    b = random_residues(rng, primes, n)
    prod = ring.poly(basis, a, device=device).ntt() * ring.poly(basis, b, device=device).ntt()
    np.testing.assert_array_equal(prod.intt().to_numpy(), negacyclic_mul_rns(a, b, primes))


def test_ntt_of_constants_and_x(device):
    n = 128
    ctx, basis, primes = _mk(n, [61, 45])
    log_n = 7
    one = np.zeros((2, n), dtype=np.uint64)
    one[:, 0] = 1
    np.testing.assert_array_equal(
        ring.poly(basis, one, device=device).ntt().to_numpy(), np.ones((2, n), dtype=np.uint64)
    )
    x = np.zeros((2, n), dtype=np.uint64)
    x[:, 1] = 1
    ev = ring.poly(basis, x, device=device).ntt().to_numpy()
    for l, q in enumerate(primes):
        psi = int(ctx.psi(l))
        assert [int(v) for v in ev[l]] == [pow(psi, 2 * bitrev(j, log_n) + 1, q) for j in range(n)]


def test_ntt_is_linear(rng, device):
    n = 1024
    _, basis, primes = _mk(n, [61, 50, 35])
    qs = np.array(primes, dtype=object)[:, None]
    a = random_residues(rng, primes, n)
    b = random_residues(rng, primes, n)
    s = ((a.astype(object) + b.astype(object)) % qs).astype(np.uint64)
    na = ring.poly(basis, a, device=device).ntt().to_numpy().astype(object)
    nb = ring.poly(basis, b, device=device).ntt().to_numpy().astype(object)
    ns = ring.poly(basis, s, device=device).ntt().to_numpy().astype(object)
    assert ((na + nb) % qs == ns).all()
    c = 0xDEADBEEFCAFEF00D
    ca = ((a.astype(object) * c) % qs).astype(np.uint64)
    nca = ring.poly(basis, ca, device=device).ntt().to_numpy().astype(object)
    assert ((na * c) % qs == nca).all()
    # Inverse NTT is linear too.
    ia = ring.poly(basis, a, "eval", device=device).intt().to_numpy().astype(object)
    ib = ring.poly(basis, b, "eval", device=device).intt().to_numpy().astype(object)
    i_s = ring.poly(basis, s, "eval", device=device).intt().to_numpy().astype(object)
    assert ((ia + ib) % qs == i_s).all()


def test_ntt_of_zero_and_of_max_values(device):
    n = 4096
    _, basis, primes = _mk(n, [61, 30])
    z = ring.RnsPoly.zeros(basis, "coeff", device)
    assert not z.ntt().to_numpy().any()
    full = np.array(primes, dtype=np.uint64)[:, None] - np.zeros((1, n), dtype=np.uint64) - 1
    ev = ring.poly(basis, full, device=device).ntt()
    assert (ev.to_numpy() < np.array(primes, dtype=np.uint64)[:, None]).all()
    np.testing.assert_array_equal(ev.intt().to_numpy(), full)


@pytest.mark.parametrize("log_n", [12, 17])
def test_ntt_at_the_unreduced_bound(log_n, rng, device):
    """Primes just below 2^57 run forward transforms without reductions (CPU and GPU): the
    largest words (all q - 1) through every stage of N up to 2^17, checked by linearity against
    random words and by the round trip. A word past 2^64 would break both."""
    n = 1 << log_n
    _, basis, primes = _mk(n, [57, 56, 55])
    qs = np.array(primes, dtype=object)[:, None]
    full = np.array(primes, dtype=np.uint64)[:, None] - np.zeros((1, n), dtype=np.uint64) - 1
    a = random_residues(rng, primes, n)
    s = ((full.astype(object) + a.astype(object)) % qs).astype(np.uint64)
    nf = ring.poly(basis, full, device=device).ntt()
    na = ring.poly(basis, a, device=device).ntt().to_numpy().astype(object)
    ns = ring.poly(basis, s, device=device).ntt().to_numpy().astype(object)
    assert (nf.to_numpy() < np.array(primes, dtype=np.uint64)[:, None]).all()
    assert ((nf.to_numpy().astype(object) + na) % qs == ns).all()
    np.testing.assert_array_equal(nf.intt().to_numpy(), full)
