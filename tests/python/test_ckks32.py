"""CKKS on 32-bit words (CkksContext32): over primes below 2^30 it gives the 64-bit context's
words for every operation (the same draws, products, conversions and divisions on half the
bytes), decrypts within the CKKS error bounds, and with levels of two primes (level_primes)
rescales by both at once, or alternating pairs and single primes (scales about two fixed points)."""

import math

import numpy as np
import pytest
from ember import _ember, ring
from ember.errors import ParameterError

KEY = bytes(range(32))


def primes(n, q_bits, p_bits):
    """NTT-friendly primes of the given sizes, all distinct (q first, then p)."""
    taken = []
    for b in q_bits + p_bits:
        taken += ring.generate_ntt_primes(b, n, 1, taken)
    return taken[: len(q_bits)], taken[len(q_bits) :]


class Pair:
    """A 64-bit and a 32-bit CKKS context over the same primes, each with a sampler of one fixed
    key, driven by the same calls."""

    def __init__(self, n, q, p, dnum, device, galois=(), level_primes=()):
        groups = list(level_primes)
        self.wide = _ember.CkksContext(n, q, p, dnum, device, None, groups)
        self.narrow = _ember.CkksContext32(n, q, p, dnum, device, None, groups)
        self.keys = {}
        for name, ctx in (("wide", self.wide), ("narrow", self.narrow)):
            s = ring.Sampler(KEY)
            sk = ctx.keygen(s)
            self.keys[name] = {
                "sampler": s,
                "sk": sk,
                "pk": ctx.public_key(sk, s),
                "relin": ctx.relin_key(sk, s),
                "galois": {g: ctx.galois_key(sk, g, s) for g in galois},
            }

    def both(self, fn):
        return fn(self.wide, self.keys["wide"]), fn(self.narrow, self.keys["narrow"])


def assert_same_words(wide_ct, narrow_ct):
    assert wide_ct.level == narrow_ct.level and wide_ct.size == narrow_ct.size
    assert wide_ct.scale == narrow_ct.scale
    for i in range(wide_ct.size):
        w, n32 = wide_ct.poly(i).to_numpy(), narrow_ct.poly(i).to_numpy()
        assert n32.dtype == np.uint32
        np.testing.assert_array_equal(n32.astype(np.uint64), w)


def encrypt(ctx, k, values, level, scale):
    pt, _, _ = ctx.encode_slots(values, level, scale)
    ct = ctx.encrypt(pt, k["pk"], k["sampler"])
    ct.scale = scale  # the Python layer's bookkeeping
    return ct


def decrypt(ctx, k, ct, count):
    m = ctx.decrypt_core(ct, k["sk"], ctx.rows(ct.level))
    return ctx.decode_slots(m, ct.scale, True, count, True, False)


