"""CKKS slot encoding through the C++ special FFT (backend/ckks_fft.h, run by the backend's
CkksEncodeOps): its precision against numpy's FFT of the canonical embedding, round trips, the
words it encodes against encode_coeffs of the host FFT's coefficients (the same pipeline split
in two), the >= 2^62 residue path, sparse packing, input types, the decoding paths (one prime,
two, three with the two-prime shortcut, and the exact host fallback for wide values) and the
error paths."""

from __future__ import annotations

import numpy as np
import pytest
from ember import ckks, ring
from ember.errors import DecryptionError, ParameterError


def _params(log_n=12, levels=4):
    return ckks.Params(
        log_n=log_n,
        scale_bits=40,
        levels=levels,
        first_mod_bits=60,
        special_mods=1,
        special_mod_bits=60,
        insecure=True,
    )


@pytest.fixture(scope="module")
def ctx():
    return ckks.Context(_params(), device="cpu")


def _numpy_slots_to_coeffs(z: np.ndarray, n: int) -> np.ndarray:
    """The canonical embedding's inverse with numpy's FFT (the encoder before the C++ FFT):
    slot j is the evaluation at zeta^(5^j), zeta = e^(i pi / n)."""
    slots = n // 2
    idx = np.empty(slots, dtype=np.int64)
    idx_conj = np.empty(slots, dtype=np.int64)
    e = 1
    for j in range(slots):
        idx[j] = (e - 1) // 2
        idx_conj[j] = ((2 * n - e) - 1) // 2
        e = e * 5 % (2 * n)
    full = np.zeros(n, dtype=complex)
    full[idx] = z
    full[idx_conj] = np.conj(z)
    twist = np.exp(1j * np.pi * np.arange(n) / n)
    return (np.fft.fft(full) / n * np.conj(twist)).real, idx, twist


def _random_slots(rng, slots):
    return rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)


@pytest.mark.parametrize("log_n", [12, 15])
def test_special_fft_matches_numpy(log_n):
    """Encoding's coefficients and decoding's slots within 1e-12 relative of numpy's FFT."""
    c = ckks.Context(_params(log_n, 2), device="cpu")
    n = c.params.n
    rng = np.random.default_rng(log_n)
    z = _random_slots(rng, n // 2)
    want, idx, twist = _numpy_slots_to_coeffs(z, n)
    got = c._raw.slots_to_coeffs(z)
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))
    back_want = (n * np.fft.ifft(want * twist))[idx]
    back = c._raw.coeffs_to_slots(want)
    assert np.max(np.abs(back - back_want)) <= 1e-12 * np.max(np.abs(back_want))
    assert np.max(np.abs(c._raw.coeffs_to_slots(got) - z)) < 1e-13


def _words(pt) -> np.ndarray:
    return pt._poly.to_numpy()


def _encode_coeffs_words(ctx, z, level, scale) -> np.ndarray:
    """The same pipeline split in two: the host FFT's coefficients, then encode_coeffs."""
    full = np.zeros(ctx.slots, dtype=complex)
    full[: len(z)] = z
    coeffs = ctx._raw.slots_to_coeffs(full)
    return ctx._raw.encode_coeffs(coeffs, level, scale).to_numpy()


@pytest.mark.parametrize(
    ("level", "scale_bits"), [(0, 30), (2, 40), (4, 40), (4, 70), (4, 150), (3, 63)]
)
def test_encoded_words_equal_encode_coeffs(ctx, level, scale_bits):
    """encode() (CkksEncodeOps) gives the words of encode_coeffs on the host FFT's
    coefficients, including scales past 2^62 (residues of wide doubles)."""
    rng = np.random.default_rng(level * 100 + scale_bits)
    z = _random_slots(rng, ctx.slots)
    pt = ctx.encode(z, level, scale=2.0**scale_bits)
    np.testing.assert_array_equal(_words(pt), _encode_coeffs_words(ctx, z, level, 2.0**scale_bits))
    assert pt.is_complex


def test_words_close_to_the_numpy_encoder(ctx):
    """The rounded coefficients differ from numpy's FFT's by at most one unit (a rounding tie
    flipped by the last bit), so encodings keep their precision."""
    rng = np.random.default_rng(5)
    z = rng.uniform(-1, 1, ctx.slots)
    scale = 2.0**40
    want, _, _ = _numpy_slots_to_coeffs(z, ctx.params.n)
    got = ctx._raw.slots_to_coeffs(z.astype(complex))
    assert np.max(np.abs(np.round(want * scale) - np.round(got * scale))) <= 1


@pytest.mark.parametrize(
    "values",
    [
        np.linspace(-1, 1, 100),
        np.linspace(-1, 1, 100).astype(np.float32),
        (np.linspace(-1, 1, 10) * (1 + 0.5j)).astype(np.complex64),
        np.arange(7),
        [0.5, -0.25, 1.0],
    ],
    ids=["float64", "float32", "complex64", "int", "list"],
)
def test_input_types_round_trip(ctx, values):
    ref = np.asarray(values).astype(complex)
    pt = ctx.encode(values)
    np.testing.assert_array_equal(
        _words(pt), _encode_coeffs_words(ctx, ref, ctx.max_level, pt.scale)
    )
    got = ctx.decode(pt, complex=True)[: ref.size]
    assert np.max(np.abs(got - ref)) < 1e-6
    sk = ctx.keygen()
    dec = ctx.decrypt(ctx.encrypt(values, sk), sk, complex=True)[: ref.size]
    assert np.max(np.abs(dec - ref)) < 1e-5


