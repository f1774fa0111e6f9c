"""BFV and BGV against numpy integer arithmetic modulo t: every operation, multiplication chains
to the depth the parameters allow, the noise budget, decryption failing loudly (DecryptionError)
exactly where the budget is exhausted, serialization, and clear errors for bad input."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import bfv, bgv
from intref import centered, negacyclic, rot_rows, swap

SCHEMES = {"bfv": bfv, "bgv": bgv}
# Small sets for the operation tests (fast on a CPU); the presets are checked separately.
SMALL = {
    "bfv": {"log_n": 11, "plain_modulus": 12289, "q_bits": (50, 50), "special_bits": (55,)},
    "bgv": {"log_n": 11, "plain_modulus": 12289, "q_bits": (45, 36, 36, 36), "special_bits": (50,)},
}


class Env:
    def __init__(self, scheme, params):
        self.mod = SCHEMES[scheme]
        self.ctx = self.mod.Context(params, device="cpu")
        self.sk = self.ctx.keygen()
        self.pk = self.ctx.public_key(self.sk)
        self.ctx.set_eval_keys(
            self.ctx.eval_keys(
                self.sk, rotations=[1 << i for i in range(params.log_n - 1)] + [-3], row_swap=True
            )
        )
        self.t = self.ctx.plain_modulus
        self.rng = np.random.default_rng(7)

    def rand(self, size=None):
        t = self.t
        return self.rng.integers(-(t // 2), t // 2 + 1, size or self.ctx.slots)

    def dec(self, ct):
        return self.ctx.decrypt(ct, self.sk)


@pytest.fixture(scope="module", params=list(SCHEMES))
def env(request):
    mod = SCHEMES[request.param]
    return Env(request.param, mod.Params(**SMALL[request.param], insecure=True))


def test_encrypt_decrypt_public_and_secret(env):
    a = env.rand()
    np.testing.assert_array_equal(env.dec(env.ctx.encrypt(a, env.pk)), a)
    np.testing.assert_array_equal(env.dec(env.ctx.encrypt(a, env.sk)), a)


def test_shorter_input_is_zero_padded(env):
    v = env.dec(env.ctx.encrypt([3, -4, 5], env.pk))
    assert list(v[:3]) == [3, -4, 5] and not v[3:].any()


def test_encode_decode_roundtrip(env):
    a = env.rand()
    np.testing.assert_array_equal(env.ctx.decode(env.ctx.encode(a)), a)


def test_add_sub_negate(env):
    a, b = env.rand(), env.rand()
    x, y = env.ctx.encrypt(a, env.pk), env.ctx.encrypt(b, env.pk)
    t = env.t
    np.testing.assert_array_equal(env.dec(x + y), centered(a + b, t))
    np.testing.assert_array_equal(env.dec(x - y), centered(a - b, t))
    np.testing.assert_array_equal(env.dec(-x), centered(-a, t))


def test_plaintext_and_scalar_ops(env):
    a, b = env.rand(), env.rand()
    x, t = env.ctx.encrypt(a, env.pk), env.t
    pt = env.ctx.encode(b)
    np.testing.assert_array_equal(env.dec(x + pt), centered(a + b, t))
    np.testing.assert_array_equal(env.dec(x - b), centered(a - b, t))
    np.testing.assert_array_equal(env.dec(b - x), centered(b - a, t))
    np.testing.assert_array_equal(env.dec(x * pt), centered(a * b, t))
    np.testing.assert_array_equal(env.dec(x * 7), centered(a * 7, t))
    np.testing.assert_array_equal(env.dec(-3 * x), centered(a * -3, t))
    np.testing.assert_array_equal(env.dec(x + 11), centered(a + 11, t))
    np.testing.assert_array_equal(env.dec(x - (t - 1)), centered(a - (t - 1), t))


def test_multiply_relinearized(env):
    a, b = env.rand(), env.rand()
    x, y = env.ctx.encrypt(a, env.pk), env.ctx.encrypt(b, env.pk)
    z = x * y
    assert z._raw.size == 2
    np.testing.assert_array_equal(env.dec(z), centered(a * b, env.t))
    # The fused multiply (BFV: one NTT batch, no NTT/INTT of the third polynomial) is bit for
    # bit the tensor product followed by relinearization.
    raw, rk = env.ctx._raw, env.ctx._keys().relin
    fused = raw.multiply(x._raw, y._raw, rk)
    two_steps = raw.relinearize(raw.multiply_no_relin(x._raw, y._raw), rk)
    for i in range(2):
        np.testing.assert_array_equal(fused.poly(i).to_numpy(), two_steps.poly(i).to_numpy())
    np.testing.assert_array_equal(
        env.dec(x * x + 5 * x - x.rotate(1)), centered(a * a + 5 * a - rot_rows(a, 1), env.t)
    )


@pytest.mark.parametrize("k", [1, 2, 8, -3, 5, 1025])
def test_rotate_rows(env, k):
    a = env.rand()
    x = env.ctx.encrypt(a, env.pk)
    np.testing.assert_array_equal(env.dec(x.rotate(k)), rot_rows(a, k))


def test_swap_rows_and_hoisted_rotations_and_sum(env):
    a = env.rand()
    x = env.ctx.encrypt(a, env.pk)
    np.testing.assert_array_equal(env.dec(x.swap_rows()), swap(a))
    outs = env.ctx.rotate_many(x, [1, 2, 0, -3])
    for k, o in zip([1, 2, 0, -3], outs):
        np.testing.assert_array_equal(env.dec(o), rot_rows(a, k))
    total = int(np.sum(a.astype(object))) % env.t
    np.testing.assert_array_equal(
        env.dec(env.ctx.sum_slots(x)), centered([total] * env.ctx.slots, env.t)
    )


def test_mod_switch_keeps_message_and_shrinks(env):
    a = env.rand()
    x = env.ctx.encrypt(a, env.pk)
    y = x.mod_switch(0)
    assert y.level == 0 and len(y.to_bytes()) < len(x.to_bytes())
    np.testing.assert_array_equal(env.dec(y), a)
    # operands at different levels are matched
    np.testing.assert_array_equal(env.dec(y + x), centered(2 * a, env.t))


def test_noise_budget_decreases(env):
    a = env.rand()
    x = env.ctx.encrypt(a, env.pk)
    fresh = env.ctx.noise_budget(x, env.sk)
    prod = env.ctx.noise_budget(x * x, env.sk)
    assert fresh > prod > 0
    assert env.ctx.noise_budget(x + x, env.sk) >= fresh - 2


def test_coefficient_encoding_negacyclic_product(env):
    n, t = env.ctx.params.n, env.t
    a, b = env.rand(n), env.rand(n)
    x = env.ctx.encrypt(env.ctx.encode_coeffs(a), env.pk)
    y = env.ctx.encrypt(env.ctx.encode_coeffs(b), env.pk)
    np.testing.assert_array_equal(env.dec(x), a)
    np.testing.assert_array_equal(env.dec(x * y), negacyclic(a, b, t))
    with pytest.raises(ember.MismatchError):
        x + env.ctx.encrypt(a, env.pk)  # coefficients and slots do not mix


def test_serialization_roundtrip_and_corruption(env):
    a = env.rand()
    ctx = env.ctx
    x = ctx.encrypt(a, env.pk) * 3
    blob = x.to_bytes()
    np.testing.assert_array_equal(env.dec(ctx.ciphertext_from_bytes(blob)), centered(3 * a, env.t))
    sk2 = ctx.secret_key_from_bytes(env.sk.to_bytes())
    pk2 = ctx.public_key_from_bytes(env.pk.to_bytes())
    np.testing.assert_array_equal(ctx.decrypt(ctx.encrypt(a, pk2), sk2), a)
    ek2 = ctx.eval_keys_from_bytes(ctx._keys().to_bytes())
    assert sorted(ek2.galois) == sorted(ctx._keys().galois)
    bad = bytearray(blob)
    bad[len(bad) // 2] ^= 1
    with pytest.raises(ember.SerializationError):
        ctx.ciphertext_from_bytes(bytes(bad))
    with pytest.raises(ember.SerializationError):
        ctx.ciphertext_from_bytes(blob[:-5])


def test_bad_input_errors(env):
    ctx, t = env.ctx, env.t
    with pytest.raises(ember.ParameterError, match="t="):
        ctx.encrypt([t], env.pk)
    with pytest.raises(ember.ParameterError, match="t="):
        ctx.encrypt([-t], env.pk)
    with pytest.raises(ember.ParameterError, match="do not fit"):
        ctx.encrypt(np.zeros(ctx.slots + 1, dtype=np.int64), env.pk)
    with pytest.raises(ember.ParameterError, match="integers"):
        ctx.encrypt([0.5], env.pk)
    with pytest.raises(ember.ParameterError, match="do not fit"):  # n-D input is flattened
        ctx.encrypt(np.zeros((2, ctx.slots), dtype=np.int64), env.pk)
    x = ctx.encrypt([1], env.pk)
    with pytest.raises(ember.ParameterError):
        x.mod_switch(ctx.max_level + 1)


def test_mismatched_contexts_and_keys(env):
    mod = env.mod
    scheme = next(k for k, v in SCHEMES.items() if v is mod)
    other = mod.Context(
        mod.Params(**{**SMALL[scheme], "plain_modulus": 40961}, insecure=True),
        device="cpu",
    )
    osk = other.keygen()
    x = env.ctx.encrypt([1, 2], env.pk)
    y = other.encrypt([1, 2], other.public_key(osk))
    with pytest.raises(ember.MismatchError):
        env.ctx.add(x, y)
    with pytest.raises(ember.MismatchError):
        env.ctx.decrypt(x, osk)
    with pytest.raises(ember.SerializationError):
        env.ctx.ciphertext_from_bytes(y.to_bytes())
    sk2 = env.ctx.keygen()
    with pytest.raises(ember.MismatchError):
        env.ctx.decrypt(x, sk2)


def test_missing_keys():
    ctx = bgv.Context(bgv.Params(**SMALL["bgv"], insecure=True), device="cpu")
    sk = ctx.keygen()
    x = ctx.encrypt([1], sk)
    with pytest.raises(ember.MissingKeyError):
        x * x
    ctx.set_eval_keys(ctx.eval_keys(sk))
    with pytest.raises(ember.MissingKeyError):
        x.rotate(3)
    with pytest.raises(ember.MissingKeyError):
        x.swap_rows()


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_chain_to_exhaustion_fails_loudly_at_the_boundary(scheme):
    """Square until the budget runs out: every step before decrypts exactly, the first step
    without budget raises DecryptionError, and the budget shrinks at every step."""
    e = Env(scheme, SCHEMES[scheme].Params(**SMALL[scheme], insecure=True))
    a = e.rng.integers(-3, 4, e.ctx.slots)
    x = e.ctx.encrypt(a, e.pk)
    ref, budgets = a.astype(object), [e.ctx.noise_budget(x, e.sk)]
    for _ in range(12):
        x, ref = x * x, ref * ref % e.t
        budgets.append(e.ctx._raw.noise_budget(x._raw, e.sk._raw))
        if budgets[-1] < 1:
            with pytest.raises(ember.DecryptionError, match="exhausted"):
                e.dec(x)
            break
        np.testing.assert_array_equal(e.dec(x), centered(ref, e.t))
    else:
        pytest.fail("the noise budget never ran out")
    assert all(b1 > b2 for b1, b2 in zip(budgets, budgets[1:]))
    assert len(budgets) >= 3  # at least two correct products


def test_bgv_depth_is_levels_with_auto_mod_switch():
    e = Env("bgv", bgv.Params(**SMALL["bgv"], insecure=True))
    a = e.rand()
    x, ref = e.ctx.encrypt(a, e.pk), a.astype(object)
    for d in range(e.ctx.max_level):
        x, ref = x * x, ref * ref % e.t
        assert x.level == e.ctx.max_level - d - 1
        np.testing.assert_array_equal(e.dec(x), centered(ref, e.t))


def test_bgv_factor_matching_mixed_levels():
    e = Env("bgv", bgv.Params(**SMALL["bgv"], insecure=True))
    a, b = e.rand(), e.rand()
    x, y = e.ctx.encrypt(a, e.pk), e.ctx.encrypt(b, e.pk)
    xy = x * y  # level L-1, factor q_L^-1
    assert xy._raw.factor != 1
    t = e.t
    np.testing.assert_array_equal(e.dec(xy + x), centered(a * b + a, t))
    np.testing.assert_array_equal(e.dec(x - xy), centered(a - a * b, t))
    np.testing.assert_array_equal(e.dec(xy + 5), centered(a * b + 5, t))
    np.testing.assert_array_equal(e.dec(xy + e.ctx.encode(b)), centered(a * b + b, t))
    np.testing.assert_array_equal(e.dec(xy * x), centered(a * b * a, t))


def test_power_of_two_plain_modulus_coefficients():
    for mod, extra in ((bfv, {}), (bgv, {})):
        p = mod.Params(
            log_n=11,
            plain_modulus=1 << 16,
            q_bits=(50, 50),
            special_bits=(55,),
            insecure=True,
            **extra,
        )
        assert not p.batching
        ctx = mod.Context(p, device="cpu")
        sk = ctx.keygen()
        ctx.set_eval_keys(ctx.eval_keys(sk))
        rng = np.random.default_rng(3)
        a, b = rng.integers(-500, 500, p.n), rng.integers(-500, 500, p.n)
        x = ctx.encrypt(a, ctx.public_key(sk))  # no batching: coefficients
        y = ctx.encrypt(b, sk)
        np.testing.assert_array_equal(ctx.decrypt(x * y, sk), negacyclic(a, b, 1 << 16))
        with pytest.raises(ember.ParameterError, match="batching"):
            ctx.encode([1])


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_presets_meet_128_bit_security(scheme):
    mod = SCHEMES[scheme]
    from ember.rlwe import SECURITY_128_MAX_LOGQP

    for name in mod.Params.presets():
        p = mod.Params.preset(name)
        assert p.batching and not p.insecure
        assert p.total_bits <= SECURITY_128_MAX_LOGQP[p.log_n]


def test_bfv_aux_primes_bound_count_and_sizes():
    """R > 4 t N Q with distinct NTT-friendly primes outside Q u P, as few as 60-bit primes take,
    each of 50, 57 or 60 bits; aux_bits forces a size and refuses others."""
    import math

    for name in bfv.Params.presets():
        p = bfv.Params.preset(name)
        r = bfv.aux_primes(p)
        assert math.prod(r) > 4 * p.plain_modulus * p.n * math.prod(p.q_primes)
        assert len(set(r)) == len(r) and not set(r) & set(p.q_primes + p.p_primes)
        assert all(x % (2 * p.n) == 1 for x in r)
        assert {x.bit_length() for x in r} <= {50, 57, 60}
        wide = bfv.aux_primes(p, aux_bits=60)
        assert {x.bit_length() for x in wide} == {60} and len(r) == len(wide)
    for bad in (61, 0, 57.0, True):
        with pytest.raises(ember.ParameterError, match="aux_bits"):
            bfv.aux_primes(bfv.Params.preset("N13_t65537"), aux_bits=bad)


def test_paper_sets_are_presets():
    sets = {(bfv.Params.preset(n).n, bfv.Params.preset(n).total_bits) for n in bfv.Params.presets()}
    assert {(4096, 109), (8192, 152), (16384, 237), (32768, 496), (32768, 880)} <= sets
    sets = {
        (bgv.Params.preset(n).log_n, bgv.Params.preset(n).total_bits) for n in bgv.Params.presets()
    }
    assert {(13, 218), (14, 438), (15, 880)} <= sets


def test_insecure_and_inconsistent_params_refused():
    with pytest.raises(ember.ParameterError, match="security"):
        bfv.Params(log_n=12, q_bits=(60, 60), special_bits=(60,))
    with pytest.raises(ember.ParameterError, match="below every prime"):
        bfv.Params(log_n=12, plain_modulus=2**40, q_bits=(36, 36), special_bits=(37,))
    with pytest.raises(ember.ParameterError, match="unknown preset"):
        bgv.Params.preset("nope")
    with pytest.raises(ember.ParameterError, match="P"):
        bgv.Params(log_n=13, q_bits=(50, 50), special_bits=(30,))


@pytest.mark.parametrize("scheme,name", [("bfv", "N13_t65537"), ("bgv", "N13_t65537")])
def test_preset_end_to_end(scheme, name):
    mod = SCHEMES[scheme]
    ctx = mod.Context(name, device="cpu")
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1], row_swap=True))
    a = np.arange(ctx.slots, dtype=np.int64)
    x = ctx.encrypt(a, pk)
    y = x * x + 5 * x - x.rotate(1)
    np.testing.assert_array_equal(
        ctx.decrypt(y, sk), centered(a * a + 5 * a - rot_rows(a, 1), ctx.plain_modulus)
    )


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_products_below_the_top_level(scheme):
    """Products and rotations of ciphertexts that were switched down (BFV: the Q u R product at a
    lower level; BGV: operands at different levels)."""
    p = SCHEMES[scheme].Params(
        log_n=11, plain_modulus=12289, q_bits=(50, 50, 50), special_bits=(55,), insecure=True
    )
    e = Env(scheme, p)
    a, b = e.rand(), e.rand()
    x, y = e.ctx.encrypt(a, e.pk).mod_switch(1), e.ctx.encrypt(b, e.pk)
    assert x.level == 1
    z = x * y
    np.testing.assert_array_equal(e.dec(z), centered(a * b, e.t))
    np.testing.assert_array_equal(e.dec(z.rotate(1)), rot_rows(centered(a * b, e.t), 1))
