"""Samplers: exact structure (values, weights, layout of the ChaCha20 stream), statistics with
5-sigma bounds, determinism per (key, nonce), and the ChaCha20 known answer."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from ember import _ember, ring
from ringref import chacha20_block, discrete_gaussian_pmf, distinct_primes, stream_word

KEY = bytes(range(32))
KEY2 = bytes(31) + b"\x01"


@pytest.fixture(scope="module")
def big():
    """N = 2^14 over primes of 61, 40 and 30 bits."""
    n = 1 << 14
    primes = distinct_primes([61, 40, 30], n)
    _ctx, basis = ring.make_ring(n, primes)
    return basis, primes


@pytest.fixture(scope="module")
def small():
    n = 64
    primes = distinct_primes([61, 50, 33], n)
    _ctx, basis = ring.make_ring(n, primes)
    return basis, primes


def signed_values(poly, primes):
    """Interpret every limb as small signed values (q-1 -> -1 etc.); all limbs must agree."""
    arr = poly.to_numpy()
    rows = []
    for l, q in enumerate(primes):
        r = arr[l].astype(object)
        rows.append(np.where(r > q // 2, r - q, r).astype(np.int64))
    for l in range(1, len(rows)):
        np.testing.assert_array_equal(rows[l], rows[0], err_msg=f"limb {l} disagrees with limb 0")
    return rows[0]


# ---------------------------------------------------------------------------------------------
# ChaCha20


def test_chacha20_block_rfc7539_known_answer():
    # RFC 7539 section 2.3.2: 32-bit counter 1 and 96-bit nonce 00 00 00 09 00 00 00 4a 00 00 00 00
    # are, in our 64-bit counter / 64-bit nonce layout, these two numbers.
    out = ring.chacha20_block(bytes(range(32)), 0x0900000000000001, 0x000000004A000000)
    assert out == bytes.fromhex(
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
    )
    # RFC 7539 appendix A.1, test vector #1 (zero key, zero nonce, counter 0).
    assert ring.chacha20_block(bytes(32), 0, 0) == bytes.fromhex(
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
    )


def test_chacha20_block_matches_pure_python(rng):
    for _ in range(30):
        key = rng.bytes(32)
        counter = int(rng.integers(0, 2**64, dtype=np.uint64))
        nonce = int(rng.integers(0, 2**64, dtype=np.uint64))
        assert ring.chacha20_block(key, counter, nonce) == chacha20_block(key, counter, nonce)
    for counter, nonce in [(0, 0), (2**64 - 1, 2**64 - 1), (2**32, 2**32 - 1)]:
        assert ring.chacha20_block(KEY, counter, nonce) == chacha20_block(KEY, counter, nonce)


def test_chacha20_bad_key_length():
    with pytest.raises(ember.ParameterError, match="32 bytes"):
        ring.chacha20_block(bytes(16), 0, 0)
    with pytest.raises(ember.ParameterError):
        ring.Sampler(bytes(33))


# ---------------------------------------------------------------------------------------------
# The exact stream layout (what every backend must reproduce)


def test_uniform_follows_the_chacha_stream(small, device):
    # Coefficient c of limb l is (w[2i+1] * 2^64 + w[2i]) mod q_l with i = l*N + c, w the stream.
    basis, primes = small
    n = basis.n
    s = ring.Sampler(KEY, 7)
    p = s.uniform(basis, device, "coeff")
    arr = p.to_numpy()
    for l, q in enumerate(primes):
        for c in range(n):
            i = l * n + c
            hi, lo = stream_word(KEY, 7, 2 * i + 1), stream_word(KEY, 7, 2 * i)
            assert int(arr[l, c]) == ((hi << 64) | lo) % q, (l, c)


def test_ternary_and_gaussian_follow_the_chacha_stream(small, device):
    # Coefficient c uses stream word c: sign = bit 0, 63-bit uniform u = w >> 1.
    basis, primes = small
    n = basis.n
    s = ring.Sampler(KEY2, 100)
    for nonce, prob in ((100, 2 / 3), (101, 0.25)):
        vals = signed_values(s.ternary(basis, device, prob), primes)
        threshold = int(math.ldexp(prob, 63))
        for c in range(n):
            w = stream_word(KEY2, nonce, c)
            mag = 1 if (w >> 1) < threshold else 0
            assert vals[c] == (-mag if w & 1 else mag), c
    cdt = _ember.gaussian_cdt(3.2)
    vals = signed_values(s.gaussian(basis, device, 3.2), primes)
    for c in range(n):
        w = stream_word(KEY2, 102, c)
        mag = sum(1 for t in cdt if (w >> 1) >= t)
        assert vals[c] == (-mag if w & 1 else mag), c


def test_ternary_hamming_follows_the_chacha_stream(small, device):
    # Partial Fisher-Yates on stream words, rejection sampling of each swap index.
    basis, primes = small
    n, h = basis.n, 23
    s = ring.Sampler(KEY, 3)
    vals = signed_values(s.ternary_hamming(basis, device, h), primes)
    words = (stream_word(KEY, 3, w) for w in range(10**6))
    perm = list(range(n))
    expect = [0] * n
    for i in range(h):
        rng_range = n - i
        limit = (2**64 - 1) - ((2**64 - 1) % rng_range)
        w = next(words)
        while w >= limit:
            w = next(words)
        j = i + w % rng_range
        perm[i], perm[j] = perm[j], perm[i]
        expect[perm[i]] = -1 if next(words) & 1 else 1
    assert list(vals) == expect


def test_gaussian_cdt_table():
    for sigma in (3.2, 1.0, 0.5, 8.0):
        cdt = _ember.gaussian_cdt(sigma)
        bound = math.ceil(6 * sigma)
        assert len(cdt) == bound
        assert all(a < b for a, b in zip(cdt, cdt[1:]))
        pmf = discrete_gaussian_pmf(sigma, bound)
        acc = 0.0
        for k in range(bound):
            acc += pmf[k] + (pmf[-k] if k else 0.0)
            assert abs(cdt[k] / 2**63 - acc) < 1e-12, (sigma, k)
        assert cdt[-1] < 2**63


# ---------------------------------------------------------------------------------------------
# Structure and statistics


def test_ternary_hamming_exact_weight(small, big, device):
    for basis, primes in (small, big):
        n = basis.n
        s = ring.Sampler(KEY, 0)
        for h in (1, 2, n // 3, n // 2, n - 1, n):
            p = s.ternary_hamming(basis, device, h)
            assert p.form == "coeff"
            v = signed_values(p, primes)
            assert set(np.unique(v)) <= {-1, 0, 1}
            assert int(np.count_nonzero(v)) == h
    # Signs are balanced and positions spread over the whole polynomial.
    basis, primes = big
    n = basis.n
    v = signed_values(ring.Sampler(KEY2).ternary_hamming(basis, device, n // 2), primes)
    plus = int((v == 1).sum())
    sd = math.sqrt(n / 2 * 0.25)
    assert abs(plus - n / 4) <= 5 * sd
    halves = [int(np.count_nonzero(v[: n // 2])), int(np.count_nonzero(v[n // 2 :]))]
    assert abs(halves[0] - halves[1]) <= 5 * math.sqrt(n / 2)


@pytest.mark.parametrize("prob", [2 / 3, 0.5, 0.1, 0.01, 1.0])
def test_ternary_density(big, device, prob):
    basis, primes = big
    n = basis.n
    v = signed_values(ring.Sampler(KEY, 11).ternary(basis, device, prob), primes)
    assert set(np.unique(v)) <= {-1, 0, 1}
    nz = int(np.count_nonzero(v))
    if prob == 1.0:
        assert nz == n
    else:
        sd = math.sqrt(n * prob * (1 - prob))
        assert abs(nz - n * prob) <= 5 * sd, (nz, n * prob, sd)
    plus = int((v == 1).sum())
    assert abs(plus - nz / 2) <= 5 * math.sqrt(nz / 4) + 1


def test_ternary_default_is_two_thirds(big, device):
    basis, primes = big
    n = basis.n
    v = signed_values(ring.Sampler(KEY2).ternary(basis, device), primes)
    nz = int(np.count_nonzero(v))
    assert abs(nz - 2 * n / 3) <= 5 * math.sqrt(n * 2 / 9)


@pytest.mark.parametrize("sigma", [3.2, 1.0])
def test_gaussian_moments_and_tail(big, device, sigma):
    basis, primes = big
    s = ring.Sampler(KEY, 1000)
    draws = np.concatenate(
        [signed_values(s.gaussian(basis, device, sigma), primes) for _ in range(8)]
    ).astype(np.float64)
    m = draws.size
    bound = math.ceil(6 * sigma)
    pmf = discrete_gaussian_pmf(sigma, bound)
    var = sum(k * k * p for k, p in pmf.items())
    assert abs(var - sigma**2) < 1e-3  # the discrete variance is sigma^2 to within 1e-3
    assert np.abs(draws).max() <= bound
    # Mean 0: standard error sqrt(var / m).
    assert abs(draws.mean()) <= 5 * math.sqrt(var / m)
    # Variance: the standard error of the sample variance is sqrt((mu4 - var^2) / m).
    mu4 = sum(k**4 * p for k, p in pmf.items())
    assert abs(draws.var() - var) <= 5 * math.sqrt((mu4 - var * var) / m), (draws.var(), var)
    # Histogram of values: every bin with expected count >= 20 within 5 sigma (binomial).
    vals, counts = np.unique(draws.astype(np.int64), return_counts=True)
    got = dict(zip(vals.tolist(), counts.tolist()))
    for k, p in pmf.items():
        if m * p >= 20:
            assert abs(got.get(k, 0) - m * p) <= 5 * math.sqrt(m * p * (1 - p)), (k, got.get(k, 0))


def test_gaussian_default_sigma(big, device):
    basis, primes = big
    v = signed_values(ring.Sampler(KEY2).gaussian(basis, device), primes).astype(np.float64)
    assert np.abs(v).max() <= math.ceil(6 * 3.2)
    assert abs(v.var() - 10.24) <= 5 * 10.24 * math.sqrt(2 / v.size)


def test_uniform_range_mean_and_buckets(big, device):
    basis, primes = big
    n = basis.n
    p = ring.Sampler(KEY, 5).uniform(basis, device)
    assert p.form == "eval"
    arr = p.to_numpy()
    for l, q in enumerate(primes):
        row = arr[l]
        assert (row < np.uint64(q)).all()
        x = row.astype(np.float64) / q  # uniform on [0, 1)
        assert abs(x.mean() - 0.5) <= 5 * math.sqrt(1 / 12 / n)
        buckets = 16
        counts = np.bincount(
            (row.astype(object) * buckets // q).astype(np.int64), minlength=buckets
        )
        expect = n / buckets
        chi2 = float(((counts - expect) ** 2 / expect).sum())
        # 15 degrees of freedom: P(chi2 > 60) < 1e-6.
        assert chi2 < 60, (l, chi2, counts)
        # Top bits are used: the largest values come close to q.
        assert row.max() > q - q // 100
    # Limbs are drawn independently (not the same draw reduced twice).
    assert not np.array_equal(arr[0] % np.uint64(primes[1]), arr[1])
    pc = ring.Sampler(KEY, 5).uniform(basis, device, "coeff")
    assert pc.form == "coeff"
    np.testing.assert_array_equal(pc.to_numpy(), arr)


# ---------------------------------------------------------------------------------------------
# Determinism and keys


def _draws(sampler, basis, device):
    return [
        sampler.uniform(basis, device).to_numpy(),
        sampler.ternary(basis, device).to_numpy(),
        sampler.ternary_hamming(basis, device, 17).to_numpy(),
        sampler.gaussian(basis, device).to_numpy(),
    ]


def test_same_key_and_nonce_reproduce(small, device):
    basis, _ = small
    a = _draws(ring.Sampler(KEY, 42), basis, device)
    b = _draws(ring.Sampler(KEY, 42), basis, device)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    # Each draw consumes one nonce: a sampler starting one nonce later sees the later draws.
    s = ring.Sampler(KEY, 43)
    np.testing.assert_array_equal(s.ternary(basis, device).to_numpy(), a[1])
    np.testing.assert_array_equal(s.ternary_hamming(basis, device, 17).to_numpy(), a[2])


def test_different_nonces_and_keys_differ(small, device):
    basis, _ = small
    s = ring.Sampler(KEY, 0)
    u1, u2 = s.uniform(basis, device).to_numpy(), s.uniform(basis, device).to_numpy()
    assert not np.array_equal(u1, u2)
    assert not np.array_equal(
        ring.Sampler(KEY, 1).uniform(basis, device).to_numpy(),
        ring.Sampler(KEY, 2).uniform(basis, device).to_numpy(),
    )
    assert not np.array_equal(
        ring.Sampler(KEY, 9).gaussian(basis, device).to_numpy(),
        ring.Sampler(KEY, 10).gaussian(basis, device).to_numpy(),
    )
    assert not np.array_equal(
        ring.Sampler(KEY, 9).ternary(basis, device).to_numpy(),
        ring.Sampler(KEY2, 9).ternary(basis, device).to_numpy(),
    )
    assert not np.array_equal(
        ring.Sampler(KEY, 9).ternary_hamming(basis, device, 30).to_numpy(),
        ring.Sampler(KEY, 10).ternary_hamming(basis, device, 30).to_numpy(),
    )


def test_os_keyed_samplers_differ(small, device):
    basis, _ = small
    a = ring.Sampler().uniform(basis, device).to_numpy()
    b = ring.Sampler().uniform(basis, device).to_numpy()
    assert not np.array_equal(a, b)
    ga = ring.Sampler().gaussian(basis, device).to_numpy()
    gb = ring.Sampler().gaussian(basis, device).to_numpy()
    assert not np.array_equal(ga, gb)


def test_sampler_parameter_errors(small, device):
    basis, _ = small
    s = ring.Sampler(KEY)
    for prob in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(ember.ParameterError):
            s.ternary(basis, device, prob)
    for h in (0, basis.n + 1):
        with pytest.raises(ember.ParameterError):
            s.ternary_hamming(basis, device, h)
    for sigma in (0.0, -1.0, 1e4):
        with pytest.raises(ember.ParameterError):
            s.gaussian(basis, device, sigma)