def test_sparse_packing_repeats(ctx):
    v = np.array([1.0, -2.0, 0.5, 0.25])
    pt = ctx.encode(v, sparse=True)
    tiled = np.tile(v.astype(complex), ctx.slots // v.size)
    np.testing.assert_array_equal(
        _words(pt), _encode_coeffs_words(ctx, tiled, ctx.max_level, pt.scale)
    )
    assert np.allclose(ctx.decode(pt), tiled.real, atol=1e-6)


def _coeff_rows(ctx, pt):
    """The plaintext's first level + 1 rows in coefficient form (what decrypt decodes)."""
    limbs = pt.level + 1
    coeff = pt._poly.intt()
    return ring.RnsPoly.from_numpy(
        ctx._raw.q_basis(limbs - 1), np.ascontiguousarray(coeff.to_numpy()[:limbs]), "coeff", "cpu"
    )


@pytest.mark.parametrize(
    ("level", "scale_bits"), [(0, 30), (1, 40), (3, 40), (4, 150)], ids=["1p", "2p", "4p", "wide"]
)
def test_decode_paths_equal_decode_coeffs(ctx, level, scale_bits):
    """decode_slots (two-prime CRT on the device, or the exact host path for values past
    q0 q1 / 4) equals the host FFT of decode_coeffs bit for bit."""
    rng = np.random.default_rng(level)
    z = _random_slots(rng, ctx.slots)
    pt = ctx.encode(z, level, scale=2.0**scale_bits)
    rows = _coeff_rows(ctx, pt)
    want = ctx._raw.coeffs_to_slots(ctx._raw.decode_coeffs(rows, pt.scale))
    got = ctx._raw.decode_slots(rows, pt.scale, True, ctx.slots, True, False)
    np.testing.assert_array_equal(got, want)
    real = ctx._raw.decode_slots(rows, pt.scale, True, 10, False, False)
    np.testing.assert_array_equal(real, want.real[:10])
    assert np.max(np.abs(got - z)) < 1e-6


def test_decrypt_dlpack_on_cpu_is_numpy(ctx):
    sk = ctx.keygen()
    v = np.arange(6.0).reshape(2, 3) / 8
    got = ctx.decrypt(ctx.encrypt(v, sk), sk, out="dlpack")
    assert isinstance(got, np.ndarray) and got.shape == (2, 3)
    assert np.allclose(got, v, atol=1e-5)


def test_encoding_errors(ctx):
    with pytest.raises(ParameterError, match="finite"):
        ctx.encode([1.0, np.nan])
    with pytest.raises(ParameterError, match="reaches 2\\^"):
        ctx.encode([1e30], 0)
    with pytest.raises(ParameterError, match="do not fit"):
        ctx.encode(np.zeros(ctx.slots + 1))
    with pytest.raises(ParameterError, match="sparse packing"):
        ctx.encode(np.zeros(3), sparse=True)
    with pytest.raises(ParameterError, match="float32, float64"):
        ctx._raw.encode_slots(np.arange(4), 0, 2.0**30)
    with pytest.raises(ParameterError, match="finite"):
        ctx._raw.encode_slots(np.array([np.inf]), 0, 2.0**30)
    with pytest.raises(ParameterError, match="do not fit"):
        ctx._raw.encode_slots(np.zeros(ctx.slots + 1), 0, 2.0**30)
    with pytest.raises(ParameterError, match="sparse packing"):
        ctx._raw.encode_slots(np.zeros(3), 0, 2.0**30, True)


@pytest.mark.parametrize("limbs", [1, 2])
def test_wrapped_values_raise_on_decode(ctx, limbs):
    """A coefficient past a quarter of the modulus raises DecryptionError (the decoder's flag),
    unless check=False."""
    basis = ctx._raw.q_basis(limbs - 1)
    q = [ctx._raw.prime(i) for i in range(limbs)]
    big = 1
    for p in q:
        big *= p
    words = np.zeros((limbs, ctx.params.n), dtype=np.uint64)
    for i, p in enumerate(q):
        words[i, 3] = (big // 3) % p
    rows = ring.RnsPoly.from_numpy(basis, words, "coeff", "cpu")
    with pytest.raises(DecryptionError, match="wrapped"):
        ctx._raw.decode_slots(rows, 2.0**40, True, ctx.slots, False, False)
    got = ctx._raw.decode_slots(rows, 2.0**40, False, ctx.slots, False, False)
    assert got.shape == (ctx.slots,) and np.all(np.isfinite(got))
    with pytest.raises(ParameterError, match="CUDA"):
        ctx._raw.decode_slots(rows, 2.0**40, True, ctx.slots, False, True)


def test_decode_keeps_the_shape_when_asked(ctx):
    v = np.arange(12.0).reshape(3, 4) / 16
    pt = ctx.encode(v)
    assert ctx.decode(pt).shape == (ctx.slots,)
    got = ctx.decode(pt, out="dlpack")
    assert got.shape == (3, 4) and np.allclose(got, v, atol=1e-6)
    assert np.allclose(ctx.decode(pt, like=v), v, atol=1e-6)
