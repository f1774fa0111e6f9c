"""CKKS misuse raises typed ember errors with messages that say what to change, never a wrong
answer: foreign keys and contexts (MismatchError), missing evaluation keys (MissingKeyError, a
KeyError), wrong sizes, levels and parameters (ParameterError)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import ckks

SMALL = {
    "scale_bits": 40,
    "first_mod_bits": 60,
    "special_mods": 1,
    "special_mod_bits": 60,
    "insecure": True,
}
PA = ckks.Params(log_n=10, levels=2, **SMALL)
PB = ckks.Params(log_n=10, levels=3, **SMALL)  # same ring degree, other primes


class Kit:
    def __init__(self, params, rotations=(), conjugation=False, set_keys=True):
        self.ctx = ckks.Context(params, device="cpu")
        self.sk = self.ctx.keygen()
        self.pk = self.ctx.public_key(self.sk)
        self.ek = self.ctx.eval_keys(self.sk, rotations=rotations, conjugation=conjugation)
        if set_keys:
            self.ctx.set_eval_keys(self.ek)


@pytest.fixture(scope="module")
def a():
    return Kit(PA, rotations=[1, 2])


@pytest.fixture(scope="module")
def b():
    return Kit(PB, rotations=[1])


@pytest.fixture(scope="module")
def a2():
    """A second context with A's parameters and its own key set."""
    return Kit(PA, rotations=[1, 2])


@pytest.fixture(scope="module")
def nokeys():
    return Kit(PA, set_keys=False)


def vec(n, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, n)


def test_errors_are_builtin_subclasses():
    assert issubclass(ember.MismatchError, ValueError)
    assert issubclass(ember.MissingKeyError, KeyError)
    assert issubclass(ember.ParameterError, ValueError)


# ---------------------------------------------------------------------------------------------
# Foreign keys and contexts


def test_decrypt_with_another_key_set_raises(a, a2):
    x = vec(a.ctx.slots)
    ct = a.ctx.encrypt(x, a.pk)
    other = a.ctx.keygen()  # same context, another secret
    with pytest.raises(ember.MismatchError, match="key") as ei:
        a.ctx.decrypt(ct, other)
    assert isinstance(ei.value, ValueError)
    # Same parameters, another context's secret key; and its ciphertext with our key.
    with pytest.raises(ember.MismatchError, match="key"):
        a.ctx.decrypt(ct, a2.sk)
    with pytest.raises(ember.MismatchError, match="key"):
        a2.ctx.decrypt(ct, a2.sk)
    with pytest.raises(ember.MismatchError):
        a.ctx.decrypt(a2.ctx.encrypt(x, a2.sk), a.sk)
    # Derived ciphertexts (products, rotations) keep the key set.
    with pytest.raises(ember.MismatchError):
        a.ctx.decrypt(ct * ct, other)
    with pytest.raises(ember.MismatchError):
        a.ctx.decrypt(ct.rotate(1), other)
    # The right key still works.
    assert np.max(np.abs(a.ctx.decrypt(ct, a.sk) - x)) < 1e-4


def test_decrypt_with_a_key_of_other_parameters_raises(a, b):
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    with pytest.raises(ember.MismatchError, match="parameters"):
        a.ctx.decrypt(ct, b.sk)
    with pytest.raises(ember.MismatchError, match="parameters"):
        b.ctx.decrypt(ct, b.sk)
    with pytest.raises(ember.MismatchError, match="parameters"):
        b.ctx.decrypt(ct, a.sk)


def test_operands_from_contexts_with_different_parameters(a, b):
    x = vec(a.ctx.slots)
    ca, cb = a.ctx.encrypt(x, a.pk), b.ctx.encrypt(x, b.pk)
    for op in (
        lambda: ca + cb,
        lambda: cb + ca,
        lambda: ca - cb,
        lambda: ca * cb,
        lambda: cb * ca,
        lambda: a.ctx.add(ca, cb),
        lambda: a.ctx.multiply(ca, cb),
        lambda: a.ctx.negate(cb),
        lambda: a.ctx.rotate(cb, 1),
        lambda: a.ctx.rescale(cb),
        lambda: a.ctx.rotate_many(cb, [1]),
        lambda: a.ctx.add(cb, 1.0),
        lambda: a.ctx.multiply(cb, 0.5),
    ):
        with pytest.raises(ember.MismatchError, match="parameters|context"):
            op()


