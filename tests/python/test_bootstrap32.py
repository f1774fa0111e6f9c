"""CKKS bootstrapping on 32-bit words (the N12_boot32_insecure preset: every prime below 2^30,
message levels alternating a pair of primes and one prime): the same circuit as the 64-bit one, run by CkksContext32, with at least 20
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
    # q_0 a pair; the message levels (SlotToCoeff's lowest) alternate a pair and one prime, the
    # top one a pair; EvalMod and CoeffToSlot pairs.
    bp, m = p.boot, p.message_primes
    message = tuple(2 if (m - lv) % 2 == 0 else 1 for lv in range(1, m + 1))
    assert p.level_primes == (2,) + message + (2,) * (bp.cts_levels + bp.eval_levels)
    assert len(p.q_primes) == sum(p.level_primes)
    # The standard scales S_{l-1} = S_l^2 / q_l from 2^scale_bits at the top alternate about
    # their two fixed points (2^43.3 on pair levels, 2^36.7 on single ones for 2^40, whose mean
    # is the scale): the drift never builds up.
    ends = np.cumsum(p.level_primes)
    q = [math.prod(p.q_primes[(ends[lv - 1] if lv else 0) : ends[lv]]) for lv in range(m + 1)]
    log_s = [0.0] * (m + 1)
    log_s[m] = p.scale_bits
    for lv in range(m, 0, -1):
        log_s[lv - 1] = 2 * log_s[lv] - math.log2(q[lv])
    pair_bits = 2 * p.scale_bits - 30
    fixed = {2: (2 * pair_bits + 30) / 3, 1: (60 + pair_bits) / 3}
    # Level l's scale sits at its own kind's fixed point; q_0's at the single kind's (level 1
    # is a pair).
    kinds = (3 - p.level_primes[1],) + p.level_primes[1:m]
    for lv in range(m):
        assert abs(log_s[lv] - fixed[kinds[lv]]) < 0.1, (lv, log_s)
    if name == "N16_boot32":
        # At least 13 levels after a bootstrap at 128-bit security, the special primes counted,
        # with four key-switching digits.
        log_qp = sum(math.log2(q) for q in p.q_primes + p.p_primes)
        assert p.levels >= 13 and not p.insecure and log_qp <= ckks.SECURITY_128_MAX_LOGQP[16]
        assert p.dnum == 4 and p.scale_bits == 40


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
