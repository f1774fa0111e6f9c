"""Polynomial evaluation on CKKS ciphertexts (Chebyshev or power basis).

All basis polynomials T_0..T_d are built by products of two lower-index ones (T_2k = 2 T_k^2 - 1,
T_2k+1 = 2 T_k T_k+1 - T_1, and likewise x^k), so T_k sits at depth ceil(log2 k); the linear
combination adds one level for the coefficients: depth ceil(log2 d) + 1, d - 1 ciphertext
products. A baby-step giant-step evaluation (fewer products for large d) is a planned
improvement; it does not change the depth.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterError


def _basis(ctx, y, d: int, chebyshev: bool) -> list:
    t = [None, y]
    for k in range(2, d + 1):
        lo, hi = k // 2, k - k // 2
        prod = ctx.multiply(t[lo], t[hi])
        if chebyshev:
            prod = ctx.multiply(prod, 2)  # integer: no level
            prod = ctx.add(prod, -1.0) if lo == hi else ctx.sub(prod, t[hi - lo])
        t.append(prod)
    return t


def evaluate(ctx, x, coeffs: list[float], basis: str, interval: tuple[float, float]):
    if basis not in ("chebyshev", "power"):
        raise ParameterError(f"basis must be 'chebyshev' or 'power', got '{basis}'")
    coeffs = [float(c) for c in coeffs]
    while len(coeffs) > 1 and coeffs[-1] == 0.0:
        coeffs.pop()
    d = len(coeffs) - 1
    if d < 1:
        return ctx.add(ctx.multiply(x, 0), coeffs[0])
    lo, hi = float(interval[0]), float(interval[1])
    if not hi > lo:
        raise ParameterError("interval must be (lo, hi) with hi > lo")
    y = x
    if basis == "chebyshev" and (lo, hi) != (-1.0, 1.0):
        y = ctx.add(ctx.multiply(x, 2.0 / (hi - lo)), -(hi + lo) / (hi - lo))
    t = _basis(ctx, y, d, basis == "chebyshev")
    acc = None
    for k in range(1, d + 1):
        if coeffs[k] == 0.0:
            continue
        term = ctx.multiply(t[k], coeffs[k])
        acc = term if acc is None else ctx.add(acc, term)
    if acc is None:
        return ctx.add(ctx.multiply(x, 0), coeffs[0])
    return ctx.add(acc, coeffs[0]) if coeffs[0] else acc


def chebyshev_coefficients(f, degree: int, interval=(-1.0, 1.0)) -> np.ndarray:
    """Chebyshev interpolation coefficients of f on `interval` (for poly_eval)."""
    lo, hi = interval
    k = np.arange(degree + 1)
    nodes = np.cos(np.pi * (k + 0.5) / (degree + 1))
    values = f(0.5 * (hi - lo) * nodes + 0.5 * (hi + lo))
    c = np.array(
        [
            2.0 / (degree + 1) * np.sum(values * np.cos(np.pi * j * (k + 0.5) / (degree + 1)))
            for j in range(degree + 1)
        ]
    )
    c[0] /= 2
    return c
