"""CKKS decryption is exact over every prime of a level, encoding and scalars accept exactly what
decryption recovers, and decryption can flood its output with noise (issue 25, items 2 and 4)."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from ember import ckks


@pytest.fixture(scope="module")
def n13():
    ctx = ckks.Context("N13_L3", device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    return ctx, sk, ctx.public_key(sk)


def _relative_error(got, want):
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


@pytest.mark.parametrize("value", [2e14, 1e20, 1e30, -3e33])
def test_large_values_decrypt_exactly(n13, value):
    ctx, sk, pk = n13
    want = np.full(ctx.slots, value)
    want[::3] = -value / 7
    got = ctx.decrypt(ctx.encrypt(want, pk), sk)
    assert _relative_error(got, want) < 1e-9


def test_n14_value_past_two_primes():
    ctx = ckks.Context("N14_L8", device="cpu")
    sk = ctx.keygen()
    got = ctx.decrypt(ctx.encrypt(np.full(16, 1e17), sk), sk)[:16]
    assert _relative_error(got, np.full(16, 1e17)) < 1e-9


@pytest.mark.parametrize("k", [2**62, 2**70, 2.0**90])
def test_large_scalars_are_exact(n13, k):
    ctx, sk, pk = n13
    x = np.linspace(-1, 1, ctx.slots)
    got = ctx.decrypt(ctx.encrypt(x, pk) * k, sk)
    assert _relative_error(got, x * k) < 1e-6


def test_decoding_agrees_with_big_integers(n13):
    # A plaintext near the bound at every level, decoded against Python's exact integers.
    ctx, _, _ = n13
    rng = np.random.default_rng(5)
    for level in range(ctx.max_level + 1):
        bound = ctx._raw.coefficient_bound(level)
        scale = ctx.scale_at(level)
        values = rng.uniform(-1, 1, ctx.slots) * (bound / scale) * 0.9 / 2
        got = ctx.decode(ctx.encode(values, level))
        assert _relative_error(got, values) < 1e-9, level


def test_encode_refuses_beyond_the_level_and_names_the_bound(n13):
    ctx, _, pk = n13
    limit = ctx._raw.coefficient_bound(0) / ctx.scale_at(0)
    ctx.encrypt(np.full(4, limit * 0.4), pk, level=0)  # inside: accepted
    with pytest.raises(ember.ParameterError, match=r"2\^\d+.*level 0") as e:
        ctx.encode(np.full(ctx.slots, limit * 1.5), level=0)
    assert isinstance(e.value, ValueError)
    with pytest.raises(ember.ParameterError, match="most level"):
        ctx.encode(np.full(8, 1e300))


def test_scalars_refused_beyond_the_level(n13):
    ctx, _, pk = n13
    x = ctx.encrypt(np.ones(4), pk)
    with pytest.raises(ember.ParameterError, match="scalar"):
        x * 2**200
    with pytest.raises(ember.ParameterError, match="scalar"):
        x + 1e45


def test_wrapped_values_raise_instead_of_garbage(n13):
    ctx, sk, pk = n13
    x = ctx.encrypt(np.linspace(0.5, 1, ctx.slots), pk)
    y = x * 1e30  # accepted as a scalar, but x * 1e30 does not fit the next level
    with pytest.raises(ember.DecryptionError, match="wrapped") as e:
        ctx.decrypt(y, sk)
    assert isinstance(e.value, ArithmeticError)
    garbage = ctx.decrypt(y, sk, check=False)  # still readable when asked for
    assert garbage.shape == (ctx.slots,)


def test_every_value_encoding_accepts_decrypts(n13):
    ctx, sk, pk = n13
    for level in range(ctx.max_level + 1):
        limit = ctx._raw.coefficient_bound(level) / ctx.scale_at(level)
        # A constant vector encodes to a single coefficient of that size.
        x = np.full(ctx.slots, limit * 0.999)
        got = ctx.decrypt(ctx.encrypt(x, pk, level=level), sk)
        assert _relative_error(got, x) < 1e-6, level


# ------------------------------------------------------------------------------------- flooding


@pytest.fixture(scope="module")
def wide():
    # 55-bit scale: room for the flooding noise (not a preset; within the 128-bit bound).
    params = ckks.Params(log_n=13, scale_bits=50, levels=1, first_mod_bits=58, special_mod_bits=60)
    ctx = ckks.Context(params, device="cpu")
    sk = ctx.keygen()
    return ctx, sk


def test_flooding_hides_the_error_and_keeps_the_values(wide):
    ctx, sk = wide
    x = np.linspace(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, sk)
    plain = ctx.decrypt(ct, sk)
    assert np.array_equal(plain, ctx.decrypt(ct, sk))  # deterministic without flooding
    bits = 12.0
    a = ctx.decrypt(ct, sk, flood=True, noise_bits=bits, security_bits=20)
    b = ctx.decrypt(ct, sk, flood=True, noise_bits=bits, security_bits=20)
    assert not np.array_equal(a, b)
    # Coefficient noise of sigma gives slot noise of standard deviation sqrt(N / 2) sigma (real
    # parts): the measured spread matches the stated formula.
    sigma = 2 ** (bits + 0.5 * math.log2(ctx.params.n) + 10)
    predicted = math.sqrt(ctx.params.n / 2) * sigma / ct.scale
    measured = float(np.std(a - plain))
    assert 0.8 < measured / predicted < 1.25, (measured, predicted)
    assert np.max(np.abs(a - x)) < 10 * predicted


def test_flooding_estimates_the_noise_of_real_values(wide):
    ctx, sk = wide
    x = np.linspace(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, sk)
    measured = ctx.noise_bits(ct, sk, x)
    assert 3 < measured < 20
    estimate = ctx._estimated_noise_bits(ct, ctx._raw.decrypt_core(ct._raw, sk._raw, 2))
    assert measured - 2 < estimate < measured + 6
    got = ctx.decrypt(ct, sk, flood=True, security_bits=16)
    assert np.max(np.abs(got - x)) < 1e-2


def test_flooding_complex_values_needs_a_noise_bound(wide):
    ctx, sk = wide
    ct = ctx.encrypt(np.full(8, 1 + 1j), sk)
    with pytest.raises(ember.ParameterError, match="noise_bits"):
        ctx.decrypt(ct, sk, flood=True)
    got = ctx.decrypt(ct, sk, flood=True, noise_bits=12, security_bits=16)[:8]
    assert np.max(np.abs(got - (1 + 1j))) < 1e-2


@pytest.mark.parametrize(
    "kwargs",
    [{"security_bits": 0}, {"queries": 0}, {"noise_bits": -1}, {"noise_bits": 90}],
)
def test_flooding_refuses_bad_options(wide, kwargs):
    ctx, sk = wide
    ct = ctx.encrypt(np.ones(4), sk)
    with pytest.raises(ember.ParameterError):
        ctx.decrypt(ct, sk, flood=True, **{"noise_bits": 10, **kwargs})
