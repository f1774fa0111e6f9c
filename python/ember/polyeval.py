"""Polynomial evaluation on CKKS ciphertexts: baby-step giant-step in the Chebyshev basis.

p(y) = sum_k c_k T_k(y) with y the input mapped to [-1, 1]. With m = ceil(log2(d + 1)) and
B = 2^floor(m / 2): the baby steps T_1..T_B and the giant steps T_2B, T_4B, ..., T_2^(m-1)
(each by one product: T_2k = 2 T_k^2 - 1, T_a+b = 2 T_a T_b - T_|a-b|). The polynomial is split
recursively, p = q T_n + r with n the largest giant step not above its degree (Chebyshev
division: T_n+j = 2 T_n T_j - T_n-j), down to pieces of degree <= B that are linear
combinations of the baby steps. About 2 sqrt(d) + d / B ciphertext products instead of d - 1;
depth between ceil(log2(d + 1)) and ceil(log2 d) + 1 (the coefficients' scalar products can take
an extra level), plus one for the interval map when it is not (-1, 1). The power basis is
converted to Chebyshev coefficients first (exact in real arithmetic; fine for the moderate
degrees CKKS uses).

Levels are planned top-down: every part of the split is computed at exactly the level where it
is used (the highest the recursion allows), so sums never need an alignment; leaves are single
`linear_combination` calls that read the baby steps at whatever level they sit (their scales go
into the integer constants); products read a higher operand at the lower level and their
operands' scales are planned so that every sum meets at one scale: nothing is ever aligned.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ParameterError


def _trim(c: np.ndarray) -> np.ndarray:
    nz = np.nonzero(c)[0]
    return c[: nz[-1] + 1] if nz.size else c[:1] * 0


def _chebyshev_divide(c: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(q, r) with sum c_k T_k = (sum q_j T_j) T_n + sum r_k T_k, for deg c < 2n."""
    q = np.zeros(len(c) - n)
    q[0] = c[n]
    q[1:] = 2 * c[n + 1 :]
    r = c[:n].copy()
    for j in range(1, len(c) - n):
        r[n - j] -= c[n + j]
    return q, r


def _combine(ctx, a, b):
    """Sum of two terms, each a Ciphertext, a float constant or None (zero)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, float) and isinstance(b, float):
        return a + b
    if isinstance(a, float):
        a, b = b, a
    return ctx.add(a, b)


def _real_coefficients(coeffs) -> np.ndarray:
    """The coefficients as float64, or ParameterError: a non-empty sequence of finite real
    numbers (not strings, complex numbers, NaN or infinities)."""
    c = np.asarray(coeffs) if not isinstance(coeffs, (str, bytes)) else np.asarray(None)
    if c.ndim != 1 or c.size == 0 or c.dtype.kind not in "biuf" and c.dtype != object:
        raise ParameterError(
            f"coefficients must be a non-empty list of finite real numbers, got {coeffs!r}"
        )
    try:
        c = c.astype(float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(
            f"coefficients must be a non-empty list of finite real numbers, got {coeffs!r}"
        ) from None
    if not np.all(np.isfinite(c)):
        raise ParameterError("coefficients must be finite (no NaN or infinity)")
    return c


def _interval(interval) -> tuple[float, float]:
    """(lo, hi) as floats with lo < hi, both finite (the map to [-1, 1] divides by hi - lo)."""
    try:
        lo, hi = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise ParameterError(f"interval must be (lo, hi) with hi > lo, got {interval!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ParameterError(f"interval must be (lo, hi), finite, with hi > lo; got {interval!r}")
    return lo, hi


def evaluate(ctx, x, coeffs: list[float], basis: str, interval: tuple[float, float]):
    if basis not in ("chebyshev", "power"):
        raise ParameterError(f"basis must be 'chebyshev' or 'power', got '{basis}'")
    c = _real_coefficients(coeffs)
    lo, hi = _interval(interval)
    y = x
    if basis == "power":
        c = np.polynomial.chebyshev.poly2cheb(c)
    elif (lo, hi) != (-1.0, 1.0):
        y = ctx.add(ctx.multiply(x, 2.0 / (hi - lo)), -(hi + lo) / (hi - lo))
    c = _trim(c)
    d = len(c) - 1
    if d == 0:
        return ctx.add(ctx.multiply(x, 0), float(c[0]))
    m = math.ceil(math.log2(d + 1))
    baby = min(1 << (m // 2), d) if m > 1 else 1
    t = {1: y}
    # Every T_k keeps the scale its product gave it: no alignments. Products read a higher
    # operand at the lower level (free), and each part of the split below is computed for the
    # exact level and scale where it is used.

    def power(k: int):
        """T_k from lower terms, one product: T_2a = 2 T_a^2 - 1, T_a+b = 2 T_a T_b - T_a-b."""
        a = 1 << (k.bit_length() - 1)
        if a == k:
            half = t[k // 2]
            return ctx.add(ctx.multiply(ctx.product(half, half), 2), -1.0)
        c = 2 * a - k
        if c and t[c].level >= min(t[a].level, t[k - a].level):
            # T_c is subtracted inside the product's division.
            return ctx.chebyshev_product(t[a], t[k - a], t[c])
        prod = ctx.multiply(ctx.product(t[a], t[k - a]), 2)
        if not c:
            return ctx.add(prod, -1.0)
        return ctx.sub(prod, ctx.drop_level(t[c], prod.level))

    for k in range(2, baby + 1):
        t[k] = power(k)
    n = 1 << (baby.bit_length() - 1)  # giant steps: powers of two above the baby range
    while 2 * n <= d:
        if 2 * n not in t:
            t[2 * n] = power(2 * n)
        n *= 2
    inf = 1 << 30

    def split(coef: np.ndarray):
        coef = _trim(coef)
        deg = len(coef) - 1
        if deg <= baby:
            return coef, None
        step = 1 << (deg.bit_length() - 1)
        return coef, (step, *_chebyshev_divide(coef, step))

    def natural(coef: np.ndarray) -> int:
        """The highest level the part can land at (inf for a constant)."""
        coef, div = split(coef)
        if div is None:
            ks = [k for k in range(1, len(coef)) if coef[k] != 0.0]
            return min(t[k].level for k in ks) - 1 if ks else inf
        step, q, r = div
        return min(min(natural(q), t[step].level) - 1, natural(r))

    def rec(coef: np.ndarray, level: int, scale: float):
        """The part at exactly `level` and `scale`, or a float constant, or None (zero).
        Leaves are one linear combination of the baby steps read where they are; a product
        q T_step takes q at level + 1 with the scale that makes the product land on `scale`;
        sums meet at the same level and scale."""
        coef, div = split(coef)
        if div is None:
            ks = [k for k in range(1, len(coef)) if coef[k] != 0.0]
            const = float(coef[0])
            if not ks:
                return const if const else None
            terms = [t[k] for k in ks]
            return ctx.linear_combination(terms, [float(coef[k]) for k in ks], const, level, scale)
        step, q, r = div
        ts = t[step]
        qv = rec(q, level + 1, scale * ctx.prime(level + 1) / ts.scale)
        prod = None
        if isinstance(qv, float):
            prod = ctx.linear_combination([ts], [qv], 0.0, level, scale)
        elif qv is not None:
            prod = ctx.product(qv, ts)
        return _combine(ctx, prod, rec(r, level, scale))

    target = natural(c)
    out = rec(c, target, ctx.scale_at(target)) if target != inf else float(c[0])
    if out is None or isinstance(out, float):
        return ctx.add(ctx.multiply(x, 0), float(out or 0.0))
    return out


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
