"""Deserialization checks meaning, not only form (issue 25, item 5): inputs whose checksum was
recomputed after a change are refused when the change is out of range for its field (CKKS scales
and flags, BFV/BGV factors and flags, Galois elements, digit counts, nonces), when a secret key is
not a ternary polynomial with the parameters' Hamming weight, and when a public or evaluation key
does not belong to the secret key (verify). The keyed MAC refuses every change."""

from __future__ import annotations

import hashlib
import math
import struct

import numpy as np
import pytest
from ember import bfv, bgv, ckks, ring
from ember import serialize as ser
from ember.errors import ParameterError, SerializationError

HEAD = 32  # magic, version, kind, params id, key id, payload length
MAC = b"0123456789abcdef0123456789abcdef"
CKKS_PARAMS = ckks.Params(
    log_n=10, levels=2, scale_bits=30, first_mod_bits=40, special_mod_bits=40, insecure=True
)
INT_SMALL = {"log_n": 10, "plain_modulus": 12289, "q_bits": (40, 30), "special_bits": (45,)}


def reseal(body: bytes) -> bytes:
    """What anyone can do: change the body and recompute the unkeyed checksum."""
    return body + hashlib.blake2b(body, digest_size=16).digest()


def patched(blob: bytes, offset: int, fmt: str, value) -> bytes:
    body = bytearray(blob[:-16])
    struct.pack_into(fmt, body, offset, value)
    return reseal(bytes(body))


def keys(ctx, rotations=(1,)):
    sk = ctx.keygen()
    ek = ctx.eval_keys(sk, rotations=list(rotations))
    ctx.set_eval_keys(ek)
    return sk, ctx.public_key(sk), ek


@pytest.fixture(scope="module")
def ck():
    ctx = ckks.Context(CKKS_PARAMS, device="cpu")
    sk, pk, ek = keys(ctx, rotations=(1, 2))
    return ctx, sk, pk, ek, ctx.encrypt(np.linspace(-1, 1, ctx.slots), pk)


@pytest.fixture(scope="module", params=["bfv", "bgv"])
def integer(request):
    mod = bfv if request.param == "bfv" else bgv
    ctx = mod.Context(mod.Params(**INT_SMALL, insecure=True), device="cpu")
    sk, pk, ek = keys(ctx)
    return ctx, sk, pk, ek, ctx.encrypt(np.arange(8), pk)


# ------------------------------------------------------------------------------ CKKS ciphertexts
@pytest.mark.parametrize(
    "scale", [5e-324, 1e-310, 0.0, -0.0, -1.0, 0.5, math.inf, -math.inf, math.nan, 1e308]
)
def test_ckks_scale_out_of_range_refused(ck, scale):
    ctx, _, _, _, ct = ck
    with pytest.raises(SerializationError, match="scale"):
        ctx.ciphertext_from_bytes(patched(ct.to_bytes(), HEAD + 8, "<d", scale))


def test_ckks_scale_above_half_q_level_refused(ck):
    ctx, _, _, _, ct = ck
    _, high = ctx.scale_bounds(ct.level)
    assert ctx.ciphertext_from_bytes(patched(ct.to_bytes(), HEAD + 8, "<d", high)).scale == high
    with pytest.raises(SerializationError, match="Q_level"):
        ctx.ciphertext_from_bytes(patched(ct.to_bytes(), HEAD + 8, "<d", high * 2.01))


@pytest.mark.parametrize("flag", [2, 7, 255])
def test_ckks_is_complex_flag_must_be_0_or_1(ck, flag):
    ctx, _, _, _, ct = ck
    with pytest.raises(SerializationError, match="is_complex"):
        ctx.ciphertext_from_bytes(patched(ct.to_bytes(), HEAD + 16, "<B", flag))


@pytest.mark.parametrize("offset, value", [(0, 3), (0, 2**32 - 1), (4, 1), (4, 4)])
def test_ckks_level_and_size_range_checked(ck, offset, value):
    ctx, _, _, _, ct = ck
    with pytest.raises(SerializationError, match="out of range"):
        ctx.ciphertext_from_bytes(patched(ct.to_bytes(), HEAD + offset, "<I", value))


def test_every_scale_ember_serializes_is_readable(ck):
    """Manual-mode products keep S_l^2 before their rescale: inside [1, Q_l / 2] at every level
    >= 1; at level 0 no message fits (S_0^2 > q_0), and to_bytes refuses it up front."""
    _ctx, sk, pk, _, _ = ck
    manual = ckks.Context(CKKS_PARAMS, device="cpu", auto_rescale=False)
    manual.set_eval_keys(manual.eval_keys(sk))
    x = manual.encrypt(np.full(4, 0.5), pk)
    for level in range(x.level, 0, -1):
        y = x if level == x.level else manual.drop_level(x, level)
        for ct in (y, y * y, y * 0.25, (y * y).rescale()):
            back = manual.ciphertext_from_bytes(ct.to_bytes())
            assert back.scale == ct.scale
            assert np.allclose(manual.decrypt(back, sk)[:4], manual.decrypt(ct, sk)[:4])
    low_product = manual.drop_level(x, 0)
    low_product = low_product * low_product
    with pytest.raises(SerializationError, match="rescale a product"):
        low_product.to_bytes()


