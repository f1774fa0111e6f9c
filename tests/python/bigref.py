"""Reference helpers of the big-integer tests: polynomials of Python integers as 64-bit words."""

from __future__ import annotations

import numpy as np


def to_words(values, bits):
    """The values mod 2^bits as rows of little-endian 64-bit words (BigPoly.from_numpy's input)."""
    w = (bits + 63) // 64
    out = np.zeros((len(values), w), dtype=np.uint64)
    for i, v in enumerate(values):
        v %= 1 << bits
        for j in range(w):
            out[i, j] = (v >> (64 * j)) & ((1 << 64) - 1)
    return out


def from_words(arr):
    """The Python integers of rows of little-endian 64-bit words."""
    return [sum(int(arr[i, j]) << (64 * j) for j in range(arr.shape[1])) for i in range(len(arr))]
