"""CPU vs GPU: the same inputs through device "cpu" and the GPU give bit-identical numpy arrays for
every ring primitive (NTT and each CUDA NTT schedule, pointwise ops, automorphisms, base
conversion, ModUp/ModDown, CRT, samplers, from_signed, transfers)."""

from __future__ import annotations

import functools
import pathlib

import ember
import numpy as np
import pytest
from ember import _ember, _ember_bench, ring

KEY = bytes(range(32))
KEY2 = bytes(range(100, 132))


# ---------------------------------------------------------------------------------------------
# Helpers


@functools.cache
def make(n: int, bits: tuple):
    """Ring of degree n over distinct NTT primes of the given sizes (cached: large rings take
    seconds to build). Returns (ctx, basis, primes)."""
    primes: list[int] = []
    for b in sorted(set(bits)):
        primes += [int(p) for p in ring.generate_ntt_primes(b, n, bits.count(b), primes)]
    order = []
    pool = {b: [p for p in primes if p.bit_length() == b] for b in set(bits)}
    for b in bits:
        order.append(pool[b].pop(0))
    ctx, basis = ring.make_ring(n, order)
    return ctx, basis, order


def residues(seed: int, primes, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((len(primes), n), dtype=np.uint64)
    for l, q in enumerate(primes):
        out[l] = rng.integers(0, q, size=n, dtype=np.uint64)
    q = np.array(primes, dtype=np.uint64)
    out[:, 0] = q - 1  # extreme words
    out[:, min(1, n - 1)] = 0
    return out


def both(basis, arr, form, gpu):
    return (ring.poly(basis, arr, form, "cpu"), ring.poly(basis, arr, form, gpu))


def check(cpu_poly, gpu_poly, gpu, what=""):
    assert cpu_poly.device == "cpu"
    assert gpu_poly.device == gpu
    assert cpu_poly.form == gpu_poly.form, what
    assert cpu_poly.basis == gpu_poly.basis, what
    np.testing.assert_array_equal(gpu_poly.to_numpy(), cpu_poly.to_numpy(), err_msg=what)


def limbs_bits(limbs: int) -> tuple:
    """Mixed prime sizes, 61-bit first (the largest lazy ranges), cycling through 30..61 bits."""
    sizes = [61, 50, 36, 59, 45, 30, 55, 40]
    return tuple(sizes[i % len(sizes)] for i in range(limbs))


# ---------------------------------------------------------------------------------------------
# Transfers and constructors


def test_transfers_roundtrip(gpu):
    _, basis, primes = make(1 << 12, limbs_bits(3))
    a = residues(1, primes, basis.n)
    for form in ("coeff", "eval"):
        p = ring.poly(basis, a, form, "cpu")
        g = p.to(gpu)
        assert g.device == gpu and g.form == form
        np.testing.assert_array_equal(g.to_numpy(), a)
        back = g.to("cpu")
        assert back.device == "cpu"
        np.testing.assert_array_equal(back.to_numpy(), a)
        np.testing.assert_array_equal(g.copy().to_numpy(), a)
        np.testing.assert_array_equal(g.to(gpu).to_numpy(), a)
        z = ring.RnsPoly.zeros(basis, form, gpu)
        assert z.device == gpu and not z.to_numpy().any()


def test_mixed_devices_are_rejected(gpu):
    if gpu == "cpu":
        pytest.skip("self-check mode: one device only")
    _, basis, primes = make(1 << 10, limbs_bits(2))
    c, g = both(basis, residues(2, primes, basis.n), "eval", gpu)
    with pytest.raises(ember.MismatchError, match="devices"):
        c.add(g)
    with pytest.raises(ember.MismatchError):
        g.multiply(c)


@pytest.mark.parametrize("form", ["coeff", "eval"])
@pytest.mark.parametrize("n,limbs", [(16, 1), (1 << 12, 8), (1 << 16, 3)])
def test_from_signed(gpu, n, limbs, form):
    _, basis, _primes = make(n, limbs_bits(limbs))
    rng = np.random.default_rng(n + limbs)
    v = rng.integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64, endpoint=True)
    v[: min(n, 6)] = [0, 1, -1, 2**63 - 1, -(2**63), -5][: min(n, 6)]
    small = rng.integers(-20, 21, size=n, dtype=np.int64)
    for vals in (v, small):
        c = ring.RnsPoly.from_signed(basis, vals, form, "cpu")
        g = ring.RnsPoly.from_signed(basis, vals, form, gpu)
        check(c, g, gpu)


