"""Plain-Python AES-128 (FIPS-197), Simon 128/128 and Speck 128/128: the client's side of the
cipher applications (key expansion, encryption) and an independent reference for their circuits.
Slow and not constant-time: never use it to protect data."""

from __future__ import annotations

_M64 = (1 << 64) - 1


def _xtime(a: int) -> int:
    return ((a << 1) ^ 0x1B) & 0xFF if a & 0x80 else a << 1


def _gmul(a: int, b: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        a, b = _xtime(a), b >> 1
    return r


def _make_sbox() -> tuple:
    """The S-box from its definition (inverse in GF(2^8), then the affine map), not a copied
    table, so that the circuit's copied table is checked against something independent."""
    inv = [0] * 256
    for a in range(1, 256):
        inv[a] = next(b for b in range(1, 256) if _gmul(a, b) == 1)
    sbox = []
    for a in range(256):
        x = s = inv[a]
        for i in range(1, 5):
            s ^= ((x << i) | (x >> (8 - i))) & 0xFF
        sbox.append(s ^ 0x63)
    inv_sbox = [0] * 256
    for i, s in enumerate(sbox):
        inv_sbox[s] = i
    return tuple(sbox), tuple(inv_sbox)


SBOX, INV_SBOX = _make_sbox()


def aes128_expand_key(key: bytes) -> bytes:
    """The 11 round keys (176 bytes) of a 16-byte AES-128 key."""
    if len(key) != 16:
        raise ValueError(f"an AES-128 key has 16 bytes, got {len(key)}")
    w = [list(key[4 * i : 4 * i + 4]) for i in range(4)]
    rcon = 1
    for i in range(4, 44):
        t = list(w[i - 1])
        if i % 4 == 0:
            t = [SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = _xtime(rcon)
        w.append([a ^ b for a, b in zip(w[i - 4], t)])
    return bytes(b for word in w for b in word)


def _mix(col: list, m: tuple) -> list:
    return [
        _gmul(col[0], m[(0 - r) % 4])
        ^ _gmul(col[1], m[(1 - r) % 4])
        ^ _gmul(col[2], m[(2 - r) % 4])
        ^ _gmul(col[3], m[(3 - r) % 4])
        for r in range(4)
    ]


def aes128_encrypt_block(round_keys: bytes, block: bytes) -> bytes:
    s = [b ^ k for b, k in zip(block, round_keys[:16])]
    for rnd in range(1, 11):
        s = [SBOX[s[r + 4 * ((c + r) % 4)]] for c in range(4) for r in range(4)]
        if rnd < 10:
            s = [b for c in range(4) for b in _mix(s[4 * c : 4 * c + 4], (2, 3, 1, 1))]
        s = [b ^ k for b, k in zip(s, round_keys[16 * rnd : 16 * rnd + 16])]
    return bytes(s)


def aes128_decrypt_block(round_keys: bytes, block: bytes) -> bytes:
    s = [b ^ k for b, k in zip(block, round_keys[160:])]
    for rnd in range(9, -1, -1):
        s = [INV_SBOX[s[r + 4 * ((c - r) % 4)]] for c in range(4) for r in range(4)]
        s = [b ^ k for b, k in zip(s, round_keys[16 * rnd : 16 * rnd + 16])]
        if rnd > 0:
            s = [b for c in range(4) for b in _mix(s[4 * c : 4 * c + 4], (14, 11, 13, 9))]
    return bytes(s)


def _rol(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _ror(x: int, r: int) -> int:
    return ((x >> r) | (x << (64 - r))) & _M64


# Simon's constant sequence z2 (Simon 128/128 uses it with m = 2 key words).
_Z2 = "10101111011100000011010010011000101000010001111110010110110011"


def simon128_expand_key(k1: int, k0: int) -> list:
    """The 68 round keys of the key (k1, k0) (the paper writes k1 first)."""
    k = [k0, k1]
    c = _M64 ^ 3
    for i in range(66):
        t = _ror(k[i + 1], 3)
        t ^= _ror(t, 1)
        k.append(c ^ int(_Z2[i % 62]) ^ k[i] ^ t)
    return k


def simon128_encrypt(round_keys: list, x: int, y: int) -> tuple:
    for k in round_keys:
        x, y = y ^ (_rol(x, 1) & _rol(x, 8)) ^ _rol(x, 2) ^ k, x
    return x, y


def simon128_decrypt(round_keys: list, x: int, y: int) -> tuple:
    for k in reversed(round_keys):
        x, y = y, x ^ (_rol(y, 1) & _rol(y, 8)) ^ _rol(y, 2) ^ k
    return x, y


def speck128_expand_key(k1: int, k0: int) -> list:
    """The 32 round keys of the key (k1, k0) (the paper writes k1 first)."""
    rk, lw, k = [k0], k1, k0
    for i in range(31):
        lw = ((_ror(lw, 8) + k) & _M64) ^ i
        k = _rol(k, 3) ^ lw
        rk.append(k)
    return rk


def speck128_encrypt(round_keys: list, x: int, y: int) -> tuple:
    for k in round_keys:
        x = ((_ror(x, 8) + y) & _M64) ^ k
        y = _rol(y, 3) ^ x
    return x, y


def speck128_decrypt(round_keys: list, x: int, y: int) -> tuple:
    for k in reversed(round_keys):
        y = _ror(x ^ y, 3)
        x = _rol(((x ^ k) - y) & _M64, 8)
    return x, y


__all__ = [
    "INV_SBOX",
    "SBOX",
    "aes128_decrypt_block",
    "aes128_encrypt_block",
    "aes128_expand_key",
    "simon128_decrypt",
    "simon128_encrypt",
    "simon128_expand_key",
    "speck128_decrypt",
    "speck128_encrypt",
    "speck128_expand_key",
]
