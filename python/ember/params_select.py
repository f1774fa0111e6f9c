"""Parameter sets from a multiplicative depth: ckks.Params.for_depth and bfv/bgv.Params.for_depth.

Both pick the smallest ring degree N (at least the one the requested slots need) whose 128-bit
bound on log2(QP) (rlwe.SECURITY_128_MAX_LOGQP, the table every Params checks) holds the modulus
chain the depth needs, then spend what the bound leaves on special primes (fewer key-switching
digits: faster key switching, smaller keys), up to one digit. The sizes come from the error
models below (measured on the CPU backend, tests/python/test_params_select.py runs them).
"""

from __future__ import annotations

import math

from .errors import ParameterError
from .rlwe import SECURITY_128_MAX_LOGQP, integer_arg

MAX_PRIME_BITS = 60  # largest prime of the parameter classes (CKKS allows 61 for q_0 and P)

# CKKS: a fresh encryption's error, and a rescale's rounding error, are below 2^(log_n + 2) in
# every slot (relative to the scale 1) with overwhelming probability: their slot images have a
# standard deviation of about 3.7 N and N / 4.2 (sigma 3.2 errors, a ternary secret), and 2^2
# covers more than 5 standard deviations. precision_bits above the scale's leftover is refused.
_CKKS_ERROR_BITS_ABOVE_LOG_N = 2
_CKKS_MARGIN_BITS = 1


def _check_count(value, what: str, low: int) -> int:
    value = integer_arg(value, f"{what} must be an integer")
    if value < low:
        raise ParameterError(f"{what} must be at least {low}, got {value}")
    return value


def _min_log_n(slots, per_slot: int) -> int:
    """The smallest log_n with at least `slots` slots (N / per_slot of them)."""
    if slots is None:
        return 10
    slots = _check_count(slots, "slots", 1)
    return max(10, math.ceil(math.log2(slots * per_slot)))


def _special_primes(log_n: int, q_total: int, q_count: int, widest: int, bits: int):
    """The most special primes of `bits` bits (at most one digit's worth) that keep QP under the
    bound, or None when not even the fewest P must have (P above the widest prime) fit."""
    bound = SECURITY_128_MAX_LOGQP.get(log_n, 0)
    fewest = math.ceil(widest / bits)
    most = max(fewest, math.ceil(q_count * widest / bits) + 1)
    for count in range(most, fewest - 1, -1):
        if q_total + count * bits <= bound:
            return count
    return None


def ckks_for_depth(
    depth,
    precision_bits=20,
    slots=None,
    security=128,
    bootstrap=False,
    int_bits=4,
):
    """See ckks.Params.for_depth."""
    from .bootstrap import BootstrapParams
    from .ckks import Params

    depth = _check_count(depth, "depth", 0)
    precision_bits = _check_count(precision_bits, "precision_bits", 1)
    int_bits = _check_count(int_bits, "int_bits", 0)
    if security != 128:
        raise ParameterError("only security=128 is tabulated: use for_depth(..., security=128)")
    boot = BootstrapParams(cts_levels=4) if bootstrap else None
    tried = []
    for log_n in range(_min_log_n(slots, 2), 18):
        bound = SECURITY_128_MAX_LOGQP[log_n]
        scale_bits = precision_bits + log_n + _CKKS_ERROR_BITS_ABOVE_LOG_N + _CKKS_MARGIN_BITS
        # q_0 holds the final values (|v| < 2^int_bits) times the scale, under a quarter of q_0.
        first_bits = scale_bits + int_bits + 3
        if boot is not None:
            # Bootstrapping's layout (as N16_boot): the scale and q_0 it was tuned for.
            scale_bits, first_bits = 44, 52
            if precision_bits > 21:
                raise ParameterError(
                    f"precision_bits={precision_bits} with bootstrap=True: bootstrapping keeps "
                    "about 21 bits (docs/ckks.md); ask for 21 or fewer"
                )
        if scale_bits > MAX_PRIME_BITS or first_bits > 61:
            tried.append(f"N = 2^{log_n}: a {scale_bits}-bit scale and {first_bits}-bit q_0")
            continue
        boot_bits = boot.prime_bits() if boot else []
        message = depth + (boot.stc_levels if boot else 0)
        q_total = first_bits + message * scale_bits + sum(boot_bits)
        widest = max([scale_bits, first_bits] + boot_bits)
        special = _special_primes(log_n, q_total, message + 1 + len(boot_bits), widest, 61)
        if special is None:
            tried.append(f"N = 2^{log_n}: log2(Q) = {q_total} of at most {bound}")
            continue
        return Params(
            log_n=log_n,
            scale_bits=scale_bits,
            levels=depth,
            first_mod_bits=first_bits,
            special_mods=special,
            special_mod_bits=61,
            security=security,
            boot=boot,
            name=f"for_depth({depth}, precision_bits={precision_bits})",
        )
    raise ParameterError(
        f"no 128-bit-secure CKKS set holds depth {depth} at {precision_bits} bits of precision "
        f"({'; '.join(tried[-2:]) or 'no ring degree fits the slots'}): lower the depth "
        "(bootstrap=True refreshes levels), precision_bits or slots"
    )


def integer_for_depth(cls, scheme: str, depth, plain_modulus=65537, slots=None, security=128):
    """See bfv.Params.for_depth / bgv.Params.for_depth."""
    depth = _check_count(depth, "depth", 0)
    t = _check_count(plain_modulus, "plain_modulus", 2)
    if security != 128:
        raise ParameterError("only security=128 is tabulated: use for_depth(..., security=128)")
    t_bits = t.bit_length()
    tried = []
    for log_n in range(_min_log_n(slots, 1), 18):
        bound = SECURITY_128_MAX_LOGQP[log_n]
        # Measured (noise_budget): a fresh ciphertext's noise takes about t_bits + log_n / 2 + 6
        # bits of Q, each product t_bits + log_n / 2 + 8 more (BFV); BGV's modulus switching
        # keeps the noise near t_bits + log_n / 2 + 8 bits if every prime exceeds the growth of
        # a product (about as many bits again), so each level is one prime of that size.
        growth = t_bits + math.ceil(log_n / 2) + 10
        if scheme == "bfv":
            q_total = t_bits + math.ceil(log_n / 2) + 16 + depth * growth
            count = math.ceil(q_total / MAX_PRIME_BITS)
            q_bits = _even_split(q_total, count)
        else:
            prime = max(growth + 12, t_bits + 2)
            q_bits = (prime,) * (depth + 1)
        if max(q_bits) > MAX_PRIME_BITS or min(q_bits) < max(20, t_bits + 2):
            tried.append(f"N = 2^{log_n}: primes of {max(q_bits)} bits for t of {t_bits} bits")
            continue
        q_total = sum(q_bits)
        special = _special_primes(log_n, q_total, len(q_bits), max(q_bits), MAX_PRIME_BITS)
        if special is None:
            tried.append(f"N = 2^{log_n}: log2(Q) = {q_total} of at most {bound}")
            continue
        return cls(
            log_n=log_n,
            plain_modulus=t,
            q_bits=q_bits,
            special_bits=(MAX_PRIME_BITS,) * special,
            security=security,
            name=f"for_depth({depth}, plain_modulus={t})",
        )
    raise ParameterError(
        f"no 128-bit-secure {scheme.upper()} set holds depth {depth} with t = {t} "
        f"({'; '.join(tried[-2:]) or 'no ring degree fits the slots'}): lower the depth, the "
        "plain modulus or slots"
    )


def _even_split(total: int, count: int) -> tuple:
    size = max(20, math.ceil(total / count))
    return (size,) * count