def test_standard_and_bootstrapping_scales_inside_bounds():
    ctx = ckks.Context(ckks.Params.preset("N12_boot_insecure"), device="cpu")
    for level in range(ctx._raw.max_level + 1):
        low, high = ctx.scale_bounds(level)
        assert low <= ctx.scale_at(level) <= high


# ------------------------------------------------------------------------------ BFV / BGV
def test_integer_ciphertext_fields_checked(integer):
    ctx, sk, _, _, ct = integer
    blob = ct.to_bytes()
    t = ctx.plain_modulus
    assert list(ctx.decrypt(ctx.ciphertext_from_bytes(blob), sk)[:8]) == list(range(8))
    for factor in (0, t, t + 1, 2**64 - 1):
        with pytest.raises(SerializationError, match="factor"):
            ctx.ciphertext_from_bytes(patched(blob, HEAD + 8, "<Q", factor))
    with pytest.raises(SerializationError, match="batched"):
        ctx.ciphertext_from_bytes(patched(blob, HEAD + 16, "<B", 2))
    with pytest.raises(SerializationError, match="out of range"):
        ctx.ciphertext_from_bytes(patched(blob, HEAD, "<I", ctx.max_level + 1))


def test_bgv_factor_zero_refused_and_units_accepted():
    ctx = bgv.Context(bgv.Params(**INT_SMALL, insecure=True), device="cpu")
    _sk, pk, _ = keys(ctx)
    blob = ctx.encrypt(np.arange(8), pk).to_bytes()
    with pytest.raises(SerializationError, match=r"factor 0: it must be in \[1, t=12289\)"):
        ctx.ciphertext_from_bytes(patched(blob, HEAD + 8, "<Q", 0))
    assert ctx.ciphertext_from_bytes(patched(blob, HEAD + 8, "<Q", 5))._raw.factor == 5


def test_bgv_factor_must_be_invertible_mod_t():
    ctx = bgv.Context(bgv.Params(**{**INT_SMALL, "plain_modulus": 1000}, insecure=True), "cpu")
    _, pk, _ = keys(ctx)
    blob = ctx.encrypt(np.arange(8), pk).to_bytes()
    with pytest.raises(SerializationError, match="invertible"):
        ctx.ciphertext_from_bytes(patched(blob, HEAD + 8, "<Q", 10))
    assert ctx.ciphertext_from_bytes(patched(blob, HEAD + 8, "<Q", 3))._raw.factor == 3


def test_bfv_factor_must_be_one():
    ctx = bfv.Context(bfv.Params(**INT_SMALL, insecure=True), device="cpu")
    _, pk, _ = keys(ctx)
    with pytest.raises(SerializationError, match="must be 1"):
        ctx.ciphertext_from_bytes(patched(ctx.encrypt([1], pk).to_bytes(), HEAD + 8, "<Q", 2))


def test_batched_flag_needs_batching_parameters():
    ctx = bgv.Context(bgv.Params(**{**INT_SMALL, "plain_modulus": 1000}, insecure=True), "cpu")
    _, pk, _ = keys(ctx)
    blob = ctx.encrypt(np.arange(8), pk).to_bytes()
    with pytest.raises(SerializationError, match="does not allow batching"):
        ctx.ciphertext_from_bytes(patched(blob, HEAD + 16, "<B", 1))


# ------------------------------------------------------------------------------ secret keys
def secret_blob(ctx, sk, coeffs: np.ndarray, rows=None) -> bytes:
    """The secret key's bytes with the coefficients `coeffs` (or the residues `rows`)."""
    basis = ctx._raw.full_basis()
    if rows is None:
        rows = np.stack([np.mod(coeffs, int(q)).astype(np.uint64) for q in basis.primes])
    poly = ring.RnsPoly.from_numpy(basis, np.ascontiguousarray(rows), "coeff", "cpu").ntt()
    words = np.ascontiguousarray(poly.to_numpy(), dtype="<u8").tobytes()
    return reseal(sk.to_bytes()[:HEAD] + words)


def coefficients(sk) -> np.ndarray:
    return ser.centered_rows(sk._raw.s)[0].copy()


