"""numpy references for BFV/BGV tests: centered residues, row rotations, negacyclic products."""

from __future__ import annotations

import numpy as np


def centered(v, t):
    """Values modulo t, centered in (-t/2, t/2], as int64."""
    v = np.asarray(v, dtype=object) % t
    return np.array([int(x) - t if x > t // 2 else int(x) for x in v], dtype=np.int64)


def rot_rows(a, k):
    """Both rows of the 2 x N/2 slot matrix rotated left by k."""
    h = a.size // 2
    return np.concatenate([np.roll(a[:h], -k), np.roll(a[h:], -k)])


def swap(a):
    """The two rows exchanged."""
    h = a.size // 2
    return np.concatenate([a[h:], a[:h]])


def negacyclic(a, b, t):
    """a * b in Z_t[X]/(X^N + 1), centered."""
    n = len(a)
    full = np.convolve(np.array(a, dtype=object), np.array(b, dtype=object))
    res = full[:n].copy()
    res[: n - 1] -= full[n:]
    return centered(res, t)
