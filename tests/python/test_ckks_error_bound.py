"""ct.error_bound (ember.ckks_error), tracked without the secret key: over several circuits
(fresh public and secret key encryptions, additions, products, plaintext and scalar products,
rotations, conjugation, manual rescaling, a depth-3 chain) the measured error of every slot is
below the bound, and the bound is within 2^10 of the measured error (not absurdly loose)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ember import ckks

LOOSENESS_BITS = 10


@pytest.fixture(scope="module")
def keys():
    ctx = ckks.Context("N13_L3", device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, 2, 3], conjugation=True))
    return ctx, sk, ctx.public_key(sk)


CIRCUITS = {
    "fresh": lambda a, b, x, y: (a, x),
    "add": lambda a, b, x, y: (a + b - 0.25, x + y - 0.25),
    "product": lambda a, b, x, y: (a * b, x * y),
    "depth3": lambda a, b, x, y: (((a * b) * (a * a)) * b, x**3 * y**2),
    "plaintext": lambda a, b, x, y: (a * y + x, x * y + x),
    "scalars": lambda a, b, x, y: (0.3 * a * 5 + 1.5, 1.5 * x + 1.5),
    "rotations": lambda a, b, x, y: (
        (a * b).rotate(1) + a.rotate(3) - b.rotate(2),
        np.roll(x * y, -1) + np.roll(x, -3) - np.roll(y, -2),
    ),
    "conjugate": lambda a, b, x, y: (a.conj() * b, x * y),
    "sum3": lambda a, b, x, y: (a + a.rotate(1) + a.rotate(2), x + np.roll(x, -1) + np.roll(x, -2)),
}


@pytest.mark.parametrize("name", list(CIRCUITS))
@pytest.mark.parametrize("public", [True, False], ids=["pk", "sk"])
def test_bound_holds_and_is_not_loose(keys, rng, name, public):
    ctx, sk, pk = keys
    key = pk if public else sk
    x, y = rng.uniform(-1, 1, ctx.slots), rng.uniform(-1, 1, ctx.slots)
    a, b = ctx.encrypt(x, key), ctx.encrypt(y, key)
    ct, want = CIRCUITS[name](a, b, x, y)
    err = float(np.max(np.abs(ctx.decrypt(ct, sk) - want)))
    assert ct.error_bound is not None and ct.value_bound >= np.max(np.abs(want)) - 1e-6
    assert err <= ct.error_bound, (math.log2(err), math.log2(ct.error_bound))
    assert ct.error_bound <= err * 2**LOOSENESS_BITS, (math.log2(err), math.log2(ct.error_bound))
    assert ctx.precision_bits(ct) == pytest.approx(-math.log2(ct.error_bound))


def test_manual_rescale_and_unknown_bounds(keys, rng):
    ctx, sk, pk = keys
    manual = ckks.Context(ctx.params, device="cpu", auto_rescale=False)
    manual.set_eval_keys(ctx._keys())
    x = rng.uniform(-1, 1, ctx.slots)
    a = manual.encrypt(x, pk)
    ct = manual.rescale(a * a)
    err = float(np.max(np.abs(manual.decrypt(ct, sk) - x * x)))
    assert err <= ct.error_bound <= err * 2**LOOSENESS_BITS
    # No estimate through poly_eval (None, not a wrong number), nor for bytes without it.
    p = ctx.poly_eval(ctx.encrypt(x, pk), [0.1, 0.2, 0.3])
    assert p.error_bound is None and ctx.precision_bits(p) is None
    assert ctx.ciphertext_from_bytes(a.to_bytes()).error_bound is None
