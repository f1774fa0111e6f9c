"""Every bad input raises an ember.Error subclass (also the builtin ValueError) with a message that
says what is wrong, never a bare TypeError/OverflowError from deep inside, a nanobind signature
dump, or a silently wrong result (issue 25, item 6).

Covers: non-finite CKKS scalars, arrays and coefficients in every operation path; values that are
not numbers; rotation steps and levels that are not integers; keys and ciphertexts of the wrong
kind, of another scheme or of other parameters; BFV/BGV values outside (-t, t) or not integers
(including uint64 values that would wrap when cast); scalar operands of BFV/BGV (reduced exactly
modulo t, as documented in ember.integer)."""

from __future__ import annotations

import contextlib

import ember
import numpy as np
import pytest
from ember import bfv, bgv, ckks

CKKS_SMALL = {
    "scale_bits": 40,
    "first_mod_bits": 60,
    "special_mods": 1,
    "special_mod_bits": 60,
    "insecure": True,
}
NAN, INF = float("nan"), float("inf")


@contextlib.contextmanager
def refused(cls, match: str | None):
    """The block raises `cls` (an ember.Error that is also a ValueError) matching `match`."""
    with pytest.raises(cls, match=match) as ei:
        yield ei
    assert isinstance(ei.value, ember.Error)
    assert isinstance(ei.value, ValueError)


class Kit:
    def __init__(self, ctx, rotations=(1,)):
        self.ctx = ctx
        self.sk = ctx.keygen()
        self.pk = ctx.public_key(self.sk)
        self.ek = ctx.eval_keys(self.sk, rotations=list(rotations))
        ctx.set_eval_keys(self.ek)


@pytest.fixture(scope="module")
def ck():
    return Kit(ckks.Context(ckks.Params(log_n=10, levels=2, **CKKS_SMALL), device="cpu"))


@pytest.fixture(scope="module")
def ck_other():
    """CKKS with other parameters (one more level)."""
    return Kit(ckks.Context(ckks.Params(log_n=10, levels=3, **CKKS_SMALL), device="cpu"))


@pytest.fixture(scope="module")
def bf():
    return Kit(bfv.Context("N12_t65537", device="cpu"))


@pytest.fixture(scope="module")
def bg():
    params = bgv.Params(log_n=12, q_bits=(36, 36), special_bits=(37,))
    return Kit(bgv.Context(params, device="cpu"))


@pytest.fixture(scope="module")
def x(ck):
    return ck.ctx.encrypt(np.linspace(-1, 1, 16), ck.pk)


@pytest.fixture(scope="module")
def y(bf):
    return bf.ctx.encrypt(np.arange(-8, 8), bf.pk)


# ---------------------------------------------------------------------------------------------
# CKKS: non-finite values in every operation path

NON_FINITE = [
    NAN,
    INF,
    -INF,
    np.float64(NAN),
    np.float32(INF),
    complex(1.0, NAN),
    complex(INF, 0.0),
    complex(0.0, -INF),
]
SCALAR_OPS = {
    "add": lambda x, v: x + v,
    "radd": lambda x, v: v + x,
    "sub": lambda x, v: x - v,
    "rsub": lambda x, v: v - x,
    "mul": lambda x, v: x * v,
    "rmul": lambda x, v: v * x,
}


@pytest.mark.parametrize("bad", NON_FINITE, ids=repr)
@pytest.mark.parametrize("op", SCALAR_OPS, ids=str)
def test_ckks_non_finite_scalar(x, op, bad):
    with refused(ember.ParameterError, "finite"):
        SCALAR_OPS[op](x, bad)


@pytest.mark.parametrize("bad", [NAN, INF, -INF], ids=repr)
def test_ckks_non_finite_scalar_manual_rescale(bad):
    """Manual mode multiplies by the level's scale: the other scalar path."""
    ctx = ckks.Context(ckks.Params(log_n=10, levels=2, **CKKS_SMALL), "cpu", auto_rescale=False)
    ct = ctx.encrypt(np.ones(4), ctx.keygen())
    with refused(ember.ParameterError, "finite"):
        ct * bad


