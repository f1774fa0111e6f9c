"""Weak secrets and broken chains are refused; insecure=True always warns (issue 25, item 3)."""

from __future__ import annotations

import warnings

import ember
import pytest
from ember import bfv, bgv, ckks, ring
from ember.errors import SecurityWarning


@pytest.mark.parametrize("log_n", [14, 16])
@pytest.mark.parametrize("weight", [1, 64])
def test_sparse_secrets_without_an_estimate_are_refused(log_n, weight):
    with pytest.raises(ember.ParameterError, match="not covered by a 128-bit security estimate"):
        ckks.Params(log_n=log_n, hamming_weight=weight)


@pytest.mark.parametrize("scheme", [bfv, bgv])
def test_integer_schemes_refuse_sparse_secrets_too(scheme):
    with pytest.raises(ember.ParameterError, match="sparse secret"):
        scheme.Params(log_n=14, q_bits=(50, 50), special_bits=(50,), hamming_weight=8)


def test_sparse_secrets_covered_by_an_estimate_are_accepted():
    assert ckks.Params(log_n=16, levels=10, hamming_weight=320).hamming_weight == 320
    assert ckks.Params(log_n=15, levels=10, hamming_weight=192).hamming_weight == 192
    # The estimate covers its modulus, not a larger one.
    with pytest.raises(ember.ParameterError, match="sparse secret"):
        ckks.Params(log_n=15, levels=17, special_mods=2, special_mod_bits=50, hamming_weight=192)


def test_insecure_always_warns_and_the_warning_points_at_the_caller():
    with pytest.warns(SecurityWarning, match="insecure=True") as record:
        ckks.Params(log_n=14, hamming_weight=1, insecure=True)
    assert record[0].filename == __file__
    with pytest.warns(SecurityWarning, match="Hamming weight 1"):
        ckks.Params(log_n=14, hamming_weight=1, insecure=True)
    with pytest.warns(SecurityWarning):
        bfv.Params(log_n=10, insecure=True)
    with pytest.warns(SecurityWarning):
        ckks.Params.preset("N12_boot_insecure")
    assert issubclass(SecurityWarning, UserWarning)


def test_secure_parameters_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ckks.Params.preset("N14_L8")
        bfv.Params.preset("N14_t65537")
        bgv.Params.preset("N14_t65537")


def _small_primes(bits, n, count, taken=()):
    return tuple(ring.generate_ntt_primes(bits, n, count, list(taken)))


@pytest.mark.parametrize("scheme", [bfv, bgv])
def test_chain_below_the_plain_modulus_is_refused_in_cpp(scheme):
    # q_0 = 40961 < t = 65537, given as explicit primes (bypassing q_bits): the C++ context,
    # which every front end passes, refuses it.
    n = 4096
    q1 = _small_primes(40, n, 1)
    params = scheme.Params(
        log_n=12,
        q_primes=(40961,) + q1,
        p_primes=_small_primes(50, n, 1, q1),
        insecure=True,
    )
    with pytest.raises(ember.ParameterError, match=r"below every prime of Q \(q_0 = 40961\)"):
        scheme.Context(params, device="cpu")


def test_bgv_cpp_context_refuses_t_above_a_prime_directly():
    n = 1024
    q = _small_primes(30, n, 2)
    p = _small_primes(40, n, 1, q)
    with pytest.raises(ember.ParameterError, match="below every prime of Q"):
        ember._ember.BgvContext(n, list(q), list(p), 1, (1 << 31) + 11, "cpu")
