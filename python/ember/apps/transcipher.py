"""Transciphering with AES-128: the client sends its data encrypted with AES (compact: 16 bytes a
block) and its AES round keys encrypted with CGGI (once); the server runs the AES decryption
circuit on the encrypted keys and each public ciphertext block and obtains CGGI encryptions of
the data, without ever seeing the data or the key."""

from __future__ import annotations

import time

import numpy as np

from . import ciphers


def _bits(data: bytes) -> np.ndarray:
    """Bytes as bits in the circuit's order: each byte LSB first, bytes in order."""
    return np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little").astype(bool)


def _bytes(bits) -> bytes:
    return np.packbits(np.asarray(bits, dtype=np.uint8), bitorder="little").tobytes()


def client_encrypt(ctx, ck, key: bytes, data: bytes) -> tuple:
    """(AES-128-ECB ciphertext blocks, CGGI-encrypted round keys). Data is zero-padded to
    whole blocks."""
    rk = ciphers.aes128_expand_key(key)
    data = data + bytes(-len(data) % 16)
    blocks = [ciphers.aes128_encrypt_block(rk, data[i : i + 16]) for i in range(0, len(data), 16)]
    return blocks, ctx.encrypt(_bits(rk), ck)


def server_transcipher(ctx, sk, circ, blocks: list, enc_rk, devices=None, progress=False):
    """CGGI encryptions (Bits of 128, one per block) of the AES plaintext blocks. The public
    ciphertext blocks enter as trivial (noiseless, keyless) ciphertexts; all blocks run as one
    circuit (circ.replicate, the round keys shared), so a step bootstraps every block's gates
    together."""
    if not blocks:
        return []
    wide = circ if len(blocks) == 1 else circ.replicate(len(blocks), shared=("rk",))
    data = ctx.constant(np.concatenate([_bits(b) for b in blocks]))
    out = wide.run(ctx, sk, {"rk": enc_rk, "in": data}, devices=devices, progress=progress)["out"]
    return [out[128 * i : 128 * (i + 1)] for i in range(len(blocks))]


def client_decrypt(ctx, ck, outs: list) -> bytes:
    return b"".join(_bytes(ctx.decrypt(o, ck)) for o in outs)


def run_transcipher(
    ctx, ck, sk, circ, key: bytes, data: bytes, devices=None, progress=False
) -> dict:
    """The whole exchange; a JSON-ready report whose "ok" says the server's CGGI ciphertexts
    decrypt to the data."""
    t0 = time.perf_counter()
    blocks, enc_rk = client_encrypt(ctx, ck, key, data)
    t1 = time.perf_counter()
    outs = server_transcipher(ctx, sk, circ, blocks, enc_rk, devices, progress)
    t2 = time.perf_counter()
    got = client_decrypt(ctx, ck, outs)
    t3 = time.perf_counter()
    padded = data + bytes(-len(data) % 16)
    return {
        "blocks": len(blocks),
        "ok": got == padded,
        "seconds": {
            "client_encrypt": round(t1 - t0, 3),
            "server": round(t2 - t1, 3),
            "server_per_block": round((t2 - t1) / max(len(blocks), 1), 3),
            "client_decrypt": round(t3 - t2, 3),
        },
    }


__all__ = ["client_decrypt", "client_encrypt", "run_transcipher", "server_transcipher"]