def test_keys_of_other_parameters_are_refused(a, b):
    x = vec(a.ctx.slots)
    with pytest.raises(ember.MismatchError):
        a.ctx.encrypt(x, b.pk)
    with pytest.raises(ember.MismatchError):
        a.ctx.encrypt(x, b.sk)
    with pytest.raises(ember.MismatchError):
        a.ctx.public_key(b.sk)
    with pytest.raises(ember.MismatchError):
        a.ctx.eval_keys(b.sk)


def test_operands_from_different_key_sets(a, a2):
    x = vec(a.ctx.slots)
    c1, c2 = a.ctx.encrypt(x, a.pk), a2.ctx.encrypt(x, a2.pk)
    for op in (lambda: c1 + c2, lambda: c1 - c2, lambda: c1 * c2, lambda: c2 * c1):
        with pytest.raises(ember.MismatchError, match="key"):
            op()


def test_eval_keys_of_another_key_set(a, a2):
    """A context given another key set's evaluation keys refuses to use them."""
    ctx = a2.ctx
    ct = ctx.encrypt(vec(ctx.slots), a2.pk)
    ctx.set_eval_keys(a.ek)
    try:
        with pytest.raises(ember.MismatchError):
            _ = ct * ct
        with pytest.raises(ember.MismatchError):
            ct.rotate(1)
        with pytest.raises(ember.MismatchError):
            ctx.rotate_many(ct, [1, 2])
    finally:
        ctx.set_eval_keys(a2.ek)


def test_eval_keys_of_other_parameters(a, b):
    """Refused by set_eval_keys or, at the latest, by the operation that would use them."""
    ctx = a.ctx
    ct = ctx.encrypt(vec(ctx.slots), a.pk)
    for op in (lambda: ct * ct, lambda: ct.rotate(1)):
        try:
            with pytest.raises(ember.MismatchError, match="parameters"):
                ctx.set_eval_keys(b.ek)
                op()
        finally:
            ctx.set_eval_keys(a.ek)


def test_plaintext_of_another_ring(a):
    """A plaintext of a context with another ring degree is refused, not combined."""
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    other = ckks.Context(ckks.Params(log_n=11, levels=2, **SMALL), device="cpu")
    pt = other.encode(vec(other.slots, 1), level=ct.level, scale=ct.scale)
    for op in (lambda: ct + pt, lambda: ct * pt, lambda: ct - pt):
        with pytest.raises((ember.MismatchError, ember.ParameterError)):
            op()


# ---------------------------------------------------------------------------------------------
# Missing evaluation keys


def test_missing_rotation_key(a):
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    for step in (3, 5, -1, 100):  # keys: 1 and 2 only (so 3 = 1 + 2 works, 4 is missing)
        if step == 3:
            continue
        with pytest.raises(ember.MissingKeyError) as ei:
            ct.rotate(step)
        assert isinstance(ei.value, KeyError)
        msg = str(ei.value)
        assert "eval_keys" in msg and "rotations" in msg, msg
    ct.rotate(3)  # 1 + 2: the power-of-two fallback


def test_missing_rotation_key_for_rotate_many(a):
    """rotate_many needs every step's own key (no decomposition)."""
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    assert len(a.ctx.rotate_many(ct, [0, 1, 2])) == 3
    with pytest.raises(ember.MissingKeyError, match="eval_keys"):
        a.ctx.rotate_many(ct, [1, 3])


def test_missing_rotation_keys_for_sum_slots(a):
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    with pytest.raises(ember.MissingKeyError, match="rotations"):
        a.ctx.sum_slots(ct)


def test_missing_conjugation_key(a):
    """The message says how to get the missing key: conjugation=True, not rotations."""
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    with pytest.raises(ember.MissingKeyError) as ei:
        ct.conj()
    msg = str(ei.value)
    assert "eval_keys" in msg and "conjugation" in msg, msg


