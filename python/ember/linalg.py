"""Plaintext matrix times encrypted vector: the diagonal method with baby-step giant-step.

y = sum_j rot(sum_i rot(diag_{j n1 + i}, -j n1) * rot(x, i), j n1), with diag_k[s] =
M[s, (s + k) mod n]. The n1 baby-step rotations of x share one decomposition (hoisted); the
n2 = n / n1 giant steps rotate partial sums. Products are accumulated unrescaled and rescaled
once per giant step. Needs rotation keys for 1..n1-1 and the multiples of n1 (or their
power-of-two decompositions). Zero diagonals are skipped.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ParameterError


def matvec(ctx, matrix: np.ndarray, x):
    n = ctx.slots
    if matrix.shape != (n, n):
        raise ParameterError(f"matrix must be {n} x {n} (slots x slots), got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ParameterError("matrix entries must be finite (no NaN or infinity)")
    if x.level == 0:
        raise ParameterError("matvec needs one level; the ciphertext is at level 0")
    rows = np.arange(n)
    diags = [matrix[rows, (rows + k) % n] for k in range(n)]
    n1 = 1 << max(0, math.ceil(math.log2(math.isqrt(n) or 1)))
    n1 = min(n1, n)
    n2 = n // n1
    baby = ctx.rotate_many(x, list(range(n1)))
    level = x.level
    pt_scale = ctx.scale_at(level - 1) * ctx.prime(level) / x.scale
    raw = ctx._raw
    out = None
    for j in range(n2):
        cts, pts = [], []
        for i in range(n1):
            d = diags[j * n1 + i]
            if np.any(d):
                cts.append(baby[i]._raw)
                pts.append(ctx.encode(np.roll(d, j * n1), level, pt_scale)._poly)
        if not cts:
            continue
        inner = raw.dot_plain(cts, pts)  # one pass over the giant step's products
        inner.scale = x.scale * pt_scale
        part = ctx._wrap(raw.rescale(inner), x)
        part = ctx.rotate(part, j * n1) if j else part
        out = part if out is None else ctx.add(out, part)
    if out is None:
        return ctx.multiply(x, 0)
    out.is_complex = x.is_complex or bool(np.iscomplexobj(matrix) and np.any(matrix.imag))
    return out
