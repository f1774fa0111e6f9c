"""CKKS on the CPU backend against numpy: encoding, encryption, every operation, level and scale
bookkeeping, rotations (every step of a small ring), hoisting, polynomial evaluation, matrix-vector
products, manual rescaling, parameter presets.

Precision: every comparison asserts log2 of the max slot error against ckksref.bound_bits, derived
from the parameters (see ckksref's docstring for the error model), and the assertion message
reports the measured value. Contexts and keys are module fixtures (key generation is the slow
part); the parameters are small and insecure on purpose.
"""

from __future__ import annotations

import math
import re

import ember
import numpy as np
import pytest
from ckksref import (
    bound_bits,
    chebyshev_amplification,
    chebyshev_eval,
    check,
    complex_uniform,
    diagonals_l1,
    padded,
    poly_depth,
    power_amplification,
    rot,
    tiled,
    uniform,
    unit_circle,
)
from ember import ckks, ring
from ember.polyeval import chebyshev_coefficients
from ringref import is_probable_prime

SMALL = {
    "scale_bits": 40,
    "first_mod_bits": 60,
    "special_mods": 1,
    "special_mod_bits": 60,
    "insecure": True,
}
P12 = ckks.Params(log_n=12, levels=6, **SMALL)  # 2048 slots, 6 levels (poly_eval of degree 15)
P10 = ckks.Params(log_n=10, levels=2, **SMALL)  # 512 slots: every rotation, matvec
POW2_12 = [1 << i for i in range(11)]  # 1 .. 1024 (sum_slots and the fallback)


class Kit:
    def __init__(self, params, rotations=(), conjugation=False, auto_rescale=True):
        self.params = params
        self.ctx = ckks.Context(params, device="cpu", auto_rescale=auto_rescale)
        self.sk = self.ctx.keygen()
        self.pk = self.ctx.public_key(self.sk)
        self.ek = self.ctx.eval_keys(self.sk, rotations=rotations, conjugation=conjugation)
        self.ctx.set_eval_keys(self.ek)

    def dec(self, ct, complex=None):
        return self.ctx.decrypt(ct, self.sk, complex=complex)


@pytest.fixture(scope="module")
def k12():
    return Kit(P12, rotations=POW2_12 + [3, 5, -1, -3], conjugation=True)


@pytest.fixture(scope="module")
def k10():
    """log_n = 10 with two key sets of one secret: every rotation step (ek_all) and only the
    powers of two (ek_pow2). Tests select one with ctx.set_eval_keys."""
    kit = Kit(P10, rotations=range(1, P10.slots), conjugation=True)
    kit.ek_all = kit.ek
    kit.ek_pow2 = kit.ctx.eval_keys(kit.sk, rotations=[1 << i for i in range(9)])
    return kit


@pytest.fixture(scope="module")
def kman():
    return Kit(ckks.Params(log_n=11, levels=3, **SMALL), auto_rescale=False)