# ---------------------------------------------------------------------------------------------
# NTT with the default schedule


NTT_CASES = (
    [(n, l) for n in (16, 32, 64, 128, 256, 512, 1024, 2048) for l in (1, 3)]
    + [(1 << 12, l) for l in (1, 8, 24, 40, 64)]
    + [(1 << 13, l) for l in (1, 8, 24, 40, 64)]
    + [(1 << 14, l) for l in (1, 8, 24, 40)]
    + [(1 << 15, l) for l in (1, 8, 24)]
    + [(1 << 16, l) for l in (1, 8, 40)]
    + [(1 << 17, l) for l in (1, 24, 64)]
)


@pytest.mark.parametrize("n,limbs", NTT_CASES, ids=[f"N{n}x{l}" for n, l in NTT_CASES])
def test_ntt_intt(gpu, n, limbs):
    _, basis, primes = make(n, limbs_bits(limbs))
    a = residues(n * 7 + limbs, primes, n)
    c, g = both(basis, a, "coeff", gpu)
    ce, ge = c.ntt(), g.ntt()
    check(ce, ge, gpu, "forward")
    # Inverse on independent eval-form input (not just the round trip).
    ci, gi = both(basis, a, "eval", gpu)
    check(ci.intt(), gi.intt(), gpu, "inverse")
    np.testing.assert_array_equal(ge.intt().to_numpy(), a)
    g.ntt_inplace()
    check(ce, g, gpu, "forward in place")
    g.intt_inplace()
    np.testing.assert_array_equal(g.to_numpy(), a)


def test_ntt_on_permuted_sub_basis(gpu):
    n = 1 << 13
    ctx, _, primes = make(n, limbs_bits(5))
    basis = ring.RnsBasis(ctx, [3, 0, 4])
    sub = [primes[3], primes[0], primes[4]]
    a = residues(5, sub, n)
    c, g = both(basis, a, "coeff", gpu)
    check(c.ntt(), g.ntt(), gpu)
    b = residues(6, sub, n)
    cb, gb = both(basis, b, "eval", gpu)
    check(c.ntt().multiply(cb), g.ntt().multiply(gb), gpu)


# ---------------------------------------------------------------------------------------------
# Every CUDA NTT schedule


def _variants(gpu):
    return list(_ember.ntt_variants(gpu))


def _bench_roundtrip(log_n, limbs, gpu, variant):
    """roundtrip_ok of bench_ntt for one schedule (either binding signature)."""
    try:
        res = _ember_bench.bench_ntt(
            log_n, limbs, device=gpu, variants=[variant], warmup=1, iters=2
        )
    except TypeError:
        res = _ember_bench.bench_ntt(log_n, limbs, device=gpu, variant=variant, warmup=1, iters=2)
    rows = [res] if isinstance(res, dict) else list(res)
    assert rows, "bench_ntt returned nothing"
    return all(bool(r["roundtrip_ok"]) for r in rows)


@pytest.fixture
def variant_setter(gpu):
    """Selects an NTT schedule on the GPU backend (its options' ntt_variant); restores the
    options afterwards."""
    before = _ember.backend_options(gpu)
    yield lambda device, name: ember.set_backend_options(device, ntt_variant=name)
    _ember.set_backend_options(gpu, before)


BENCH_CASES = [(4, 1), (8, 3), (12, 1), (12, 8), (14, 24), (16, 8), (17, 1), (17, 64)]


