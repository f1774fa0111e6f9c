"""CGGI serialization: round trips of every object kind (bits, integers, client keys, server
keys; with and without a MAC) and malformed inputs (truncated, corrupted, foreign, wrong kind,
other parameters, inconsistent fields with a valid checksum, out-of-range words)."""

from __future__ import annotations

import struct

import ember
import numpy as np
import pytest
from ember import cggi
from ember import serialize as ser


@pytest.fixture(scope="module")
def keys():
    ctx = cggi.Context("test_insecure", device="cpu")
    ck = ctx.keygen()
    return ctx, ck, ctx.server_key(ck, progress=False)


def test_round_trips(keys):
    ctx, ck, sk = keys
    bits = np.array([[1, 0, 1], [0, 0, 1]], dtype=bool)
    c = ctx.encrypt(bits, ck)
    c2 = ctx.ciphertext_from_bytes(c.to_bytes())
    assert isinstance(c2, cggi.Bits) and c2.shape == (2, 3) and c2.key_id == c.key_id
    np.testing.assert_array_equal(ctx.decrypt(c2, ck), bits)
    q = ctx.encrypt_int(np.array([3, 7, 11]), ck, bits=4)
    q2 = ctx.ciphertext_from_bytes(q.to_bytes())
    assert isinstance(q2, cggi.Ints) and q2.bits == 4
    np.testing.assert_array_equal(ctx.decrypt(q2, ck), [3, 7, 11])
    np.testing.assert_array_equal(q2._raw.to_host(), q._raw.to_host())

    ck2 = ctx.client_key_from_bytes(ck.to_bytes())
    assert ck2.key_id == ck.key_id
    np.testing.assert_array_equal(ctx.decrypt(c, ck2), bits)

    blob = sk.to_bytes()
    sk2 = ctx.server_key_from_bytes(blob)
    assert sk2.key_id == sk.key_id and sk2.nbytes == sk.nbytes
    assert sk2.to_bytes() == blob
    x = ctx.encrypt(np.array([0, 0, 1, 1]), ck)
    y = ctx.encrypt(np.array([0, 1, 0, 1]), ck)
    np.testing.assert_array_equal(ctx.decrypt(ctx.xor(x, y, sk2), ck), [0, 1, 1, 0])

    # Another context of the same parameters reads them too.
    other = cggi.Context("test_insecure", device="cpu")
    np.testing.assert_array_equal(
        other.decrypt(
            other.ciphertext_from_bytes(c.to_bytes()), other.client_key_from_bytes(ck.to_bytes())
        ),
        bits,
    )


def test_mac(keys):
    ctx, ck, _ = keys
    mac = b"k" * 32
    c = ctx.encrypt(np.array([1, 0]), ck)
    for obj, load in ((c, ctx.ciphertext_from_bytes), (ck, ctx.client_key_from_bytes)):
        blob = obj.to_bytes(mac_key=mac)
        load(blob, mac_key=mac)
        with pytest.raises(ember.SerializationError):
            load(blob)
        with pytest.raises(ember.SerializationError):
            load(blob, mac_key=b"j" * 32)
        with pytest.raises(ember.SerializationError):
            load(obj.to_bytes(), mac_key=mac)


def _repack(blob: bytes, payload: bytes) -> bytes:
    """The same header (kind, fingerprint, key id) around another payload, valid checksum."""
    _, _, kind, params, key_id, _ = ser._HEADER.unpack_from(blob)
    return ser.pack(kind, params, key_id, payload)


def _payload(blob: bytes) -> bytes:
    return blob[ser._HEADER.size : -ser._DIGEST]