def std_scale(ctx, ct):
    return ct.scale == pytest.approx(ctx.scale_at(ct.level), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# Encoding and encryption


@pytest.mark.parametrize("key", ["pk", "sk"])
def test_roundtrip_real(k12, rng, key):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    pt = ctx.encode(x)
    assert pt.level == ctx.max_level == P12.levels
    assert pt.scale == ctx.scale_at(ctx.max_level) == 2.0**P12.scale_bits
    ct = ctx.encrypt(pt, getattr(k12, key))
    assert ct.level == ctx.max_level and ct.scale == pt.scale and not ct.is_complex
    got = k12.dec(ct)
    assert got.dtype == np.float64 and got.shape == (ctx.slots,)
    check(got, x, bound_bits(P12), f"encrypt {key} real")
    np.testing.assert_allclose(ctx.decode(pt), x, rtol=0, atol=2.0 ** bound_bits(P12))
    # Values straight to encrypt (encoding inside).
    check(k12.dec(ctx.encrypt(x, getattr(k12, key))), x, bound_bits(P12), f"encrypt {key} real")


@pytest.mark.parametrize("key", ["pk", "sk"])
def test_roundtrip_complex(k12, rng, key):
    ctx = k12.ctx
    z = complex_uniform(rng, ctx.slots)
    ct = ctx.encrypt(ctx.encode(z), getattr(k12, key))
    assert ct.is_complex
    got = k12.dec(ct)
    assert got.dtype == np.complex128
    check(got, z, bound_bits(P12), f"encrypt {key} complex")
    # complex=False gives the real parts, complex=True the complex slots of a real ciphertext.
    check(k12.dec(ct, complex=False), z.real, bound_bits(P12), f"encrypt {key} complex")
    x = z.real
    got = k12.dec(ctx.encrypt(x, getattr(k12, key)), complex=True)
    assert got.dtype == np.complex128
    check(got, x.astype(complex), bound_bits(P12), f"encrypt {key} real")


@pytest.mark.parametrize("length", [1, 2, 16, 512, 1024])
def test_roundtrip_sparse_length_divides_slots(k12, rng, length):
    """sparse=True packs a vector whose length divides the slot count by repeating it;
    without it, shorter input is zero-padded (API.md)."""
    ctx = k12.ctx
    for v in (uniform(rng, length), complex_uniform(rng, length)):
        got = k12.dec(ctx.encrypt(v, k12.pk, sparse=True))
        check(got, tiled(v, ctx.slots), bound_bits(P12), "encrypt sparse")
        got = k12.dec(ctx.encrypt(v, k12.pk))
        check(got, padded(v, ctx.slots), bound_bits(P12), "encrypt zero-padded")


def test_sparse_packing_rotates_modulo_its_length(k12, rng):
    ctx = k12.ctx
    v = uniform(rng, 16)
    got = k12.dec(ctx.encrypt(v, k12.pk, sparse=True).rotate(1))
    check(got[:16], np.roll(v, -1), bound_bits(P12), "sparse rotate")


def test_sparse_packing_needs_a_dividing_length(k12, rng):
    with pytest.raises(ember.ParameterError):
        k12.ctx.encode(uniform(rng, 3), sparse=True)


def test_decode_plaintext(k12, rng):
    x = uniform(rng, k12.ctx.slots)
    pt = k12.ctx.encode(x, level=1)
    check(k12.ctx.decode(pt), x, bound_bits(P12), "decode")


@pytest.mark.parametrize("length", [3, 100, 1000, 2047])
def test_roundtrip_shorter_is_zero_padded(k12, rng, length):
    ctx = k12.ctx
    for v in (uniform(rng, length), complex_uniform(rng, length)):
        got = k12.dec(ctx.encrypt(ctx.encode(v), k12.sk))
        check(got, padded(v, ctx.slots), bound_bits(P12), "encrypt zero-padded")


def test_encrypt_at_every_level(k12, rng):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    for level in range(ctx.max_level + 1):
        ct = ctx.encrypt(x, k12.pk, level=level)
        assert ct.level == level and std_scale(ctx, ct)
        check(k12.dec(ct), x, bound_bits(P12), f"encrypt pk at level {level}")


def test_encode_with_explicit_scale(k12, rng):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    pt = ctx.encode(x, level=3, scale=2.0**30)
    assert pt.level == 3 and pt.scale == 2.0**30
    ct = ctx.encrypt(pt, k12.sk)
    assert ct.level == 3 and ct.scale == 2.0**30
    check(k12.dec(ct), x, bound_bits(P12, scale_bits=30), "encrypt at scale 2^30")


def test_large_and_integer_values(k12, rng):
    """Values far above 1 (q_0 = 2^60 holds 2^19 at scale 2^40): the error is relative to the
    scale, not to the values."""
    ctx = k12.ctx
    x = rng.integers(-(2**18), 2**18, ctx.slots).astype(float)
    got = k12.dec(ctx.encrypt(x, k12.pk))
    check(got, x, bound_bits(P12), "encrypt large values")
    ct0 = ctx.encrypt(x, k12.pk, level=0)
    check(k12.dec(ct0), x, bound_bits(P12), "encrypt large values at level 0")


# ---------------------------------------------------------------------------------------------
# Addition


def test_add_sub_negate(k12, rng):
    ctx = k12.ctx
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a, b = ctx.encrypt(x, k12.pk), ctx.encrypt(y, k12.pk)
    bnd = bound_bits(P12, amplification=2)
    for got, want, what in (
        (a + b, x + y, "ct+ct"),
        (a - b, x - y, "ct-ct"),
        (b - a, y - x, "ct-ct"),
        (-a, -x, "-ct"),
        (ctx.add(a, b), x + y, "ct+ct"),
        (ctx.sub(a, b), x - y, "ct-ct"),
        (ctx.negate(b), -y, "-ct"),
        (a + a, 2 * x, "ct+ct"),
        (a - a, 0 * x, "ct-ct"),
    ):
        assert got.level == ctx.max_level and std_scale(ctx, got)
        check(k12.dec(got), want, bnd, what)


def test_add_complex_ciphertexts(k12, rng):
    ctx = k12.ctx
    z, x = complex_uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a, b = ctx.encrypt(z, k12.pk), ctx.encrypt(x, k12.pk)
    out = b + a  # real + complex is complex
    assert out.is_complex
    check(k12.dec(out), x + z, bound_bits(P12, amplification=2), "ct+ct complex")
    check(k12.dec(a - b), z - x, bound_bits(P12, amplification=2), "ct-ct complex")


@pytest.mark.parametrize("c", [0.5, -3.25, 2, -7, np.float64(1.125), np.int64(3), 0.0])
def test_add_real_scalar(k12, rng, c):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    for got, want, what in (
        (a + c, x + c, "ct+scalar"),
        (c + a, c + x, "ct+scalar"),
        (a - c, x - c, "ct-scalar"),
        (c - a, c - x, "ct-scalar"),
    ):
        assert isinstance(got, ckks.Ciphertext)
        assert got.level == a.level and std_scale(ctx, got)
        check(k12.dec(got), want, bound_bits(P12), what)


@pytest.mark.parametrize("c", [0.5 + 0.25j, -1j, np.complex128(0.75 - 0.5j)])
def test_add_complex_scalar(k12, rng, c):
    """ct + complex scalar (multiplication by one works; API: ct + scalar)."""
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    got = a + c
    assert got.is_complex and got.level == a.level
    check(k12.dec(got), x + c, bound_bits(P12), "ct+complex scalar")
    check(k12.dec(a - c), x - c, bound_bits(P12), "ct+complex scalar")


def test_add_array(k12, rng):
    ctx = k12.ctx
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    z = complex_uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    bnd = bound_bits(P12)
    for got, want, what in (
        (a + y, x + y, "ct+array"),
        (y + a, y + x, "ct+array"),
        (a - y, x - y, "ct-array"),
        (y - a, y - x, "ct-array"),
    ):
        assert isinstance(got, ckks.Ciphertext), f"{what}: numpy did not defer ({type(got)})"
        assert got.level == a.level and std_scale(ctx, got) and not got.is_complex
        check(k12.dec(got), want, bnd, what)
    got = a + z
    assert got.is_complex
    check(k12.dec(got), x + z, bnd, "ct+complex array")
    # Shorter arrays follow the encoding rule (zero-padded).
    check(k12.dec(a + y[:100]), x + padded(y[:100], ctx.slots), bnd, "ct+array")


def test_add_plaintext(k12, rng):
    ctx = k12.ctx
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    pt = ctx.encode(y)
    bnd = bound_bits(P12)
    check(k12.dec(a + pt), x + y, bnd, "ct+plaintext")
    check(k12.dec(a - pt), x - y, bnd, "ct-plaintext")
    # A plaintext at another level is re-encoded at the ciphertext's level and scale.
    low = ctx.encrypt(x, k12.pk, level=2)
    got = low + pt
    assert got.level == 2 and std_scale(ctx, got)
    check(k12.dec(got), x + y, bnd, "ct+plaintext")
    check(k12.dec(low - ctx.encode(y, level=4)), x - y, bnd, "ct-plaintext")


# ---------------------------------------------------------------------------------------------
# Multiplication by constants, arrays and plaintexts


@pytest.mark.parametrize("c", [0.5, -1.75, 3.3, 1e-3, np.float64(-0.2), np.float32(0.25)])
def test_multiply_fractional_scalar(k12, rng, c):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    for got in (a * c, c * a, ctx.multiply(a, c)):
        assert got.level == a.level - 1, "a fractional constant costs one level"
        assert std_scale(ctx, got)
        check(k12.dec(got), x * c, bound_bits(P12, 1, amplification=abs(c)), "ct*scalar")


@pytest.mark.parametrize("c", [3, -2, 0, 1, np.int64(5), 4.0, -6.0, 2**16])
def test_multiply_integer_scalar_costs_no_level(k12, rng, c):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    for level in (ctx.max_level, 0):
        a = ctx.encrypt(x, k12.pk, level=level)
        got = a * c
        assert got.level == level, "an integer constant costs no level"
        assert got.scale == a.scale
        check(
            k12.dec(got), x * float(c), bound_bits(P12, amplification=abs(float(c))), "ct*integer"
        )
        check(
            k12.dec(c * a), float(c) * x, bound_bits(P12, amplification=abs(float(c))), "ct*integer"
        )


@pytest.mark.parametrize("c", [0.5j, 1 - 2j, np.complex128(-0.25 + 0.75j), 2 + 0j])
def test_multiply_complex_scalar(k12, rng, c):
    ctx = k12.ctx
    z = complex_uniform(rng, ctx.slots)
    a = ctx.encrypt(z, k12.pk)
    got = a * c
    assert got.is_complex
    assert std_scale(ctx, got)
    check(k12.dec(got), z * c, bound_bits(P12, 1, amplification=abs(c)), "ct*complex scalar")
    x = z.real
    got = ctx.encrypt(x, k12.pk) * c
    check(
        k12.dec(got, complex=True),
        x * c,
        bound_bits(P12, 1, amplification=abs(c)),
        "ct*complex scalar",
    )


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_multiply_numpy_complex_scalar(k12, rng, dtype):
    """A numpy complex scalar of any precision multiplies like a Python complex."""
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    c = dtype(0.5j)
    got = ctx.encrypt(x, k12.pk) * c
    check(k12.dec(got, complex=True), x * 0.5j, bound_bits(P12, 1), "ct*numpy complex scalar")


def test_multiply_array(k12, rng):
    ctx = k12.ctx
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots, -2, 2)
    z = complex_uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    bnd = bound_bits(P12, 1, amplification=2)
    for got, what in ((a * y, "ct*array"), (y * a, "array*ct"), (ctx.multiply(a, y), "ct*array")):
        assert isinstance(got, ckks.Ciphertext), f"{what}: numpy did not defer"
        assert got.level == a.level - 1 and std_scale(ctx, got) and not got.is_complex
        check(k12.dec(got), x * y, bnd, "ct*array")
    got = a * z
    assert got.is_complex and got.level == a.level - 1
    check(k12.dec(got), x * z, bnd, "ct*complex array")
    cz = ctx.encrypt(z, k12.pk)
    check(k12.dec(cz * z), z * z, bnd, "ct*complex array")
    # At a lower level, twice (the product stays at the standard scale).
    b = ctx.encrypt(x, k12.pk, level=2)
    got = (b * y) * y
    assert got.level == 0 and std_scale(ctx, got)
    check(k12.dec(got), x * y * y, bound_bits(P12, 2, amplification=4), "ct*array")