def test_secret_key_round_trip_and_coefficient_two_refused(ck):
    ctx, sk, _, _, ct = ck
    back = ctx.secret_key_from_bytes(sk.to_bytes())
    assert np.allclose(ctx.decrypt(ct, back), ctx.decrypt(ct, sk))
    s = coefficients(sk)
    assert set(np.unique(s)) <= {-1, 0, 1}
    s[5] = 2
    with pytest.raises(SerializationError, match="-1, 0 or 1"):
        ctx.secret_key_from_bytes(secret_blob(ctx, sk, s))


def test_secret_key_residues_must_agree_across_primes(ck):
    ctx, sk, _, _, _ = ck
    primes = [int(q) for q in ctx._raw.full_basis().primes]
    rows = np.stack([np.mod(coefficients(sk), q).astype(np.uint64) for q in primes])
    rows[1, 3] = (int(rows[1, 3]) + 1) % primes[1]
    with pytest.raises(SerializationError, match="disagree"):
        ctx.secret_key_from_bytes(secret_blob(ctx, sk, None, rows))


def test_secret_key_zero_refused(ck):
    ctx, sk, _, _, _ = ck
    with pytest.raises(SerializationError, match="zero"):
        ctx.secret_key_from_bytes(secret_blob(ctx, sk, np.zeros(ctx.params.n, dtype=np.int64)))


def test_secret_key_hamming_weight_checked():
    ctx = bgv.Context(bgv.Params(**INT_SMALL, hamming_weight=64, insecure=True), "cpu")
    sk = ctx.keygen()
    s = coefficients(sk)
    assert np.count_nonzero(s) == 64
    assert np.array_equal(coefficients(ctx.secret_key_from_bytes(sk.to_bytes())), s)
    s[np.flatnonzero(s == 0)[0]] = 1
    with pytest.raises(SerializationError, match="65 nonzero coefficients.*hamming_weight=64"):
        ctx.secret_key_from_bytes(secret_blob(ctx, sk, s))


