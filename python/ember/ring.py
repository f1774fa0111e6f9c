"""RNS polynomial arithmetic: rings, bases, polynomials, base conversion, CRT, sampling.

Everything a scheme needs below the ciphertext level. Polynomials live on one device ("cpu" or
"cuda[:i]") as dense ``limbs x N`` arrays of 64-bit residues, in ``coeff`` or ``eval`` (NTT) form;
the CPU and CUDA backends compute the same words bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _ember, resolve_device
from .errors import ParameterError

RingContext = _ember.RingContext
RnsBasis = _ember.RnsBasis
RnsPoly = _ember.RnsPoly
RnsPoly32 = _ember.RnsPoly32
BaseConverter = _ember.BaseConverter
BaseExtender = _ember.BaseExtender
CrtConverter = _ember.CrtConverter
DivideRound = _ember.DivideRound
Sampler = _ember.Sampler

is_prime = _ember.is_prime
is_ntt_friendly = _ember.is_ntt_friendly
generate_ntt_primes = _ember.generate_ntt_primes
primitive_root_2n = _ember.primitive_root_2n
chacha20_block = _ember.chacha20_block

__all__ = [
    "BaseConverter",
    "BaseExtender",
    "CrtConverter",
    "DivideRound",
    "RingContext",
    "RnsBasis",
    "RnsPoly",
    "RnsPoly32",
    "Sampler",
    "chacha20_block",
    "from_rns",
    "generate_ntt_primes",
    "is_ntt_friendly",
    "is_prime",
    "make_ring",
    "poly",
    "primitive_root_2n",
    "to_rns",
]


def make_ring(n: int, primes: Sequence[int] | None = None, *, bits: int = 50, count: int = 1):
    """A ring of degree ``n`` over ``primes`` (or ``count`` generated ``bits``-bit primes) and the
    basis of all its primes."""
    if primes is None:
        primes = generate_ntt_primes(bits, n, count)
    ctx = RingContext.create(n, [int(p) for p in primes])
    return ctx, RnsBasis.all(ctx)


def poly(basis, array, form: str = "coeff", device: str | None = None) -> RnsPoly:
    """A polynomial from a ``(limbs, N)`` array of residues (any integer dtype, values reduced)."""
    a = np.asarray(array)
    if a.ndim != 2:
        raise ParameterError(f"expected a (limbs, N) array, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ParameterError(f"expected integer residues, got dtype {a.dtype}")
    if (a < 0).any():
        raise ParameterError("residues must be non-negative; reduce them into [0, q) first")
    return RnsPoly.from_numpy(
        basis, np.ascontiguousarray(a, dtype=np.uint64), form, resolve_device(device)
    )


def _modulus(basis) -> int:
    q = 1
    for p in basis.primes:
        q *= int(p)
    return q


def to_rns(values: Sequence[int], basis, device: str | None = None) -> RnsPoly:
    """Exact CRT: N Python integers (any sign, any size) -> RNS polynomial in coeff form."""
    if len(values) != basis.n:
        raise ParameterError(f"expected {basis.n} values, got {len(values)}")
    q = _modulus(basis)
    reduced = [int(v) % q for v in values]
    words = max(1, (max(reduced).bit_length() + 63) // 64)
    raw = b"".join(v.to_bytes(8 * words, "little") for v in reduced)
    arr = np.frombuffer(raw, dtype="<u8").reshape(basis.n, words)
    return CrtConverter(basis).to_rns(
        np.ascontiguousarray(arr, dtype=np.uint64), resolve_device(device)
    )


def from_rns(p: RnsPoly, centered: bool = True) -> list[int]:
    """Exact ICRT (Garner): RNS polynomial in coeff form -> N Python integers, in (-Q/2, Q/2] when
    ``centered`` else [0, Q)."""
    words = CrtConverter(p.basis).from_rns(p)
    q = _modulus(p.basis)
    raw = np.ascontiguousarray(words, dtype="<u8").tobytes()
    w = words.shape[1] * 8
    out = [int.from_bytes(raw[i * w : (i + 1) * w], "little") for i in range(words.shape[0])]
    if centered:
        half = q // 2
        out = [v - q if v > half else v for v in out]
    return out
