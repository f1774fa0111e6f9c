"""Versioned, self-describing, length-checked serialization of CKKS objects.

Layout: magic b"EMBR", format version (u16), object kind (u16), parameter fingerprint (u64),
key-set id (u64), payload length (u64), payload, BLAKE2b-128 of everything before it. Readers
check every field and length before using it; truncated, corrupted or foreign bytes raise
SerializationError, never a crash or a wrong object. Polynomials are stored as little-endian
64-bit residues (checked to be reduced on load). Public and evaluation keys store their uniform
halves as a ChaCha20 seed and nonce (half the size).
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np

from . import ring
from .errors import SerializationError

MAGIC = b"EMBR"
VERSION = 1
KIND_CIPHERTEXT, KIND_SECRET_KEY, KIND_PUBLIC_KEY, KIND_EVAL_KEYS = 1, 2, 3, 4
_HEADER = struct.Struct("<4sHHQQQ")
_DIGEST = 16


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def pack(kind: int, params_id: int, key_id: int, payload: bytes) -> bytes:
    body = _HEADER.pack(MAGIC, VERSION, kind, params_id, key_id, len(payload)) + payload
    return body + _digest(body)


def unpack(blob: bytes, kind: int, params_id: int) -> tuple[int, memoryview]:
    """(key_id, payload) after checking magic, version, kind, fingerprint, lengths, digest."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise SerializationError(f"expected bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    if len(blob) < _HEADER.size + _DIGEST:
        raise SerializationError(f"{len(blob)} bytes is too short to be an Ember object")
    magic, version, got_kind, got_params, key_id, length = _HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise SerializationError("not Ember data (bad magic bytes)")
    if version != VERSION:
        raise SerializationError(f"format version {version} is not supported (this is {VERSION})")
    if got_kind != kind:
        raise SerializationError(f"object kind {got_kind} where kind {kind} was expected")
    if len(blob) != _HEADER.size + length + _DIGEST:
        raise SerializationError(
            f"length mismatch: header says {length} payload bytes, got "
            f"{len(blob) - _HEADER.size - _DIGEST} (truncated or padded data)"
        )
    if _digest(blob[:-_DIGEST]) != blob[-_DIGEST:]:
        raise SerializationError("checksum mismatch: the data is corrupted")
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

    def poly(self, basis, device: str):
        rows, n = len(basis), basis.n
        words = np.frombuffer(self.take(rows * n * 8), dtype="<u8").reshape(rows, n)
        try:
            return ring.RnsPoly.from_numpy(basis, np.ascontiguousarray(words), "eval", device)
        except ValueError as e:
            raise SerializationError(f"malformed polynomial: {e}") from None

    def done(self):
        if self.pos != len(self.buf):
            raise SerializationError("trailing bytes after the last field")


def poly_bytes(p) -> bytes:
    return np.ascontiguousarray(p.to_numpy(), dtype="<u8").tobytes()