def test_every_variant_round_trips_in_bench(gpu):
    variants = _variants(gpu)
    assert variants, "the backend lists no NTT schedule"
    cases = BENCH_CASES if gpu != "cpu" else [(4, 1), (12, 2)]
    failed = [
        (v, log_n, limbs)
        for v in variants
        for log_n, limbs in cases
        if not _bench_roundtrip(log_n, limbs, gpu, v)
    ]
    assert not failed, f"bench_ntt roundtrip_ok is False for (variant, log_n, limbs): {failed}"


VARIANT_CASES = [
    (16, 1),
    (32, 2),
    (64, 1),
    (128, 3),
    (256, 1),
    (512, 2),
    (1024, 3),
    (2048, 1),
    (1 << 12, 8),
    (1 << 13, 3),
    (1 << 14, 2),
    (1 << 15, 5),
    (1 << 16, 8),
    (1 << 17, 2),
    (1 << 17, 24),
]


@pytest.mark.parametrize("n,limbs", VARIANT_CASES, ids=[f"N{n}x{l}" for n, l in VARIANT_CASES])
def test_every_variant_matches_cpu(gpu, variant_setter, n, limbs):
    _, basis, primes = make(n, limbs_bits(limbs))
    a = residues(n + 3 * limbs, primes, n)
    c_fwd = ring.poly(basis, a, "coeff", "cpu").ntt()
    c_inv = ring.poly(basis, a, "eval", "cpu").intt()
    mismatches = []
    for v in _variants(gpu) + ["auto"]:
        variant_setter(gpu, v)
        g = ring.poly(basis, a, "coeff", gpu)
        g.ntt_inplace()
        if not np.array_equal(g.to_numpy(), c_fwd.to_numpy()):
            mismatches.append((v, "forward"))
        g.intt_inplace()
        if not np.array_equal(g.to_numpy(), a):
            mismatches.append((v, "roundtrip"))
        gi = ring.poly(basis, a, "eval", gpu).intt()
        if not np.array_equal(gi.to_numpy(), c_inv.to_numpy()):
            mismatches.append((v, "inverse"))
    assert not mismatches, f"N={n} limbs={limbs}: schedules differing from the CPU: {mismatches}"


FLOAT_PATH_CASES = [(1 << 12, 5), (1 << 13, 5), (1 << 16, 5), (1 << 17, 5)]


def schedules_at_bounds(gpu, variant_setter, n: int, bits: tuple, inverse: bool) -> list:
    """Every schedule (and auto) against the CPU on inputs that push a transform's bounds: all
    q - 1, alternating 0 / q - 1, and random. Returns the mismatches (schedule, input, direction)."""
    _, basis, primes = make(n, bits)
    q = np.array(primes, dtype=np.uint64)[:, None]
    inputs = [
        np.repeat(q - 1, n, axis=1),
        np.where(np.arange(n) % 2 == 0, q - 1, 0).astype(np.uint64),
        residues(n + 11, primes, n),
    ]
    mismatches = []
    for k, a in enumerate(inputs):
        c_fwd = ring.poly(basis, a, "coeff", "cpu").ntt().to_numpy()
        c_inv = ring.poly(basis, a, "eval", "cpu").intt().to_numpy() if inverse else None
        for v in _variants(gpu) + ["auto"]:
            variant_setter(gpu, v)
            if not np.array_equal(ring.poly(basis, a, "coeff", gpu).ntt().to_numpy(), c_fwd):
                mismatches.append((v, k, "forward"))
            if inverse and not np.array_equal(
                ring.poly(basis, a, "eval", gpu).intt().to_numpy(), c_inv
            ):
                mismatches.append((v, k, "inverse"))
    return mismatches


@pytest.mark.parametrize("fp64", [True, False], ids=["fp64", "integer_only"])
@pytest.mark.parametrize("n,limbs", FLOAT_PATH_CASES, ids=[f"N{n}" for n, _ in FLOAT_PATH_CASES])
def test_fp64_ntt_path_at_its_bounds(gpu, variant_setter, n, limbs, fp64):
    """Primes of 50..46 bits (where the FP64 path's recentering period changes) on inputs that
    push the signed bounds; every schedule, both directions; on the FP64 path and with the
    option ntt_fp64=False on the integer path."""
    with ember.using_backend_options(gpu, ntt_fp64=fp64):
        mismatches = schedules_at_bounds(gpu, variant_setter, n, (50, 49, 48, 47, 46), True)
    assert not mismatches, f"N={n}: FP64-path schedules differing from the CPU: {mismatches}"