def test_missing_eval_keys_for_multiplication(nokeys):
    ctx = nokeys.ctx
    x = vec(ctx.slots)
    ct = ctx.encrypt(x, nokeys.pk)
    with pytest.raises(ember.MissingKeyError, match="eval_keys") as ei:
        _ = ct * ct
    assert isinstance(ei.value, KeyError)
    for op in (
        lambda: ctx.square(ct),
        lambda: ct.rotate(1),
        lambda: ct.conj(),
        lambda: ctx.rotate_many(ct, [1]),
        lambda: ctx.sum_slots(ct),
    ):
        with pytest.raises(ember.MissingKeyError, match="eval_keys"):
            op()
    # Operations that need no key still work.
    got = ctx.decrypt(ct * 0.5 + ct * x + 2 * ct + ct.rotate(0), nokeys.sk)
    assert np.max(np.abs(got - (0.5 * x + x * x + 3 * x))) < 1e-4


# ---------------------------------------------------------------------------------------------
# Sizes, levels, parameters


def test_too_many_values(a):
    ctx = a.ctx
    for n in (ctx.slots + 1, 2 * ctx.slots, ctx.params.n):
        with pytest.raises(ember.ParameterError, match="slots") as ei:
            ctx.encode(np.ones(n))
        assert str(ctx.slots) in str(ei.value)
        with pytest.raises(ember.ParameterError, match="slots"):
            ctx.encrypt(np.ones(n), a.pk)
    ct = ctx.encrypt(np.ones(ctx.slots), a.pk)
    with pytest.raises(ember.ParameterError, match="slots"):
        _ = ct + np.ones(ctx.slots + 1)
    with pytest.raises(ember.ParameterError, match="slots"):
        _ = ct * np.ones(ctx.slots + 1)


def test_flattened_values_must_fit_the_slots(a):
    with pytest.raises(ember.ParameterError, match="do not fit"):  # n-D input is flattened
        a.ctx.encode(np.ones((2, a.ctx.slots)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e300])
def test_values_must_be_finite_and_fit(a, bad):
    x = np.zeros(a.ctx.slots)
    x[5] = bad
    with np.errstate(all="ignore"), pytest.raises(ember.ParameterError):
        a.ctx.encode(x)


def test_encode_level_out_of_range(a):
    for level in (-1, a.ctx.max_level + 1):
        with pytest.raises(ember.ParameterError, match="level"):
            a.ctx.encode(np.ones(4), level=level)
        with pytest.raises(ember.ParameterError, match="level"):
            a.ctx.encrypt(np.ones(4), a.pk, level=level)


def test_encrypt_needs_a_key(a):
    with pytest.raises(ember.ParameterError, match="PublicKey or a SecretKey"):
        a.ctx.encrypt(np.ones(4), "not a key")
    with pytest.raises(ember.ParameterError, match="Ciphertext"):
        a.ctx.decrypt(np.ones(4), a.sk)


def test_level_zero_multiplication(a):
    ctx = a.ctx
    x = vec(ctx.slots)
    ct = ctx.encrypt(x, a.pk, level=0)
    other = ctx.encrypt(x, a.pk, level=0)
    for op in (
        lambda: ct * other,
        lambda: ct * ct,
        lambda: ctx.square(ct),
        lambda: ct * 0.5,
        lambda: ct * x,
        lambda: ct * ctx.encode(x, level=0),
        lambda: ct * 0.5j,
        lambda: ctx.poly_eval(ct, [0.1, 0.2, 0.3]),
        lambda: ctx.matvec(np.eye(ctx.slots), ct),
        lambda: ctx.rescale(ct),
    ):
        with pytest.raises(ember.ParameterError, match="level 0"):
            op()
    # Integer constants cost no level.
    got = ctx.decrypt(ct * 3, a.sk)
    assert np.max(np.abs(got - 3 * x)) < 1e-4
    # Chains run out the same way.
    y = ctx.encrypt(x, a.pk)
    for _ in range(ctx.max_level):
        y = y * y
    assert y.level == 0
    with pytest.raises(ember.ParameterError, match="level 0"):
        _ = y * y


