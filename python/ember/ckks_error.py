"""CKKS error tracking without the secret key: ``ct.error_bound`` and ``ct.value_bound``.

Every CKKS ciphertext made by encryption, +, -, *, rotations, conjugation and rescaling carries
two floats: ``value_bound``, a bound on the magnitude of its values (from the encrypted values,
the plaintexts and the constants it met), and ``error_bound``, a bound on the magnitude of the
error of every slot in value units (|decrypted - exact| per slot). ``ctx.precision_bits(ct)`` is
-log2 of it.

The bound is heuristic, in the standard central-limit ("average-case") model of CKKS noise
(Costache-Curtis-Hales-Murphy-Ogilchrist-Player, "On the precision loss in approximate
homomorphic encryption", 2022): each fresh error source (encryption errors, the rounding of
encoding, rescaling and key switching's ModDown, the key-switching error over P) is treated as
independent per coefficient with the variance its distribution has; a source whose
coefficients have variance V gives a slot error of standard deviation sqrt(N V), and it is
bounded by K_SIGMA = 6 of those standard deviations. For a complex Gaussian the probability of
exceeding 6 sigma is exp(-36) < 2^-51 per slot and source. Bounds of operands combine worst
case (|x e_y| + |y e_x| + |e_x e_y| for a product, the sum for an addition), so the bound grows
looser than the true error through long circuits (tests/python/test_ckks_error_bound.py measures
it). Operations outside this list (bootstrapping, poly_eval, matvec, linear_combination,
product) give ``error_bound = None``: no estimate.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .arrays import as_array, cuda_index, magnitude_on_device

K_SIGMA = 6.0
ERROR_SIGMA = 3.2  # the samplers' Gaussian (include/ember/ring/sampler.h)
KEY_SWITCH_MARGIN_BITS = 3


def _secret_variance(ctx) -> float:
    h = ctx.params.hamming_weight
    return h / ctx.params.n if h else 2.0 / 3.0


def _slot_bound(ctx, coeff_variance: float) -> float:
    """K_SIGMA standard deviations of the slot error of iid coefficients of this variance."""
    return K_SIGMA * math.sqrt(ctx.params.n * coeff_variance)


def fresh_error(ctx, scale: float, public: bool) -> float:
    """Encryption (e0 + v e + e1 s with a public key, e with the secret key) plus encoding's
    rounding, over the scale."""
    n, s2 = ctx.params.n, ERROR_SIGMA**2
    var = s2 * (1 + n * (2.0 / 3.0) + n * _secret_variance(ctx)) if public else s2
    return (_slot_bound(ctx, var) + rounding_error(ctx)) / scale


def rounding_error(ctx) -> float:
    """A rescale's (or ModDown's) rounding t0 + t1 s, t uniform in [-1/2, 1/2] (encoding's
    rounding is smaller: t0 alone), in units of the scale after it."""
    return _slot_bound(ctx, (1 + ctx.params.n * _secret_variance(ctx)) / 12)


def key_switch_error(ctx) -> float:
    """One key switch: sum_j d_j e_j / P (digits d_j below Q_j, of variance up to Q_j^2 / 3)
    plus ModDown's rounding, in coefficient units (divide by the scale for value units)."""
    key = "_key_switch_error"
    cached = ctx.__dict__.get(key)
    if cached is None:
        p = ctx.params
        alpha = math.ceil(len(p.q_primes) / p.dnum)
        digits = [p.q_primes[i : i + alpha] for i in range(0, len(p.q_primes), alpha)]
        log_ratio = max(sum(math.log2(q) for q in d) for d in digits) - sum(
            math.log2(q) for q in p.p_primes
        )
        # KEY_SWITCH_MARGIN: measured on N13_L3 (48-bit digits under a 49-bit P), the key
        # switch's error is about 4 times the model's standard deviation; the model is kept
        # with that margin (and 2x more) rather than tuned to one set.
        log_ratio += KEY_SWITCH_MARGIN_BITS
        var = p.dnum * p.n * (2.0 ** (2 * log_ratio) / 3) * ERROR_SIGMA**2
        cached = _slot_bound(ctx, var) + rounding_error(ctx)
        ctx.__dict__[key] = cached
    return cached


def _magnitude(values) -> float:
    from ._ops import CiphertextOps
    from .ckks import Plaintext, _is_scalar

    if isinstance(values, CiphertextOps):
        return values.value_bound
    if isinstance(values, Plaintext):
        cached = values.__dict__.get("_magnitude")
        if cached is None:  # once per plaintext: linear transforms reuse theirs
            cached = values._magnitude = _magnitude(values.values)
        return cached
    if _is_scalar(values):
        return abs(complex(values))
    if cuda_index(values) is not None:  # a GPU array: its library reduces it there
        return magnitude_on_device(values)
    v = as_array(values)
    return float(np.max(np.abs(v))) if v.size else 0.0


