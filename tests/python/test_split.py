"""One operation split over several devices (ctx.split): a relinearized product and a rotation
with every polynomial's rows divided among CPU devices give the words of one device, for CKKS and
BGV, at several levels and device counts; misuse is refused with clear errors."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ctwords import same_words
from ember import _ember, bfv, bgv, ckks

CKKS = ckks.Params(
    log_n=11,
    levels=7,
    scale_bits=40,
    first_mod_bits=60,
    special_mods=2,
    special_mod_bits=60,
    dnum=3,
    insecure=True,
)
BGV = bgv.Params(
    log_n=11, plain_modulus=12289, q_bits=(45,) + (36,) * 5, special_bits=(50,), insecure=True
)
DEVICE_SETS = [
    ["cpu:0"],
    ["cpu:0", "cpu:1"],
    ["cpu:0", "cpu:1", "cpu:2"],
    ["cpu:1", "cpu:2", "cpu:3", "cpu:4"],
]


@pytest.fixture(scope="module")
def ckks_kit():
    ctx = ckks.Context(CKKS, device="cpu", auto_rescale=False)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, 5]))
    rng = np.random.default_rng(5)
    xs = [rng.uniform(-1, 1, ctx.slots) for _ in range(2)]
    return ctx, sk, xs, [ctx.encrypt(x, sk) for x in xs]


@pytest.mark.parametrize("devices", DEVICE_SETS, ids=lambda d: f"{len(d)}dev")
def test_ckks_split_product_and_rotation_are_one_devices_words(ckks_kit, devices):
    ctx, sk, xs, (x, y) = ckks_kit
    sp = ctx.split(devices)
    sx, sy = sp.scatter(x), sp.scatter(y)
    assert sx.rows == [tuple(r) for r in _ember.partition_rows(x.level + 1, len(devices))]
    prod = sp.gather(sp.multiply(sx, sy))
    assert same_words(prod, x * y)
    assert prod.scale == pytest.approx(x.scale * y.scale)
    assert np.allclose(ctx.decrypt(ctx.rescale(prod), sk), xs[0] * xs[1], atol=1e-3)
    rot = sp.gather(sp.rotate(sx, 5))
    assert same_words(rot, x.rotate(5))


def test_ckks_split_at_a_lower_level_and_chained(ckks_kit):
    ctx, _sk, _xs, (x, y) = ckks_kit
    low_x, low_y = ctx.drop_level(x, 3), ctx.drop_level(y, 3)
    sp = ctx.split(["cpu:0", "cpu:1", "cpu:2"])
    # Rows (0, 2), (2, 3), (3, 4) at level 3: digits of 3 primes cut across devices.
    got = sp.gather(sp.rotate(sp.multiply(sp.scatter(low_x), sp.scatter(low_y)), 1))
    assert same_words(got, (low_x * low_y).rotate(1))


def test_split_result_gathered_on_another_device(ckks_kit):
    _ctx, _sk, _xs, (x, y) = ckks_kit
    sp = x._ctx.split(["cpu:1", "cpu:2"])
    got = sp.gather(sp.multiply(sp.scatter(x), sp.scatter(y)), device="cpu:3")
    assert got.device == "cpu:3"
    assert same_words(got, x * y)


def test_bgv_split_keeps_the_factor_and_the_words():
    ctx = bgv.Context(BGV, device="cpu", auto_mod_switch=False)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    rng = np.random.default_rng(2)
    t = ctx.plain_modulus
    a, b = rng.integers(0, t, ctx.slots), rng.integers(0, t, ctx.slots)
    x, y = ctx.encrypt(a, sk), ctx.encrypt(b, sk)
    sp = ctx.split(["cpu:0", "cpu:1", "cpu:2"])
    prod = sp.gather(sp.multiply(sp.scatter(x), sp.scatter(y)))
    assert same_words(prod, x * y)
    assert np.array_equal(ctx.decrypt(prod, sk) % t, (a * b) % t)
    assert same_words(sp.gather(sp.rotate(sp.scatter(x), 1)), x.rotate(1))


def test_bfv_rotation_splits_but_its_product_is_refused():
    ctx = bfv.Context(
        bfv.Params(
            log_n=11, plain_modulus=12289, q_bits=(50, 50, 50), special_bits=(55,), insecure=True
        ),
        device="cpu",
    )
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    x = ctx.encrypt(np.arange(ctx.slots) % 100, sk)
    sp = ctx.split(["cpu:0", "cpu:1"])
    sx = sp.scatter(x)
    assert np.array_equal(
        ctx.decrypt(sp.gather(sp.rotate(sx, 1)), sk), ctx.decrypt(x.rotate(1), sk)
    )
    with pytest.raises(ember.ParameterError, match="BFV"):
        sp.multiply(sx, sx)


def test_split_misuse_is_refused(ckks_kit):
    ctx, _sk, _xs, (x, y) = ckks_kit
    sp, other = ctx.split(["cpu:0", "cpu:1"]), ctx.split(["cpu:0", "cpu:2"])
    sx = sp.scatter(x)
    with pytest.raises(ember.ParameterError, match="not made by this Split"):
        other.multiply(sx, other.scatter(y))
    with pytest.raises(ember.MissingKeyError, match="Galois key"):
        sp.rotate(sx, 3)
    # Too many devices for the rows of the level.
    with pytest.raises(ember.ParameterError, match="fewer devices"):
        ctx.split(["cpu:0", "cpu:1", "cpu:2"]).scatter(ctx.drop_level(x, 1))
    # Operands of two levels.
    with pytest.raises(ember.MismatchError, match="levels"):
        sp.multiply(sx, sp.scatter(ctx.drop_level(y, 5)))
    # A ciphertext of other parameters.
    ctx2 = ckks.Context(CKKS, device="cpu")
    sk2 = ctx2.keygen()
    ctx2.set_eval_keys(ctx2.eval_keys(sk2))
    with pytest.raises(ember.MismatchError):
        sp.multiply(sx, sp.scatter(ctx2.encrypt(np.zeros(ctx2.slots), sk2)))
    with pytest.raises(ember.ParameterError, match="devices"):
        ctx.split(["cpu:0", "cuda:0"])
