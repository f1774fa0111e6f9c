"""Several devices without a GPU: CPU devices cpu:0 and cpu:1, moves of ciphertexts, plaintexts,
keys and contexts between them (the same words as computing where they were), device checks at
the boundary, and ctx.map spreading independent operations over a device set."""

from __future__ import annotations

import threading

import ember
import numpy as np
import pytest
from ctwords import same_words
from ember import _ember, bfv, bgv, ckks

CKKS = ckks.Params(
    log_n=11,
    levels=3,
    scale_bits=40,
    first_mod_bits=60,
    special_mods=1,
    special_mod_bits=60,
    insecure=True,
)
BFV = bfv.Params(log_n=11, plain_modulus=12289, q_bits=(50, 50), special_bits=(55,), insecure=True)
BGV = bgv.Params(
    log_n=11, plain_modulus=12289, q_bits=(45, 36, 36, 36), special_bits=(50,), insecure=True
)


@pytest.fixture(scope="module")
def kit():
    ctx = ckks.Context(CKKS, device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, 5], conjugation=True))
    rng = np.random.default_rng(3)
    xs = [rng.uniform(-1, 1, ctx.slots) for _ in range(5)]
    return ctx, sk, xs, [ctx.encrypt(x, sk) for x in xs]


# ---------------------------------------------------------------- names
def test_cpu_device_names():
    assert _ember.parse_device("cpu:0") == "cpu"
    assert _ember.parse_device("cpu:3") == "cpu:3"
    assert str(ember.Device(kind="cpu", index=2)) == "cpu:2"
    for bad in ("cpu:", "cpu:-1", "cpu:64", "cpu:x", "cpu1"):
        with pytest.raises(ember.ParameterError, match="device"):
            ckks.Context(CKKS, device=bad)


def test_device_set_resolution():
    from ember.dist import device_set

    assert device_set(["cpu:0", "cpu:1"]) == ["cpu", "cpu:1"]
    assert device_set("cpu:1") == ["cpu:1"]
    if not _ember.cuda_devices():
        assert device_set("all") == ["cpu"]
    with pytest.raises(ember.ParameterError, match="twice"):
        device_set(["cpu", "cpu:0"])
    with pytest.raises(ember.ParameterError, match="empty"):
        device_set([])
    with pytest.raises(ember.ParameterError):
        device_set(3)


# ---------------------------------------------------------------- moves
def test_context_copies_are_made_once_and_shared(kit):
    ctx, *_ = kit
    c1 = ctx.to("cpu:1")
    assert c1.device == "cpu:1" and c1.params is ctx.params
    assert ctx.to("cpu:1") is c1 and c1.to("cpu") is ctx and ctx.to("cpu:0") is ctx
    assert c1._eval_keys is ctx._eval_keys.to("cpu:1")  # keys copied once
    assert c1._eval_keys.to("cpu") is ctx._eval_keys
    assert c1._eval_keys.rotations == ctx._eval_keys.rotations
    assert c1.auto_rescale == ctx.auto_rescale


def test_ckks_operations_after_a_move_give_the_same_words(kit):
    ctx, sk, xs, cts = kit
    a, b = cts[0], cts[1]
    a1, b1 = a.to("cpu:1"), b.to("cpu:1")
    assert a1.device == "cpu:1" and a1._raw.device == "cpu:1" and a.to("cpu") is a
    assert same_words(a1, a)
    ref = ((a * b).rotate(5) + a).conj()
    got = ((a1 * b1).rotate(5) + a1).conj()
    assert got.device == "cpu:1"
    assert same_words(got.to("cpu"), ref)
    assert np.abs(ctx.decrypt(got.to("cpu"), sk) - np.roll(xs[0] * xs[1], -5) - xs[0]).max() < 1e-4


def test_keys_and_plaintexts_move(kit):
    ctx, sk, xs, cts = kit
    c1 = ctx.to("cpu:1")
    sk1 = sk.to("cpu:1")
    assert sk1.device == "cpu:1" and sk.to("cpu") is sk
    assert np.array_equal(sk1._raw.s.to_numpy(), sk._raw.s.to_numpy())
    ct1 = cts[2].to("cpu:1")
    assert np.abs(c1.decrypt(ct1, sk1) - xs[2]).max() < 1e-5
    pk1 = ctx.public_key(sk).to("cpu:1")
    assert np.abs(c1.decrypt(c1.encrypt(xs[3], pk1), sk1) - xs[3]).max() < 1e-5
    pt = ctx.encode(xs[4])
    pt1 = pt.to("cpu:1")
    assert pt1.device == "cpu:1"
    assert same_words(ct1 * pt1, (cts[2] * pt).to("cpu:1"))


def test_objects_of_another_device_are_refused(kit):
    ctx, sk, xs, cts = kit
    c1 = ctx.to("cpu:1")
    a1 = cts[0].to("cpu:1")
    with pytest.raises(ember.MismatchError, match=r"on cpu:1 and this context on cpu.*to\('cpu'\)"):
        cts[0] * a1
    with pytest.raises(ember.MismatchError, match="on cpu:1"):
        ctx.decrypt(a1, sk)
    with pytest.raises(ember.MismatchError, match="SecretKey"):
        c1.decrypt(a1, sk)
    with pytest.raises(ember.MismatchError, match="plaintext"):
        a1 * ctx.encode(xs[0])
    with pytest.raises(ember.MismatchError, match="EvalKeys"):
        c1.set_eval_keys(ctx._eval_keys)
    # Below the Python checks the C++ context refuses them too.
    raw_ek = ctx._eval_keys.relin
    with pytest.raises(ember.MismatchError, match="cpu:1"):
        ctx._raw.multiply(cts[0]._raw, a1._raw, raw_ek)
    with pytest.raises(ember.MismatchError, match="key"):
        c1._raw.relinearize(c1._raw.multiply_no_relin(a1._raw, a1._raw), raw_ek)
    with pytest.raises(ember.MismatchError, match="secret key"):
        c1._raw.decrypt_core(a1._raw, sk._raw, 1)


