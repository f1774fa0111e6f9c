"""Versioned, self-describing, length-checked serialization of Ember objects (every scheme).

Layout: magic b"EMBR", format version (u16), object kind (u16), parameter fingerprint (u64),
key-set id (u64), payload length (u64), payload, then a trailer over everything before it:

- version 1 (the default, unkeyed): BLAKE2b-128 checksum. It detects accidental corruption
  only: anyone can recompute it, so it is not authentication.
- version 2 (written when ``to_bytes(mac_key=...)`` is given): keyed BLAKE2b-256 tag (a MAC)
  under the caller's secret key. Readers refuse it without the key or with another key, and
  refuse version 1 blobs when a ``mac_key`` is given, so a MAC cannot be stripped.

Readers check every field and length before using it; truncated, corrupted or foreign bytes raise
SerializationError, never a crash. Beyond form, the readers check meaning where the data allow
it: header and scheme fields are range-checked (levels, sizes, CKKS scales and flags, the BGV
factor, Galois elements, digit counts, seed nonces), secret keys must be ternary (with the
parameters' Hamming weight), evaluation keys must be in canonical order. What cannot be checked
without a secret: ciphertext words (any reduced word vector encrypts *something*), public and
evaluation key words (``PublicKey.verify(sk)`` and ``EvalKeys.verify(sk)`` check them against the
secret key). Use the MAC for bytes that cross a trust boundary. Polynomials are stored as
little-endian 64-bit residues (checked to be reduced on load). Public and evaluation keys store
their uniform halves as a ChaCha20 seed and nonce (half the size). See docs/security.md.
"""

from __future__ import annotations

import hashlib
import hmac
import struct

import numpy as np

from . import ring
from .errors import ParameterError, SerializationError

MAGIC = b"EMBR"
VERSION = 1  # unkeyed checksum trailer
VERSION_MAC = 2  # keyed MAC trailer
KIND_CIPHERTEXT, KIND_SECRET_KEY, KIND_PUBLIC_KEY, KIND_EVAL_KEYS = 1, 2, 3, 4
# CGGI objects (ember.cggi): ciphertext batches (bits or integers), client keys, server keys.
KIND_CGGI_CIPHERTEXT, KIND_CGGI_CLIENT_KEY, KIND_CGGI_SERVER_KEY = 16, 17, 18
# ember.persist: plaintexts (CKKS, BFV/BGV) and the file/pickle container naming its object.
KIND_PLAINTEXT, KIND_FILE = 5, 32
# HEAAN's rotation keys (ember.heaan.RotationKeys): a set of key-switching keys by Galois element.
KIND_HEAAN_ROTATION_KEYS = 6
_HEADER = struct.Struct("<4sHHQQQ")
_DIGEST = 16
_TAG = 32
MAC_KEY_MIN_BYTES = 16
MAC_KEY_MAX_BYTES = 64  # BLAKE2b's key limit


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def _tag(data: bytes, mac_key: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=_TAG, key=mac_key).digest()


def check_mac_key(mac_key) -> bytes | None:
    """The MAC key as bytes (None stays None); refuses keys too short to resist guessing."""
    if mac_key is None:
        return None
    if not isinstance(mac_key, (bytes, bytearray, memoryview)):
        raise ParameterError(f"mac_key must be bytes, got {type(mac_key).__name__}")
    mac_key = bytes(mac_key)
    if not MAC_KEY_MIN_BYTES <= len(mac_key) <= MAC_KEY_MAX_BYTES:
        raise ParameterError(
            f"mac_key has {len(mac_key)} bytes: use {MAC_KEY_MIN_BYTES} to {MAC_KEY_MAX_BYTES} "
            "random bytes (e.g. secrets.token_bytes(32))"
        )
    return mac_key


def pack(kind: int, params_id: int, key_id: int, payload: bytes, mac_key=None) -> bytes:
    """The object's bytes: with `mac_key`, a version 2 blob carrying a keyed tag."""
    mac_key = check_mac_key(mac_key)
    version = VERSION if mac_key is None else VERSION_MAC
    body = _HEADER.pack(MAGIC, version, kind, params_id, key_id, len(payload)) + payload
    return body + (_digest(body) if mac_key is None else _tag(body, mac_key))


