"""Reference helpers of the CKKS tests: error bounds derived from the parameters, numpy references
and the precision check used by every test (numpy only; nothing here computes with Ember).

Error model behind ``bound_bits`` (slot errors in units of the message, scale Delta = 2^scale_bits):

* A fresh public-key encryption adds e = v e_pk + e_0 + e_1 s to the coefficients: v, s ternary
  (2N/3 nonzeros on average), e_* Gaussian with sigma = 3.2, so each coefficient has standard
  deviation about sigma * sqrt(4N/3). A slot is the evaluation of the polynomial at a 2N-th root of
  unity: a sum of N such terms, standard deviation about sigma * sqrt(4N/3) * sqrt(N/2) ~ 2.6 N, and
  the largest of N/2 slots is about 4 standard deviations: ~10 N, i.e. log2 = log_n + 3.4.
  Measured: N = 2^12, Delta = 2^40 gives max errors of 2^-24.1 .. 2^-24.4. Secret-key encryption
  is much smaller (no v e_pk, e_1 s terms); the bound is the public-key one for both.
* ``bound_bits`` allows 2^2.6 (about 6x) above that estimate: log_n + 6 - scale_bits. ``check``
  adds half a bit when the values are complex (the modulus of a complex error is up to sqrt(2)
  times the real-part estimate).
* Each multiplication level at most doubles the error of operands bounded by 1 in magnitude
  (err(xy) <= |x| err(y) + |y| err(x) + rescale rounding), so each level of depth adds one bit.
* Each key switch (rotation, conjugation; relinearization noise is divided by q_l at the rescale
  that follows) adds sum_j d_j e_j / P plus the ModDown division by P, which rounds (an unbiased
  error of the size of a rescale's, far below the fresh error; see
  test_ckks.test_key_switch_adds_only_rounding_error). The digits d_j are taken in [0, D) (D the
  largest digit modulus), not centered, so d_j = D/2 (1 + X + ... + X^(N-1)) + (a centered part):
  in the slots whose root zeta is near 1 the all-ones polynomial is worth up to
  2/|1 - zeta| ~ 2N/pi, a term of about (D/2P) (2N/pi) sigma sqrt(N) in the worst slots, i.e.
  ~ 0.1 (D/P) sqrt(N) times the fresh estimate 10 N (the centered part, ~ sqrt(N/12) sigma D/P
  per coefficient, is far smaller). The allowance per key switch is max(1, (D/P) sqrt(N) / 8),
  and k key switches multiply the allowance by (1 + k * that). ``digit_ratio`` overrides D/P
  (1 = "every digit fits under P", the rule Params' default dnum promises).
* A linear map amplifies the input error by at most its row l1 norm; polynomial evaluation of
  sum c_k T_k amplifies it by at most sum |c_k| k^2 (Markov: |T_k'| <= k^2 on [-1, 1]); power
  basis sum c_k x^k with |x| <= 1 by sum |c_k| k. ``amplification`` multiplies the allowance.
"""

from __future__ import annotations

import atexit
import json
import math
import os

import numpy as np

# Measured log2 errors and margins (bound - measured), by operation; written to
# $EMBER_CKKS_PRECISION_LOG (JSON: name -> [min error, max error, count, min margin]) at exit.
MEASURED: dict[str, list[float]] = {}
MARGINS: dict[str, float] = {}


def _dump():
    path = os.environ.get("EMBER_CKKS_PRECISION_LOG")
    if path and MEASURED:
        table = {k: [min(v), max(v), len(v), MARGINS[k]] for k, v in sorted(MEASURED.items())}
        with open(path, "w") as f:
            json.dump(table, f, indent=1)


atexit.register(_dump)


