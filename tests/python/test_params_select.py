"""Params.for_depth: the chosen CKKS, BFV and BGV sets are 128-bit secure (their constructor
checks the bound) and run `depth` squarings of fresh ciphertexts (CKKS within the precision
asked for, BFV/BGV exactly); depths, precisions and plain moduli no ring degree can hold are
refused with a ParameterError."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from ember import bfv, bgv, ckks


@pytest.mark.parametrize(("depth", "precision_bits"), [(1, 20), (3, 30), (4, 20)])
def test_ckks_sets_run_their_depth(depth, precision_bits, rng):
    params = ckks.Params.for_depth(depth, precision_bits=precision_bits)
    assert params.levels == depth and not params.insecure
    assert params.total_bits <= ember.ckks.SECURITY_128_MAX_LOGQP[params.log_n]
    ctx = ckks.Context(params, device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    x = rng.uniform(-1, 1, ctx.slots)
    ct, want = ctx.encrypt(x, ctx.public_key(sk)), x
    for _ in range(depth):
        ct, want = ct * ct, want * want
    assert ct.level == 0
    # Each operation's error is below 2^-precision_bits; squaring values in [-1, 1] doubles the
    # error carried, so after `depth` squarings it is below 2^(depth + 1 - precision_bits).
    err = np.max(np.abs(ctx.decrypt(ct, sk) - want))
    assert err < 2.0 ** (depth + 1 - precision_bits), math.log2(err)


def test_ckks_slots_and_bootstrap_layout():
    assert ckks.Params.for_depth(2, slots=2**14).slots >= 2**14
    boot = ckks.Params.for_depth(8, bootstrap=True)
    assert boot.boot is not None and boot.levels == 8 and boot.log_n == 16


@pytest.mark.parametrize("mod", [bfv, bgv], ids=["bfv", "bgv"])
@pytest.mark.parametrize("depth", [1, 3])
def test_integer_sets_run_their_depth(mod, depth, rng):
    t = 65537
    params = mod.Params.for_depth(depth, plain_modulus=t)
    assert params.plain_modulus == t and params.batching and not params.insecure
    ctx = mod.Context(params, device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    v = rng.integers(-(t // 2), t // 2, ctx.slots)
    ct, want = ctx.encrypt(v, ctx.public_key(sk)), v % t
    for _ in range(depth):
        ct, want = ct * ct, want * want % t
    want = np.where(want > t // 2, want - t, want)
    np.testing.assert_array_equal(ctx.decrypt(ct, sk), want)
    assert ctx.noise_budget(ct, sk) >= 1


def test_what_no_ring_degree_holds_is_refused():
    with pytest.raises(ember.ParameterError, match="lower the depth"):
        ckks.Params.for_depth(120)
    with pytest.raises(ember.ParameterError, match="precision"):
        ckks.Params.for_depth(2, precision_bits=50)
    with pytest.raises(ember.ParameterError, match="precision_bits"):
        ckks.Params.for_depth(2, precision_bits=30, bootstrap=True)
    with pytest.raises(ember.ParameterError, match="lower the depth"):
        bfv.Params.for_depth(120)
    with pytest.raises(ember.ParameterError, match="plain modulus"):
        bgv.Params.for_depth(2, plain_modulus=2**59 + 1)
    with pytest.raises(ember.ParameterError):
        ckks.Params.for_depth(2, security=192)
    with pytest.raises(ember.ParameterError):
        bfv.Params.for_depth(-1)
