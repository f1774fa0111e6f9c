"""One operation split over the GPUs (ctx.split): the relinearized product and the rotation with
every polynomial's rows divided among 1, 2, ... GPUs give the CPU's words, through NCCL and through
peer copies. Skipped without a GPU by this directory's conftest."""

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
SETS = [GPUS[:k] for k in (1, 2, 3, 4) if k <= len(GPUS)] or [["cuda:0"]]


@pytest.fixture(scope="module")
def kit():
    ctx = ckks.Context("N13_L3", device="cpu", auto_rescale=False)
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, 7]))
    rng = np.random.default_rng(13)
    x, y = (ctx.encrypt(rng.uniform(-1, 1, ctx.slots), sk) for _ in range(2))
    return ctx, x, y


@pytest.mark.parametrize("exchange", ["auto", "copy"])
@pytest.mark.parametrize("gpus", SETS, ids=lambda g: f"{len(g)}gpu")
def test_split_on_gpus_gives_the_cpu_words(kit, gpus, exchange):
    ctx, x, y = kit
    gctx = ctx.to(gpus[0])
    sp = gctx.split(gpus, exchange=exchange)
    sx, sy = sp.scatter(x.to(gpus[0])), sp.scatter(y.to(gpus[0]))
    assert same_words(sp.gather(sp.multiply(sx, sy)), x * y)
    assert same_words(sp.gather(sp.rotate(sx, 7), device="cpu"), x.rotate(7))
    low = gctx.drop_level(x.to(gpus[0]), len(gpus) - 1)
    sl = sp.scatter(low)
    want = (ctx.drop_level(x, len(gpus) - 1) * ctx.drop_level(x, len(gpus) - 1)).rotate(1)
    assert same_words(sp.gather(sp.rotate(sp.multiply(sl, sl), 1)), want)


@pytest.mark.parametrize("gpus", SETS[-1:], ids=lambda g: f"{len(g)}gpu")
def test_bgv_split_on_gpus_gives_the_cpu_words(gpus):
    ctx = bgv.Context("N14_t65537", device="cpu", auto_mod_switch=False)
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    rng = np.random.default_rng(4)
    x = ctx.encrypt(rng.integers(0, 65537, ctx.slots), sk)
    y = ctx.encrypt(rng.integers(0, 65537, ctx.slots), sk)
    sp = ctx.to(gpus[0]).split(gpus)
    sx, sy = sp.scatter(x), sp.scatter(y)
    assert same_words(sp.gather(sp.multiply(sx, sy)), x * y)
    assert same_words(sp.gather(sp.rotate(sx, 1)), x.rotate(1))