def _check_trailer(blob: bytes, version: int, mac_key: bytes | None) -> None:
    if mac_key is None:
        if version == VERSION_MAC:
            raise SerializationError(
                "the object is authenticated with a MAC: pass the mac_key it was written with"
            )
        if _digest(blob[:-_DIGEST]) != blob[-_DIGEST:]:
            raise SerializationError("checksum mismatch: the data is corrupted")
        return
    if version != VERSION_MAC:
        raise SerializationError(
            "the object carries no MAC (unauthenticated data) but a mac_key was given: refusing "
            "it; write it with to_bytes(mac_key=...) or read it without mac_key if you trust it"
        )
    if not hmac.compare_digest(_tag(blob[:-_TAG], mac_key), blob[-_TAG:]):
        raise SerializationError(
            "MAC mismatch: the data was modified or written with another mac_key"
        )


def unpack(blob: bytes, kind: int, params_id: int, mac_key=None) -> tuple[int, memoryview]:
    """(key_id, payload) after checking magic, version, kind, lengths, the checksum or MAC and
    the parameter fingerprint."""
    mac_key = check_mac_key(mac_key)
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise SerializationError(f"expected bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    if len(blob) < _HEADER.size + _DIGEST:
        raise SerializationError(f"{len(blob)} bytes is too short to be an Ember object")
    magic, version, got_kind, got_params, key_id, length = _HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise SerializationError("not Ember data (bad magic bytes)")
    if version not in (VERSION, VERSION_MAC):
        raise SerializationError(
            f"format version {version} is not supported (this reads {VERSION} and {VERSION_MAC})"
        )
    if got_kind != kind:
        raise SerializationError(f"object kind {got_kind} where kind {kind} was expected")
    trailer = _DIGEST if version == VERSION else _TAG
    if len(blob) != _HEADER.size + length + trailer:
        raise SerializationError(
            f"length mismatch: header says {length} payload bytes, got "
            f"{len(blob) - _HEADER.size - trailer} (truncated or padded data)"
        )
    _check_trailer(blob, version, mac_key)
    if got_params != params_id:
        raise SerializationError(
            "the object was made with other parameters (fingerprint mismatch); load it into a "
            "context with the same parameters"
        )
    return key_id, memoryview(blob)[_HEADER.size : _HEADER.size + length]


class Reader:
    def __init__(self, payload: memoryview):
        self.buf, self.pos = payload, 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.buf):
            raise SerializationError("payload shorter than its fields say")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str):
        s = struct.Struct(fmt)
        return s.unpack(self.take(s.size))

    def poly(self, basis, device: str, word_bits: int = 64):
        """A polynomial of 64-bit words (the format of every context), as an RnsPoly or, for a
        context of 32-bit words, an RnsPoly32 (the same values)."""
        rows, n = len(basis), basis.n
        words = np.frombuffer(self.take(rows * n * 8), dtype="<u8").reshape(rows, n)
        try:
            if word_bits == 32:
                if words.size and int(words.max()) >= 1 << 32:
                    raise ValueError("a word is not reduced modulo its prime")
                return ring.RnsPoly32.from_numpy(
                    basis, np.ascontiguousarray(words, dtype=np.uint32), "eval", device
                )
            return ring.RnsPoly.from_numpy(basis, np.ascontiguousarray(words), "eval", device)
        except ValueError as e:
            raise SerializationError(f"malformed polynomial: {e}") from None

    def done(self):
        if self.pos != len(self.buf):
            raise SerializationError("trailing bytes after the last field")


def poly_bytes(p) -> bytes:
    return np.ascontiguousarray(p.to_numpy(), dtype="<u8").tobytes()


def centered_rows(p, coeff_form: bool = False) -> np.ndarray:
    """The polynomial's residues in coefficient form, centered per prime into (-q/2, q/2], as an
    int64 (limbs, N) array."""
    words = (p if coeff_form else p.intt()).to_numpy().astype(np.uint64)
    primes = np.array([int(q) for q in p.basis.primes], dtype=np.uint64)[:, None]
    signed = words.astype(np.int64)
    return np.where(words > primes // np.uint64(2), signed - primes.astype(np.int64), signed)


def small_integer_poly(p, bound: int) -> np.ndarray | None:
    """The polynomial's coefficients when it is one integer polynomial with every coefficient in
    [-bound, bound] (the same centered value in every prime), else None."""
    rows = centered_rows(p)
    first = rows[0]
    if np.any(np.abs(first) > bound) or np.any(rows != first):
        return None
    return first