UNREDUCED_CASES = [(1 << 12, 4), (1 << 15, 4), (1 << 17, 4)]


@pytest.mark.parametrize("n,limbs", UNREDUCED_CASES, ids=[f"N{n}" for n, _ in UNREDUCED_CASES])
@pytest.mark.parametrize("unreduced", [True, False], ids=["unreduced", "reduced"])
def test_unreduced_ntt_path_at_its_bounds(gpu, variant_setter, n, limbs, unreduced):
    """Primes of 57..55 bits, whose forward transforms skip every reduction (words up to 76q at
    N = 2^17), and one of 58 bits, which keeps them; every schedule, forward; and with the
    option ntt_unreduced=False, which keeps the reductions everywhere."""
    with ember.using_backend_options(gpu, ntt_unreduced=unreduced):
        mismatches = schedules_at_bounds(gpu, variant_setter, n, (57, 56, 55, 58), False)
    assert not mismatches, f"N={n}: unreduced schedules differing from the CPU: {mismatches}"


def test_unknown_variant_is_rejected(gpu, variant_setter):
    with pytest.raises(ember.ParameterError):
        variant_setter(gpu, "no_such_schedule")


# ---------------------------------------------------------------------------------------------
# Pointwise arithmetic


POINTWISE_CASES = [(16, 1), (1 << 12, 8), (1 << 16, 3)]