@pytest.mark.parametrize("bad", [NAN, INF, -INF, complex(1, NAN)], ids=repr)
@pytest.mark.parametrize("op", ["encode", "encrypt", "add", "sub", "mul"])
def test_ckks_non_finite_array(ck, x, op, bad):
    v = np.zeros(8, dtype=complex if isinstance(bad, complex) else float)
    v[3] = bad
    ops = {
        "encode": lambda: ck.ctx.encode(v),
        "encrypt": lambda: ck.ctx.encrypt(v, ck.pk),
        "add": lambda: x + v,
        "sub": lambda: x - v,
        "mul": lambda: x * v,
    }
    with np.errstate(all="ignore"), refused(ember.ParameterError, "finite"):
        ops[op]()


@pytest.mark.parametrize("bad", [NAN, INF, -INF], ids=repr)
def test_ckks_linear_combination_non_finite(ck, x, bad):
    with refused(ember.ParameterError, "finite"):
        ck.ctx.linear_combination([x, x], [0.5, bad])
    with refused(ember.ParameterError, "finite"):
        ck.ctx.linear_combination([x], [0.5], constant=bad)


def test_ckks_linear_combination_complex_coefficient(ck, x):
    with refused(ember.ParameterError, "real numbers"):
        ck.ctx.linear_combination([x], [0.5j])


@pytest.mark.parametrize("bad", [NAN, INF, -INF], ids=repr)
def test_ckks_poly_eval_non_finite_coefficients(ck, x, bad):
    with refused(ember.ParameterError, "finite"):
        ck.ctx.poly_eval(x, [0.1, bad, 0.3])
    with refused(ember.ParameterError, "finite"):
        ck.ctx.poly_eval(x, [0.1, bad], basis="power")


@pytest.mark.parametrize(
    "coeffs", [[0.1, "a"], [0.1, 1j], [], "abc", [[0.1, 0.2]], [None]], ids=repr
)
def test_ckks_poly_eval_coefficients_must_be_real_numbers(ck, x, coeffs):
    with refused(ember.ParameterError, "coefficients"):
        ck.ctx.poly_eval(x, coeffs)


@pytest.mark.parametrize("interval", [(-INF, INF), (NAN, 1.0), (0.0, INF), ("a", 1.0)], ids=repr)
def test_ckks_poly_eval_interval_must_be_finite(ck, x, interval):
    with refused(ember.ParameterError, "interval"):
        ck.ctx.poly_eval(x, [0.1, 0.2], interval=interval)


@pytest.mark.parametrize("bad", [NAN, INF, complex(0, NAN)], ids=repr)
def test_ckks_matvec_non_finite_matrix(ck, x, bad):
    m = np.eye(ck.ctx.slots, dtype=complex if isinstance(bad, complex) else float)
    m[2, 5] = bad
    with refused(ember.ParameterError, "finite"):
        ck.ctx.matvec(m, x)


@pytest.mark.parametrize("big", [10**400, -(10**400)], ids=["+10^400", "-10^400"])
def test_ckks_huge_scalar_is_not_an_overflow_error(x, big):
    """A finite scalar too large for float64 is a ParameterError (whatever bound catches it),
    never the OverflowError of float() or round()."""
    with refused(ember.ParameterError, None):
        x + big


# ---------------------------------------------------------------------------------------------
# CKKS: values that are not numbers


@pytest.mark.parametrize(
    "values",
    [
        "abc",
        np.array(["1", "2"]),
        np.array([1.0, "a"], dtype=object),
        np.array([1.0, None], dtype=object),
        None,
        {"a": 1},
    ],
    ids=["str", "str-array", "object-str", "object-None", "None", "dict"],
)
def test_ckks_values_must_be_numbers(ck, x, values):
    with refused(ember.ParameterError, "numbers"):
        ck.ctx.encode(values)
    with refused(ember.ParameterError, "numbers"):
        x + values
    with refused(ember.ParameterError, "numbers"):
        x * values


def test_ckks_object_arrays_of_numbers_are_accepted(ck):
    """An object array of Python numbers encodes like the float array it holds."""
    v = np.array([0.5, 2, -1.25], dtype=object)
    got = ck.ctx.decrypt(ck.ctx.encrypt(v, ck.sk), ck.sk)[:3]
    assert np.max(np.abs(got - [0.5, 2, -1.25])) < 1e-6