def test_malformed(keys):
    ctx, ck, sk = keys
    c = ctx.encrypt(np.array([1, 0, 1]), ck)
    objects = {
        "ciphertext": (c.to_bytes(), ctx.ciphertext_from_bytes),
        "client key": (ck.to_bytes(), ctx.client_key_from_bytes),
        "server key": (sk.to_bytes(), ctx.server_key_from_bytes),
    }
    for name, (blob, load) in objects.items():
        for bad in (
            b"",
            blob[:10],
            blob[:-1],
            blob + b"\0",
            b"XXXX" + blob[4:],
            blob[:40] + bytes([blob[40] ^ 1]) + blob[41:],  # checksum catches it
            _repack(blob, _payload(blob)[:-1]),  # truncated payload, valid checksum
            _repack(blob, _payload(blob) + b"\0"),  # trailing bytes
            "not bytes",
        ):
            with pytest.raises(ember.SerializationError):
                load(bad)
        # Every other kind's bytes are refused.
        for other, (other_blob, _) in objects.items():
            if other != name:
                with pytest.raises(ember.SerializationError, match="kind"):
                    load(other_blob)
    # Other parameters: refused by fingerprint.
    ctx2 = cggi.Context("test_int_insecure", device="cpu")
    with pytest.raises(ember.SerializationError, match="fingerprint"):
        ctx2.ciphertext_from_bytes(c.to_bytes())
    with pytest.raises(ember.SerializationError, match="fingerprint"):
        ctx2.client_key_from_bytes(ck.to_bytes())

    # Inconsistent fields under a valid checksum.
    blob = c.to_bytes()
    p = _payload(blob)
    tb, mb, ndim, dim, count = struct.unpack_from("<BBHQQ", p)
    rest = p[struct.calcsize("<BBHQQ") :]
    for head in (
        struct.pack("<BBHQQ", 64, mb, ndim, dim, count),  # torus width
        struct.pack("<BBHQQ", tb, 7, ndim, dim, count),  # message bits
        struct.pack("<BBHQQ", tb, mb, ndim, dim + 1, count),  # dimension
        struct.pack("<BBHQQ", tb, mb, ndim, dim, count + 1),  # count vs shape
        struct.pack("<BBHQQ", tb, mb, 40, dim, count),  # rank
    ):
        with pytest.raises(ember.SerializationError):
            ctx.ciphertext_from_bytes(_repack(blob, head + rest))

    blob = ck.to_bytes()
    p = bytearray(_payload(blob))
    p[16] = 2  # a key bit that is not 0 or 1
    with pytest.raises(ember.SerializationError, match="0 or 1"):
        ctx.client_key_from_bytes(_repack(blob, bytes(p)))

    blob = sk.to_bytes()
    p = bytearray(_payload(blob))
    # The key is in the Fourier domain (doubles): a NaN, or a value past the limbs' range, is
    # refused, and so is a key of another transform domain (0: an earlier version's).
    assert p[16] == 1
    for bad in (float("nan"), 2.0**40):
        p[17:25] = struct.pack("<d", bad)
        with pytest.raises(ember.SerializationError, match="out of range"):
            ctx.server_key_from_bytes(_repack(blob, bytes(p)))
    p = bytearray(_payload(blob))
    p[16] = 0
    with pytest.raises(ember.SerializationError, match="transform domain"):
        ctx.server_key_from_bytes(_repack(blob, bytes(p)))
    p = bytearray(_payload(blob))
    p[0:8] = struct.pack("<Q", 2**60)  # sizes past the data
    with pytest.raises(ember.SerializationError):
        ctx.server_key_from_bytes(_repack(blob, bytes(p)))


def test_random_mutations_are_refused_or_loaded(keys, rng):
    # Seeded fuzzing of every kind: bytes flipped in the payload (resealed with a valid
    # checksum, so that the readers' own checks are what is tested), payloads cut or extended,
    # header fields changed. Each input is refused with SerializationError or loads as an
    # object of the right kind; nothing crashes or raises anything else.
    ctx, ck, sk = keys
    c = ctx.encrypt(np.array([1, 0, 1, 1]), ck)
    q = ctx.encrypt_int(np.array([1, 2]), ck, bits=2)
    kinds = [
        (c.to_bytes(), ctx.ciphertext_from_bytes, (cggi.Bits, cggi.Ints)),
        (q.to_bytes(), ctx.ciphertext_from_bytes, (cggi.Bits, cggi.Ints)),
        (ck.to_bytes(), ctx.client_key_from_bytes, cggi.ClientKey),
        (sk.to_bytes(), ctx.server_key_from_bytes, cggi.ServerKey),
    ]
    for blob, load, cls in kinds:
        payload = _payload(blob)
        refused = 0
        for t in range(150):
            p = bytearray(payload)
            kind = t % 3
            if kind == 0:  # flip bytes, most of them in the leading fields
                for _ in range(int(rng.integers(1, 4))):
                    at = int(rng.integers(0, min(len(p), 64) if rng.random() < 0.7 else len(p)))
                    p[at] ^= int(rng.integers(1, 256))
            elif kind == 1:  # cut or extend
                cut = int(rng.integers(0, len(p)))
                p = p[:cut] if rng.random() < 0.5 else p + bytes(int(rng.integers(1, 16)))
            else:  # a header field of the framing
                body = bytearray(_repack(blob, bytes(p)))
                at = int(rng.integers(4, ser._HEADER.size))
                body[at] ^= int(rng.integers(1, 256))
                body = bytes(body[: -ser._DIGEST])
                try:
                    load(body + ser._digest(body))
                except ember.SerializationError:
                    refused += 1
                continue
            try:
                obj = load(_repack(blob, bytes(p)))
                assert isinstance(obj, cls)
            except ember.SerializationError:
                refused += 1
        assert refused > 0