def digit_ratio(params) -> float:
    """D / P: the largest key-switching digit modulus (alpha = ceil((L + 1) / dnum) consecutive
    primes of Q) over the product of the special primes."""
    q = list(params.q_primes)
    alpha = -(-len(q) // params.dnum)
    log_d = max(sum(math.log2(x) for x in q[j : j + alpha]) for j in range(0, len(q), alpha))
    return 2.0 ** (log_d - sum(math.log2(x) for x in params.p_primes))


def key_switch_ratio(params, ratio: float | None = None) -> float:
    """Allowance of one key switch in units of the fresh-encryption estimate (module docstring)."""
    r = digit_ratio(params) if ratio is None else ratio
    return max(1.0, r * math.sqrt(params.n) / 8)


def bound_bits(
    params,
    depth: int = 0,
    keyswitches: int = 0,
    amplification: float = 1.0,
    scale_bits: float | None = None,
    digit_ratio: float | None = None,
) -> float:
    """Allowed log2 of the max slot error after `depth` multiplicative levels and `keyswitches`
    rotations/conjugations on a chain of operations whose input error is amplified at most
    `amplification` times (see the module docstring):
    -(scale_bits - log_n - 6 - depth) + log2(1 + keyswitches * key_switch_ratio)
    + log2(amplification)."""
    sb = params.scale_bits if scale_bits is None else scale_bits
    ks = keyswitches * key_switch_ratio(params, digit_ratio) if keyswitches else 0.0
    return params.log_n + 6 + depth - sb + math.log2(1 + ks) + math.log2(max(1.0, amplification))


def log2_err(got, want) -> float:
    """log2 of the largest absolute slot error (-inf when exact)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    return math.log2(err) if err > 0 else -math.inf


def precision_bits(got, want) -> tuple[float, float]:
    """Bits of precision: -log2 of the mean and of the largest absolute slot error."""
    err = np.abs(np.asarray(got) - np.asarray(want))
    return -np.log2(err.mean()), -np.log2(err.max())


def assert_precision(got, want, mean: float, worst: float | None = None, what: str = "") -> None:
    """Asserts at least `mean` bits of precision on average and, if given, `worst` in every slot."""
    mean_bits, min_bits = precision_bits(got, want)
    assert mean_bits >= mean, f"mean precision{what} {mean_bits:.1f} bits"
    if worst is not None:
        assert min_bits >= worst, f"worst slot{what} {min_bits:.1f} bits"


def check(got, want, bound: float, what: str) -> float:
    """Asserts log2 max |got - want| <= bound (+ 0.5 for complex values); records and returns the
    measured value."""
    if np.iscomplexobj(got) or np.iscomplexobj(want):
        bound += 0.5
    e = log2_err(got, want)
    name = what.split(" [")[0]
    MEASURED.setdefault(name, []).append(e)
    MARGINS[name] = min(MARGINS.get(name, math.inf), bound - e)
    assert np.all(np.isfinite(np.asarray(got))), f"{what}: non-finite values in the decryption"
    assert e <= bound, (
        f"{what}: log2 max error = {e:.2f} exceeds the bound {bound:.2f} (max |err| = {2.0**e:.3g})"
    )
    return e


def rot(v: np.ndarray, steps: int) -> np.ndarray:
    """Slot i of the result is slot i + steps of v (Ember's left rotation)."""
    return np.roll(v, -steps)


def padded(v: np.ndarray, slots: int) -> np.ndarray:
    out = np.zeros(slots, dtype=np.result_type(v, np.float64))
    out[: len(v)] = v
    return out


def tiled(v: np.ndarray, slots: int) -> np.ndarray:
    assert slots % len(v) == 0
    return np.tile(v, slots // len(v))


def chebyshev_eval(coeffs, x, interval=(-1.0, 1.0)) -> np.ndarray:
    """sum c_k T_k(y) with y the image of x under the affine map interval -> [-1, 1]."""
    lo, hi = interval
    y = (2 * np.asarray(x) - (lo + hi)) / (hi - lo)
    return np.polynomial.chebyshev.chebval(y, coeffs)


def chebyshev_amplification(coeffs) -> float:
    return float(sum(abs(c) * k * k for k, c in enumerate(coeffs)))


def power_amplification(coeffs) -> float:
    return float(sum(abs(c) * k for k, c in enumerate(coeffs)))


def poly_depth(degree: int) -> int:
    """Upper bound on the levels of ember.polyeval: ceil(log2 d) + 1 (its BSGS often uses one
    fewer; never fewer than ceil(log2(d + 1)))."""
    return math.ceil(math.log2(degree)) + 1 if degree > 1 else 1


def diagonals_l1(matrix: np.ndarray) -> float:
    """Largest row l1 norm (the error amplification of matrix @ v in max norm)."""
    return float(np.max(np.sum(np.abs(matrix), axis=1)))


def unit_circle(rng: np.random.Generator, n: int) -> np.ndarray:
    """n complex numbers of modulus 1 (products keep modulus 1)."""
    return np.exp(2j * np.pi * rng.random(n))


def uniform(rng: np.random.Generator, n: int, lo=-1.0, hi=1.0) -> np.ndarray:
    return rng.uniform(lo, hi, n)


def complex_uniform(rng: np.random.Generator, n: int) -> np.ndarray:
    """Complex values with |re|, |im| <= 1/sqrt(2) (modulus at most 1)."""
    r = 1 / math.sqrt(2)
    return rng.uniform(-r, r, n) + 1j * rng.uniform(-r, r, n)