@pytest.mark.parametrize("shape", [()], ids=str)  # n-D arrays are flattened (test_arrays.py)
def test_ckks_values_must_be_a_vector(ck, x, shape):
    with refused(ember.ParameterError, "1-D"):
        ck.ctx.encode(np.ones(shape))
    with refused(ember.ParameterError, "1-D"):
        x * np.ones(shape)


@pytest.mark.parametrize("scale", [NAN, INF, -1.0, 0.0, 1j, "big"], ids=repr)
def test_ckks_encode_scale(ck, scale):
    with refused(ember.ParameterError, "scale"):
        ck.ctx.encode(np.ones(4), scale=scale)


# ---------------------------------------------------------------------------------------------
# Levels


@pytest.mark.parametrize("level", [1.5, 1.0, True, "1", -1, 99], ids=repr)
def test_ckks_level_argument(ck, x, level):
    with refused(ember.ParameterError, "level"):
        ck.ctx.encode(np.ones(4), level=level)
    with refused(ember.ParameterError, "level"):
        ck.ctx.encrypt(np.ones(4), ck.pk, level=level)
    if level != 99:  # drop_level to a higher level is a MismatchError ("cannot raise")
        with refused(ember.ParameterError, "level"):
            ck.ctx.drop_level(x, level)


@pytest.mark.parametrize("level", [0.5, True, -1], ids=repr)
def test_ckks_linear_combination_level(ck, x, level):
    with refused(ember.ParameterError, "level"):
        ck.ctx.linear_combination([x], [0.5], level=level)


@pytest.mark.parametrize("level", [0.5, True, -1, 5], ids=repr)
def test_integer_mod_switch_level(bf, y, level):
    with refused(ember.ParameterError, "level"):
        bf.ctx.mod_switch(y, level)


def test_numpy_integer_levels_are_accepted(ck, x):
    assert ck.ctx.drop_level(x, np.int64(1)).level == 1
    assert ck.ctx.encode(np.ones(4), level=np.int32(0)).level == 0


# ---------------------------------------------------------------------------------------------
# Rotation steps


@pytest.mark.parametrize("steps", [1.5, 1.0, True, "1", None], ids=repr)
def test_rotation_steps_must_be_integers(ck, x, bf, y, steps):
    with refused(ember.ParameterError, "rotation steps must be integers"):
        x.rotate(steps)
    with refused(ember.ParameterError, "rotation steps must be integers"):
        ck.ctx.rotate_many(x, [1, steps])
    with refused(ember.ParameterError, "rotation steps must be integers"):
        y.rotate(steps)
    with refused(ember.ParameterError, "rotation steps must be integers"):
        bf.ctx.rotate_many(y, [steps])


def test_rotation_message_names_the_step(x):
    with refused(ember.ParameterError, r"rotation steps must be integers, got 1\.5"):
        x.rotate(1.5)


@pytest.mark.parametrize("rotations", [[1.5], [1, 2.0], [False]], ids=repr)
def test_eval_keys_rotations_must_be_integers(ck, bf, rotations):
    with refused(ember.ParameterError, "rotation steps must be integers"):
        ck.ctx.eval_keys(ck.sk, rotations=rotations)
    with refused(ember.ParameterError, "rotation steps must be integers"):
        bf.ctx.eval_keys(bf.sk, rotations=rotations)


@pytest.mark.parametrize("steps", [1, "12", None], ids=repr)
def test_rotate_many_needs_a_list(ck, x, steps):
    with refused(ember.ParameterError, "steps"):
        ck.ctx.rotate_many(x, steps)


def test_numpy_integer_steps_are_accepted(ck, x, bf, y):
    dec = ck.ctx.decrypt
    np.testing.assert_allclose(dec(x.rotate(np.int64(1)), ck.sk), dec(x.rotate(1), ck.sk))
    (r,) = ck.ctx.rotate_many(x, [np.int32(1)])
    np.testing.assert_allclose(dec(r, ck.sk), dec(x.rotate(1), ck.sk), atol=1e-6)
    assert np.array_equal(
        bf.ctx.decrypt(y.rotate(np.uint8(1)), bf.sk), bf.ctx.decrypt(y.rotate(1), bf.sk)
    )


# ---------------------------------------------------------------------------------------------
# Keys of the wrong kind


def _not_secret_keys(kit):
    return {"PublicKey": kit.pk, "EvalKeys": kit.ek, "None": None, "str": "sk"}


