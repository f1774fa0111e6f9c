"""Independent reference implementations for the ring-layer tests (Python integers and numpy only).

Nothing here calls Ember: every expected value in the suite comes from these functions or from
plain Python arithmetic. (Kept in a uniquely named module rather than in conftest.py so that test
modules can import it even when several conftest.py files are loaded in one pytest session.)
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from functools import lru_cache, reduce

import numpy as np

# ---------------------------------------------------------------------------------------------
# Random residues (numpy Generator with fixed seeds)


def make_rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_residues(rng: np.random.Generator, primes: Sequence[int], n: int) -> np.ndarray:
    """A (limbs, n) uint64 array, row l uniform in [0, primes[l])."""
    out = np.empty((len(primes), n), dtype=np.uint64)
    for l, q in enumerate(primes):
        out[l] = rng.integers(0, int(q), size=n, dtype=np.uint64)
    return out


def random_signed(rng: np.random.Generator, n: int, bound: int) -> np.ndarray:
    """n int64 values uniform in [-bound, bound]."""
    return rng.integers(-bound, bound + 1, size=n, dtype=np.int64)


def distinct_primes(bits: Sequence[int], n: int) -> list[int]:
    """One NTT-friendly prime per entry of `bits` (sizes may repeat), all distinct, found by an
    independent search (Miller-Rabin in Python): the largest primes q = 1 mod 2n below 2^b."""
    out: list[int] = []
    for b in bits:
        q = ((1 << b) - 1) // (2 * n) * (2 * n) + 1
        while q >= (1 << b) or q in out or not is_probable_prime(q):
            q -= 2 * n
            assert q > (1 << (b - 1)), f"no {b}-bit prime for n={n}"
        out.append(q)
    return out


def is_probable_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.3e24 (bases 2..41)."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for p in small:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Negacyclic polynomial multiplication in Z_q[X]/(X^N + 1)


def schoolbook_negacyclic(a: Sequence[int], b: Sequence[int], q: int) -> list[int]:
    """Plain O(N^2) Python-int schoolbook product mod (X^N + 1, q)."""
    n = len(a)
    a = [int(x) for x in a]
    b = [int(x) for x in b]
    c = [0] * n
    for i in range(n):
        ai = a[i]
        if ai == 0:
            continue
        for j in range(n):
            k = i + j
            if k < n:
                c[k] += ai * b[j]
            else:
                c[k - n] -= ai * b[j]
    return [x % q for x in c]


_CHUNK = 21  # 3 chunks cover 63 bits; chunk products < 2^42, N <= 2^14 sums stay below 2^63.


def _chunks(values: Sequence[int]) -> list[np.ndarray]:
    v = np.asarray([int(x) for x in values], dtype=object)
    mask = (1 << _CHUNK) - 1
    return [
        np.array([(int(x) >> (_CHUNK * i)) & mask for x in v], dtype=np.int64) for i in range(3)
    ]


def negacyclic_mul(a: Sequence[int], b: Sequence[int], q: int) -> list[int]:
    """Exact negacyclic product mod q for values below 2^63 and N <= 2^14: the integer
    convolution is computed exactly with numpy int64 convolutions of 21-bit chunks, then
    recombined and folded with Python integers. Independent of any NTT."""
    n = len(a)
    assert len(b) == n and n <= 1 << 14
    ca, cb = _chunks(a), _chunks(b)
    partial = [np.zeros(2 * n - 1, dtype=np.int64) for _ in range(5)]
    for i in range(3):
        for j in range(3):
            partial[i + j] += np.convolve(ca[i], cb[j])
    full = np.zeros(2 * n - 1, dtype=object)
    for s in range(5):
        full = full + partial[s].astype(object) * (1 << (_CHUNK * s))
    full = list(full) + [0]
    return [int(full[k] - full[k + n]) % q for k in range(n)]


def negacyclic_mul_rns(a: np.ndarray, b: np.ndarray, primes: Sequence[int]) -> np.ndarray:
    """Row-wise negacyclic_mul of two (limbs, N) arrays."""
    out = np.empty(a.shape, dtype=np.uint64)
    for l, q in enumerate(primes):
        out[l] = np.array(negacyclic_mul(a[l], b[l], int(q)), dtype=np.uint64)
    return out


# ---------------------------------------------------------------------------------------------
# NTT evaluation points, automorphisms


def bitrev(x: int, bits: int) -> int:
    r = 0
    for i in range(bits):
        if (x >> i) & 1:
            r |= 1 << (bits - 1 - i)
    return r


def poly_eval(coeffs: Sequence[int], x: int, q: int) -> int:
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * x + int(c)) % q
    return acc


def automorphism_coeff(a: Sequence[int], k: int, q: int) -> list[int]:
    """a(X) -> a(X^k) mod (X^N + 1): coefficient i goes to i*k mod 2N, negated past N."""
    n = len(a)
    out = [0] * n
    for i, c in enumerate(a):
        e = (i * k) % (2 * n)
        if e < n:
            out[e] = int(c) % q
        else:
            out[e - n] = (-int(c)) % q
    return out


# ---------------------------------------------------------------------------------------------
# CRT with Python integers


def product(values: Sequence[int]) -> int:
    return reduce(lambda x, y: x * int(y), values, 1)


class Crt:
    """CRT reconstruction over `primes` with Python integers (textbook formula)."""

    def __init__(self, primes: Sequence[int]):
        self.primes = [int(p) for p in primes]
        self.modulus = product(self.primes)
        self.coef = []
        for p in self.primes:
            m = self.modulus // p
            self.coef.append(m * pow(m, -1, p) % self.modulus)

    def value(self, residues: Sequence[int]) -> int:
        return sum(int(r) * c for r, c in zip(residues, self.coef)) % self.modulus

    def values(self, arr: np.ndarray) -> list[int]:
        """Column-wise reconstruction of a (limbs, N) residue array -> N ints in [0, Q)."""
        cols = arr.astype(object)
        acc = np.zeros(arr.shape[1], dtype=object)
        for l, c in enumerate(self.coef):
            acc = acc + cols[l] * c
        return [int(v) % self.modulus for v in acc]

    def residues(self, values: Sequence[int]) -> np.ndarray:
        """N ints -> (limbs, N) uint64 residues (Python %)."""
        return np.array([[int(v) % p for v in values] for p in self.primes], dtype=np.uint64)


def centered(x: int, m: int) -> int:
    """Representative of x mod m in (-m/2, m/2]."""
    x %= m
    return x - m if x > m // 2 else x


# ---------------------------------------------------------------------------------------------
# ChaCha20 (pure Python, from the specification)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


def _quarter(s: list[int], a: int, b: int, c: int, d: int) -> None:
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF
    s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF
    s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF
    s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF
    s[b] = _rotl(s[b] ^ s[c], 7)


def chacha20_block(key: bytes, counter: int, nonce: int) -> bytes:
    """64-byte ChaCha20 block, Bernstein layout (64-bit counter, 64-bit nonce)."""
    k = struct.unpack("<8I", key)
    state = [
        0x61707865,
        0x3320646E,
        0x79622D32,
        0x6B206574,
        *k,
        counter & 0xFFFFFFFF,
        (counter >> 32) & 0xFFFFFFFF,
        nonce & 0xFFFFFFFF,
        (nonce >> 32) & 0xFFFFFFFF,
    ]
    x = list(state)
    for _ in range(10):
        _quarter(x, 0, 4, 8, 12)
        _quarter(x, 1, 5, 9, 13)
        _quarter(x, 2, 6, 10, 14)
        _quarter(x, 3, 7, 11, 15)
        _quarter(x, 0, 5, 10, 15)
        _quarter(x, 1, 6, 11, 12)
        _quarter(x, 2, 7, 8, 13)
        _quarter(x, 3, 4, 9, 14)
    return struct.pack("<16I", *[(a + b) & 0xFFFFFFFF for a, b in zip(x, state)])


def chacha20_words(key: bytes, counter: int, nonce: int) -> list[int]:
    """The 8 little-endian 64-bit words of one block."""
    return list(struct.unpack("<8Q", chacha20_block(key, counter, nonce)))


@lru_cache(maxsize=8192)
def _cached_words(key: bytes, counter: int, nonce: int) -> tuple:
    return tuple(chacha20_words(key, counter, nonce))


def stream_word(key: bytes, nonce: int, w: int) -> int:
    """Word w of stream (key, nonce): word w % 8 of block w // 8."""
    return _cached_words(key, w // 8, nonce)[w % 8]


# ---------------------------------------------------------------------------------------------
# Discrete Gaussian


def discrete_gaussian_pmf(sigma: float, bound: int) -> dict[int, float]:
    """P(X = k) for k in [-bound, bound], rho(k) = exp(-k^2 / (2 sigma^2)), normalized."""
    w = {k: math.exp(-k * k / (2 * sigma * sigma)) for k in range(-bound, bound + 1)}
    s = sum(w.values())
    return {k: v / s for k, v in w.items()}