def test_drop_level_cannot_raise(a):
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk, level=1)
    with pytest.raises(ember.MismatchError, match="raise"):
        a.ctx.drop_level(ct, 2)


def test_poly_eval_bad_arguments(a):
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    with pytest.raises(ember.ParameterError, match="basis"):
        a.ctx.poly_eval(ct, [0.1, 0.2], basis="legendre")
    for interval in ((1.0, 1.0), (2.0, -2.0)):
        with pytest.raises(ember.ParameterError, match="interval"):
            a.ctx.poly_eval(ct, [0.1, 0.2], interval=interval)


def test_matvec_bad_shape(a):
    ct = a.ctx.encrypt(vec(a.ctx.slots), a.pk)
    n = a.ctx.slots
    for shape in ((n, n - 1), (n - 1, n), (2 * n, 2 * n), (n,)):
        with pytest.raises(ember.ParameterError, match="slots"):
            a.ctx.matvec(np.ones(shape), ct)


def test_bootstrap_keys_not_available(a):
    with pytest.raises(ember.ParameterError, match="bootstrap"):
        a.ctx.eval_keys(a.sk, bootstrap=True)


def test_manual_mode_mismatched_operands():
    ctx = ckks.Context(PA, device="cpu", auto_rescale=False)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    ct = ctx.encrypt(vec(ctx.slots), sk)
    with pytest.raises(ember.MismatchError, match="manual"):
        _ = ct * ct + ct
    with pytest.raises(ember.MismatchError, match="manual"):
        _ = ctx.rescale(ct * ct) - ct


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"log_n": 9}, "log_n"),
        ({"log_n": 18}, "log_n"),
        ({"log_n": 3}, "log_n"),
        ({"log_n": 12, "scale_bits": 40, "first_mod_bits": 40}, "first_mod_bits"),
        ({"log_n": 12, "scale_bits": 40, "first_mod_bits": 30}, "first_mod_bits"),
        ({"log_n": 12, "scale_bits": 40, "first_mod_bits": 62}, "first_mod_bits"),
        ({"log_n": 12, "scale_bits": 19}, "scale_bits"),
        ({"log_n": 12, "scale_bits": 61, "first_mod_bits": 61}, "scale_bits"),
        ({"log_n": 12, "levels": 3, "dnum": 0}, "dnum"),
        ({"log_n": 12, "levels": 3, "dnum": 5}, "dnum"),
        ({"log_n": 12, "levels": 3, "dnum": -1}, "dnum"),
        ({"log_n": 12, "levels": -1}, "levels"),
        ({"log_n": 12, "special_mods": 0}, "special_mods"),
        ({"log_n": 12, "special_mod_bits": 62}, "special_mod_bits"),
        ({"log_n": 12, "special_mod_bits": 10}, "special_mod_bits"),
        ({"log_n": 10, "hamming_weight": 1025}, "hamming_weight"),
        ({"log_n": 10, "hamming_weight": -1}, "hamming_weight"),
    ],
)
def test_bad_params(kwargs, match):
    with pytest.raises(ember.ParameterError, match=match) as ei:
        ckks.Params(insecure=True, **kwargs)
    assert isinstance(ei.value, ValueError)


def test_dnum_bounds_are_inclusive():
    assert ckks.Params(log_n=12, levels=3, dnum=4, insecure=True).dnum == 4
    assert ckks.Params(log_n=12, levels=3, dnum=1, insecure=True).dnum == 1


def test_insecure_params_refused_and_unknown_preset():
    with pytest.raises(ember.ParameterError, match="security") as ei:
        ckks.Params(log_n=13, scale_bits=40, levels=8, first_mod_bits=60)
    assert "insecure=True" in str(ei.value)
    with pytest.raises(ember.ParameterError, match="N13_L3"):
        ckks.Params.preset("N99_nope")
    with pytest.raises(ember.ParameterError):
        ckks.Context("N99_nope", device="cpu")


def test_params_are_immutable():
    p = ckks.Params(log_n=10, levels=1, insecure=True)
    with pytest.raises(AttributeError):
        p.levels = 5