@pytest.mark.parametrize("scheme", ["ckks", "bfv"])
@pytest.mark.parametrize("wrong", ["PublicKey", "EvalKeys", "None", "str"])
def test_decrypt_needs_the_secret_key(request, scheme, wrong):
    kit = request.getfixturevalue("ck" if scheme == "ckks" else "bf")
    ct = kit.ctx.encrypt(np.arange(4), kit.pk)
    key = _not_secret_keys(kit)[wrong]
    with refused(ember.ParameterError, "decrypt needs a SecretKey") as ei:
        kit.ctx.decrypt(ct, key)
    if wrong != "str":
        assert wrong in str(ei.value)


def test_decrypt_message_names_the_key_given(ck, x):
    with refused(ember.ParameterError, r"got a CKKS PublicKey \(ember\.ckks\.PublicKey\)"):
        ck.ctx.decrypt(x, ck.pk)


@pytest.mark.parametrize("wrong", ["PublicKey", "EvalKeys", "None"])
def test_noise_budget_needs_the_secret_key(bf, y, wrong):
    with refused(ember.ParameterError, "noise_budget needs a SecretKey"):
        bf.ctx.noise_budget(y, _not_secret_keys(bf)[wrong])


@pytest.mark.parametrize("scheme", ["ckks", "bfv"])
def test_key_methods_check_the_key_kind(request, scheme):
    kit = request.getfixturevalue("ck" if scheme == "ckks" else "bf")
    ctx = kit.ctx
    with refused(ember.ParameterError, "encrypt needs a PublicKey or a SecretKey, got .*EvalKeys"):
        ctx.encrypt(np.arange(4), kit.ek)
    with refused(ember.ParameterError, "encrypt needs a PublicKey or a SecretKey"):
        ctx.encrypt(np.arange(4), None)
    with refused(ember.ParameterError, "public_key needs a SecretKey"):
        ctx.public_key(kit.pk)
    with refused(ember.ParameterError, "eval_keys needs a SecretKey"):
        ctx.eval_keys(kit.pk)
    for wrong in (kit.sk, kit.pk, None, {}):
        with refused(ember.ParameterError, "set_eval_keys needs an EvalKeys"):
            ctx.set_eval_keys(wrong)
    assert ctx._eval_keys is kit.ek  # a refused set_eval_keys leaves the keys as they were


# ---------------------------------------------------------------------------------------------
# Ciphertexts: wrong type, other scheme, other parameters


@pytest.mark.parametrize(
    "op",
    ["add", "sub", "multiply", "negate", "rotate", "rescale", "poly_eval", "matvec", "decrypt"],
)
def test_ckks_operations_need_a_ciphertext_first(ck, op):
    ctx, not_ct = ck.ctx, np.ones(ck.ctx.slots)
    calls = {
        "add": lambda: ctx.add(not_ct, 1.0),
        "sub": lambda: ctx.sub(not_ct, 1.0),
        "multiply": lambda: ctx.multiply(not_ct, 2.0),
        "negate": lambda: ctx.negate(not_ct),
        "rotate": lambda: ctx.rotate(not_ct, 1),
        "rescale": lambda: ctx.rescale(not_ct),
        "poly_eval": lambda: ctx.poly_eval(not_ct, [0.1, 0.2]),
        "matvec": lambda: ctx.matvec(np.eye(ctx.slots), not_ct),
        "decrypt": lambda: ctx.decrypt(not_ct, ck.sk),
    }
    with refused(ember.ParameterError, r"expected a CKKS ciphertext \(ember\.ckks\.Ciphertext\)"):
        calls[op]()


@pytest.mark.parametrize("op", ["add", "sub", "multiply", "rotate", "decrypt", "noise_budget"])
def test_bfv_operations_need_a_ciphertext_first(bf, op):
    ctx, not_ct = bf.ctx, [1, 2, 3]
    calls = {
        "add": lambda: ctx.add(not_ct, 1),
        "sub": lambda: ctx.sub(not_ct, 1),
        "multiply": lambda: ctx.multiply(not_ct, 2),
        "rotate": lambda: ctx.rotate(not_ct, 1),
        "decrypt": lambda: ctx.decrypt(not_ct, bf.sk),
        "noise_budget": lambda: ctx.noise_budget(not_ct, bf.sk),
    }
    with refused(ember.ParameterError, "expected a BFV ciphertext"):
        calls[op]()