def test_multiply_plaintext(k12, rng):
    ctx = k12.ctx
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    pt = ctx.encode(y)
    got = a * pt
    assert got.level == a.level - 1 and std_scale(ctx, got)
    check(k12.dec(got), x * y, bound_bits(P12, 1), "ct*plaintext")
    # Plaintext encoded at another level than the ciphertext's.
    low = ctx.encrypt(x, k12.pk, level=3)
    for p in (pt, ctx.encode(y, level=3), ctx.encode(y, level=1)):
        got = low * p
        assert got.level == 2 and std_scale(ctx, got)
        check(k12.dec(got), x * y, bound_bits(P12, 1), "ct*plaintext")
    zpt = ctx.encode(complex_uniform(rng, ctx.slots))
    got = a * zpt
    assert got.is_complex
    check(k12.dec(got), x * zpt.values, bound_bits(P12, 1), "ct*complex plaintext")


# ---------------------------------------------------------------------------------------------
# Ciphertext products, chains, levels


def test_multiply_ciphertexts(k12, rng):
    ctx = k12.ctx
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a, b = ctx.encrypt(x, k12.pk), ctx.encrypt(y, k12.pk)
    for got in (a * b, ctx.multiply(b, a)):
        assert got.level == a.level - 1
        assert got.scale == ctx.scale_at(got.level)  # exactly S_l^2 / q_l
        assert not got.is_complex
        check(k12.dec(got), x * y, bound_bits(P12, 1), "ct*ct")


def test_multiply_complex_ciphertexts(k12, rng):
    ctx = k12.ctx
    z, w = complex_uniform(rng, ctx.slots), complex_uniform(rng, ctx.slots)
    a, b = ctx.encrypt(z, k12.pk), ctx.encrypt(w, k12.sk)
    got = a * b
    assert got.is_complex and got.level == a.level - 1
    check(k12.dec(got), z * w, bound_bits(P12, 1), "ct*ct complex")


def test_square(k12, rng):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    got = ctx.square(a)
    assert got.level == a.level - 1 and got.scale == ctx.scale_at(got.level)
    check(k12.dec(got), x * x, bound_bits(P12, 1), "square")
    check(k12.dec(a * a), x * x, bound_bits(P12, 1), "square")


def test_api_expression(k12, rng):
    """y = x * x + 0.5 * x - 1.0 and z = x * pt + ones, as in API.md."""
    ctx = k12.ctx
    x, w = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    ct = ctx.encrypt(x, k12.pk)
    y = ct * ct + 0.5 * ct - 1.0
    assert y.level == ctx.max_level - 1 and std_scale(ctx, y)
    check(k12.dec(y), x * x + 0.5 * x - 1.0, bound_bits(P12, 1, amplification=2), "expression")
    z = ct * ctx.encode(w) + np.ones(ctx.slots)
    check(k12.dec(z), x * w + 1, bound_bits(P12, 1), "expression")


def test_product_chain_to_level_zero(k12, rng):
    """y <- y * x_k with fresh top-level ciphertexts (brought down automatically), values on the
    unit circle so that every partial product has modulus 1, down to level 0."""
    ctx = k12.ctx
    zs = [unit_circle(rng, ctx.slots) for _ in range(ctx.max_level + 1)]
    y, want = ctx.encrypt(zs[0], k12.pk), zs[0]
    for k in range(1, ctx.max_level + 1):
        y = y * ctx.encrypt(zs[k], k12.pk)
        want = want * zs[k]
        assert y.level == ctx.max_level - k
        assert y.scale == pytest.approx(ctx.scale_at(y.level), rel=1e-9)
        check(k12.dec(y), want, bound_bits(P12, k), f"product chain [level {y.level}]")
    assert y.level == 0


def test_squaring_chain_to_level_zero(k12, rng):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    y, want = ctx.encrypt(x, k12.pk), x
    for k in range(1, ctx.max_level + 1):
        y = y * y
        want = want * want
        assert y.level == ctx.max_level - k and std_scale(ctx, y)
        check(k12.dec(y), want, bound_bits(P12, k), f"squaring chain [level {y.level}]")