# ------------------------------------------------------------------------------ public keys
def test_public_key_verify(ck):
    ctx, sk, pk, _, _ = ck
    blob = pk.to_bytes()
    ctx.public_key_from_bytes(blob, sk=sk).verify(sk)
    word = HEAD + 40 + 8 * 17
    q0 = int(ctx._raw.prime(0))
    bad = patched(blob, word, "<Q", (struct.unpack_from("<Q", blob, word)[0] + q0 // 3) % q0)
    loaded = ctx.public_key_from_bytes(bad)  # reduced words: only the secret can tell
    with pytest.raises(SerializationError, match="does not belong"):
        loaded.verify(sk)
    with pytest.raises(SerializationError, match="does not belong"):
        ctx.public_key_from_bytes(patched(blob, HEAD, "32s", bytes(32)), sk=sk)
    with pytest.raises(SerializationError, match="another key set"):
        pk.verify(ctx.keygen())


def test_public_key_nonce_checked(ck):
    ctx, _, pk, _, _ = ck
    with pytest.raises(SerializationError, match="nonce"):
        ctx.public_key_from_bytes(patched(pk.to_bytes(), HEAD + 32, "<Q", 1))


# ------------------------------------------------------------------------------ evaluation keys
def key_offsets(ctx, blob: bytes) -> list[int]:
    """Offsets of each key's (galois, nonce, dnum, seed) header in an EvalKeys blob."""
    (count,) = struct.unpack_from("<I", blob, HEAD)
    poly = len(ctx._raw.full_basis()) * ctx.params.n * 8
    off, out = HEAD + 4, []
    for _ in range(count):
        out.append(off)
        off += 52 + ctx._raw.dnum * poly
    return out


def test_eval_keys_verify_catches_corrupted_polynomial(ck):
    ctx, sk, _, ek, _ = ck
    blob = ek.to_bytes()
    ctx.eval_keys_from_bytes(blob, sk=sk)
    galois_key = key_offsets(ctx, blob)[2]  # the key of rotation 2
    (g,) = struct.unpack_from("<Q", blob, galois_key)
    word = galois_key + 52 + 8 * 100
    q0 = int(ctx._raw.prime(0))
    bad = patched(blob, word, "<Q", (struct.unpack_from("<Q", blob, word)[0] + 12345) % q0)
    loaded = ctx.eval_keys_from_bytes(bad)  # structure fine: accepted without the secret
    with pytest.raises(SerializationError, match=f"Galois key of element {g} \\(rotation by 2\\)"):
        loaded.verify(sk)
    with pytest.raises(SerializationError, match="rotation by 2"):
        ctx.eval_keys_from_bytes(bad, sk=sk)


def test_eval_keys_verify_catches_corrupted_relin_key_and_other_key_set(ck):
    ctx, sk, _, ek, _ = ck
    blob = ek.to_bytes()
    seed = key_offsets(ctx, blob)[0] + 20
    with pytest.raises(SerializationError, match="relinearization key"):
        ctx.eval_keys_from_bytes(patched(blob, seed, "32s", b"x" * 32), sk=sk)
    with pytest.raises(SerializationError, match="another key set"):
        ek.verify(ctx.keygen())


def test_eval_keys_galois_element_swapped_for_a_valid_one_fails_verify(ck):
    ctx, sk, _, ek, _ = ck
    blob = ek.to_bytes()
    first = key_offsets(ctx, blob)[1]
    (g,) = struct.unpack_from("<Q", blob, first)
    swapped = patched(blob, first, "<Q", g - 2 if g > 3 else 3)  # still odd and increasing
    with pytest.raises(SerializationError, match="Galois key of element"):
        ctx.eval_keys_from_bytes(swapped, sk=sk)


def test_eval_keys_structure_checked(ck):
    ctx, _, _, ek, _ = ck
    blob = ek.to_bytes()
    relin, k1, k2 = key_offsets(ctx, blob)
    (g1,) = struct.unpack_from("<Q", blob, k1)
    n2 = 2 * ctx.params.n
    cases = [
        (k2, "<Q", g1, "increasing order"),  # duplicate Galois elements
        (k1, "<Q", 2, "invalid Galois element 2"),
        (k1, "<Q", 1, "invalid Galois element 1"),
        (k1, "<Q", n2 + 1, "invalid Galois element"),
        (relin, "<Q", g1, "relinearization key"),
        (k2, "<Q", 0, "bootstrapping keys"),
        (k1 + 16, "<I", ctx._raw.dnum + 1, "digits"),
        (k1 + 8, "<Q", 1, "nonce"),
        (HEAD, "<I", 0, "count"),
    ]
    for offset, fmt, value, message in cases:
        with pytest.raises(SerializationError, match=message):
            ctx.eval_keys_from_bytes(patched(blob, offset, fmt, value))


def test_integer_keys_verify(integer):
    ctx, sk, pk, ek, _ = integer
    ctx.public_key_from_bytes(pk.to_bytes(), sk=sk)
    ctx.eval_keys_from_bytes(ek.to_bytes(), sk=sk)
    blob = ek.to_bytes()
    word = key_offsets(ctx, blob)[1] + 52 + 8 * 7
    bad = patched(blob, word, "<Q", 1 + struct.unpack_from("<Q", blob, word)[0] // 2)
    with pytest.raises(SerializationError, match="Galois key"):
        ctx.eval_keys_from_bytes(bad, sk=sk)


# ------------------------------------------------------------------------------ the MAC
def objects(ctx, sk, pk, ek, ct):
    return [
        (ct, ctx.ciphertext_from_bytes),
        (sk, ctx.secret_key_from_bytes),
        (pk, ctx.public_key_from_bytes),
        (ek, ctx.eval_keys_from_bytes),
    ]


def every_scheme(ck, integer):
    return [ck, integer]


@pytest.mark.parametrize("index", range(4), ids=["ct", "sk", "pk", "ek"])
def test_mac_round_trip_and_every_failure_mode(ck, integer, index):
    for env in every_scheme(ck, integer):
        obj, read = objects(*env)[index]
        plain, keyed = obj.to_bytes(), obj.to_bytes(mac_key=MAC)
        assert struct.unpack_from("<H", plain, 4)[0] == ser.VERSION == 1  # old format unchanged
        assert struct.unpack_from("<H", keyed, 4)[0] == ser.VERSION_MAC
        assert read(keyed, mac_key=MAC).to_bytes() == plain
        assert read(plain).to_bytes() == plain
        with pytest.raises(SerializationError, match="pass the mac_key"):
            read(keyed)
        with pytest.raises(SerializationError, match="MAC mismatch"):
            read(keyed, mac_key=MAC[::-1])
        with pytest.raises(SerializationError, match="carries no MAC"):
            read(plain, mac_key=MAC)
        tampered = bytearray(keyed)
        tampered[HEAD + 3] ^= 1
        with pytest.raises(SerializationError, match="MAC mismatch"):
            read(bytes(tampered), mac_key=MAC)
        stripped = bytearray(keyed[:-32])
        struct.pack_into("<H", stripped, 4, ser.VERSION)
        with pytest.raises(SerializationError, match="carries no MAC"):
            read(reseal(bytes(stripped)), mac_key=MAC)
        with pytest.raises(SerializationError, match="length mismatch"):
            read(keyed[:-1], mac_key=MAC)


@pytest.mark.parametrize("bad", [b"short", b"x" * 65, "a string key of 32 characters!!", 7])
def test_mac_key_must_be_16_to_64_bytes(ck, bad):
    ctx, _, _, _, ct = ck
    with pytest.raises(ParameterError, match="mac_key"):
        ct.to_bytes(mac_key=bad)
    with pytest.raises(ParameterError, match="mac_key"):
        ctx.ciphertext_from_bytes(ct.to_bytes(), mac_key=bad)
