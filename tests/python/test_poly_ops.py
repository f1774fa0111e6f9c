"""Pointwise RnsPoly arithmetic, automorphisms, copies and constructors against Python integers."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import ring
from ringref import automorphism_coeff, distinct_primes, random_residues

N = 64
BITS = [61, 40, 30, 52]


@pytest.fixture(scope="module")
def setup():
    primes = distinct_primes(BITS, N)
    ctx, basis = ring.make_ring(N, primes)
    return ctx, basis, primes


def qcol(primes):
    return np.array([int(p) for p in primes], dtype=object)[:, None]


def obj(a):
    return np.asarray(a).astype(object)


def as_u64(a):
    return np.array(a, dtype=np.uint64)


def edge_residues(rng, primes, n):
    """Random residues with 0, 1, q-1 planted in the first columns."""
    a = random_residues(rng, primes, n)
    q = np.array(primes, dtype=np.uint64)
    a[:, 0] = 0
    a[:, 1] = 1
    a[:, 2] = q - 1
    a[:, 3] = q - 1
    return a


@pytest.mark.parametrize("form", ["coeff", "eval"])
def test_add_sub_negate(setup, rng, device, form):
    _, basis, primes = setup
    qs = qcol(primes)
    a = edge_residues(rng, primes, N)
    b = edge_residues(rng, primes, N)
    b[:, 1] = np.array(primes, dtype=np.uint64) - 1  # 1 + (q-1) wraps to 0
    b[:, 0] = 1  # 0 - 1 wraps to q-1
    pa = ring.poly(basis, a, form, device)
    pb = ring.poly(basis, b, form, device)
    for got, expect in [
        (pa.add(pb), (obj(a) + obj(b)) % qs),
        (pa + pb, (obj(a) + obj(b)) % qs),
        (pa.sub(pb), (obj(a) - obj(b)) % qs),
        (pa - pb, (obj(a) - obj(b)) % qs),
        (pb.sub(pa), (obj(b) - obj(a)) % qs),
        (pa.negate(), (-obj(a)) % qs),
        (-pa, (-obj(a)) % qs),
    ]:
        assert got.form == form and got.device == device and got.basis == basis
        np.testing.assert_array_equal(got.to_numpy(), as_u64(expect))
    # Operands are left untouched.
    np.testing.assert_array_equal(pa.to_numpy(), a)
    np.testing.assert_array_equal(pb.to_numpy(), b)


def test_multiply_pointwise(setup, rng, device):
    _, basis, primes = setup
    qs = qcol(primes)
    a = edge_residues(rng, primes, N)
    b = edge_residues(rng, primes, N)
    pa = ring.poly(basis, a, "eval", device)
    pb = ring.poly(basis, b, "eval", device)
    expect = as_u64((obj(a) * obj(b)) % qs)
    np.testing.assert_array_equal(pa.multiply(pb).to_numpy(), expect)
    np.testing.assert_array_equal((pa * pb).to_numpy(), expect)
    assert pa.multiply(pb).form == "eval"


def test_multiply_accumulate_inplace(setup, rng, device):
    _, basis, primes = setup
    qs = qcol(primes)
    acc = edge_residues(rng, primes, N)
    a = edge_residues(rng, primes, N)
    b = edge_residues(rng, primes, N)
    c = random_residues(rng, primes, N)
    d = random_residues(rng, primes, N)
    p = ring.poly(basis, acc, "eval", device)
    pa, pb = ring.poly(basis, a, "eval", device), ring.poly(basis, b, "eval", device)
    pc, pd = ring.poly(basis, c, "eval", device), ring.poly(basis, d, "eval", device)
    ret = p.multiply_accumulate_inplace(pa, pb)
    assert ret is None or ret is p
    expect = (obj(acc) + obj(a) * obj(b)) % qs
    np.testing.assert_array_equal(p.to_numpy(), as_u64(expect))
    p.multiply_accumulate_inplace(pc, pd)
    expect = (expect + obj(c) * obj(d)) % qs
    np.testing.assert_array_equal(p.to_numpy(), as_u64(expect))
    # Accumulating a product with itself as an operand (aliasing of out and a).
    p.multiply_accumulate_inplace(p, pa)
    expect = (expect + expect * obj(a)) % qs
    np.testing.assert_array_equal(p.to_numpy(), as_u64(expect))


@pytest.mark.parametrize("form", ["coeff", "eval"])
def test_multiply_scalar(setup, rng, device, form):
    _, basis, primes = setup
    qs = qcol(primes)
    a = edge_residues(rng, primes, N)
    pa = ring.poly(basis, a, form, device)
    for s in [
        0,
        1,
        2,
        primes[0] - 1,
        primes[1],
        primes[2] + 5,
        2**61 + 7,
        2**64 - 1,
        int(rng.integers(0, 2**63)) * 2 + 1,
    ]:
        got = pa.multiply_scalar(s)
        assert got.form == form
        np.testing.assert_array_equal(got.to_numpy(), as_u64((obj(a) * s) % qs), err_msg=f"s={s}")


def test_multiply_scalar_per_limb(setup, rng, device):
    _, basis, primes = setup
    qs = qcol(primes)
    a = edge_residues(rng, primes, N)
    pa = ring.poly(basis, a, "eval", device)
    for scalars in [
        [0, 1, 2, 3],
        [p - 1 for p in primes],
        [2**64 - 1, 2**63, primes[0], 12345],
        [int(x) for x in rng.integers(0, 2**62, 4)],
    ]:
        got = pa.multiply_scalar_per_limb(scalars)
        expect = (obj(a) * np.array(scalars, dtype=object)[:, None]) % qs
        np.testing.assert_array_equal(got.to_numpy(), as_u64(expect), err_msg=str(scalars))


AUTO_KS = [1, 3, 5, 25, 2 * N - 1, N + 1, N - 1, 77]


@pytest.mark.parametrize("k", AUTO_KS)
def test_automorphism_coeff_form_matches_definition(setup, rng, device, k):
    _, basis, primes = setup
    a = edge_residues(rng, primes, N)
    got = ring.poly(basis, a, "coeff", device).automorphism(k)
    assert got.form == "coeff"
    expect = np.array(
        [automorphism_coeff(a[l], k, q) for l, q in enumerate(primes)], dtype=np.uint64
    )
    np.testing.assert_array_equal(got.to_numpy(), expect)


@pytest.mark.parametrize("k", AUTO_KS)
def test_automorphism_eval_form_commutes_with_ntt(setup, rng, device, k):
    _, basis, primes = setup
    a = edge_residues(rng, primes, N)
    pa = ring.poly(basis, a, "coeff", device)
    via_eval = pa.ntt().automorphism(k)
    assert via_eval.form == "eval"
    np.testing.assert_array_equal(via_eval.to_numpy(), pa.automorphism(k).ntt().to_numpy())
    np.testing.assert_array_equal(
        via_eval.intt().to_numpy(),
        np.array([automorphism_coeff(a[l], k, q) for l, q in enumerate(primes)], dtype=np.uint64),
    )


@pytest.mark.parametrize("n", [16, 2048])
def test_automorphism_galois_group_and_composition(rng, device, n):
    primes = distinct_primes([50, 61], n)
    _, basis = ring.make_ring(n, primes)
    a = random_residues(rng, primes, n)
    pa = ring.poly(basis, a, "coeff", device)
    ea = pa.ntt()
    for k1, k2 in [
        (5, 5),
        (3, 2 * n - 1),
        (5, pow(5, -1, 2 * n)),
        (2 * n - 1, 2 * n - 1),
        (int(rng.integers(0, n)) * 2 + 1, int(rng.integers(0, n)) * 2 + 1),
    ]:
        k = k1 * k2 % (2 * n)
        for p in (pa, ea):
            np.testing.assert_array_equal(
                p.automorphism(k1).automorphism(k2).to_numpy(),
                p.automorphism(k).to_numpy(),
                err_msg=f"{k1},{k2}",
            )
    # k = 1 is the identity in both forms.
    np.testing.assert_array_equal(pa.automorphism(1).to_numpy(), a)
    np.testing.assert_array_equal(ea.automorphism(1).to_numpy(), ea.to_numpy())
    if n == 2048:
        for k in [3, 5, 2 * n - 1, 1235]:
            expect = np.array(
                [automorphism_coeff(a[l], k, q) for l, q in enumerate(primes)], dtype=np.uint64
            )
            np.testing.assert_array_equal(pa.automorphism(k).to_numpy(), expect)
            np.testing.assert_array_equal(
                ea.automorphism(k).to_numpy(),
                ring.poly(basis, expect, device=device).ntt().to_numpy(),
            )


def test_copy_to_device_roundtrip(setup, rng, device):
    _, basis, primes = setup
    a = random_residues(rng, primes, N)
    for form in ("coeff", "eval"):
        p = ring.poly(basis, a, form, device)
        for q in (p.to(device), p.to("cpu"), p.copy()):
            assert q.form == form and q.device == device and q.basis == basis
            np.testing.assert_array_equal(q.to_numpy(), a)
        # A copy is independent storage.
        c = p.copy()
        if form == "coeff":
            c.ntt_inplace()
        else:
            c.intt_inplace()
        assert p.form == form
        np.testing.assert_array_equal(p.to_numpy(), a)
        assert not np.array_equal(c.to_numpy(), a)


def test_zeros_and_properties(setup, device):
    ctx, basis, primes = setup
    for form in ("coeff", "eval"):
        z = ring.RnsPoly.zeros(basis, form, device)
        assert z.form == form and z.device == device
        assert z.limbs == len(primes) and z.n == N
        assert z.to_numpy().shape == (len(primes), N)
        assert z.to_numpy().dtype == np.uint64
        assert not z.to_numpy().any()
        assert "N=64" in repr(z) and "limbs=4" in repr(z)
    assert basis.n == N and len(basis) == 4 and list(basis.ids) == [0, 1, 2, 3]
    assert list(basis.primes) == primes
    assert ctx.n == N and ctx.log_n == 6 and ctx.prime_count == 4
    assert [ctx.prime(i) for i in range(4)] == primes


def test_from_signed(setup, rng, device):
    _, basis, primes = setup
    v = rng.integers(-(2**62), 2**62, size=N, dtype=np.int64)
    v[:6] = [0, 1, -1, 2**63 - 1, -(2**63), -(2**63) + 1]
    v[6] = -int(primes[2])
    v[7] = int(primes[1]) + 1
    p = ring.RnsPoly.from_signed(basis, v, "coeff", device)
    assert p.form == "coeff"
    expect = np.array([[int(x) % q for x in v] for q in primes], dtype=np.uint64)
    np.testing.assert_array_equal(p.to_numpy(), expect)
    pe = ring.RnsPoly.from_signed(basis, v, "eval", device)
    assert pe.form == "eval"
    np.testing.assert_array_equal(pe.to_numpy(), p.ntt().to_numpy())
    # Default form is coeff.
    np.testing.assert_array_equal(
        ring.RnsPoly.from_signed(basis, v, device=device).to_numpy(), expect
    )


def test_poly_helper_accepts_integer_dtypes(setup, device):
    _, basis, _primes = setup
    small = np.arange(4 * N, dtype=np.int64).reshape(4, N) % 29
    for dt in (np.int64, np.uint32, np.int16, np.uint64):
        p = ring.poly(basis, small.astype(dt), device=device)
        np.testing.assert_array_equal(p.to_numpy(), small.astype(np.uint64))
    # Non-contiguous input is copied.
    wide = np.zeros((4, 2 * N), dtype=np.uint64)
    wide[:, ::2] = small
    np.testing.assert_array_equal(
        ring.poly(basis, wide[:, ::2], device=device).to_numpy(), small.astype(np.uint64)
    )


def test_resolve_device_names():
    assert ember.resolve_device("cpu") == "cpu"
    assert ring.RnsPoly.zeros(ring.make_ring(16, bits=30)[1], "coeff", "cpu").device == "cpu"
