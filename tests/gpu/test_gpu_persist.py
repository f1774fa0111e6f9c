"""Everyday use on the GPU: objects saved on the CPU load onto the GPU (and back) with the same
bytes; pickle and deepcopy of GPU objects; the CKKS error bounds, n-dimensional shapes and the
default device behave as on the CPU (the operations are bit-exact, so the bounds are equal);
the everyday benchmark's correctness flags hold on every GPU.

Skipped without a GPU by this directory's conftest."""

from __future__ import annotations

import copy
import pickle

import ember
import numpy as np
import pytest
from ember import bench_everyday, ckks, persist, ring

KEY = bytes(range(32))


@pytest.fixture(scope="module")
def kit():
    ctx = ckks.Context("N13_L3", device="cpu")
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    x = np.random.default_rng(3).uniform(-1, 1, (64, 64))
    return ctx, sk, x, ctx.encrypt(x, sk)


def test_saved_on_cpu_loads_on_the_gpu_and_back(kit, gpu):
    ctx, sk, x, ct = kit
    for obj in (ct, sk, ctx._keys(), ctx.encode(x)):
        there = persist.load_bytes(persist.dump_bytes(obj), device=gpu)
        assert there._ctx.device == gpu
        back = persist.load_bytes(persist.dump_bytes(there), device="cpu")
        assert persist.dump_bytes(back) == persist.dump_bytes(obj)
    gctx = ctx.to(gpu)
    g = persist.load_bytes(persist.dump_bytes(ct), ctx=gctx)
    assert g.shape == (64, 64)
    np.testing.assert_array_equal(gctx.decrypt(g, sk.to(gpu)), ctx.decrypt(ct, sk))


def test_pickle_deepcopy_and_bounds_on_the_gpu(kit, gpu):
    ctx, sk, _, ct = kit
    gctx, gsk = ctx.to(gpu), sk.to(gpu)
    g = ct.to(gpu)
    for copied in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert copied.device == gpu and copied.to_bytes() == g.to_bytes()
    cpu_y = (ct * ct).rotate(1) + ct
    gpu_y = (g * g).rotate(1) + g
    assert gpu_y.to_bytes() == cpu_y.to_bytes()
    assert gpu_y.error_bound == cpu_y.error_bound
    np.testing.assert_array_equal(gctx.decrypt(gpu_y, gsk), ctx.decrypt(cpu_y, sk))


def test_default_device_and_benchmark(gpu, monkeypatch):
    monkeypatch.setattr(ember, "_default_device", None)
    monkeypatch.setenv("EMBER_DEVICE", gpu)
    assert ckks.Context("N13_L3").device == gpu
    report = bench_everyday.run(device=gpu, depth=2, repeat=1)
    assert report["device"] == gpu
    assert all(v for k, v in report["correct"].items() if k != "per_device")
