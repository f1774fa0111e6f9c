"""CGGI objects on several devices (CPU devices cpu:0, cpu:1 without a GPU): contexts, server keys
and ciphertext batches move with to(), gates on the copies give the same words, and objects of
another device are refused with the move that fixes it."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import cggi


@pytest.fixture(scope="module")
def kit():
    ctx = cggi.Context(cggi.Params.preset("test_insecure", insecure=True), device="cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 2, 16).astype(bool), rng.integers(0, 2, 16).astype(bool)
    return ctx, ck, sk, x, y, ctx.encrypt(x, ck), ctx.encrypt(y, ck)


def test_contexts_keys_and_batches_move(kit):
    ctx, ck, sk, x, y, a, b = kit
    ctx1 = ctx.to("cpu:1")
    assert ctx1.device == "cpu:1" and ctx1.to("cpu") is ctx and ctx.to("cpu:1") is ctx1
    sk1 = sk.to("cpu:1")
    assert sk1.device == "cpu:1" and sk.to("cpu:1") is sk1 and sk1.to("cpu") is sk
    a1, b1 = a.to("cpu:1"), b.to("cpu:1")
    assert a1.device == "cpu:1" and a1.to_bytes() == a.to_bytes()
    got = ctx1.xor(a1, b1, sk1)
    assert got.device == "cpu:1"
    assert got.to_bytes() == ctx.xor(a, b, sk).to_bytes()
    assert np.array_equal(ctx1.decrypt(got, ck), x ^ y)
    assert got.to("cpu").device == "cpu"


def test_objects_of_another_device_are_refused(kit):
    ctx, _ck, sk, _x, _y, a, b = kit
    a1 = a.to("cpu:2")
    with pytest.raises(ember.MismatchError, match=r"cpu:2.*\.to\('cpu'\)"):
        ctx.and_(a1, b, sk)
    with pytest.raises(ember.MismatchError, match=r"\.to\('cpu'\)"):
        ctx.and_(a, b, sk.to("cpu:2"))