def test_ciphertext_of_another_scheme_names_both(ck, bf, x, y):
    with refused(
        ember.MismatchError, r"expected a BFV ciphertext, got a CKKS ciphertext \(ember\.ckks\."
    ):
        bf.ctx.decrypt(x, bf.sk)
    with refused(ember.MismatchError, "expected a CKKS ciphertext, got a BFV ciphertext"):
        ck.ctx.decrypt(y, ck.sk)


@pytest.mark.parametrize(
    "op", ["add", "radd", "sub", "rsub", "mul", "rmul", "rotate", "rotate_many", "encrypt"]
)
def test_ciphertexts_of_another_scheme_are_refused(ck, bf, x, y, op):
    calls = {
        "add": lambda: x + y,
        "radd": lambda: y + x,
        "sub": lambda: x - y,
        "rsub": lambda: y - x,
        "mul": lambda: x * y,
        "rmul": lambda: y * x,
        "rotate": lambda: ck.ctx.rotate(y, 1),
        "rotate_many": lambda: bf.ctx.rotate_many(x, [1]),
        "encrypt": lambda: bf.ctx.encrypt(x, bf.pk),  # a ciphertext where values go
    }
    with refused(ember.MismatchError, "expected a (CKKS|BFV) ciphertext, got a (BFV|CKKS)"):
        calls[op]()


def test_bfv_and_bgv_ciphertexts_are_not_interchangeable(bf, bg, y):
    z = bg.ctx.encrypt(np.arange(4), bg.pk)
    with refused(ember.MismatchError, "expected a BGV ciphertext, got a BFV ciphertext"):
        bg.ctx.decrypt(y, bg.sk)
    with refused(ember.MismatchError, "expected a BFV ciphertext, got a BGV ciphertext"):
        y + z


def test_plaintext_of_another_scheme_is_refused(ck, bf, x, y):
    with refused(ember.MismatchError, "expected numbers or a CKKS plaintext, got a BFV"):
        x + bf.ctx.encode(np.arange(4))
    with refused(ember.MismatchError, "expected numbers or a BFV plaintext, got a CKKS"):
        y * ck.ctx.encode(np.ones(4))


def test_a_key_is_not_a_value(ck, bf, x, y):
    with refused(ember.ParameterError, "expected numbers or a CKKS plaintext, got a CKKS"):
        x + ck.sk
    with refused(ember.ParameterError, "expected numbers or a BFV plaintext, got a BFV"):
        bf.ctx.encrypt(bf.pk, bf.pk)


@pytest.mark.parametrize("key", ["sk", "pk", "ek"])
def test_keys_of_another_scheme(ck, bf, key):
    """Each key names the scheme it belongs to."""
    with refused(ember.MismatchError, "belongs to a BFV context, not to this CKKS context"):
        {
            "sk": lambda: ck.ctx.decrypt(ck.ctx.encrypt(np.ones(4), ck.pk), bf.sk),
            "pk": lambda: ck.ctx.encrypt(np.ones(4), bf.pk),
            "ek": lambda: ck.ctx.set_eval_keys(bf.ek),
        }[key]()
    with refused(ember.MismatchError, "belongs to a CKKS context, not to this BFV context"):
        {
            "sk": lambda: bf.ctx.public_key(ck.sk),
            "pk": lambda: bf.ctx.encrypt(np.arange(4), ck.pk),
            "ek": lambda: bf.ctx.set_eval_keys(ck.ek),
        }[key]()


def test_keys_of_other_parameters(ck, ck_other, x):
    """Same scheme, other parameters: refused at the boundary by the fingerprint (params_id)."""
    for call in (
        lambda: ck.ctx.decrypt(x, ck_other.sk),
        lambda: ck.ctx.encrypt(np.ones(4), ck_other.pk),
        lambda: ck.ctx.encrypt(np.ones(4), ck_other.sk),
        lambda: ck.ctx.public_key(ck_other.sk),
        lambda: ck.ctx.eval_keys(ck_other.sk),
        lambda: ck.ctx.set_eval_keys(ck_other.ek),
    ):
        with refused(ember.MismatchError, "other parameters"):
            call()


# ---------------------------------------------------------------------------------------------
# BFV / BGV: values must be integers in (-t, t)