@pytest.mark.parametrize(
    "dnum,level_primes", [(1, ()), (2, ()), (4, ()), (2, (1, 2, 1, 2)), (3, (2, 2, 2))]
)
def test_every_operation_gives_the_64_bit_words(dnum, level_primes, rng, device):
    n = 256
    q, p = primes(n, [29] + [28] * 5, [30, 30])
    pair = Pair(n, q, p, dnum, device, galois=(5, 25), level_primes=level_primes)
    rows = pair.narrow.rows
    x = rng.uniform(-1, 1, n // 2) + 1j * rng.uniform(-1, 1, n // 2)
    y = rng.uniform(-1, 1, n // 2)
    top, scale = pair.narrow.max_level, 2.0**26
    a = pair.both(lambda c, k: encrypt(c, k, x, top, scale))
    b = pair.both(lambda c, k: encrypt(c, k, y, top, scale))
    assert_same_words(*a)
    pt = pair.both(lambda c, k: c.encode_slots(y, top, scale)[0])
    ext = pair.both(lambda c, k: c.encode_slots(y, top, scale, False, True)[0])
    weights = rng.integers(0, 1 << 62, (3, 2, rows(top)), dtype=np.uint64)
    ops = {
        "add": lambda c, k, i: c.add(a[i], b[i]),
        "sub": lambda c, k, i: c.sub(a[i], b[i]),
        "negate": lambda c, k, i: c.negate(a[i]),
        "multiply_no_relin": lambda c, k, i: c.multiply_no_relin(a[i], b[i]),
        "multiply": lambda c, k, i: c.multiply(a[i], b[i], k["relin"]),
        "multiply_divide": lambda c, k, i: c.multiply_divide(a[i], b[i], k["relin"]),
        "rescale": lambda c, k, i: c.rescale(a[i]),
        "rotate": lambda c, k, i: c.apply_galois(a[i], k["galois"][5]),
        "drop_level": lambda c, k, i: c.drop_level(a[i], 1),
        "to_coeff": lambda c, k, i: c.to_form(a[i], "coeff"),
        "multiply_scalar": lambda c, k, i: c.multiply_scalar(a[i], [3] * len(q)),
        "linear_combination": lambda c, k, i: c.linear_combination(
            [a[i], b[i]], [[2] * len(q), [(1 << 40) + 3] * len(q)], [5] * len(q), top
        ),
        "linear_combinations": lambda c, k, i: c.linear_combinations(
            [a[i], b[i]], weights, [[7] * len(q), [0] * len(q), [1] * len(q)], top
        )[2],
        "mod_raise": lambda c, k, i: c.mod_raise(c.drop_level(a[i], 0), top),
        "dot_plain": lambda c, k, i: c.dot_plain([a[i], b[i]], [pt[i], pt[i]]),
        "add_scalar": lambda c, k, i: c.add_scalar(a[i], [9] * rows(top)),
        "linear_transform": lambda c, k, i: c.linear_transform_hoisted(
            a[i],
            [k["galois"][5]],
            [None, k["galois"][25]],
            [[(0, ext[i]), (1, ext[i])], [(1, ext[i])]],
        ),
    }
    for name, op in ops.items():
        wide = op(pair.wide, pair.keys["wide"], 0)
        narrow = op(pair.narrow, pair.keys["narrow"], 1)
        assert_same_words(wide, narrow), name
    hoisted = pair.both(
        lambda c, k: c.apply_galois_hoisted(a[0 if c is pair.wide else 1], [k["galois"][5]])
    )
    assert_same_words(hoisted[0][0], hoisted[1][0])


def test_decrypts_products_and_rotations(rng, device):
    n = 512
    q, p = primes(n, [29] + [26] * 4, [30, 30])
    pair = Pair(n, q, p, 5, device, galois=(5,))
    ctx, k = pair.narrow, pair.keys["narrow"]
    x = rng.uniform(-1, 1, n // 2)
    y = rng.uniform(-1, 1, n // 2)
    scale = float(q[-1])
    a, b = encrypt(ctx, k, x, len(q) - 1, scale), encrypt(ctx, k, y, len(q) - 1, scale)
    prod = ctx.rescale(ctx.multiply(a, b, k["relin"]))
    assert prod.level == len(q) - 2 and ctx.rows(prod.level) == len(q) - 1
    got = decrypt(ctx, k, prod, n // 2).real
    assert np.max(np.abs(got - x * y)) < 2.0**-12
    rot = ctx.apply_galois(a, k["galois"][5])
    got = decrypt(ctx, k, rot, n // 2).real
    assert np.max(np.abs(got - np.roll(x, -1))) < 2.0**-12  # ModDown rounding: ~N / 3 in slots


@pytest.mark.parametrize("words", ["wide", "narrow"])
def test_levels_of_two_primes_rescale_by_both(words, rng, device):
    """level_primes (2, 2, 2): each rescale divides by q_a q_b at once, the level drops by one
    and the scale by their product, and the product of two values keeps a 2^52 scale with
    26-bit primes."""
    n = 256
    q, p = primes(n, [29, 29, 26, 26, 26, 26], [30, 30])
    pair = Pair(n, q, p, 3, device, level_primes=(2, 2, 2))
    ctx, k = getattr(pair, words), pair.keys[words]
    assert ctx.max_level == 2 and [ctx.rows(level) for level in range(3)] == [2, 4, 6]
    x = rng.uniform(-1, 1, n // 2)
    scale = float(q[-1]) * float(q[-2])
    a = encrypt(ctx, k, x, 2, scale)
    sq = ctx.multiply(a, a, k["relin"])
    for c in (ctx.rescale(sq), ctx.multiply_divide(a, a, k["relin"])):
        assert c.level == 1
        assert c.scale == pytest.approx(scale * scale / (q[-1] * q[-2]), rel=1e-15)
        got = decrypt(ctx, k, c, n // 2).real
        assert np.max(np.abs(got - x * x)) < 2.0**-30
    with pytest.raises(ParameterError, match="adds up to 5 primes"):
        type(ctx)(n, q, p, 3, device, None, [2, 2, 1])
    with pytest.raises(ParameterError, match="level 0"):
        ctx.rescale(ctx.drop_level(a, 0))


def test_refuses_wide_primes_and_the_other_word_type(rng, device):
    n = 64
    q, p = primes(n, [29, 31], [30])
    with pytest.raises(ParameterError, match="below 2\\^30"):
        _ember.CkksContext32(n, q, p, 1, device)
    q, p = primes(n, [29, 28], [30])
    pair = Pair(n, q, p, 2, device)
    ctx, k = pair.narrow, pair.keys["narrow"]
    a = encrypt(ctx, k, np.ones(n // 2), 1, 2.0**20)
    # A ciphertext of one word type is not an operand of the other's context.
    with pytest.raises(TypeError):
        pair.wide.add(a, a)
    assert pair.wide.params_id != ctx.params_id


# ---------------------------------------------------------------- the ckks.Context layer


def params32(**kw):
    """ckks.Params with 32-bit words (insecure: N = 2^12): 50-bit levels, each a pair of primes
    of about 25 bits, unless kw says otherwise."""
    import warnings

    from ember import ckks

    args = {"log_n": 12, "scale_bits": 50, "levels": 4, "first_mod_bits": 58, "special_mods": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ckks.Params(**{**args, **kw, "word_bits": 32, "insecure": True})


@pytest.fixture(scope="module")
def ctx32():
    from ember import ckks

    ctx = ckks.Context(params32(), device="cpu")
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, 3], conjugation=True, progress=False))
    return ctx, sk, pk


def test_params_with_32_bit_words():
    from ember import ckks

    p = params32()
    small = params32(scale_bits=28, levels=3, first_mod_bits=30)
    assert p.level_primes == (2,) * 5 and len(p.q_primes) == 10 and max(p.q_primes) < 2**30
    assert all(q.bit_length() <= 30 for q in p.p_primes)
    # Levels of at most 30 bits keep one prime each.
    assert small.level_primes == (1,) * 4 and len(small.q_primes) == 4
    with pytest.raises(ParameterError, match="word_bits"):
        ckks.Params(log_n=12, word_bits=16, insecure=True)
    with pytest.raises(ParameterError, match="special_mod_bits"):
        params32(special_mod_bits=40)


def test_alternating_levels_keep_their_scales_down_to_level_zero(rng):
    """scale_bits=40 on 32-bit words: message levels alternate a pair of primes (50 bits) and one
    prime (30 bits), the top one a pair; the standard scales sit at 2^43.3 (pair levels) and
    2^36.7 (single-prime levels), and products rescaled down to level 0 keep the error within
    the tracked bound and below 2^-20."""
    from ember import ckks

    ctx = ckks.Context(params32(scale_bits=40, levels=6, special_mods=3), device="cpu")
    p = ctx.params
    assert p.level_primes == (2, 1, 2, 1, 2, 1, 2) and max(p.q_primes + p.p_primes) < 2**30
    logs = [math.log2(ctx.scale_at(lv)) for lv in range(ctx.max_level + 1)]
    assert logs[6] == 40
    for lv in range(1, 6):
        assert abs(logs[lv] - (130 / 3 if p.level_primes[lv] == 2 else 110 / 3)) < 0.1, logs
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1], progress=False))
    x = rng.uniform(-1, 1, ctx.slots)
    ct, want = ctx.encrypt(x, pk), x.copy()
    while ct.level > 0:
        ct, want = ct * ct.rotate(1), want * np.roll(want, -1)
        assert ct.scale == pytest.approx(ctx.scale_at(ct.level), rel=1e-9)
        err = np.max(np.abs(ctx.decrypt(ct, sk) - want))
        assert err <= ct.error_bound and err < 2.0**-20, (ct.level, err, ct.error_bound)


def test_context_computes_on_32_bit_words(ctx32, rng):
    ctx, sk, pk = ctx32
    assert isinstance(ctx._raw, _ember.CkksContext32) and ctx.max_level == 4
    x = rng.uniform(-1, 1, ctx.slots)
    y = rng.uniform(-1, 1, ctx.slots)
    a, b = ctx.encrypt(x, pk), ctx.encrypt(y, pk)
    # Each product's rescale divides by a pair of primes and lands on the next standard scale.
    p = a * b
    assert p.level == 3 and p.scale == pytest.approx(ctx.scale_at(3), rel=1e-9)
    assert ctx.prime(4) == ctx.params.q_primes[8] * ctx.params.q_primes[9]
    r = (p * a + 0.25 * b.rotate(3) - 1.5).conj()
    want = x * y * x + 0.25 * np.roll(y, -3) - 1.5
    assert np.max(np.abs(ctx.decrypt(r, sk) - want)) < 2.0**-30
    lin = ctx.linear_combination([a, b], [0.5, -2.0], 1.0)
    assert np.max(np.abs(ctx.decrypt(lin, sk) - (0.5 * x - 2 * y + 1))) < 2.0**-30
    back = ctx.ciphertext_from_bytes(r.to_bytes())
    np.testing.assert_array_equal(ctx.decrypt(back, sk), ctx.decrypt(r, sk))
