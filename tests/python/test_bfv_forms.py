"""BFV ciphertexts in coefficient form: fresh encryptions, products, relinearizations and
rotations stay in coefficient form, and each equals, bit for bit, the eval-form path's result
brought to coefficient form (the same exact arithmetic, transformed at other points). Mixed forms,
plaintext and scalar operations, modulus switching, hoisted rotations, decryption, noise budgets
and serialization work in either form."""

from __future__ import annotations

import numpy as np
import pytest
from ember import bfv
from intref import centered, rot_rows, swap


def in_form(ct, form):
    """The same ciphertext in the other storage form (the evaluator's own transform)."""
    return type(ct)(ct._ctx, ct._ctx._raw.to_form(ct._raw, form), ct.batched)


def same(a, b, what):
    assert a.level == b.level and a._raw.size == b._raw.size and a.form == b.form, what
    for i in range(a._raw.size):
        np.testing.assert_array_equal(
            a._raw.poly(i).to_numpy(), b._raw.poly(i).to_numpy(), err_msg=f"{what}: poly {i}"
        )


@pytest.fixture(scope="module", params=[1, 2], ids=["alpha1", "alpha2"])
def env(request):
    # alpha 1: the ModUp lifts every digit's own row too; alpha 2: the own rows come from an NTT.
    kw = {"q_bits": (50, 50), "special_bits": (55,)}
    if request.param == 2:
        kw = {"q_bits": (45,) * 4, "special_bits": (50, 50), "dnum": 2}
    ctx = bfv.Context(bfv.Params(log_n=11, plain_modulus=12289, **kw, insecure=True), device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(
        ctx.eval_keys(sk, rotations=[1 << i for i in range(10)] + [-3], row_swap=True)
    )
    rng = np.random.default_rng(request.param)
    t = ctx.plain_modulus
    a, b = (rng.integers(-(t // 2), t // 2, ctx.slots) for _ in range(2))
    return ctx, sk, a, b, ctx.encrypt(a, ctx.public_key(sk)), ctx.encrypt(b, sk)


def test_fresh_and_key_switched_ciphertexts_stay_in_coefficient_form(env):
    *_, x, y = env
    assert x.form == y.form == "coeff"
    for ct in (x * y, x.rotate(1), x.swap_rows(), x + y, 3 * x + 11, x - 5, -x):
        assert ct.form == "coeff"
    assert in_form(x, "eval").form == "eval"


@pytest.mark.parametrize("op", ["mul", "rot1", "rot_neg3", "swap", "mul_chain", "affine"])
def test_coefficient_path_equals_eval_path_bit_for_bit(env, op):
    ctx, sk, a, b, x, y = env
    run = {
        "mul": lambda u, v: u * v,
        "rot1": lambda u, v: u.rotate(1),
        "rot_neg3": lambda u, v: u.rotate(-3),
        "swap": lambda u, v: u.swap_rows(),
        "mul_chain": lambda u, v: (u * v).rotate(2) * u,
        "affine": lambda u, v: 3 * u + 11 - v,
    }[op]
    coeff = run(x, y)
    ev = run(in_form(x, "eval"), in_form(y, "eval"))
    assert ev.form == "eval" and coeff.form == "coeff"
    same(coeff, in_form(ev, "coeff"), op)
    t = ctx.plain_modulus
    want = {
        "mul": a * b,
        "rot1": rot_rows(a, 1),
        "rot_neg3": rot_rows(a, -3),
        "swap": swap(a),
        "mul_chain": rot_rows(a * b % t, 2) * a,
        "affine": 3 * a + 11 - b,
    }[op]
    np.testing.assert_array_equal(ctx.decrypt(coeff, sk), centered(want, t))


def test_mixed_forms_plaintexts_scalars_and_mod_switch(env):
    ctx, sk, a, b, x, y = env
    t = ctx.plain_modulus
    ye = in_form(y, "eval")
    pt = ctx.encode(b)
    cases = {
        "add_mixed": (x + ye, a + b),
        "sub_mixed": (ye - x, b - a),
        "mul_mixed": (ye * x, a * b),
        "plain": ((x + pt) * pt - 5, (a + b) * b - 5),
        "array": (x * b + a, a * b + a),
        "scalar": (3 * x + 11, 3 * a + 11),
        "mod_switch": (x.mod_switch(0), a),
        "mixed_levels": (x.mod_switch() + x * y, a + a * b),
        "sum": (ctx.sum_slots(x), None),
    }
    for name, (ct, want) in cases.items():
        if want is not None:
            np.testing.assert_array_equal(ctx.decrypt(ct, sk), centered(want, t), err_msg=name)
    # the sum of all slots in every slot, as the eval-form input gives it
    np.testing.assert_array_equal(
        ctx.decrypt(cases["sum"][0], sk), ctx.decrypt(ctx.sum_slots(in_form(x, "eval")), sk)
    )
    for k, r in zip([1, 2], ctx.rotate_many(x, [1, 2])):
        np.testing.assert_array_equal(ctx.decrypt(r, sk), rot_rows(a, k))


def test_decryption_noise_and_serialization_in_either_form(env):
    ctx, sk, _, _, x, y = env
    xy = x * y
    xy_eval = in_form(xy, "eval")
    np.testing.assert_array_equal(ctx.decrypt(xy, sk), ctx.decrypt(xy_eval, sk))
    assert ctx.noise_budget(xy, sk) == ctx.noise_budget(xy_eval, sk)
    back = ctx.ciphertext_from_bytes(xy.to_bytes())
    assert back.form == "eval"  # stored in eval form, the format is unchanged
    same(back, xy_eval, "serialized")
    assert xy.to_bytes() == xy_eval.to_bytes()


def test_hoisted_rotations_of_either_form_are_identical(env):
    ctx, _, _, _, x, _ = env
    coeff = ctx.rotate_many(x, [1, 2, -3])
    ev = ctx.rotate_many(in_form(x, "eval"), [1, 2, -3])
    for k, c, e in zip([1, 2, -3], coeff, ev):
        same(c, e, f"hoisted rotation {k}")
