"""Devices on a GPU machine: ciphertexts, keys and contexts moved between the CPU and the GPU (and
between two GPUs where there are two) keep their words; operations on every GPU give the CPU's
words; ctx.map over every GPU gives the products computed on one device.

Skipped without a GPU by this directory's conftest; the two-GPU tests also skip with one GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import ember
import numpy as np
import pytest
from ember import bgv, ckks, ring

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ctwords import same_words

KEY = bytes(range(32))
GPUS = [f"cuda:{g.index}" for g in ember._ember.cuda_devices()]
two_gpus = pytest.mark.skipif(len(GPUS) < 2, reason="needs two GPUs")


@pytest.fixture(scope="module")
def kit():
    ctx = ckks.Context("N13_L3", device="cpu")
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, 7]))
    rng = np.random.default_rng(11)
    xs = [rng.uniform(-1, 1, ctx.slots) for _ in range(8)]
    return ctx, sk, xs, [ctx.encrypt(x, sk) for x in xs]


@pytest.mark.parametrize("device", GPUS or ["cuda:0"])
def test_every_gpu_computes_the_cpu_words(kit, device):
    ctx, sk, _xs, cts = kit
    a, b = cts[0].to(device), cts[1].to(device)
    assert a.device == device and same_words(a, cts[0])
    got = (a * b).rotate(7) + a
    ref = (cts[0] * cts[1]).rotate(7) + cts[0]
    assert same_words(got, ref)
    back = got.to("cpu")
    assert np.array_equal(ctx.decrypt(back, sk), ctx.decrypt(ref, sk))
    # The secret key moved to the GPU decrypts there to the same values.
    assert np.array_equal(ctx.to(device).decrypt(got, sk.to(device)), ctx.decrypt(ref, sk))


@two_gpus
def test_moves_between_two_gpus(kit):
    ctx, sk, _xs, cts = kit
    g0, g1 = GPUS[0], GPUS[1]
    a0 = cts[2].to(g0)
    a1 = a0.to(g1)  # peer to peer
    assert a1.device == g1 and same_words(a1, cts[2])
    ek1 = ctx._eval_keys.to(g0).to(g1)
    assert ek1 is ctx._eval_keys.to(g1)
    r1 = (a1 * a1).rotate(1)
    r0 = (a0 * a0).rotate(1)
    assert same_words(r1, r0) and same_words(r1.to(g0), r0)
    assert np.array_equal(ctx.decrypt(r1.to("cpu"), sk), ctx.decrypt(r0.to("cpu"), sk))
    with pytest.raises(ember.MismatchError, match=f"on {g1}"):
        a0 * a1


def test_map_over_every_gpu(kit):
    ctx, _sk, _xs, cts = kit
    g = ctx.to(GPUS[0])
    on_gpu = [c.to(GPUS[0]) for c in cts]
    zs = g.map(lambda a, b: a * b, on_gpu, on_gpu[::-1], devices="all")
    assert [z.device for z in zs] == [GPUS[0]] * len(cts)
    for z, a, b in zip(zs, cts, cts[::-1], strict=True):
        assert same_words(z, a * b)
    spread = g.map(lambda a: a.rotate(1), on_gpu, devices="all", gather=False)
    assert {z.device for z in spread} == set(GPUS[: len(cts)])
    for z, a in zip(spread, cts, strict=True):
        assert same_words(z, a.rotate(1))


def test_bgv_map_and_cpu_devices_mixed_with_a_gpu():
    ctx = bgv.Context("N13_t65537", device="cpu")
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    t = ctx.plain_modulus
    rng = np.random.default_rng(2)
    xs = [rng.integers(0, t, ctx.slots) for _ in range(4)]
    cts = [ctx.encrypt(x, sk) for x in xs]
    zs = ctx.map(lambda a: a * a, cts, devices=["cpu:1", GPUS[0]])
    for z, x, a in zip(zs, xs, cts, strict=True):
        assert z.device == "cpu" and same_words(z, a * a)
        assert np.array_equal(ctx.decrypt(z, sk) % t, x * x % t)


@two_gpus
def test_ring_polynomials_copy_between_gpus():
    n = 1 << 12
    _, basis = ring.make_ring(n, bits=60, count=2)
    primes = [int(q) for q in basis.primes]
    rng = np.random.default_rng(4)
    data = np.stack([rng.integers(0, q, n, dtype=np.uint64) for q in primes])
    p0 = ring.RnsPoly.from_numpy(basis, data, "coeff", GPUS[0])
    p1 = p0.to(GPUS[1])
    assert p1.device == GPUS[1]
    assert np.array_equal(p1.to_numpy(), data) and np.array_equal(p1.to("cpu").to_numpy(), data)
    assert np.array_equal(p1.ntt().to_numpy(), p0.ntt().to_numpy())


def test_two_streams_give_the_words_of_one(kit, gpu):
    """Two independent CKKS multiplications (and rotations) on two streams of one GPU, mixed
    with the default stream, give the words computed on the default stream alone."""
    ctx, sk, _xs, cts = kit
    g = ctx.to(gpu)
    a, b, c, d = (x.to(gpu) for x in cts[:4])
    ref1, ref2 = (a * b).rotate(1), (c * d).rotate(7)
    s1, s2 = ember.Stream(gpu), ember.Stream(gpu)
    a1, b1 = a.on_stream(s1), b.on_stream(s1)
    c2, d2 = c.on_stream(s2), d.on_stream(s2)
    for _ in range(3):  # several rounds queued back to back on both streams
        r1 = (a1 * b1).rotate(1)
        r2 = (c2 * d2).rotate(7)
    mixed = r1 + r2  # operands of two streams: ordered with events
    s1.synchronize()
    s2.synchronize()
    assert same_words(r1, ref1) and same_words(r2, ref2)
    assert same_words(mixed, ref1 + ref2)
    assert np.array_equal(g.decrypt(r1, sk.to(gpu)), g.decrypt(ref1, sk.to(gpu)))
    assert same_words(r2.to("cpu"), (cts[2] * cts[3]).rotate(7))