def test_operands_at_different_levels(k12, rng):
    """The higher operand is brought to the lower level (and its standard scale)."""
    ctx = k12.ctx
    top = ctx.max_level
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    b = ctx.encrypt(y, k12.pk, level=top - 2)
    c = a * a  # level top - 1
    for got, want, level, depth in (
        (a + b, x + y, top - 2, 1),
        (b + a, y + x, top - 2, 1),
        (a - b, x - y, top - 2, 1),
        (b - a, y - x, top - 2, 1),
        (a * b, x * y, top - 3, 2),
        (b * a, y * x, top - 3, 2),
        (c + a, x * x + x, top - 1, 1),
        (c * b, x * x * y, top - 3, 2),
        (b * c, x * x * y, top - 3, 2),
    ):
        assert got.level == level and std_scale(ctx, got)
        check(k12.dec(got), want, bound_bits(P12, depth, amplification=2), "different levels")
    # Explicit drop to every lower level.
    for level in range(top, -1, -1):
        d = ctx.drop_level(a, level)
        assert d.level == level and std_scale(ctx, d)
        check(k12.dec(d), x, bound_bits(P12, 1), "drop_level")


def test_operations_at_level_zero(k12, rng):
    ctx = k12.ctx
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a, b = ctx.encrypt(x, k12.pk, level=0), ctx.encrypt(y, k12.pk, level=0)
    for got, want in (
        (a + b, x + y),
        (a - b, x - y),
        (a + 0.5, x + 0.5),
        (a + y, x + y),
        (a * 3, 3 * x),
        (-a, -x),
    ):
        assert got.level == 0
        check(k12.dec(got), want, bound_bits(P12, amplification=3), "level 0 ops")


# ---------------------------------------------------------------------------------------------
# Rotations and conjugation (log_n = 10: 512 slots)


def test_eval_keys_rotations(k10):
    assert k10.ek_all.rotations == list(range(1, P10.slots))
    assert k10.ek_pow2.rotations == [1 << i for i in range(9)]
    assert k10.ek_all.nbytes > k10.ek_pow2.nbytes > 0


def test_rotate_every_step_with_all_keys(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    z = complex_uniform(rng, ctx.slots)
    a = ctx.encrypt(z, k10.pk)
    bnd = bound_bits(P10, keyswitches=1)
    for s in range(ctx.slots):
        r = a.rotate(s)
        assert r.level == a.level and r.scale == a.scale and r.is_complex
        check(k10.dec(r), rot(z, s), bnd, f"rotate (own key) [step {s}]")


def test_rotate_every_step_with_power_of_two_keys(k10, rng):
    """Steps without their own key go through their power-of-two decomposition."""
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_pow2)
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k10.pk)
    for s in range(ctx.slots):
        r = ctx.rotate(a, s)
        assert r.level == a.level
        bnd = bound_bits(P10, keyswitches=bin(s).count("1"))
        check(k10.dec(r), rot(x, s), bnd, f"rotate (power-of-two keys) [step {s}]")


@pytest.mark.parametrize("keys", ["ek_all", "ek_pow2"])
def test_rotate_negative_and_large_steps(k10, rng, keys):
    ctx = k10.ctx
    ctx.set_eval_keys(getattr(k10, keys))
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k10.pk)
    n = ctx.slots
    for s in (-1, -2, -5, -100, -(n - 1), -n, n, n + 3, 3 * n - 7, -3 * n + 1):
        ks = 1 if keys == "ek_all" else bin(s % n).count("1")
        check(
            k10.dec(a.rotate(s)),
            rot(x, s),
            bound_bits(P10, keyswitches=ks),
            f"rotate negative/large [{keys}]",
        )
    # Composition: rotating by s then -s gives the input back.
    check(
        k10.dec(a.rotate(37).rotate(-37)),
        x,
        bound_bits(P10, keyswitches=2 * 9),
        "rotate negative/large",
    )


def test_rotate_after_multiplication(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k10.pk)
    y = (a * a).rotate(5)
    assert y.level == ctx.max_level - 1
    check(k10.dec(y), rot(x * x, 5), bound_bits(P10, 1, keyswitches=1), "rotate after ct*ct")
    y0 = ctx.drop_level(a, 0).rotate(-7)
    check(k10.dec(y0), rot(x, -7), bound_bits(P10, 1, keyswitches=1), "rotate at level 0")


