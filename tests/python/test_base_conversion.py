"""Fast base conversion, ModUp and ModDown against Python CRT reconstructions."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import ring
from ringref import Crt, centered, distinct_primes, product, random_residues


def split_ring(n, q_bits, p_bits):
    """A ring over Q primes then P primes; returns (ctx, Q basis, P basis, q primes, p primes)."""
    primes = distinct_primes(list(q_bits) + list(p_bits), n)
    ctx = ring.RingContext.create(n, primes)
    lq = len(q_bits)
    qb = ring.RnsBasis(ctx, list(range(lq)))
    pb = ring.RnsBasis(ctx, list(range(lq, len(primes))))
    return ctx, qb, pb, primes[:lq], primes[lq:]


def check_fast_conversion(x_res, out, q_primes, p_primes):
    """Every column of `out` (over P) holds x + u*Q for one integer 0 <= u < |Q|, where x is the
    CRT value of the column of `x_res` (over Q). Also checks u against the defining formula
    u = floor(sum_i [x_i (Q/q_i)^-1]_{q_i} / q_i)."""
    crt_q = Crt(q_primes)
    qm = crt_q.modulus
    xs = crt_q.values(x_res)
    inv = [pow(qm // q, -1, q) for q in q_primes]
    us = []
    for c, x in enumerate(xs):
        assert 0 <= x < qm
        # Which u (if any) makes the residues consistent in every target prime.
        cands = [
            u
            for u in range(len(q_primes))
            if all(int(out[j, c]) == (x + u * qm) % p for j, p in enumerate(p_primes))
        ]
        assert cands, f"column {c}: no u in [0, {len(q_primes)}) explains the output"
        y = [int(x_res[i, c]) * inv[i] % q for i, q in enumerate(q_primes)]
        # sum_i y_i (Q/q_i) = x + u Q exactly, with the same u as above.
        s = sum(yi * (qm // q) for yi, q in zip(y, q_primes))
        u = (s - x) // qm
        assert (s - x) % qm == 0 and u in cands
        us.append(u)
    return us


@pytest.mark.parametrize(
    "n,q_bits,p_bits",
    [
        (16, [61], [61]),
        (64, [50, 40, 61], [60, 55]),
        (256, [30, 61, 45, 52], [61]),
        (32, [61] * 33, [61, 40, 50]),  # 33 source limbs: crosses the 32-term fold of the sum
        (16, [61] * 64, [61, 59]),
    ],
    ids=["1to1", "3to2", "4to1", "33to3", "64to2"],
)
def test_base_converter_gives_x_plus_uq(n, q_bits, p_bits, rng, device):
    _, qb, pb, qp, pp = split_ring(n, q_bits, p_bits)
    x = random_residues(rng, qp, n)
    x[:, 0] = 0  # x = 0 gives u = 0
    x[:, 1] = np.array(qp, dtype=np.uint64) - 1  # x = Q - 1, the largest value
    conv = ring.BaseConverter(qb, pb)
    out = conv.convert(ring.poly(qb, x, device=device))
    assert out.form == "coeff" and out.basis == pb and out.device == device
    arr = out.to_numpy()
    assert (arr < np.array(pp, dtype=np.uint64)[:, None]).all()
    us = check_fast_conversion(x, arr, qp, pp)
    assert us[0] == 0
    # The input is unchanged.
    np.testing.assert_array_equal(ring.poly(qb, x).to_numpy(), x)


def test_base_converter_small_values_are_exact_when_u_is_zero(rng, device):
    # x < Q with a single source prime: u = 0 always, so the conversion is exact.
    n = 64
    _, qb, pb, qp, pp = split_ring(n, [61], [50, 40, 30])
    x = random_residues(rng, qp, n)
    out = ring.BaseConverter(qb, pb).convert(ring.poly(qb, x, device=device)).to_numpy()
    expect = np.array([[int(v) % p for v in x[0]] for p in pp], dtype=np.uint64)
    np.testing.assert_array_equal(out, expect)


def test_base_converter_permuted_bases(rng, device):
    # Source and target bases made of non-contiguous, permuted prime ids.
    n = 64
    primes = distinct_primes([61, 50, 40, 59, 45, 33], n)
    ctx = ring.RingContext.create(n, primes)
    qb = ring.RnsBasis(ctx, [4, 0, 2])
    pb = ring.RnsBasis(ctx, [5, 1, 3])
    qp = [primes[i] for i in (4, 0, 2)]
    pp = [primes[i] for i in (5, 1, 3)]
    x = random_residues(rng, qp, n)
    out = ring.BaseConverter(qb, pb).convert(ring.poly(qb, x, device=device)).to_numpy()
    check_fast_conversion(x, out, qp, pp)


@pytest.mark.parametrize(
    "q_bits,p_bits", [([50, 40, 61], [60, 55]), ([61] * 40, [61, 61, 61])], ids=["3+2", "40+3"]
)
def test_mod_up_keeps_q_limbs_and_extends_to_p(q_bits, p_bits, rng, device):
    n = 32
    _, qb, pb, qp, pp = split_ring(n, q_bits, p_bits)
    ext = ring.BaseExtender(qb, pb)
    assert len(ext.qp) == len(qp) + len(pp)
    assert list(ext.qp.primes) == qp + pp
    x = random_residues(rng, qp, n)
    up = ext.mod_up(ring.poly(qb, x, device=device))
    assert up.basis == ext.qp and up.form == "coeff" and up.device == device
    arr = up.to_numpy()
    np.testing.assert_array_equal(arr[: len(qp)], x)
    check_fast_conversion(x, arr[len(qp) :], qp, pp)


def _mod_down_errors(x_res, out, q_primes, p_primes):
    """e = out - round(X / P) mod Q (centered) for every column, X the CRT value over QP."""
    crt_qp = Crt(list(q_primes) + list(p_primes))
    crt_q = Crt(q_primes)
    pm = product(p_primes)
    qm = crt_q.modulus
    xs = crt_qp.values(x_res)
    got = crt_q.values(out)
    return [centered(g - (x + pm // 2) // pm, qm) for g, x in zip(got, xs)]


@pytest.mark.parametrize(
    "n,q_bits,p_bits",
    [
        (64, [50, 40], [61]),
        (256, [50, 50, 50], [60, 60, 60, 60, 60]),
        (64, [40] * 4, [61] * 8),
        (32, [61] * 3, [61] * 34),
    ],
    ids=["2+1", "3+5", "4+8", "3+34"],
)
def test_mod_down_rounds_within_len_p(n, q_bits, p_bits, rng, device):
    _, qb, pb, qp, pp = split_ring(n, q_bits, p_bits)
    ext = ring.BaseExtender(qb, pb)
    x = random_residues(rng, qp + pp, n)
    down = ext.mod_down(ring.poly(ext.qp, x, device=device))
    assert down.basis == qb and down.form == "coeff" and down.device == device
    out = down.to_numpy()
    assert (out < np.array(qp, dtype=np.uint64)[:, None]).all()
    errs = _mod_down_errors(x, out, qp, pp)
    assert max(abs(e) for e in errs) <= len(pp), sorted(set(errs))
    if len(pp) == 1:
        # One special prime: the fast conversion P -> Q of a single residue is exact.
        assert set(errs) == {0}


def test_mod_down_of_multiple_of_p(rng, device):
    # X = P * a + r with |r| < P/2: round(X / P) = a, so ModDown recovers a up to len(P).
    n = 128
    _, qb, pb, qp, pp = split_ring(n, [61, 45, 50], [60, 59, 58])
    pm, qm = product(pp), product(qp)
    a_vals = [int(v) for v in rng.integers(-(2**62), 2**62, n)]
    r_vals = [int(v) for v in rng.integers(-(2**40), 2**40, n)]
    xs = [(pm * a + r) % (pm * qm) for a, r in zip(a_vals, r_vals)]
    x = Crt(qp + pp).residues(xs)
    out = (
        ring.BaseExtender(qb, pb)
        .mod_down(ring.poly(ring.BaseExtender(qb, pb).qp, x, device=device))
        .to_numpy()
    )
    got = [centered(v, qm) for v in Crt(qp).values(out)]
    errs = [g - a for g, a in zip(got, a_vals)]
    assert max(abs(e) for e in errs) <= len(pp), sorted(set(errs))


@pytest.mark.parametrize(
    "q_bits,p_bits",
    [([50, 50, 50], [60, 60, 60, 60, 60]), ([40] * 4, [61] * 8)],
    ids=["3+5", "4+8"],
)
def test_mod_down_error_within_documented_header_bound(q_bits, p_bits, rng, device):
    # include/ember/ring/base_converter.h documents BaseExtender::mod_down as
    # "round(a / P) + e over Q with -|P| < e <= 0" (the fast conversion's overflow u lowers it).
    n = 1024
    _, qb, pb, qp, pp = split_ring(n, q_bits, p_bits)
    ext = ring.BaseExtender(qb, pb)
    x = random_residues(rng, qp + pp, n)
    out = ext.mod_down(ring.poly(ext.qp, x, device=device)).to_numpy()
    errs = _mod_down_errors(x, out, qp, pp)
    bad = sorted({e for e in errs if not (-len(pp) < e <= 0)})
    assert not bad, (
        f"|P|={len(pp)}: errors {bad} are outside the documented range (-{len(pp)}, 0]; "
        f"observed error range [{min(errs)}, {max(errs)}]"
    )


def test_conversion_errors(device):
    n = 16
    ctx, qb, pb, qp, pp = split_ring(n, [50, 40], [60])
    # Overlapping bases.
    with pytest.raises(ember.MismatchError):
        ring.BaseConverter(qb, ring.RnsBasis(ctx, [1, 2]))
    with pytest.raises(ember.MismatchError):
        ring.BaseConverter(qb, qb)
    with pytest.raises(ember.MismatchError):
        ring.BaseExtender(qb, ring.RnsBasis(ctx, [2, 0]))
    # Bases of different rings (same primes, other context object).
    ctx2 = ring.RingContext.create(n, qp + pp)
    with pytest.raises(ember.MismatchError):
        ring.BaseConverter(qb, ring.RnsBasis(ctx2, [2]))
    conv = ring.BaseConverter(qb, pb)
    ext = ring.BaseExtender(qb, pb)
    zq = ring.RnsPoly.zeros(qb, "coeff", device)
    # Wrong form.
    with pytest.raises(ember.MismatchError, match="coeff"):
        conv.convert(ring.RnsPoly.zeros(qb, "eval", device))
    with pytest.raises(ember.MismatchError):
        ext.mod_up(ring.RnsPoly.zeros(qb, "eval", device))
    with pytest.raises(ember.MismatchError):
        ext.mod_down(ring.RnsPoly.zeros(ext.qp, "eval", device))
    # Wrong basis.
    with pytest.raises(ember.MismatchError):
        conv.convert(ring.RnsPoly.zeros(pb, "coeff", device))
    with pytest.raises(ember.MismatchError):
        ext.mod_up(ring.RnsPoly.zeros(ext.qp, "coeff", device))
    with pytest.raises(ember.MismatchError):
        ext.mod_down(zq)
    # MismatchError is also a ValueError.
    with pytest.raises(ValueError):
        conv.convert(ring.RnsPoly.zeros(qb, "eval", device))


@pytest.mark.parametrize(
    "n,q_bits,p_bits",
    [
        (16, [30], [29]),
        (64, [30, 29, 28], [30, 27]),
        (32, [30] * 9, [29, 30]),  # 9 source limbs: crosses the 8-term fold of the 32-bit sum
        (16, [30] * 40, [30] * 3),
    ],
    ids=["1to1", "3to2", "9to2", "40to3"],
)
def test_base_conversion_on_32_bit_words_equals_64_bit(n, q_bits, p_bits, rng, device):
    """The same conversions (fast, exact, centered with input and output maps) on 32-bit words
    give the 64-bit words, for primes below 2^30."""
    _, qb, pb, q_primes, p_primes = split_ring(n, q_bits, p_bits)
    x = random_residues(rng, q_primes, n)
    x[:, 0] = 0
    x[:, 1] = np.array(q_primes, dtype=np.uint64) - 1
    in_mul = [int(v) for v in rng.integers(1, 1 << 29, len(q_primes))]
    out_mul = [int(v) for v in rng.integers(1, 1 << 29, len(p_primes))]
    converters = [
        ember._ember.BaseConverter(qb, pb, False),
        ember._ember.BaseConverter(qb, pb, True),
        ember._ember.BaseConverter.centered(qb, pb),
        ember._ember.BaseConverter.centered(qb, pb, in_mul, out_mul),
    ]
    x64 = ring.poly(qb, x, device=device)
    x32 = ember._ember.RnsPoly32.from_numpy(qb, x.astype(np.uint32), "coeff", device)
    for conv in converters:
        want = conv.convert(x64).to_numpy()
        got = conv.convert(x32).to_numpy()
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got.astype(np.uint64), want)
    exact = converters[1].convert(x32).to_numpy()
    crt = Crt(q_primes)
    for c, v in enumerate(crt.values(x)):
        if c == 1:
            continue  # Q - 1: HPS's floating-point overflow estimate needs a margin from Q
        assert [int(exact[j, c]) for j in range(len(p_primes))] == [v % p for p in p_primes]


def test_base_conversion_on_32_bit_words_refuses_wide_primes(rng, device):
    ctx, _, _, q_primes, _ = split_ring(16, [30, 31], [30])
    x = ember._ember.RnsPoly32.from_numpy(
        ring.RnsBasis(ctx, [0]), random_residues(rng, q_primes[:1], 16).astype(np.uint32)
    )
    with pytest.raises(ember.errors.ParameterError, match="below 2\\^30"):
        ember._ember.BaseConverter(ring.RnsBasis(ctx, [0]), ring.RnsBasis(ctx, [1]), False).convert(
            x
        )


@pytest.mark.parametrize(
    "n,q_bits,t_bits", [(16, [30, 29], [28]), (32, [30] * 5, [29, 30]), (16, [30] * 12, [30] * 3)]
)
def test_divide_round_on_32_bit_words_equals_64_bit_and_rounds(n, q_bits, t_bits, rng, device):
    """Division by the product T of one, two or three trailing primes with rounding (a rescale by
    a prime pair is |T| = 2): the 32-bit words equal the 64-bit ones and round(x / T) mod q_i."""
    _, qb, tb, q_primes, t_primes = split_ring(n, q_bits, t_bits)
    x_q, x_t = random_residues(rng, q_primes, n), random_residues(rng, t_primes, n)
    div = ember._ember.DivideRound(qb, tb)
    want = div.divide(ring.poly(qb, x_q, device=device), ring.poly(tb, x_t, device=device))
    got = div.divide(
        ember._ember.RnsPoly32.from_numpy(qb, x_q.astype(np.uint32), "coeff", device),
        ember._ember.RnsPoly32.from_numpy(tb, x_t.astype(np.uint32), "coeff", device),
    ).to_numpy()
    np.testing.assert_array_equal(got.astype(np.uint64), want.to_numpy())
    t = product(t_primes)
    crt = Crt(q_primes + t_primes)
    for c, x in enumerate(crt.values(np.vstack([x_q, x_t]))):
        rounded = (x + t // 2) // t  # delta centered in (-T/2, T/2]
        assert [int(got[i, c]) for i in range(len(q_primes))] == [rounded % q for q in q_primes]


def test_multiply_scalar_on_32_bit_words_equals_64_bit(rng, device):
    _, qb, _, q_primes, _ = split_ring(64, [30, 29, 27], [30])
    x = random_residues(rng, q_primes, 64)
    scalars = [int(v) for v in rng.integers(0, 1 << 62, len(q_primes), dtype=np.uint64)]
    x32 = ember._ember.RnsPoly32.from_numpy(qb, x.astype(np.uint32), "coeff", device)
    x64 = ring.poly(qb, x, device=device)
    got = x32.multiply_scalar_per_limb(scalars).to_numpy()
    want = x64.multiply_scalar_per_limb(scalars).to_numpy()
    np.testing.assert_array_equal(got.astype(np.uint64), want)
    np.testing.assert_array_equal(
        x32.multiply_scalar(scalars[0]).to_numpy().astype(np.uint64),
        x64.multiply_scalar(scalars[0]).to_numpy(),
    )