T = 65537
BAD_INTEGER_VALUES = {
    "uint64 2^64-1": (np.array([1, 2**64 - 1], dtype=np.uint64), "range"),
    "uint64 2^63": (np.array([2**63], dtype=np.uint64), "range"),
    "uint64 t": (np.array([T], dtype=np.uint64), "range"),
    "int64 -t": (np.array([-T], dtype=np.int64), "range"),
    "int64 2^62": (np.array([2**62], dtype=np.int64), "range"),
    "float 1.5": (np.array([1.0, 1.5]), "integers"),
    "float nan": (np.array([NAN]), "integers"),
    "float inf": (np.array([INF]), "integers"),
    "float 1e30": (np.array([1e30]), "range"),
    "bool": (np.array([True, False]), "integers"),
    "complex": (np.array([1 + 0j]), "integers"),
    "object 2^70": (np.array([1, 2**70], dtype=object), "range"),
    "object -2^200": (np.array([-(2**200)], dtype=object), "range"),
    "object str": (np.array(["12"], dtype=object), "integers"),
    "object 1.5": (np.array([1.5], dtype=object), "integers"),
    "object bool": (np.array([True], dtype=object), "integers"),
    "str": (np.array(["1", "2"]), "integers"),
    "list of str": (["a"], "integers"),
    "0-D": (np.array(5, dtype=np.int64), "1-D"),  # n-D arrays are flattened (test_arrays.py)
    "scalar": (5, "1-D"),
}


@pytest.mark.parametrize("case", BAD_INTEGER_VALUES)
@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_integer_values_refused(request, scheme, case):
    kit = request.getfixturevalue("bf" if scheme == "bfv" else "bg")
    values, match = BAD_INTEGER_VALUES[case]
    with refused(ember.ParameterError, match):
        kit.ctx.encrypt(values, kit.pk)
    with refused(ember.ParameterError, match):
        kit.ctx.encode(values)
    with refused(ember.ParameterError, match):
        kit.ctx.encode_coeffs(values)


def test_integer_range_message(bf):
    with refused(ember.ParameterError, r"\(-t, t\) for the plain modulus t=65537"):
        bf.ctx.encrypt(np.array([2**64 - 1], dtype=np.uint64), bf.pk)


def test_integer_values_too_long(bf, y):
    n = bf.ctx.slots
    with refused(ember.ParameterError, "do not fit"):
        bf.ctx.encrypt(np.ones(n + 1, dtype=np.int64), bf.pk)
    with refused(ember.ParameterError, "do not fit"):
        bf.ctx.encode_coeffs(np.ones(bf.ctx.params.n + 1, dtype=np.int64))
    with refused(ember.ParameterError, "do not fit"):
        y + np.ones(n + 1, dtype=np.int64)