@pytest.mark.parametrize("n,limbs", POINTWISE_CASES, ids=[f"N{n}x{l}" for n, l in POINTWISE_CASES])
def test_pointwise_ops(gpu, n, limbs):
    _, basis, primes = make(n, limbs_bits(limbs))
    a = residues(11, primes, n)
    b = residues(12, primes, n)
    d = residues(13, primes, n)
    for form in ("coeff", "eval"):
        ca, ga = both(basis, a, form, gpu)
        cb, gb = both(basis, b, form, gpu)
        check(ca.add(cb), ga.add(gb), gpu, f"add {form}")
        check(ca.sub(cb), ga.sub(gb), gpu, f"sub {form}")
        check(cb.sub(ca), gb.sub(ga), gpu, f"sub reversed {form}")
        check(ca.negate(), ga.negate(), gpu, f"negate {form}")
        for s in (0, 1, 3, primes[0] - 1, 2**64 - 1, 0x123456789ABCDEF):
            check(ca.multiply_scalar(s), ga.multiply_scalar(s), gpu, f"scalar {s} {form}")
        per = [(2**64 - 1) // (i + 2) for i in range(limbs)]
        check(ca.multiply_scalar_per_limb(per), ga.multiply_scalar_per_limb(per), gpu, "per limb")
    ca, ga = both(basis, a, "eval", gpu)
    cb, gb = both(basis, b, "eval", gpu)
    cd, gd = both(basis, d, "eval", gpu)
    check(ca.multiply(cb), ga.multiply(gb), gpu, "multiply")
    cd.multiply_accumulate_inplace(ca, cb)
    gd.multiply_accumulate_inplace(ga, gb)
    check(cd, gd, gpu, "multiply_accumulate")
    cd.multiply_accumulate_inplace(cd, ca)  # output aliasing an operand
    gd.multiply_accumulate_inplace(gd, ga)
    check(cd, gd, gpu, "multiply_accumulate aliased")


# ---------------------------------------------------------------------------------------------
# Automorphisms


AUTO_CASES = [(16, 1), (1 << 12, 3), (1 << 15, 2), (1 << 17, 1)]


@pytest.mark.parametrize("n,limbs", AUTO_CASES, ids=[f"N{n}x{l}" for n, l in AUTO_CASES])
def test_automorphism(gpu, n, limbs):
    _, basis, primes = make(n, limbs_bits(limbs))
    a = residues(21, primes, n)
    ks = sorted({1, 3, 5, 25, 2 * n - 1, n + 1, (5**7) % (2 * n), (2 * n // 3) | 1})
    for form in ("coeff", "eval"):
        ca, ga = both(basis, a, form, gpu)
        for k in ks:
            check(ca.automorphism(k), ga.automorphism(k), gpu, f"k={k} {form}")


# ---------------------------------------------------------------------------------------------
# Base conversion, ModUp, ModDown


CONV_CASES = [
    (16, (61,), (61,)),
    (1 << 12, (50, 40, 61), (60, 55)),
    (1 << 12, (61,) * 33, (61, 40, 50)),  # crosses the 32-term fold of the dot product
    (1 << 13, (59,) * 24, (61,) * 8),
    (1 << 16, (50, 45, 61, 36), (61, 60)),
    (256, (61,) * 64, (60,) * 3),
]


def _split(n, q_bits, p_bits):
    ctx, _, primes = make(n, tuple(q_bits) + tuple(p_bits))
    lq = len(q_bits)
    qb = ring.RnsBasis(ctx, list(range(lq)))
    pb = ring.RnsBasis(ctx, list(range(lq, len(primes))))
    return qb, pb, primes[:lq], primes[lq:]


@pytest.mark.parametrize(
    "n,q_bits,p_bits", CONV_CASES, ids=[f"N{c[0]}_{len(c[1])}to{len(c[2])}" for c in CONV_CASES]
)
def test_base_conversion_mod_up_mod_down(gpu, n, q_bits, p_bits):
    qb, pb, qp, pp = _split(n, q_bits, p_bits)
    x = residues(31, qp, n)
    cx, gx = both(qb, x, "coeff", gpu)
    conv = ring.BaseConverter(qb, pb)
    check(conv.convert(cx), conv.convert(gx), gpu, "convert Q->P")
    back = ring.BaseConverter(pb, qb)
    y = residues(32, pp, n)
    cy, gy = both(pb, y, "coeff", gpu)
    check(back.convert(cy), back.convert(gy), gpu, "convert P->Q")
    ext = ring.BaseExtender(qb, pb)
    check(ext.mod_up(cx), ext.mod_up(gx), gpu, "mod_up")
    z = residues(33, qp + pp, n)
    cz, gz = both(ext.qp, z, "coeff", gpu)
    check(ext.mod_down(cz), ext.mod_down(gz), gpu, "mod_down")


# Up to 16 inputs (source primes, and the overflow of an exact conversion) the CUDA backend
# converts on the integer tensor cores (one source: the plain kernel).
BYTE_CASES = [(1 << 12, k, kind) for k in range(1, 17) for kind in ("fast", "exact", "centered")]
SOURCE_BITS = (61, 50, 55, 61, 40, 59, 61, 45, 61, 58, 52, 61, 47, 61, 60, 54, 61)


@pytest.mark.parametrize(
    "n,sources,kind",
    [c for c in BYTE_CASES if c[1] < 16 or c[2] == "fast"]
    + [
        (1 << 16, 7, "exact"),
        (1 << 16, 8, "exact"),
        (1 << 16, 7, "fast"),
        (64, 3, "centered"),
        (1 << 12, 17, "fast"),
        (1 << 12, 16, "exact"),
    ],
    ids=lambda v: str(v),
)
def test_byte_matrix_conversion(gpu, n, sources, kind):
    qb, pb, qp, _ = _split(n, SOURCE_BITS[:sources], (60,) * 5 + (50,) * 24)
    if kind == "centered":
        conv = ring.BaseConverter.centered(qb, pb)
    else:
        conv = ring.BaseConverter(qb, pb, exact=kind == "exact")
    x = residues(40 + sources, qp, n)
    x[:, 0] = 0
    x[:, 1] = np.array(qp, dtype=np.uint64) - 1
    cx, gx = both(qb, x, "coeff", gpu)
    check(conv.convert(cx), conv.convert(gx), gpu, f"{kind} {sources} -> 29")


# ---------------------------------------------------------------------------------------------
# Big integers <-> RNS


@pytest.mark.parametrize("n,limbs,bits", [(16, 60, 60), (1 << 12, 24, 58), (1 << 14, 3, 61)])
def test_crt_to_and_from_rns(gpu, n, limbs, bits):
    primes = [int(p) for p in ring.generate_ntt_primes(bits, n, limbs)]
    _, basis = ring.make_ring(n, primes)
    qm = 1
    for p in primes:
        qm *= p
    rng = np.random.default_rng(limbs)
    values = [int.from_bytes(rng.bytes((qm.bit_length() - 2) // 8), "little") for _ in range(n)]
    values = [v if i % 2 else -v for i, v in enumerate(values)]
    values[0], values[-1] = qm // 2, -(qm // 2)
    c = ring.to_rns(values, basis, device="cpu")
    g = ring.to_rns(values, basis, device=gpu)
    check(c, g, gpu, "to_rns")
    assert ring.from_rns(g) == ring.from_rns(c) == values
    assert ring.from_rns(g, centered=False) == ring.from_rns(c, centered=False)
    conv = ring.CrtConverter(basis)
    for words in (1, 3, limbs, 2 * limbs + 1):
        raw = rng.integers(0, 2**64, size=(n, words), dtype=np.uint64)
        check(conv.to_rns(raw, "cpu"), conv.to_rns(raw, gpu), gpu, f"CrtConverter words={words}")
    x = residues(41, primes, n)
    cx, gx = both(basis, x, "coeff", gpu)
    np.testing.assert_array_equal(conv.from_rns(gx), conv.from_rns(cx))


# ---------------------------------------------------------------------------------------------
# Samplers: the same key and nonce give the same polynomial on every backend


SAMPLER_CASES = [(16, 1), (1 << 12, 8), (1 << 14, 3), (1 << 16, 2)]


@pytest.mark.parametrize("n,limbs", SAMPLER_CASES, ids=[f"N{n}x{l}" for n, l in SAMPLER_CASES])
def test_samplers(gpu, n, limbs):
    _, basis, _ = make(n, limbs_bits(limbs))
    for key, nonce in ((KEY, 0), (KEY2, 2**40 + 5)):
        sc = ring.Sampler(key, nonce)
        sg = ring.Sampler(key, nonce)
        for draw in range(2):  # consecutive draws use consecutive nonces on both
            check(sc.uniform(basis, "cpu"), sg.uniform(basis, gpu), gpu, f"uniform eval #{draw}")
            check(
                sc.uniform(basis, "cpu", "coeff"),
                sg.uniform(basis, gpu, "coeff"),
                gpu,
                "uniform coeff",
            )
            check(sc.ternary(basis, "cpu"), sg.ternary(basis, gpu), gpu, "ternary 2/3")
            for prob in (0.5, 0.05, 1.0):
                check(
                    sc.ternary(basis, "cpu", prob),
                    sg.ternary(basis, gpu, prob),
                    gpu,
                    f"ternary {prob}",
                )
            for h in (1, n // 2, n):
                check(
                    sc.ternary_hamming(basis, "cpu", h),
                    sg.ternary_hamming(basis, gpu, h),
                    gpu,
                    f"ternary_hamming {h}",
                )
            check(sc.gaussian(basis, "cpu"), sg.gaussian(basis, gpu), gpu, "gaussian 3.2")
            for sigma in (1.0, 0.5, 19.2):
                check(
                    sc.gaussian(basis, "cpu", sigma),
                    sg.gaussian(basis, gpu, sigma),
                    gpu,
                    f"gaussian {sigma}",
                )


def test_known_answers_on_gpu(gpu):
    """The frozen CPU known answers (tests/kat/ring_kat.json) come out of the GPU too."""
    import importlib.util
    import json

    kat_dir = pathlib.Path(__file__).resolve().parents[1] / "kat"
    spec = importlib.util.spec_from_file_location("make_kat", kat_dir / "make_kat.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    frozen = json.loads((kat_dir / "ring_kat.json").read_text())
    assert mod.compute(gpu) == frozen["cases"]