def _bounds(ct):
    return getattr(ct, "error_bound", None), getattr(ct, "value_bound", None)


def _set(out, error, value):
    if error is None or value is None or not (math.isfinite(error) and math.isfinite(value)):
        out.error_bound = out.value_bound = None
    else:
        out.error_bound, out.value_bound = float(error), float(value)
    return out


def _level_change(ctx, out, *operands) -> float:
    """The rounding of rescales and level matching between the operands and the result."""
    moved = any(op.level != out.level or not ctx._scale_ok(op.scale, out.scale) for op in operands)
    return rounding_error(ctx) / out.scale if moved else 0.0


def track(rule):
    """Decorates a Context operation: after it, the result's bounds follow `rule`."""

    def wrap(op):
        @functools.wraps(op)
        def tracked(ctx, a, *args, **kwargs):
            out = op(ctx, a, *args, **kwargs)
            # The second operand (or rotation steps), however it was passed.
            other = args[0] if args else next(iter(kwargs.values()), None)
            return rule(ctx, out, a, other)

        return tracked

    return wrap


def add_rule(ctx, out, a, b):
    from ._ops import CiphertextOps

    ea, ma = _bounds(a)
    if ea is None:  # no estimate (and no cost: bootstrapping's inner operations land here)
        return _set(out, None, None)
    if isinstance(b, CiphertextOps):
        eb, mb = _bounds(b)
        if eb is None:
            return _set(out, None, None)
        return _set(out, ea + eb + _level_change(ctx, out, a, b), ma + mb)
    encode = (rounding_error(ctx) if not _is_number(b) else 1.0) / out.scale
    return _set(out, ea + encode, ma + _magnitude(b))


def _is_number(b) -> bool:
    from .ckks import _is_scalar

    return _is_scalar(b)


def negate_rule(ctx, out, a, _):
    return _set(out, *_bounds(a))


def multiply_rule(ctx, out, a, b):
    from ._ops import CiphertextOps

    ea, ma = _bounds(a)
    if ea is None:
        return _set(out, None, None)
    if isinstance(b, CiphertextOps):
        eb, mb = _bounds(b)
        if eb is None:
            return _set(out, None, None)
        # Relinearization's key switch is divided by P q_l when the product is rescaled (its
        # ModDown is the rescale), by P alone in manual mode (no rescale).
        rescaled = out.level < min(a.level, b.level)
        divisor = ctx.prime(out.level + 1) if rescaled else 1
        relin = key_switch_error(ctx) / (out.scale * divisor)
        error = ma * eb + mb * ea + ea * eb + relin
        return _set(out, error + _level_change(ctx, out, a, b), ma * mb)
    mb = _magnitude(b)
    # The constant or plaintext is rounded at a scale of about the result's (or, for an
    # integer, exact); the product is then rescaled.
    encode = 0.0 if _is_integer(b) else rounding_error(ctx) / out.scale
    error = mb * ea + ma * encode + _level_change(ctx, out, a)
    return _set(out, error, ma * mb)


def _is_integer(b) -> bool:
    if not _is_number(b) or np.iscomplexobj(b):
        return False
    return float(b).is_integer() and abs(b) < 2**62


def rescale_rule(ctx, out, a, _):
    ea, ma = _bounds(a)
    return _set(out, None if ea is None else ea + rounding_error(ctx) / out.scale, ma)


def galois_rule(switches):
    """Rotations and conjugation: `switches(ctx, steps)` key switches, each adding its error."""

    def rule(ctx, out, a, steps):
        ea, ma = _bounds(a)
        if ea is None:
            return _set(out, None, None)
        return _set(out, ea + switches(ctx, steps) * key_switch_error(ctx) / out.scale, ma)

    return rule


def rotation_switches(ctx, steps) -> int:
    return len(ctx._rotation_plan(int(steps))) if int(steps) % ctx.slots else 0


def track_many(op):
    """rotate_many: every result as a rotation of its step (one key switch each)."""

    @functools.wraps(op)
    def tracked(ctx, a, steps):
        outs = op(ctx, a, steps)
        ea, ma = _bounds(a)
        for out, s in zip(outs, steps):
            count = 1 if int(s) % ctx.slots else 0
            _set(out, None if ea is None else ea + count * key_switch_error(ctx) / out.scale, ma)
        return outs

    return tracked
