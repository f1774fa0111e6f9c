"""CKKS bootstrapping on 32-bit words (the N12_boot32_insecure preset: every prime below 2^30,
levels of two primes): the same circuit as the 64-bit one, run by CkksContext32, with at least 20
bits of mean precision, the promised output level and scale, and computation after it. The
128-bit N16_boot32 layout is checked here and bootstrapped on the GPU (tests/gpu)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ckksref import assert_precision
from ember import _ember, ckks


@pytest.fixture(scope="module")
def boot():
    ctx = ckks.Context(ckks.Params.preset("N12_boot32_insecure"), device="cpu")
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1], bootstrap=True, progress=False))
    return ctx, sk, pk


@pytest.mark.parametrize("name", ["N16_boot32", "N12_boot32_insecure"])
def test_preset_layout(name):
    p = ckks.Params.preset(name)
    assert p.word_bits == 32 and max(p.q_primes + p.p_primes) < 2**30
    # q_0, the message levels (SlotToCoeff's lowest), EvalMod and CoeffToSlot: two primes each.
    bp = p.boot
    assert p.level_primes == (2,) * (1 + p.levels + bp.levels)
    assert len(p.q_primes) == 2 * (1 + p.levels + bp.levels)
    pairs = [p.q_primes[i] * p.q_primes[i + 1] for i in range(2, 2 * (1 + p.message_primes), 2)]
    assert all(abs(math.log2(q) - p.scale_bits) < 0.2 for q in pairs)
    if name == "N16_boot32":
        # At least 13 levels after a bootstrap at 128-bit security, the special primes counted.
        log_qp = sum(math.log2(q) for q in p.q_primes + p.p_primes)
        assert p.levels >= 13 and not p.insecure and log_qp <= ckks.SECURITY_128_MAX_LOGQP[16]


def test_bootstrap_precision_and_level(boot):
    ctx, sk, pk = boot
    assert isinstance(ctx._raw, _ember.CkksContext32)
    v = np.random.default_rng(1).uniform(-1, 1, ctx.slots)
    out = ctx.bootstrap(ctx.encrypt(v, pk, level=ctx.min_bootstrap_level))
    assert out.level == ctx.max_level
    assert out.scale == pytest.approx(ctx.scale_at(ctx.max_level), rel=1e-12)
    assert_precision(ctx.decrypt(out, sk), v, 20, 17)


def test_complex_values_and_computing_after(boot):
    ctx, sk, pk = boot
    rng = np.random.default_rng(2)
    v = rng.uniform(-1, 1, ctx.slots) + 1j * rng.uniform(-1, 1, ctx.slots)
    out = ctx.bootstrap(ctx.encrypt(v, pk))
    assert out.is_complex
    assert_precision(ctx.decrypt(out, sk), v, 20)
    y = out * out + 0.5 * out.rotate(1)
    assert y.level == ctx.max_level - 1
    assert_precision(ctx.decrypt(y, sk), v * v + 0.5 * np.roll(v, -1), 18)
