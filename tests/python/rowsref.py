"""Reference helpers of the collectives' tests: sums modulo each row's prime, row ranges."""

from __future__ import annotations

import numpy as np


def mod_sum(basis, arrays) -> np.ndarray:
    """The sum of the arrays modulo each row's prime, in Python integers."""
    total = sum(a.astype(object) for a in arrays)
    q = np.array([int(p) for p in basis.primes], dtype=object)[:, None]
    return (total % q).astype(np.uint64)


def bounds(sizes) -> list[tuple[int, int]]:
    """Contiguous (begin, end) row ranges of the given sizes."""
    out, at = [], 0
    for s in sizes:
        out.append((at, at + s))
        at += s
    return out