def test_conjugate(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    z = complex_uniform(rng, ctx.slots)
    a = ctx.encrypt(z, k10.pk)
    c = a.conj()
    assert c.is_complex and c.level == a.level
    check(k10.dec(c), np.conj(z), bound_bits(P10, keyswitches=1), "conj")
    check(k10.dec(ctx.conj(c)), z, bound_bits(P10, keyswitches=2), "conj")
    # Real and imaginary parts: (z + conj z) / 2 and (z - conj z) / 2i.
    check(k10.dec(a + c), 2 * z.real + 0j, bound_bits(P10, keyswitches=1, amplification=2), "conj")
    check(
        k10.dec((a - c) * -0.5j),
        z.imag + 0j,
        bound_bits(P10, 1, keyswitches=1, amplification=2),
        "conj",
    )
    x = z.real
    check(k10.dec(ctx.encrypt(x, k10.pk).conj()), x, bound_bits(P10, keyswitches=1), "conj")
    check(k10.dec(a.conj().rotate(3)), rot(np.conj(z), 3), bound_bits(P10, keyswitches=2), "conj")


def test_rotate_many_equals_individual_rotations(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    z = complex_uniform(rng, ctx.slots)
    a = ctx.encrypt(z, k10.pk)
    steps = [1, 2, 0, 5, -1, 17, 255, 511, 5, -300, 512]
    many = ctx.rotate_many(a, steps)
    assert len(many) == len(steps)
    bnd = bound_bits(P10, keyswitches=1)
    for s, r in zip(steps, many):
        assert r.level == a.level and r.scale == a.scale and r.is_complex
        single = k10.dec(a.rotate(s))
        hoisted = k10.dec(r)
        check(hoisted, rot(z, s), bnd, "rotate_many")
        check(hoisted, single, bnd, "rotate_many vs rotate")
    # Step 0 is a copy, not the same object.
    assert many[2] is not a
    assert ctx.rotate_many(a, []) == []


def test_rotate_many_at_lower_level(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k10.pk) * 0.5
    for s, r in zip(range(0, 40, 3), ctx.rotate_many(a, list(range(0, 40, 3)))):
        assert r.level == a.level
        check(k10.dec(r), rot(0.5 * x, s), bound_bits(P10, 1, keyswitches=1), "rotate_many")


@pytest.mark.parametrize("keys", ["ek_all", "ek_pow2"])
def test_sum_slots(k10, rng, keys):
    ctx = k10.ctx
    ctx.set_eval_keys(getattr(k10, keys))
    x = uniform(rng, ctx.slots)
    s = ctx.sum_slots(ctx.encrypt(x, k10.pk))
    log_slots = P10.log_n - 1
    bnd = bound_bits(P10, keyswitches=log_slots, amplification=ctx.slots)
    check(k10.dec(s), np.full(ctx.slots, x.sum()), bnd, "sum_slots")


def test_inner_product(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_pow2)
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a, b = ctx.encrypt(x, k10.pk), ctx.encrypt(y, k10.pk)
    log_slots = P10.log_n - 1
    bnd = bound_bits(P10, 1, keyswitches=log_slots, amplification=ctx.slots)
    want = np.full(ctx.slots, x @ y)
    for got in (ctx.inner_product(a, b), ctx.inner_product(a, y)):
        assert got.level == a.level - 1
        check(k10.dec(got), want, bnd, "inner_product")


# ---------------------------------------------------------------------------------------------
# Polynomial evaluation


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _approx_error(f, coeffs, interval, x):
    grid = np.concatenate([np.linspace(*interval, 20001), x])
    return float(np.max(np.abs(chebyshev_eval(coeffs, grid, interval) - f(grid))))


@pytest.mark.parametrize(
    "name,f,interval,degree",
    [
        ("sigmoid", sigmoid, (-4.0, 4.0), 7),
        ("sigmoid", sigmoid, (-4.0, 4.0), 15),
        ("exp", np.exp, (-1.0, 1.0), 7),
        ("exp", np.exp, (-1.0, 1.0), 11),
        ("exp", np.exp, (-2.0, 1.0), 15),
    ],
)
def test_poly_eval_chebyshev(k12, rng, name, f, interval, degree):
    ctx = k12.ctx
    lo, hi = interval
    x = rng.uniform(lo, hi, ctx.slots)
    x[:2] = lo, hi  # the ends of the interval
    coeffs = chebyshev_coefficients(f, degree, interval)
    assert len(coeffs) == degree + 1
    out = ctx.poly_eval(ctx.encrypt(x, k12.pk), coeffs, basis="chebyshev", interval=interval)
    mapped = (lo, hi) != (-1.0, 1.0)  # the affine map costs a level (non-integer factor)
    depth = ctx.max_level - out.level
    # Baby-step giant-step: at least the optimal ceil(log2(d + 1)), at most one more.
    assert math.ceil(math.log2(degree + 1)) + mapped <= depth <= poly_depth(degree) + mapped
    assert std_scale(ctx, out)
    got = k12.dec(out)
    bnd = bound_bits(P12, depth, amplification=chebyshev_amplification(coeffs))
    check(got, chebyshev_eval(coeffs, x, interval), bnd, f"poly_eval {name} vs chebval")
    # Against the function itself: within the interpolation error plus the bound.
    approx = _approx_error(f, coeffs, interval, x)
    assert approx < 1e-2, f"degree {degree} interpolation of {name} is poor ({approx})"
    check(got, f(x), math.log2(approx + 2.0**bnd), f"poly_eval {name} vs {name}")


def test_poly_eval_power_basis(k12, rng):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    coeffs = [0.1, -0.5, 0.25, 0.3, -0.2, 0.15]
    out = ctx.poly_eval(ctx.encrypt(x, k12.pk), coeffs, basis="power")
    depth = ctx.max_level - out.level
    d = len(coeffs) - 1
    assert math.ceil(math.log2(d + 1)) <= depth <= poly_depth(d)
    want = np.polynomial.polynomial.polyval(x, coeffs)
    check(
        k12.dec(out),
        want,
        bound_bits(P12, depth, amplification=power_amplification(coeffs)),
        "poly_eval power",
    )
    # Degree 8 in the power basis (x^8 by repeated squaring), complex input.
    z = complex_uniform(rng, ctx.slots)
    coeffs = rng.uniform(-0.5, 0.5, 9)
    out = ctx.poly_eval(ctx.encrypt(z, k12.pk), coeffs, basis="power")
    assert out.level == ctx.max_level - poly_depth(8)
    check(
        k12.dec(out),
        np.polynomial.polynomial.polyval(z, coeffs),
        bound_bits(P12, poly_depth(8), amplification=power_amplification(coeffs)),
        "poly_eval power",
    )


def test_poly_eval_low_degrees(k12, rng):
    ctx = k12.ctx
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, k12.pk)
    bnd = bound_bits(P12, 1, amplification=2)
    for coeffs in ([0.3], [0.1, 0.5], [0.25, 0.0, 0.0], [0.0, 0.0, 1.0], [-0.5, 0.0, 0.75]):
        want_c = np.polynomial.chebyshev.chebval(x, coeffs)
        want_p = np.polynomial.polynomial.polyval(x, coeffs)
        check(k12.dec(ctx.poly_eval(a, coeffs)), want_c, bnd, "poly_eval low degree")
        check(k12.dec(ctx.poly_eval(a, coeffs, basis="power")), want_p, bnd, "poly_eval low degree")


# ---------------------------------------------------------------------------------------------
# Matrix-vector products (512 slots, every rotation key)


def _matvec_bound(params, matrix):
    """Input error amplified by the row l1 norm, the baby-step key switches as much again, and one
    key switch per giant step (n2 = slots / n1, n1 the power of two >= sqrt(slots))."""
    n = params.slots
    n1 = 1 << math.ceil(math.log2(math.isqrt(n)))
    return bound_bits(params, 1, amplification=2 * diagonals_l1(matrix) + n // n1)


def test_matvec_dense(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    n = ctx.slots
    m = rng.uniform(-1, 1, (n, n)) / math.sqrt(n)
    x = uniform(rng, n)
    out = ctx.matvec(m, ctx.encrypt(x, k10.pk))
    assert out.level == ctx.max_level - 1 and std_scale(ctx, out)
    check(k10.dec(out), m @ x, _matvec_bound(P10, m), "matvec dense")


def test_matvec_dense_complex(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    n = ctx.slots
    m = (rng.uniform(-1, 1, (n, n)) + 1j * rng.uniform(-1, 1, (n, n))) / n
    z = complex_uniform(rng, n)
    out = ctx.matvec(m, ctx.encrypt(z, k10.pk))
    check(k10.dec(out, complex=True), m @ z, _matvec_bound(P10, m), "matvec dense complex")


def test_matvec_complex_matrix_real_vector(k10, rng):
    """A complex matrix times a real ciphertext is complex: decrypt (and bootstrap) must not
    drop the imaginary part."""
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    n = ctx.slots
    m = (rng.uniform(-1, 1, (n, n)) + 1j * rng.uniform(-1, 1, (n, n))) / n
    x = uniform(rng, n)
    out = ctx.matvec(m, ctx.encrypt(x, k10.pk))
    assert out.is_complex
    check(k10.dec(out), m @ x, _matvec_bound(P10, m), "matvec complex matrix, real vector")


def test_matvec_banded(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    n = ctx.slots
    m = np.zeros((n, n))
    for k in (-2, -1, 0, 1, 2, 100, -(n // 2)):  # wrapping diagonals included
        m += np.diag(rng.uniform(-1, 1, n - abs(k)), k)
    m[0, n - 1] = 0.5  # a corner entry (diagonal n - 1 = -1 mod n)
    x = uniform(rng, n)
    out = ctx.matvec(m, ctx.encrypt(x, k10.pk))
    assert out.level == ctx.max_level - 1 and std_scale(ctx, out)
    check(k10.dec(out), m @ x, _matvec_bound(P10, m), "matvec banded")
    # Identity and a permutation (one diagonal).
    eye = np.eye(n)
    check(
        k10.dec(ctx.matvec(eye, ctx.encrypt(x, k10.pk))),
        x,
        _matvec_bound(P10, eye),
        "matvec banded",
    )
    perm = np.roll(eye, 7, axis=1)
    check(
        k10.dec(ctx.matvec(perm, ctx.encrypt(x, k10.pk))),
        perm @ x,
        _matvec_bound(P10, perm),
        "matvec banded",
    )
    zero = np.zeros((n, n))
    check(
        k10.dec(ctx.matvec(zero, ctx.encrypt(x, k10.pk))),
        np.zeros(n),
        _matvec_bound(P10, zero),
        "matvec banded",
    )


def test_matvec_at_lower_level(k10, rng):
    ctx = k10.ctx
    ctx.set_eval_keys(k10.ek_all)
    n = ctx.slots
    m = rng.uniform(-1, 1, (n, n)) / n
    x = uniform(rng, n)
    a = ctx.encrypt(x, k10.pk) * 0.5
    out = ctx.matvec(m, a)
    assert out.level == 0
    check(k10.dec(out), m @ (0.5 * x), _matvec_bound(P10, m) + 1, "matvec dense")


# ---------------------------------------------------------------------------------------------
# Manual rescaling


def test_manual_rescale_products(kman, rng):
    ctx = kman.ctx
    p = kman.params
    top = ctx.max_level
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a, b = ctx.encrypt(x, kman.pk), ctx.encrypt(y, kman.pk)
    s = ctx.scale_at(top)
    prod = a * b
    assert prod.level == top and prod.scale == s * s
    check(kman.dec(prod), x * y, bound_bits(p, 1), "manual ct*ct (scale^2)")
    r = ctx.rescale(prod)
    assert r.level == top - 1 and r.scale == ctx.scale_at(top - 1)
    check(kman.dec(r), x * y, bound_bits(p, 1), "manual rescale")
    r2 = prod.rescale()
    assert r2.level == top - 1
    # ct * array and ct * plaintext: plaintext at the level's standard scale, no rescale.
    for got in (a * y, a * ctx.encode(y)):
        assert got.level == top and got.scale == s * s
        r = got.rescale()
        assert r.level == top - 1 and r.scale == pytest.approx(ctx.scale_at(top - 1), rel=1e-9)
        check(kman.dec(r), x * y, bound_bits(p, 1), "manual ct*array")
    # Integer constants and additions keep the scale; matched operands add.
    check(
        kman.dec(r + ctx.rescale(a * a)),
        x * y + x * x,
        bound_bits(p, 1, amplification=2),
        "manual rescale",
    )
    got = a * 3 + b
    assert got.level == top and got.scale == s
    check(kman.dec(got), 3 * x + y, bound_bits(p, amplification=4), "manual ct*integer")
    # A squaring chain to level 0 with explicit rescales.
    c, want = a, x
    for k in range(1, top + 1):
        c = (c * c).rescale()
        want = want * want
        assert c.level == top - k and c.scale == pytest.approx(ctx.scale_at(c.level), rel=1e-9)
        check(kman.dec(c), want, bound_bits(p, k), f"manual chain [level {c.level}]")


def test_manual_rescale_scalar_product_is_not_rescaled(kman, rng):
    """With auto_rescale=False every product, a fractional constant's too, keeps its level and
    waits for an explicit rescale (Context.multiply's docstring)."""
    ctx = kman.ctx
    p = kman.params
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, kman.pk)
    got = a * 0.5
    check(kman.dec(got), 0.5 * x, bound_bits(p, 1), "manual ct*scalar")
    assert got.level == a.level, (
        f"manual mode: ct * 0.5 went from level {a.level} to {got.level} (rescaled "
        "automatically); expected the level to stay until ctx.rescale()"
    )
    r = got.rescale()
    assert r.level == a.level - 1
    check(kman.dec(r), 0.5 * x, bound_bits(p, 1), "manual ct*scalar")


def test_manual_mode_requires_matching_scales(kman, rng):
    ctx = kman.ctx
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, kman.pk)
    with pytest.raises(ember.MismatchError, match="rescale"):
        _ = a * a + a
    with pytest.raises(ember.MismatchError):
        _ = (a * a).rescale() * a  # different levels


# ---------------------------------------------------------------------------------------------
# Parameters and presets

# HomomorphicEncryption.org standard, 128-bit classical, ternary secret: max log2(QP) by log2(N).
HE_STANDARD_128 = {10: 27, 11: 54, 12: 109, 13: 218, 14: 438, 15: 881}


def test_presets_are_listed():
    names = ckks.Params.presets()
    assert isinstance(names, list) and names
    assert all(isinstance(n, str) and n for n in names)
    assert len(set(names)) == len(names)
    assert any(n.startswith("N16_") for n in names)
    # Names carry the size: N<log_n>_L<levels>.
    for name in names:
        m = re.fullmatch(r"N(\d+)_L(\d+)", name)
        if m:
            p = ckks.Params.preset(name)
            assert (p.log_n, p.levels) == (int(m[1]), int(m[2])), name


def test_security_table_matches_the_standard():
    for log_n, bits in HE_STANDARD_128.items():
        assert ckks.SECURITY_128_MAX_LOGQP[log_n] == bits


@pytest.mark.parametrize("name", [n for n in ckks.Params.presets() if "insecure" not in n])
def test_preset_validates_and_is_128_bit(name):
    p = ckks.Params.preset(name)
    assert p.name == name and not p.insecure and p.security == 128
    bound = ckks.SECURITY_128_MAX_LOGQP[p.log_n]
    assert p.total_bits <= bound
    primes = list(p.q_primes) + list(p.p_primes)
    log_qp = sum(math.log2(q) for q in primes)
    assert log_qp <= bound, f"{name}: log2(QP) = {log_qp:.2f} > {bound}"
    boot_levels = p.boot.levels if p.boot else 0
    # Each level's modulus: one prime, or with 32-bit words a pair (level_primes).
    groups = p.level_primes or (1,) * len(p.q_primes)
    ends = [sum(groups[: i + 1]) for i in range(len(groups))]
    levels = [math.prod(p.q_primes[e - g : e]) for e, g in zip(ends, groups)]
    assert len(levels) == p.levels + 1 + boot_levels and len(p.p_primes) == p.special_mods
    assert sum(groups) == len(p.q_primes) and len(set(primes)) == len(primes)
    for q in primes:
        assert q % (2 * p.n) == 1 and is_probable_prime(q), q
    assert abs(math.log2(levels[0]) - p.first_mod_bits) < (0.01 if groups[0] == 1 else 1)
    # Scaling levels sit on both sides of 2^scale_bits (so the standard scales do not drift);
    # alternating levels (32-bit words, 38-45-bit scales) are pairs of 2 scale_bits - 30 bits and
    # single primes of 30 bits below the top (their scales: test_bootstrap32.test_preset_layout).
    if ckks._alternates(p.scale_bits, p.word_bits):
        want = {2: 2 * p.scale_bits - 30, 1: 30}
        below_top = range(1, min(p.levels + 1, p.message_primes))
        assert all(abs(math.log2(levels[lv]) - want[groups[lv]]) < 0.1 for lv in below_top)
    else:
        assert all(abs(math.log2(q) - p.scale_bits) < 0.03 for q in levels[1 : p.levels + 1])
    assert all(q.bit_length() == p.special_mod_bits for q in p.p_primes)
    assert 1 <= p.dnum <= len(p.q_primes)
    assert p.slots == p.n // 2 == 2 ** (p.log_n - 1)


def preset_primes(name):
    """The preset's parameter set built with insecure=True, so that the properties below are
    checked even for a preset that fails validation (test_preset_validates_and_is_128_bit)."""
    return ckks.Params(**{"name": name, **ckks._PRESETS[name], "insecure": True})


@pytest.mark.parametrize("name", ckks.Params.presets())
def test_preset_standard_scales_stay_near_the_scale(name):
    """Every level's standard scale stays within a factor 2 of 2^scale_bits (alternating levels:
    of their fixed points, 2 scale_bits / 3 - 20 bits either side), and q_0 keeps room for the
    integer part (first_mod_bits - scale_bits bits, one of slack, less that swing). Context
    creation only: no keys."""
    p = preset_primes(name)
    ctx = ckks.Context(p, device="cpu")
    swing = (2 * p.scale_bits - 60) / 3 if ckks._alternates(p.scale_bits, p.word_bits) else 0
    logs = [math.log2(ctx.scale_at(lv)) for lv in range(ctx.max_level + 1)]
    bad = {lv: round(s, 2) for lv, s in enumerate(logs) if not abs(s - p.scale_bits) <= 1 + swing}
    assert not bad, f"{name}: log2 of the standard scale by level, off by more than 1 bit: {bad}"
    room = math.log2(ctx._moduli[0]) - logs[0]  # Q_0: q_0, or with 32-bit words a pair
    assert room >= p.first_mod_bits - p.scale_bits - 1 - swing


def rounding_error_bound(params) -> float:
    """log2 bound of the slot error of one rounding division (rescale or ModDown): the message
    gains r0 + r1 s with r0, r1 uniform in [-1/2, 1/2] per coefficient (unbiased): variance
    (1 + 2N/3) / 12 per coefficient, and a real slot part has standard deviation sigma = sqrt(N/2)
    times that. r1 s makes the slots products of two near-Gaussians, whose largest of N/2 reaches
    ~7 sigma (a numpy simulation at N = 2^14 gives 2^-25.7 .. 2^-26.0 for Delta = 2^40); the
    bound is 16 sigma (2^-24.6 at N = 2^14). Flooring (r in [0, 1)) gives 2^-20.8 .. 2^-22.5 in
    the same simulation."""
    n = params.n
    sigma = math.sqrt((1 + 2 * n / 3) / 12) * math.sqrt(n / 2)
    return math.log2(16 * sigma) - params.scale_bits


# N = 2^14, one special prime P of 61 bits > q_0: the key-switching digits are far below P.
P14 = ckks.Params(
    log_n=14,
    levels=2,
    scale_bits=40,
    first_mod_bits=50,
    special_mods=1,
    special_mod_bits=61,
    insecure=True,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rescale_adds_only_rounding_error(seed):
    """ct * 0.5 is an exact integer product followed by one rescale (division by q_l with
    rounding, ckks/context.h): its error beyond 0.5 * (the input's) is the rounding error. A
    division that floors instead (error in [0, 1) per coefficient, mean 1/2) adds
    -(1/2)(1 + s)(1 + X + ... + X^(N-1)), which in the slots whose root is near 1 is worth
    ~ (N/pi) |1 + s(zeta)|: 2^-21..2^-23 here instead of 2^-26."""
    ctx = ckks.Context(P14, device="cpu")
    ctx._sampler = ring.Sampler(bytes([seed]) * 32)
    sk = ctx.keygen()
    x = uniform(np.random.default_rng(seed), ctx.slots)
    a = ctx.encrypt(x, sk)
    y = a * 0.5
    assert y.level == a.level - 1
    check(
        ctx.decrypt(y, sk),
        0.5 * ctx.decrypt(a, sk),
        rounding_error_bound(P14),
        "rescale rounding error",
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_key_switch_adds_only_rounding_error(seed):
    """A rotation adds the key-switching error: sum_j d_j e_j / P (negligible here: digits of at
    most 50 bits, P of 61 bits, sqrt(N/3) sigma D/P ~ 0.1 per coefficient) plus the ModDown
    division by P with rounding (exact conversion with one special prime), which is the error of
    test_rescale_adds_only_rounding_error."""
    ctx = ckks.Context(P14, device="cpu")
    ctx._sampler = ring.Sampler(bytes([seed]) * 32)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1], conjugation=True))
    x = uniform(np.random.default_rng(seed), ctx.slots)
    a = ctx.encrypt(x, sk)
    d = ctx.decrypt(a, sk)
    bound = rounding_error_bound(P14)  # the digit terms are ~2^-11 of it
    check(ctx.decrypt(a.rotate(1), sk), rot(d, 1), bound, "key switch rounding error")
    check(ctx.decrypt(a.conj(), sk), d, bound, "key switch rounding error")


def test_deep_chain_scales_and_level_zero():
    """24 levels on a small ring: the standard scale of every level stays near 2^40 and a
    ciphertext encrypted at any level, level 0 included, decrypts."""
    p = ckks.Params(log_n=11, levels=24, **SMALL)
    ctx = ckks.Context(p, device="cpu")
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    rng = np.random.default_rng(24)
    x = uniform(rng, ctx.slots)
    errors = {}
    for level in range(ctx.max_level, -1, -1):
        got = ctx.decrypt(ctx.encrypt(x, pk, level=level), sk)
        errors[level] = round(math.log2(np.max(np.abs(got - x)) + 2.0**-60), 1)
    logs = {lv: round(math.log2(ctx.scale_at(lv)), 2) for lv in range(ctx.max_level + 1)}
    assert all(e <= bound_bits(p) for e in errors.values()), (
        f"log2 max error by level (bound {bound_bits(p)}): {errors}; log2 scale by level: {logs}"
    )


def test_custom_parameters_refused_without_insecure():
    with pytest.raises(ember.ParameterError, match="security") as ei:
        ckks.Params(log_n=12, scale_bits=40, levels=6, first_mod_bits=60)
    assert isinstance(ei.value, ValueError) and "insecure=True" in str(ei.value)
    with pytest.raises(ember.ParameterError, match="security"):
        ckks.Params(log_n=14, scale_bits=40, levels=10, first_mod_bits=60, special_mods=2)
    with pytest.raises(ember.ParameterError, match="insecure"):
        ckks.Params(log_n=14, levels=2, security=192)
    p = ckks.Params(log_n=12, scale_bits=40, levels=6, first_mod_bits=60, insecure=True)
    assert p.insecure and p.total_bits > ckks.SECURITY_128_MAX_LOGQP[12]
    # Within the table: accepted without insecure (the API.md example).
    p = ckks.Params(
        log_n=14, scale_bits=40, levels=6, first_mod_bits=60, special_mods=2, security=128
    )
    assert p.total_bits <= ckks.SECURITY_128_MAX_LOGQP[14] and not p.insecure


def test_params_derived_fields():
    p = ckks.Params(
        log_n=12,
        levels=4,
        scale_bits=36,
        first_mod_bits=50,
        special_mods=2,
        special_mod_bits=55,
        insecure=True,
    )
    assert p.n == 4096 and p.slots == 2048
    assert p.total_bits == 50 + 4 * 36 + 2 * 55
    assert p.q_primes[0].bit_length() == 50
    assert all(abs(math.log2(q) - 36) < 0.01 for q in p.q_primes[1:])
    assert [q.bit_length() for q in p.p_primes] == [55, 55]
    assert ckks.Params(log_n=12, levels=1, first_mod_bits=50, insecure=True).special_mod_bits == 50
    ctx = ckks.Context(p, device="cpu")
    assert ctx.slots == 2048 and ctx.max_level == 4 and ctx.device == "cpu"
    assert ctx.scale_at(4) == 2.0**36


# Custom parameter sets whose default dnum has a choice of digits that fit under P, and the presets.
DIGIT_CASES = {
    "api_example": {"log_n": 14, "levels": 6, "first_mod_bits": 60, "special_mods": 2},
    "two_40bit_special": {
        "log_n": 12,
        "levels": 4,
        "first_mod_bits": 60,
        "special_mods": 2,
        "special_mod_bits": 40,
        "insecure": True,
    },
    "one_60bit_special": {
        "log_n": 12,
        "levels": 4,
        "first_mod_bits": 60,
        "special_mods": 1,
        "special_mod_bits": 60,
        "insecure": True,
    },
    "three_50bit_special": {
        "log_n": 12,
        "levels": 8,
        "first_mod_bits": 55,
        "special_mods": 3,
        "special_mod_bits": 50,
        "insecure": True,
    },
}


@pytest.mark.parametrize("case", list(DIGIT_CASES) + ckks.Params.presets())
def test_key_switching_digits_fit_under_p(case):
    """Each digit of the key-switching decomposition (alpha consecutive primes of Q) fits under P,
    within one bit: Params' default dnum is 'as many as needed so that each digit fits under P',
    and q_0 counts with its own size (first_mod_bits), not scale_bits. A digit D > P multiplies
    the key-switching error by D / P (ckksref's model)."""
    if case in DIGIT_CASES:
        p = ckks.Params(scale_bits=40, **DIGIT_CASES[case])
    else:
        p = preset_primes(case)
    ctx = ckks.Context(p, device="cpu")
    alpha = ctx._raw.alpha
    assert ctx._raw.dnum == p.dnum and alpha == math.ceil(len(p.q_primes) / p.dnum)
    log_p = sum(math.log2(q) for q in p.p_primes)
    digits = [p.q_primes[j : j + alpha] for j in range(0, len(p.q_primes), alpha)]
    sizes = [round(sum(math.log2(q) for q in d), 2) for d in digits]
    assert max(sizes) <= log_p + 1, (
        f"{case}: dnum={p.dnum} (alpha={alpha}): digit sizes {sizes} bits exceed "
        f"log2 P = {log_p:.2f}"
    )


def test_rotation_precision_with_api_example_params(rng):
    """The API.md parameter set (N = 2^14, 6 levels, two special primes, default dnum): one
    rotation keeps the fresh-encryption precision."""
    p = ckks.Params(
        log_n=14, scale_bits=40, levels=6, first_mod_bits=60, special_mods=2, security=128
    )
    ctx = ckks.Context(p, device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    x = uniform(rng, ctx.slots)
    a = ctx.encrypt(x, sk)
    check(ctx.decrypt(a, sk), x, bound_bits(p), "api params encrypt")
    # The allowance of a decomposition whose digits fit under P (what the default dnum promises).
    check(
        ctx.decrypt(a.rotate(1), sk),
        rot(x, 1),
        bound_bits(p, keyswitches=1, digit_ratio=1),
        f"api params rotate (dnum={p.dnum})",
    )


def test_smallest_preset_end_to_end(rng):
    """N13_L3 (the one preset cheap enough here): encrypt, multiply, rotate, conjugate."""
    p = ckks.Params.preset("N13_L3")
    ctx = ckks.Context("N13_L3", device="cpu")
    assert ctx.params == p and ctx.slots == 4096 and ctx.max_level == 3
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, -3], conjugation=True))
    z = complex_uniform(rng, ctx.slots)
    a = ctx.encrypt(z, pk)
    check(ctx.decrypt(a, sk), z, bound_bits(p), "N13_L3 encrypt")
    y = a * a
    check(ctx.decrypt(y, sk), z * z, bound_bits(p, 1), "N13_L3 ct*ct")
    check(
        ctx.decrypt(y.rotate(1), sk),
        rot(z * z, 1),
        bound_bits(p, 1, keyswitches=1),
        "N13_L3 rotate",
    )
    check(ctx.decrypt(a.rotate(-3), sk), rot(z, -3), bound_bits(p, keyswitches=1), "N13_L3 rotate")
    check(ctx.decrypt(a.conj(), sk), np.conj(z), bound_bits(p, keyswitches=1), "N13_L3 conj")