@pytest.mark.parametrize("mod,params", [(bfv, BFV), (bgv, BGV)], ids=["bfv", "bgv"])
def test_integer_schemes_move(mod, params):
    ctx = mod.Context(params, device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1], row_swap=True))
    rng = np.random.default_rng(5)
    t = ctx.plain_modulus
    x, y = rng.integers(0, t, ctx.slots), rng.integers(0, t, ctx.slots)
    a, b = ctx.encrypt(x, sk), ctx.encrypt(y, sk)
    ref = (a * b).rotate(1) + ctx.encode(y)
    a1, b1 = a.to("cpu:1"), b.to("cpu:1")
    got = (a1 * b1).rotate(1) + ctx.encode(y).to("cpu:1")
    assert got.device == "cpu:1" and a1.batched == a.batched
    assert same_words(got.to("cpu"), ref)
    c1 = ctx.to("cpu:1")
    assert np.array_equal(c1.decrypt(got, sk.to("cpu:1")), ctx.decrypt(ref, sk))
    if mod is bgv:
        assert c1.auto_mod_switch == ctx.auto_mod_switch


# ---------------------------------------------------------------- map
def test_map_spreads_work_and_keeps_order(kit):
    ctx, _, _, cts = kit
    seen = []
    lock = threading.Lock()

    def product(a, b):
        with lock:
            seen.append(a.device)
        return a * b

    ys = cts[1:] + cts[:1]
    zs = ctx.map(product, cts, ys, devices=["cpu:0", "cpu:1"])
    assert sorted(set(seen)) == ["cpu", "cpu:1"]
    assert [z.device for z in zs] == ["cpu"] * len(cts)
    for z, a, b in zip(zs, cts, ys, strict=True):
        assert same_words(z, a * b)
    kept = ctx.map(product, cts, ys, devices=["cpu:0", "cpu:1"], gather=False)
    assert [z.device for z in kept] == ["cpu", "cpu", "cpu:1", "cpu:1", "cpu:1"]
    assert same_words(kept[4].to("cpu"), zs[4])


def test_map_with_context_and_rotations(kit):
    ctx, sk, xs, cts = kit
    zs = ctx.map(
        lambda c, a: c.rotate(a, 1) + c.encode(np.ones(c.slots)),
        cts[:3],
        devices=["cpu:1", "cpu:2"],
        pass_context=True,
    )
    for z, x in zip(zs, xs[:3], strict=True):
        assert np.abs(ctx.decrypt(z, sk) - np.roll(x, -1) - 1).max() < 1e-5


def test_map_arguments_and_errors(kit):
    ctx, sk, xs, cts = kit
    assert ctx.map(lambda a: a, [], devices=["cpu", "cpu:1"]) == []
    # Non-Ember arguments pass through; more devices than items is fine.
    zs = ctx.map(lambda a, k: a * k, cts[:1], [3], devices=["cpu", "cpu:1", "cpu:2"])
    assert np.abs(ctx.decrypt(zs[0], sk) - 3 * xs[0]).max() < 1e-5
    with pytest.raises(ember.ParameterError, match="lengths"):
        ctx.map(lambda a, b: a * b, cts[:2], cts[:3], devices=["cpu", "cpu:1"])
    with pytest.raises(ember.ParameterError, match="function"):
        ctx.map(3, cts)
    with pytest.raises(ember.ParameterError, match="sequence"):
        ctx.map(lambda: 1)

    def boom(a):
        raise ValueError("from the worker")

    with pytest.raises(ValueError, match="from the worker"):
        ctx.map(boom, cts, devices=["cpu", "cpu:1"])


def test_integer_map_over_devices():
    ctx = bgv.Context(BGV, device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    rng = np.random.default_rng(9)
    t = ctx.plain_modulus
    xs = [rng.integers(0, t, ctx.slots) for _ in range(4)]
    cts = [ctx.encrypt(x, sk) for x in xs]
    zs = ctx.map(lambda a: a * a, cts, devices=["cpu", "cpu:1"])
    for z, x, a in zip(zs, xs, cts, strict=True):
        assert np.array_equal(ctx.decrypt(z, sk) % t, x * x % t)
        assert same_words(z, a * a)


# ---------------------------------------------------------------- streams
def test_streams_on_the_cpu_give_the_same_words(kit):
    _ctx, _sk, _xs, cts = kit
    s1, s2 = ember.Stream("cpu"), ember.Stream("cpu")
    assert s1.device == "cpu"
    a, b = cts[0].on_stream(s1), cts[1].on_stream(s2)
    assert same_words(a, cts[0])
    assert same_words(a * b, cts[0] * cts[1])
    s1.synchronize()
    with pytest.raises(ember.MismatchError, match="stream is on cpu:1"):
        cts[0].on_stream(ember.Stream("cpu:1"))
    with pytest.raises(ember.ParameterError, match="ember.Stream"):
        cts[0].on_stream("cpu")