def test_integer_values_in_range_are_exact(bf):
    """The boundary values of every accepted form decrypt to themselves (centered)."""
    ctx, t = bf.ctx, T
    want = np.array([0, 1, t // 2, t - 1, -(t - 1), -1])
    for values in (
        want.astype(np.int64),
        np.array([0, 1, t // 2, t - 1], dtype=np.uint64),
        want.astype(np.float64),
        np.array(list(want), dtype=object),
        list(want),
    ):
        got = ctx.decrypt(ctx.encrypt(values, bf.pk), bf.sk)[: len(values)]
        expected = np.asarray([int(v) for v in values]) % t
        np.testing.assert_array_equal(got % t, expected)


def test_integer_empty_values_are_zero(bf):
    got = bf.ctx.decrypt(bf.ctx.encrypt(np.array([], dtype=np.int64), bf.pk), bf.sk)
    assert not got.any()


# ---------------------------------------------------------------------------------------------
# BFV / BGV: scalar operands are reduced exactly modulo t


@pytest.mark.parametrize("k", [2**70, -(2**70), 2**64, 2**64 - 1, np.uint64(2**64 - 1), 3.0])
def test_integer_scalars_reduce_exactly(bf, y, k):
    ctx, t = bf.ctx, T
    a = ctx.decrypt(y, bf.sk)
    r = int(k) % t

    def centered(v):
        v = np.mod(v, t)
        return np.where(v > t // 2, v - t, v)

    np.testing.assert_array_equal(ctx.decrypt(y + k, bf.sk), centered(a + r))
    np.testing.assert_array_equal(ctx.decrypt(y - k, bf.sk), centered(a - r))
    np.testing.assert_array_equal(ctx.decrypt(y * k, bf.sk), centered(a * r))


@pytest.mark.parametrize("k", [1.5, NAN, INF, True, np.True_, 1j, "3"], ids=repr)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_integer_scalars_must_be_integers(y, op, k):
    with refused(ember.ParameterError, "integers"):
        {"add": lambda: y + k, "sub": lambda: y - k, "mul": lambda: y * k}[op]()


# ---------------------------------------------------------------------------------------------
# Plaintexts: wrong type, other parameters


def test_decode_needs_a_plaintext(ck, bf):
    with refused(ember.ParameterError, "decode needs a CKKS plaintext"):
        ck.ctx.decode(np.ones(4))
    with refused(ember.MismatchError, r"decode needs a CKKS plaintext.*got a BFV Plaintext"):
        ck.ctx.decode(bf.ctx.encode(np.arange(4)))
    with refused(ember.ParameterError, "decode needs a BFV plaintext"):
        bf.ctx.decode([1, 2])


def test_integer_plaintext_of_other_parameters(bf, y):
    """A plaintext of another BFV context (other t) would be read modulo the wrong t."""
    other = bfv.Context(
        bfv.Params(log_n=12, plain_modulus=40961, q_bits=(36, 36), special_bits=(37,)), device="cpu"
    )
    pt = other.encode(np.arange(4))
    for call in (lambda: y + pt, lambda: y * pt, lambda: bf.ctx.encrypt(pt, bf.pk)):
        with refused(ember.MismatchError, "other parameters"):
            call()


# ---------------------------------------------------------------------------------------------
# Arrays whose data is not aligned (UBSan found the deserializer's: np.frombuffer at an odd offset)


def _misaligned(values: np.ndarray) -> np.ndarray:
    """The same values in a C-contiguous array whose data starts one byte past an alignment."""
    raw = np.zeros(values.nbytes + 1, dtype=np.uint8)
    raw[1:] = np.frombuffer(values.tobytes(), dtype=np.uint8)
    view = np.frombuffer(raw.data, dtype=values.dtype, count=values.size, offset=1)
    view = view.reshape(values.shape)
    assert view.flags.c_contiguous and not view.flags.aligned
    return view


def test_misaligned_arrays_are_read_exactly(ck, bf):
    from ember import ring

    basis = ck.ctx._raw.q_basis(1)
    words = np.arange(2 * ck.ctx.params.n, dtype=np.uint64).reshape(2, -1)
    poly = ring.RnsPoly.from_numpy(basis, _misaligned(words), "coeff", "cpu")
    np.testing.assert_array_equal(poly.to_numpy(), words)
    signed = np.arange(ck.ctx.params.n, dtype=np.int64) - 7
    got = ring.RnsPoly.from_signed(basis, _misaligned(signed), "coeff", "cpu").to_numpy()
    np.testing.assert_array_equal(got[0], signed % basis.primes[0])
    m = np.arange(bf.ctx.params.n, dtype=np.uint64) % 11
    pt = bf.ctx.encode_coeffs(m)
    pt.coeffs = _misaligned(pt.coeffs)
    assert np.array_equal(bf.ctx.decrypt(bf.ctx.encrypt(pt, bf.sk), bf.sk), m)


@pytest.mark.parametrize("which", ["cts", "coeffs"])
def test_ckks_linear_combination_needs_lists(ck, x, which):
    args = {"cts": [x], "coeffs": [0.5]}
    args[which] = x if which == "cts" else 0.5
    with refused(ember.ParameterError, "needs a list of"):
        ck.ctx.linear_combination(args["cts"], args["coeffs"])


@pytest.mark.parametrize("slots", [8.0, 2.5, True, "8"], ids=repr)
def test_ckks_bootstrap_slots_must_be_integers(ck, x, slots):
    """Checked before anything else (this small context has no bootstrapping at all)."""
    with refused(ember.ParameterError, "bootstrapping slots must be an integer"):
        ck.ctx.bootstrap(x, slots=slots)
    with refused(ember.ParameterError, "bootstrapping slots must be an integer"):
        ck.ctx.eval_keys(ck.sk, bootstrap=True, bootstrap_slots=[slots])
