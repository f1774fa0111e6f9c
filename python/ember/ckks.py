"""CKKS: approximate arithmetic on encrypted real or complex vectors.

``Params`` (a validated, immutable parameter set), ``Context`` (keys, encoding, encryption and the
operations), ``Ciphertext`` and ``Plaintext`` with Python operators. Scale management is automatic
by default: every level l has a standard scale S_l (S_L = 2^scale_bits, S_{l-1} = S_l^2 / q_l), so
a product of two ciphertexts at level l rescales exactly to S_{l-1}; operands at different levels
are brought to the lower one first (costing the higher one a level when its scale must change).
"""

from __future__ import annotations

import bisect
import cmath
import math
import numbers
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from . import _ember, resolve_device, ring
from . import arrays as _arrays
from . import ckks_error as _err
from . import serialize as _ser
from ._ops import CiphertextOps
from ._persistent import Persistent
from .arrays import as_array, flatten_input, reshape_output, to_output
from .bootstrap import BootstrapParams, Bootstrapper, generate_boot_keys
from .errors import MismatchError, ParameterError, SerializationError
from .ring import Sampler, generate_ntt_primes, is_prime
from .rlwe import (
    SECURITY_128_MAX_LOGQP,  # noqa: F401  (ckks.SECURITY_128_MAX_LOGQP, as before)
    EvalKeys,
    KeyedContext,
    PublicKey,
    SecretKey,
    check_security,
    describe,
    integer_arg,
    rotation_steps,
    short_repr,
)

__all__ = [
    "BootstrapParams",
    "Ciphertext",
    "Context",
    "EvalKeys",
    "Params",
    "Plaintext",
    "PublicKey",
    "SecretKey",
]


@dataclass(frozen=True)
class Params(Persistent):
    """A validated CKKS parameter set.

    log_n: ring degree N = 2^log_n (slots N/2). scale_bits: bits of the scale and of every
    rescaling prime. levels: number of rescalings available (primes q_1..q_L). first_mod_bits: q_0,
    which must hold the final message (scale plus the integer part). special_mods /
    special_mod_bits: the primes P of hybrid key switching. dnum: digits of the key switching
    decomposition (default: as many as needed so that each digit fits under P).
    hamming_weight: 0 for a uniform ternary secret, else its exact number of nonzeros.
    word_bits: 64, or 32 for residues in 32-bit words (every prime below 2^30: half the bytes and
    cheaper arithmetic per residue). A level of more than 30 bits (scale_bits, first_mod_bits,
    and with bootstrapping eval_bits and cts_bits) is then a pair of primes of half its bits,
    divided away together by one rescale (level_primes); special primes have at most 30 bits.
    boot: bootstrapping (see ember.bootstrap.BootstrapParams); `levels` then counts the levels a
    bootstrapped ciphertext has for computation: the chain has stc_levels more message primes at
    its bottom (ctx.max_level = levels + stc_levels, bootstrapping from ctx.min_bootstrap_level
    = stc_levels) and the EvalMod and CoeffToSlot primes above.
    Refuses parameter sets weaker than `security` bits unless insecure=True.
    """

    log_n: int
    scale_bits: int = 40
    levels: int = 6
    first_mod_bits: int = 60
    special_mods: int = 1
    special_mod_bits: int | None = None
    dnum: int | None = None
    hamming_weight: int = 0
    security: int = 128
    insecure: bool = False
    boot: BootstrapParams | None = None
    word_bits: int = 64
    name: str = "custom"
    q_primes: tuple = field(default=(), compare=False, repr=False)
    p_primes: tuple = field(default=(), compare=False, repr=False)
    level_primes: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self):
        if not 10 <= self.log_n <= 17:
            raise ParameterError(f"log_n={self.log_n} is out of range: use 10..17")
        if not 20 <= self.scale_bits <= 60:
            raise ParameterError(f"scale_bits={self.scale_bits} is out of range: use 20..60")
        if self.levels < 0:
            raise ParameterError("levels must be >= 0")
        if not self.scale_bits < self.first_mod_bits <= 61:
            raise ParameterError(
                f"first_mod_bits={self.first_mod_bits} must exceed scale_bits={self.scale_bits} "
                "(q_0 holds the final message) and be at most 61"
            )
        if self.special_mods < 1:
            raise ParameterError("special_mods must be >= 1 (hybrid key switching needs P)")
        if self.word_bits not in (32, 64):
            raise ParameterError(f"word_bits={self.word_bits}: use 64 or 32")
        narrow = self.word_bits == 32
        p_bits = self.special_mod_bits or (
            min(self.first_mod_bits, _WORD32_PRIME_BITS) if narrow else self.first_mod_bits
        )
        if not 20 <= p_bits <= (_WORD32_PRIME_BITS if narrow else 61):
            raise ParameterError(
                f"special_mod_bits={p_bits} is out of range: use 20..61 (20..30 with 32-bit words)"
            )
        object.__setattr__(self, "special_mod_bits", p_bits)
        if not 0 <= self.hamming_weight <= self.n:
            raise ParameterError("hamming_weight must be in [0, N]")
        check_security(
            self.log_n, self.total_bits, self.security, self.insecure, self.hamming_weight
        )
        boot_bits = self.boot.prime_bits() if self.boot else []
        # The primes every level takes from q_0 up: the message levels' pattern (one prime each,
        # or with 32-bit words pairs, or alternating pairs and single primes), then the
        # bootstrapping levels'.
        groups = (
            [_primes_per_level(self.first_mod_bits, self.word_bits)]
            + _message_groups(self.scale_bits, self.message_primes, self.word_bits)
            + [_primes_per_level(b, self.word_bits) for b in boot_bits]
        )
        q_count = sum(groups)
        if self.dnum is None:
            # Largest digit (alpha consecutive primes of Q, q_0's first) that fits under P: small
            # digits keep the key-switching error at the level of a fresh encryption.
            p_total = self.special_mods * p_bits
            widest = max(
                -(-b // _primes_per_level(b, self.word_bits)) for b in [self.scale_bits] + boot_bits
            )
            if _alternates(self.scale_bits, self.word_bits):
                widest = max(widest, _WORD32_PRIME_BITS)  # the single primes
            alpha = min(p_total // widest, groups[0] + (p_total - self.first_mod_bits) // widest)
            if alpha < 1:
                raise ParameterError(
                    f"P ({self.special_mods} x {p_bits} bits) is smaller than q_0 "
                    f"({self.first_mod_bits} bits): key switching would add large errors; use "
                    "more or larger special primes"
                )
            object.__setattr__(self, "dnum", math.ceil(q_count / alpha))
        if not 1 <= self.dnum <= q_count:
            raise ParameterError(f"dnum={self.dnum} must be in [1, {q_count}]")
        # The digit count that the chosen digit size actually needs.
        alpha = math.ceil(q_count / self.dnum)
        object.__setattr__(self, "dnum", math.ceil(q_count / alpha))
        if alpha < groups[0]:
            raise ParameterError(
                f"dnum={self.dnum} splits q_0's {groups[0]} primes over two digits; use fewer "
                "digits (a smaller dnum)"
            )
        if not self.q_primes:
            n = self.n
            g0 = groups[0]
            q0 = generate_ntt_primes(-(-self.first_mod_bits // g0), n, g0)
            if _alternates(self.scale_bits, self.word_bits):
                qs = _alternating_primes(self.scale_bits, n, self.message_primes, q0)
            else:
                qs = _scaling_primes(self.scale_bits, n, self.message_primes, q0, self.word_bits)
            if self.boot:
                qs += _boot_primes(self.boot, n, q0 + qs, self.word_bits)
            ps = generate_ntt_primes(p_bits, n, self.special_mods, q0 + qs)
            object.__setattr__(self, "q_primes", tuple(q0 + qs))
            object.__setattr__(self, "p_primes", tuple(ps))
        if len(self.q_primes) != q_count:
            raise ParameterError(
                f"{len(self.q_primes)} primes given for Q; these levels take {q_count}"
            )
        if narrow and max(self.q_primes + self.p_primes) >= 1 << _WORD32_PRIME_BITS:
            raise ParameterError("32-bit words need every prime below 2^30")
        object.__setattr__(self, "level_primes", tuple(groups) if narrow else ())
        exact = sum(math.log2(q) for q in self.q_primes + self.p_primes)
        if not self.insecure:
            check_security(self.log_n, exact, self.security, False, self.hamming_weight)

    @property
    def n(self) -> int:
        return 1 << self.log_n

    @property
    def slots(self) -> int:
        return self.n // 2

    @property
    def message_primes(self) -> int:
        """Primes of scale_bits above q_0: the levels, plus SlotToCoeff's with bootstrapping."""
        return self.levels + (self.boot.stc_levels if self.boot else 0)

    @property
    def total_bits(self) -> int:
        """Bits of Q*P (the sum of the prime sizes)."""
        return (
            self.first_mod_bits
            + self.message_primes * self.scale_bits
            + (sum(self.boot.prime_bits()) if self.boot else 0)
            + self.special_mods * (self.special_mod_bits or self.first_mod_bits)
        )

    @staticmethod
    def for_depth(
        depth: int,
        precision_bits: int = 20,
        slots: int | None = None,
        security: int = 128,
        bootstrap: bool = False,
        int_bits: int = 4,
    ) -> Params:
        """The smallest 128-bit-secure set for `depth` multiplications (levels), keeping about
        `precision_bits` bits per operation (each fresh encryption and rescale adds an error
        below 2^-precision_bits in every slot), for values below 2^int_bits in magnitude, with
        at least `slots` slots. bootstrap=True: N16_boot's bootstrapping layout with `depth`
        levels between bootstraps. Raises ParameterError saying what to lower when no ring
        degree up to 2^17 holds it. See ember.params_select."""
        from .params_select import ckks_for_depth

        return ckks_for_depth(depth, precision_bits, slots, security, bootstrap, int_bits)

    @staticmethod
    def presets() -> list[str]:
        """Names of the built-in parameter sets (128-bit secure, except those named insecure)."""
        return list(_PRESETS)

    @staticmethod
    def preset(name: str) -> Params:
        if name not in _PRESETS:
            raise ParameterError(f"unknown preset '{name}': choose from {', '.join(_PRESETS)}")
        return Params(name=name, **_PRESETS[name])


_PRESETS = {
    # name: literal; log2(QP) within the 128-bit bound of the table above
    "N13_L3": {"log_n": 13, "levels": 3, "first_mod_bits": 48, "special_mod_bits": 49},  # 217
    "N14_L8": {"log_n": 14, "levels": 8, "first_mod_bits": 57, "special_mod_bits": 60},  # 437
    "N15_L18": {  # 880
        "log_n": 15,
        "levels": 18,
        "first_mod_bits": 60,
        "special_mods": 2,
        "special_mod_bits": 50,
    },
    "N16_L35": {  # 1700: Phantom's CKKS benchmark set (60, 35 x 40, 4 x 60), dnum 9
        "log_n": 16,
        "levels": 35,
        "first_mod_bits": 60,
        "special_mods": 4,
        "special_mod_bits": 60,
        "dnum": 9,
    },
    # Bootstrapping: 10 message levels of 44 bits above q_0 (52); SlotToCoeff 3 x 48,
    # EvalMod 8 x 60 (degree-56 cosine, 2 double angles), CoeffToSlot 4 x 56; P = 7 x 61.
    "N16_boot": {  # 1755
        "log_n": 16,
        "scale_bits": 44,
        "levels": 10,
        "first_mod_bits": 52,
        "special_mods": 7,
        "special_mod_bits": 61,
        "boot": BootstrapParams(cts_levels=4),
    },
    # The same circuit on N = 2^12 for tests on the CPU: NOT secure (log2 QP far above 109).
    "N12_boot_insecure": {
        "log_n": 12,
        "scale_bits": 44,
        "levels": 2,
        "first_mod_bits": 52,
        "special_mods": 5,
        "special_mod_bits": 61,
        "boot": BootstrapParams(),
        "insecure": True,
    },
    # 32-bit words (every prime below 2^30): 13 message levels of 40 bits on average above q_0
    # (2 x 29), alternating a pair of 50 bits and one prime of 30 (scales 2^43.3 and 2^36.7);
    # SlotToCoeff 3 of them, EvalMod 8 x 58, CoeffToSlot 4 x 55 (pairs); P = 13 x 30, dnum 4.
    "N16_boot32": {  # 1772 nominal, 1765 with the primes' exact sizes
        "log_n": 16,
        "scale_bits": 40,
        "levels": 13,
        "first_mod_bits": 58,
        "special_mods": 13,
        "special_mod_bits": 30,
        "word_bits": 32,
        "boot": BootstrapParams(cts_levels=4, eval_bits=58, cts_bits=55),
    },
    # Its circuit on N = 2^12 for tests on the CPU: NOT secure.
    "N12_boot32_insecure": {
        "log_n": 12,
        "scale_bits": 44,
        "levels": 2,
        "first_mod_bits": 52,
        "special_mods": 10,
        "special_mod_bits": 30,
        "word_bits": 32,
        "boot": BootstrapParams(),
        "insecure": True,
    },
    "N16_L40": {  # 1770
        "log_n": 16,
        "levels": 40,
        "first_mod_bits": 60,
        "special_mods": 2,
        "special_mod_bits": 55,
    },
}


# Primes of 32-bit words stay below 2^30 (lazy butterflies keep values below 4q < 2^32).
_WORD32_PRIME_BITS = 30


def _primes_per_level(bits: int, word_bits: int) -> int:
    """Primes a level of `bits` bits takes: one, or with 32-bit words two above 30 bits."""
    if word_bits == 64 or bits <= _WORD32_PRIME_BITS:
        return 1
    if bits > 2 * _WORD32_PRIME_BITS:
        raise ParameterError(f"a level of {bits} bits needs more than two 30-bit primes")
    return 2


# With 32-bit words, levels of 38..45 bits alternate a pair of primes and one prime of 30 bits
# (see _alternating_primes): a level then costs scale_bits on average, where pairs cost 2 x 25.
_ALTERNATING_BITS = (38, 45)


def _alternates(bits: int, word_bits: int) -> bool:
    return word_bits == 32 and _ALTERNATING_BITS[0] <= bits <= _ALTERNATING_BITS[1]


def _message_groups(bits: int, count: int, word_bits: int) -> list[int]:
    """Primes of each message level q_1..q_count: alternating levels (the top one a pair, the
    one below a single prime, ...), else _primes_per_level of every level."""
    if _alternates(bits, word_bits):
        return [2 if (count - level) % 2 == 0 else 1 for level in range(1, count + 1)]
    return [_primes_per_level(bits, word_bits)] * count


def _alternating_primes(bits: int, n: int, count: int, taken: list[int]) -> list[int]:
    """The message primes q_1..q_count for 32-bit words and a 2^bits scale (38 <= bits <= 45):
    levels alternate a pair of primes of about 2 bits - 30 bits in all and one prime of about 30
    bits, so that a level costs `bits` bits on average while no prime exceeds 2^30. The
    standard scales (S_{l-1} = S_l^2 / q_l) then alternate about two fixed points instead of
    staying at 2^bits: with pair levels of b2 = 2 bits - 30 and single ones of b1 = 30 bits,
    S = 2^((2 b2 + b1) / 3) on pair levels and 2^((2 b1 + b2) / 3) on single ones (for 2^40:
    2^43.3 and 2^36.7; the mean stays 2^bits, as each level's bits are the mean of the scales
    around it). From the top down (S_L = 2^bits, a pair level), each level's prime or pair is
    the one that brings S_{l-1} closest to its fixed point, so the drift never builds up."""
    pair_bits, single_bits = 2 * bits - _WORD32_PRIME_BITS, _WORD32_PRIME_BITS
    on_pair = (2 * pair_bits + single_bits) / 3
    on_single = (2 * single_bits + pair_bits) / 3
    pool = sorted(p for p in _primes_between(17, _WORD32_PRIME_BITS, n) if p not in taken)
    groups = _message_groups(bits, count, 32)
    chosen: list[list[int]] = []
    log_scale = float(bits)
    for level in range(count, 0, -1):
        pair = groups[level - 1] == 2
        want = 2 * log_scale - (on_single if pair else on_pair)  # log2 q_l that lands there
        if pair:
            found = _best_pair(pool, 2.0**want)
        else:
            found = [min(pool, key=lambda p: abs(math.log2(p) - want))] if pool else None
        if not found:
            raise ParameterError(
                f"not enough NTT primes below 2^30 for N={n} for {count} alternating levels of "
                f"{bits} bits; use fewer levels or another scale"
            )
        for p in found:
            pool.remove(p)
        chosen.append(sorted(found))
        log_scale = 2 * log_scale - math.log2(math.prod(found))
    return [p for group in chosen[::-1] for p in group]  # q_1 .. q_count, each level in order


def _best_pair(pool: list[int], target: float) -> list[int] | None:
    """Two primes of the sorted pool whose product is closest to target (in log scale): each of
    the primes nearest sqrt(target) with its best partner (bisection); None if the pool has
    fewer than two."""
    root = math.sqrt(target)
    near = sorted(pool, key=lambda p: abs(math.log2(p / root)))[:32]
    best = None
    for a in near:
        i = bisect.bisect_left(pool, target / a)
        for b in pool[max(i - 2, 0) : i + 2]:
            if b != a:
                err = abs(math.log2(a * b / target))
                if best is None or err < best[0]:
                    best = (err, a, b)
    return [best[1], best[2]] if best else None


def _scaling_primes(
    bits: int, n: int, count: int, taken: list[int], word_bits: int = 64
) -> list[int]:
    """count levels of NTT-friendly primes near 2^bits in all for q_1..q_L, chosen from the top
    level down so that the standard scales S_{l-1} = S_l^2 / q_l stay near 2^bits (each q_l is
    the unused prime, or with 32-bit words above 30 bits the pair of primes of bits / 2, closest
    to S_l; taking every prime below 2^bits would double the drift at every level)."""
    if count == 0:
        return []
    if _primes_per_level(bits, word_bits) == 2:
        return _scaling_pairs(bits, n, count, taken)
    step, target = 2 * n, 1 << bits
    below, above = [], []
    q = (target // step) * step + 1
    while len(below) < count + 8 and q > target // 2:
        if q < target and q not in taken and is_prime(q):
            below.append(q)
        q -= step
    q = (target // step + 1) * step + 1
    while len(above) < count + 8 and q < 2 * target:
        if q not in taken and is_prime(q):
            above.append(q)
        q += step
    pool = below + above
    if len(pool) < count:
        raise ParameterError(f"not enough {bits}-bit NTT primes for N={n}; use fewer levels")
    chosen, scale = [], float(target)
    for _ in range(count):
        best = min(pool, key=lambda p: abs(p - scale))
        pool.remove(best)
        chosen.append(best)
        scale = scale * scale / best
    return chosen[::-1]  # q_1 .. q_L (q_L was chosen first)


def _scaling_pairs(bits: int, n: int, count: int, taken: list[int]) -> list[int]:
    """_scaling_primes with levels of two primes of about bits / 2 (32-bit words): from the top
    down, the prime closest to sqrt(S_l) (in log scale) and the partner that brings their
    product closest to the level's standard scale S_l. Primes of bits / 2 are few at large N
    (those of N = 2^16 are 1 mod 2^17), so the pool spans 2^(bits/2 - 4) .. 2^30 and pairs may
    be uneven."""
    half = -(-bits // 2)
    pool = [p for p in _primes_between(half - 4, _WORD32_PRIME_BITS, n) if p not in taken]
    if len(pool) < 2 * count:
        raise ParameterError(
            f"not enough NTT primes below 2^30 for N={n} for {count} levels of two; use fewer "
            "levels or another scale"
        )
    pool.sort()
    chosen: list[int] = []
    scale = float(1 << bits)
    for _ in range(count):
        a, b = _best_pair(pool, scale)  # the pair whose product is closest to S_l
        pool.remove(a)
        pool.remove(b)
        chosen.append(sorted((a, b)))
        scale = scale * scale / (a * b)
    return [p for pair in chosen[::-1] for p in pair]  # q_1 .. q_L, each level's pair in order


def _primes_between(low_bits: int, high_bits: int, n: int) -> list[int]:
    """The NTT-friendly primes for N = n in [2^low_bits, 2^high_bits)."""
    step = 2 * n
    q = ((1 << low_bits) // step + 1) * step + 1
    out = []
    while q < 1 << high_bits:
        if is_prime(q):
            out.append(q)
        q += step
    return out


def _boot_primes(bp: BootstrapParams, n: int, taken: list[int], word_bits: int = 64) -> list[int]:
    """Bootstrapping primes above the message chain, from the lowest up: EvalMod (chosen like
    the scaling primes, so that its standard scales stay near 2^eval_bits), CoeffToSlot."""
    ev = _scaling_primes(bp.eval_bits, n, bp.eval_levels, taken, word_bits)
    if _primes_per_level(bp.cts_bits, word_bits) == 2:
        cts = _scaling_pairs(bp.cts_bits, n, bp.cts_levels, taken + ev)
    else:
        cts = generate_ntt_primes(bp.cts_bits, n, bp.cts_levels, taken + ev)
    return ev + cts


def _is_scalar(value) -> bool:
    """A single real or complex number, Python's or numpy's (np.isscalar also says yes to
    strings)."""
    return isinstance(value, numbers.Number) or (
        isinstance(value, np.generic) and value.dtype.kind in "biufc"
    )


def _is_complex_scalar(value) -> bool:
    """A scalar with a nonzero (or NaN) imaginary part: it is encoded in every slot."""
    return bool(np.iscomplexobj(value) and np.imag(value) != 0)


def _finite_scalar(value):
    """The scalar, or ParameterError when it (or a part of a complex one) is NaN or infinite:
    round() would fail on it, and NaN would spread to every slot. Python ints are exact."""
    if not isinstance(value, numbers.Integral) and not cmath.isfinite(complex(value)):
        raise ParameterError(f"values must be finite (no NaN or infinity), got {short_repr(value)}")
    return value


def _real_scalar(value, what: str):
    """A finite real number, for arguments that cannot be complex (`what`: "coefficients")."""
    if not _is_scalar(value) or _is_complex_scalar(value):
        raise ParameterError(
            f"{what} must be real numbers, got {describe(value)}: {short_repr(value)}"
        )
    return _finite_scalar(value.real)


def _scalar_integer(value, scale: float) -> int:
    """round(value * scale): a real scalar as the integer that an addition or a product uses at
    that scale. Every scalar operand of the operations goes through here, so that a bound on
    their size has one place. A product beyond float64 is refused rather than let round()
    raise OverflowError."""
    value = _finite_scalar(value)
    try:
        scaled = float(value) * scale
    except OverflowError:  # a Python int beyond float64
        scaled = math.inf
    if not math.isfinite(scaled):
        raise ParameterError(
            f"the scalar {short_repr(value)} times the scale {scale:.4g} does not fit a float64; "
            "use smaller values"
        )
    return round(scaled)


def _as_list(items, what: str) -> list:
    """A sequence argument as a list (a lone ciphertext or number is a mistake to report)."""
    if isinstance(items, (str, bytes, CiphertextOps)) or not isinstance(items, Iterable):
        raise ParameterError(f"linear_combination needs a list of {what}, got {describe(items)}")
    return list(items)


def _positive_scale(scale) -> float:
    """A scale argument: a finite number above 0 (a product's scale is divided by it)."""
    value = float(scale.real) if _is_scalar(scale) and not _is_complex_scalar(scale) else math.nan
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"scale must be a finite number above 0, got {short_repr(scale)}")
    return value


class Plaintext(Persistent):
    """Encoded values at a level and scale (eval form); `shape`: an n-dimensional input's.
    `values` is what was encoded (for a GPU array read in place, that array: it never comes to
    the host); `encoded_on_device` says whether the values were read in the GPU's memory."""

    shape: tuple | None = None
    encoded_on_device: bool = False
    _is_complex: bool | None = None  # a nonzero imaginary part, as the encoder saw

    @property
    def is_complex(self) -> bool:
        if self._is_complex is None:
            v = self.values
            self._is_complex = bool(np.iscomplexobj(v) and np.any(np.imag(v) != 0))
        return self._is_complex

    def __init__(self, ctx: Context, poly, level: int, scale: float, values: np.ndarray):
        self._ctx, self._poly, self.level, self.scale, self.values = ctx, poly, level, scale, values

    @property
    def device(self) -> str:
        return self._ctx.device

    def to(self, device: str) -> Plaintext:
        """This plaintext on `device` (itself when it is there already)."""
        ctx = self._ctx.to(device)
        if ctx is self._ctx:
            return self
        pt = Plaintext(ctx, self._poly.to(ctx.device), self.level, self.scale, self.values)
        pt.shape, pt._is_complex = self.shape, self._is_complex
        return pt


class Ciphertext(CiphertextOps):
    """An encrypted vector of `ctx.slots` values. Operators: + - * (with ciphertexts,
    plaintexts, scalars and arrays), unary -, rotate, conj, rescale.

    error_bound / value_bound: bounds on the error of every slot and on the values' magnitude,
    tracked without the secret key (ember.ckks_error; None where an operation has no estimate).
    """

    error_bound: float | None = None
    value_bound: float | None = None
    shape: tuple | None = None  # an n-dimensional input's (ember.arrays): decrypt returns it

    def __init__(self, ctx: Context, raw, is_complex: bool = False):
        self._ctx, self._raw, self.is_complex = ctx, raw, is_complex

    @property
    def scale(self) -> float:
        return self._raw.scale

    def conj(self) -> Ciphertext:
        return self._ctx.conj(self)

    def rescale(self) -> Ciphertext:
        return self._ctx.rescale(self)

    def __repr__(self):
        return f"Ciphertext(level={self.level}, scale=2^{math.log2(self.scale):.2f})"

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        """The ciphertext's bytes (with `mac_key`: authenticated by a keyed MAC, to be read with
        the same key). Refuses a scale outside ctx.scale_bounds(level): it could not be read."""
        r = self._raw
        self._ctx._check_scale(r.level, r.scale)
        head = struct.pack("<IIdB", r.level, r.size, r.scale, int(self.is_complex))
        return self._serialize(head, mac_key)


class Context(KeyedContext):
    """A CKKS context on one device. See the module docstring for the scale policy."""

    scheme = "CKKS"
    _plaintext_type = Plaintext

    def __init__(
        self, params: Params | str, device: str | None = None, auto_rescale=True, _like=None
    ):
        if isinstance(params, str):
            params = Params.preset(params)
        self.params = params
        self.device = resolve_device(device)
        # _like: ctx.to's source context, whose ring (and its per-device tables) this one shares.
        raw_type = _ember.CkksContext32 if params.word_bits == 32 else _ember.CkksContext
        self._raw = raw_type(
            params.n,
            list(params.q_primes),
            list(params.p_primes),
            params.dnum,
            self.device,
            _like._raw if _like is not None else None,
            list(params.level_primes),
        )
        # Each level's primes (one each, or with 32-bit words pairs), the product a rescale from
        # it divides by, and the modulus Q_l.
        rows = [self._raw.rows(lv) for lv in range(self._raw.max_level + 1)]
        primes = list(params.q_primes)
        self._level_rows = rows
        self._divisors = [
            math.prod(primes[(rows[lv - 1] if lv else 0) : rows[lv]]) for lv in range(len(rows))
        ]
        self._moduli = [math.prod(primes[: rows[lv]]) for lv in range(len(rows))]
        self.auto_rescale = auto_rescale
        self.slots = params.slots
        # With bootstrapping levels, users see the message chain (its lowest stc_levels are
        # SlotToCoeff's: a ciphertext is bootstrapped from min_bootstrap_level or above); the
        # levels above belong to the bootstrapping circuit.
        self.max_level = params.message_primes
        self.min_bootstrap_level = params.boot.stc_levels if params.boot else None
        self._sampler = Sampler()
        self._eval_keys: EvalKeys | None = None
        self._bootstrappers: dict[int | None, Bootstrapper] = {}
        # Standard scale of each level: S_{l-1} = S_l^2 / q_l from 2^scale_bits at the message
        # top down. Bootstrapping: the EvalMod levels continue that chain upwards
        # (S_l = sqrt(S_(l-1) q_l), about 2^eval_bits at the top), so that EvalMod's products
        # land on the message top's standard scale; the CoeffToSlot levels recurse down from
        # 2^cts_bits (its stages pick their own scales).
        top = self._raw.max_level
        scales = [0.0] * (top + 1)
        scales[self.max_level] = float(2**params.scale_bits)
        for lv in range(self.max_level, 0, -1):
            scales[lv - 1] = scales[lv] * scales[lv] / self._divisors[lv]
        if params.boot:
            eval_top = top - params.boot.cts_levels
            for lv in range(self.max_level + 1, eval_top + 1):
                scales[lv] = math.sqrt(scales[lv - 1] * self._divisors[lv])
            scales[top] = float(2**params.boot.cts_bits)
            for lv in range(top, eval_top + 1, -1):
                scales[lv - 1] = scales[lv] * scales[lv] / self._divisors[lv]
        self._scales = scales
        # Largest integer a scalar may become at each level: Q_l / 4 less the encryption error
        # (the bound the C++ encoder applies to coefficients, here exact).
        self._value_bounds = [q // 4 - 2 ** (params.log_n + 6) for q in self._moduli]
        # The GPU whose memory encode/decrypt read and write in place (None: a CPU context).
        self._cuda_index = (
            int(self.device.split(":")[1]) if self.device.startswith("cuda") else None
        )

    def _replica_options(self) -> dict:
        return {"auto_rescale": self.auto_rescale}

    # ---------------------------------------------------------------- keys
    def eval_keys(
        self,
        sk: SecretKey,
        rotations: Iterable[int] = (),
        conjugation: bool = False,
        bootstrap: bool = False,
        progress: bool = True,
        bootstrap_slots: Iterable[int] = (),
    ) -> EvalKeys:
        """Relinearization key, Galois keys for `rotations` (steps, negative allowed) and for
        conjugation; bootstrap=True adds every key ctx.bootstrap needs (bootstrapping
        parameters only), for full slots and for each sparse slot count in bootstrap_slots.
        A progress bar shows on a terminal unless progress=False."""
        self._check_key(sk, (SecretKey,), "eval_keys")
        rotations = rotation_steps(rotations)
        bootstrap_slots = [
            integer_arg(n, "bootstrapping slots must be an integer power of two")
            for n in bootstrap_slots
        ]
        galois = {2 * self.params.n - 1} if conjugation else set()
        boot = None
        if bootstrap:
            rotations = set(rotations) | set(self._boot().rotations())
            for n in bootstrap_slots:
                rotations |= set(self._boot(n).rotations())
            galois.add(2 * self.params.n - 1)
            boot = lambda key: generate_boot_keys(self, key)
        return self._make_eval_keys(sk, rotations, galois, boot, progress)

    # ---------------------------------------------------------------- serialization
    def ciphertext_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> Ciphertext:
        """A ciphertext from Ciphertext.to_bytes. Checks the level, size, is_complex flag and
        the scale (ctx.scale_bounds); the words themselves cannot be checked without a MAC (any
        reduced words encrypt something)."""
        key_id, payload = _ser.unpack(blob, _ser.KIND_CIPHERTEXT, self._raw.params_id, mac_key)
        rd = _ser.Reader(payload)
        level, size, scale, is_complex = rd.unpack("<IIdB")
        if level > self._raw.max_level or size not in (2, 3):
            raise SerializationError(
                f"ciphertext level {level} / size {size} out of range: the level must be at most "
                f"{self._raw.max_level} and the size 2 or 3"
            )
        if is_complex > 1:
            raise SerializationError(f"ciphertext is_complex flag {is_complex}: it must be 0 or 1")
        self._check_scale(level, scale)
        basis = self._raw.q_basis(level)
        polys = [rd.poly(basis, self.device, self._word_bits) for _ in range(size)]
        rd.done()
        return Ciphertext(
            self, self._raw.make_ciphertext(polys, level, scale, 1, key_id), bool(is_complex)
        )

    def scale_bounds(self, level: int) -> tuple[float, float]:
        """The scales a ciphertext at `level` may carry when serialized: [1, Q_level / 2]. Below
        1 the message has lost its integer precision; above Q_level / 2 no message of magnitude
        1 fits under the modulus. Every scale of the standard chain, of manual-mode products
        before their rescale at levels >= 1 and of bootstrapping lies inside."""
        return 1.0, self._moduli[level] / 2

    def _check_scale(self, level: int, scale: float) -> None:
        low, high = self.scale_bounds(level)
        if not (math.isfinite(scale) and low <= scale <= high):
            raise SerializationError(
                f"ciphertext scale {scale!r} at level {level} is out of range: it must be finite "
                f"and in [1, Q_level / 2 = {high:.6g}] (rescale a product before serializing it)"
            )

    # ---------------------------------------------------------------- encoding
    def scale_at(self, level: int) -> float:
        return self._scales[level]

    def _host_values(self, values, sparse: bool = False) -> np.ndarray:
        """values as a checked 1-D numpy vector (what encode_slots reads on the host)."""
        z = self._numeric_values(values)
        if z.ndim != 1:
            raise ParameterError(f"expected a 1-D vector of values, got shape {z.shape}")
        if z.size > self.slots and not sparse:
            raise ParameterError(f"{z.size} values do not fit in {self.slots} slots")
        if not np.all(np.isfinite(z)):
            raise ParameterError("values must be finite (no NaN or infinity)")
        if sparse and (z.size == 0 or self.slots % z.size):
            raise ParameterError(
                f"sparse packing needs a length dividing {self.slots}, got {z.size}"
            )
        if z.dtype.name not in ("float32", "float64", "complex64", "complex128"):
            z = z.astype(complex if np.iscomplexobj(z) else float)
        return np.ascontiguousarray(z)

    def _slots_to_coeffs(self, values, sparse: bool = False) -> tuple[np.ndarray, bool]:
        """The encoding's coefficients before the scale (the C++ special FFT, as encode runs
        it on the device) and whether a value is complex."""
        z = self._numeric_values(values)
        if z.ndim != 1:
            raise ParameterError(f"expected a 1-D vector of values, got shape {z.shape}")
        if z.size > self.slots:
            raise ParameterError(f"{z.size} values do not fit in {self.slots} slots")
        if not np.all(np.isfinite(z)):
            raise ParameterError("values must be finite (no NaN or infinity)")
        if sparse:
            # Sparse packing: the vector repeated over all slots, so rotations act modulo its
            # length (its length must divide the slot count).
            if z.size == 0 or self.slots % z.size:
                raise ParameterError(
                    f"sparse packing needs a length dividing {self.slots}, got {z.size}"
                )
            z = np.tile(z.astype(complex), self.slots // z.size)
        else:
            full = np.zeros(self.slots, dtype=complex)  # shorter input is zero-padded
            full[: z.size] = z
            z = full
        is_complex = bool(np.iscomplexobj(z) and np.any(np.imag(z) != 0))
        coeffs = self._raw.slots_to_coeffs(np.ascontiguousarray(z, dtype=complex))
        return coeffs, is_complex

    def _coeffs_to_slots(self, coeffs: np.ndarray) -> np.ndarray:
        """The slots (complex) of N coefficients: the C++ special FFT, as decrypt runs it."""
        return self._raw.coeffs_to_slots(np.ascontiguousarray(coeffs, dtype=float))

    def _gpu_values(self, values):
        """(flat values in this context's GPU memory, shape) for a GPU array that this context
        reads in place, else None. A GPU array on a CPU context is copied to the host (None);
        one on another GPU than this context's is refused."""
        if not _arrays.on_context_gpu(values, self._cuda_index, self.device):
            return None
        flat, shape = _arrays.device_values(values)
        _arrays.synchronize_producer(flat)
        return flat, shape

    def encode(
        self, values, level: int | None = None, scale: float | None = None, sparse: bool = False
    ) -> Plaintext:
        """Encodes up to `slots` real or complex values at a level (default: top) and scale
        (default: the level's standard scale). Shorter input is zero-padded, or with sparse=True
        repeated (its length must divide the slot count; rotations then act modulo it)."""
        level = self.max_level if level is None else self._level_arg(level)
        scale = self._scales[level] if scale is None else _positive_scale(scale)
        on_gpu = self._gpu_values(values)
        if on_gpu is not None:
            # Read in place on this context's GPU: only the encoder's flags come to the host.
            flat, shape = on_gpu
            poly, is_complex, largest = self._raw.encode_slots(flat, level, scale, sparse)
            pt = Plaintext(self, poly, level, scale, flat)
            pt.encoded_on_device = self._cuda_index is not None
            # largest is max(|re|, |im|); |z| is at most sqrt(2) times that.
            pt._magnitude = largest * (math.sqrt(2) if is_complex else 1.0)
        else:
            values, shape = flatten_input(values)
            z = self._host_values(values, sparse)
            poly, is_complex, _ = self._raw.encode_slots(z, level, scale, sparse)
            pt = Plaintext(self, poly, level, scale, np.asarray(values))
        pt.shape, pt._is_complex = shape, is_complex
        return pt

    def decode(self, pt: Plaintext, complex: bool = False, *, out: str | None = None, like=None):
        """Decodes the plaintext polynomial back to its slots (float64, or complex128); out= and
        like= as for decrypt (on a GPU context, like= a GPU array decodes on the GPU)."""
        self._check_plaintext(pt, "decode")
        limbs = self._level_rows[pt.level]
        rows = pt._poly.intt()
        if rows.limbs != limbs or pt._ctx._raw is not self._raw:
            # Over Q_level u P, or another context's ring (an equal one, e.g. unpickled): the
            # first level + 1 rows over this context's basis.
            rows = ring.RnsPoly.from_numpy(
                self._raw.q_basis(pt.level),
                np.ascontiguousarray(rows.to_numpy()[:limbs]),
                "coeff",
                self.device,
            )
        if _arrays.device_output_wanted(out, like, self._cuda_index):
            shape = pt.shape if pt.shape is not None else (self.slots,)
            array = self._raw.decode_slots(
                rows, pt.scale, True, math.prod(shape), bool(complex), True, shape
            )
            return _arrays.from_device(array, like)
        z = self._raw.decode_slots(rows, pt.scale, True, self.slots, bool(complex), False)
        if out is None and like is None:
            return z  # every slot, as before
        return to_output(reshape_output(z, pt.shape), out, like)

    # ---------------------------------------------------------------- encryption
    def encrypt(
        self, values, key: PublicKey | SecretKey, level: int | None = None, sparse: bool = False
    ) -> Ciphertext:
        self._check_key(key, (PublicKey, SecretKey), "encrypt")
        pt = values if isinstance(values, Plaintext) else self.encode(values, level, sparse=sparse)
        is_complex = pt.is_complex
        if isinstance(key, PublicKey):
            raw = self._raw.encrypt(pt._poly, key._raw, self._sampler)
        else:
            raw = self._raw.encrypt_symmetric(pt._poly, key._raw, self._sampler)
        raw.scale = pt.scale
        out = Ciphertext(self, raw, is_complex)
        out.shape = pt.shape
        out.error_bound = _err.fresh_error(self, pt.scale, isinstance(key, PublicKey))
        out.value_bound = _err._magnitude(pt)
        return out

    def decrypt(
        self,
        ct: Ciphertext,
        sk: SecretKey,
        complex: bool | None = None,
        *,
        check: bool = True,
        flood: bool = False,
        noise_bits: float | None = None,
        security_bits: int = 30,
        queries: int = 1,
        out: str | None = None,
        like=None,
    ) -> np.ndarray:
        """The slots as float64 (complex128 if the ciphertext holds complex values or
        complex=True). Decoding is exact over every prime of the ciphertext's level.

        check=True (default) raises DecryptionError when a coefficient reaches a quarter of the
        level's modulus: values past what encoding accepts, which have most likely wrapped
        around the modulus and would decode to garbage.

        flood=True protects decryptions that other parties see (IND-CPA-D, see
        docs/security.md): Gaussian noise of standard deviation
        2^noise_bits * sqrt(queries * N) * 2^(security_bits / 2) is added to the decrypted
        coefficients before decoding, so that the result reveals nothing useful about the
        ciphertext's error (Li-Micciancio-Schultz-Sorrell). noise_bits is log2 of a bound on
        the ciphertext's error per coefficient; by default it is estimated from the
        ciphertext (real values only: from the imaginary parts its error leaves); for complex
        values, or for a guarantee, measure it on known inputs with ctx.noise_bits(ct, sk,
        expected) and pass it. queries: decryptions of related ciphertexts an adversary may
        see. The flooding costs about security_bits/2 + log2(sqrt(queries N)) bits of
        precision.

        A ciphertext of an n-dimensional array decrypts to that shape; out="torch" /
        "dlpack" or like=x convert the result (ember.arrays)."""
        self._check(ct)
        self._check_key(sk, (SecretKey,), "decrypt")
        want_complex = ct.is_complex if complex is None else complex
        m = self._raw.decrypt_core(ct._raw, sk._raw, self._level_rows[ct.level])
        if flood:
            bits = noise_bits if noise_bits is not None else self._estimated_noise_bits(ct, m)
            sigma = self._flooding_sigma(bits, security_bits, queries)
            m = m + self._sampler.wide_gaussian(m.basis, self.device, sigma)
        if _arrays.device_output_wanted(out, like, self._cuda_index):
            # Decoded on the GPU into a buffer handed over through DLPack (no host round trip).
            shape = ct.shape if ct.shape is not None else (self.slots,)
            count = math.prod(shape)
            array = self._raw.decode_slots(m, ct.scale, check, count, want_complex, True, shape)
            return _arrays.from_device(array, like)
        z = self._raw.decode_slots(m, ct.scale, check, self.slots, want_complex, False)
        return to_output(reshape_output(z, ct.shape), out, like)

    def noise_bits(self, ct: Ciphertext, sk: SecretKey, expected) -> float:
        """log2 of the largest coefficient of ct's error: its decryption less the encoding of
        `expected` (the values it should hold) at its scale. Measure it on a run with known
        inputs, then pass it to decrypt(..., flood=True, noise_bits=...)."""
        self._check(ct)
        m = self._raw.decrypt_core(ct._raw, sk._raw, self._level_rows[ct.level])
        got = np.asarray(self._raw.decode_coeffs(m, ct.scale, False)) * ct.scale
        want, _ = self._slots_to_coeffs(expected)
        error = float(np.max(np.abs(got - np.round(want * ct.scale))))
        return math.log2(max(error, 1.0))

    def _estimated_noise_bits(self, ct: Ciphertext, m) -> float:
        """A bound on the error's coefficients from the imaginary parts of a real ciphertext's
        slots: the error's slot image has imaginary parts of variance N sigma_e^2 / 2 for
        coefficients of standard deviation sigma_e; the bound is 8 sigma_e (at least 1)."""
        if ct.is_complex:
            raise ParameterError(
                "flood=True on a complex ciphertext needs noise_bits: measure it with "
                "ctx.noise_bits(ct, sk, expected) on known inputs"
            )
        z = self._coeffs_to_slots(self._raw.decode_coeffs(m, ct.scale, False))
        sigma_e = float(np.sqrt(np.mean(np.imag(z) ** 2) * 2 / self.params.n)) * ct.scale
        return math.log2(max(8.0 * sigma_e, 1.0))

    def _flooding_sigma(self, noise_bits: float, security_bits: int, queries: int) -> float:
        if not (isinstance(security_bits, (int, np.integer)) and 1 <= security_bits <= 128):
            raise ParameterError(
                f"security_bits must be an integer in [1, 128], got {security_bits}"
            )
        if not (isinstance(queries, (int, np.integer)) and queries >= 1):
            raise ParameterError(f"queries must be a positive integer, got {queries}")
        if not (isinstance(noise_bits, (int, float, np.number)) and 0 <= noise_bits <= 80):
            raise ParameterError(f"noise_bits must be in [0, 80], got {noise_bits}")
        log_sigma = noise_bits + 0.5 * math.log2(queries * self.params.n) + security_bits / 2
        if log_sigma > 100:
            raise ParameterError(
                f"the flooding noise would be 2^{log_sigma:.1f}, above 2^100: lower "
                "security_bits or queries, or reduce the ciphertext's noise"
            )
        return 2.0**log_sigma

    # ---------------------------------------------------------------- helpers
    def _numeric_values(self, values) -> np.ndarray:
        """values as a numpy array of real or complex numbers (bool, integer, float, complex
        dtypes; object arrays only of numbers), else ParameterError: strings and other objects
        would otherwise fail deep in numpy with a TypeError."""
        self._check_values(values)
        z = as_array(values)
        if z.dtype == object:
            for v in z.flat:
                if not _is_scalar(v):
                    raise ParameterError(
                        f"values must be real or complex numbers, got {describe(v)}: "
                        f"{short_repr(v)}"
                    )
            try:
                try:
                    z = z.astype(float)
                except TypeError:  # complex entries
                    z = z.astype(complex)
            except OverflowError as e:  # Python ints beyond float64
                raise ParameterError(f"values must fit a float64: {e}") from None
        elif z.dtype.kind not in "biufc":
            raise ParameterError(f"values must be real or complex numbers, got dtype {z.dtype}")
        return z

    def _level_arg(self, level, top: int | None = None) -> int:
        """A level argument: an integer in [0, top] (default: the chain's top)."""
        top = self._raw.max_level if top is None else top
        level = integer_arg(level, f"level must be an integer in [0, {top}]")
        if not 0 <= level <= top:
            raise ParameterError(f"level must be in [0, {top}], got {level}")
        return level

    def _wrap(self, raw, like: Ciphertext, other=None) -> Ciphertext:
        cplx = like.is_complex or bool(getattr(other, "is_complex", False))
        out = Ciphertext(self, raw, cplx)
        if like.shape is not None:
            out.shape = like.shape
        return out

    def _residues(self, value: int, level: int) -> list[int]:
        """The integer that represents a scalar at `level`, residue by residue; refused beyond
        what the level holds (the bound encode applies to coefficients)."""
        bound = self._value_bounds[level]
        if abs(value) > bound:
            raise ParameterError(
                f"a scalar times its scale reaches 2^{math.log2(abs(value)):.1f}, above "
                f"2^{math.log2(bound):.1f}, the most level {level} holds (a quarter of its "
                "modulus Q, less the encryption error); use a smaller constant or apply it at a "
                "higher level"
            )
        return [value % q for q in self.params.q_primes[: self._level_rows[level]]]

    def _to_level(self, ct: Ciphertext, level: int, scale: float | None = None) -> Ciphertext:
        """ct at `level` with that level's standard scale, or `scale` (costs one level when the
        scale must change: multiply by an integer constant, then rescale)."""
        scale = self._scales[level] if scale is None else scale
        if ct.level == level and self._scale_ok(ct.scale, scale):
            return ct
        if ct.level <= level:
            raise MismatchError(
                f"cannot raise a ciphertext from level {ct.level} to {level}, or fix its scale "
                "at the same level; rescale or drop the other operand instead"
            )
        raw = self._raw.drop_level(ct._raw, level + 1)
        target = scale * self._divisors[level + 1] / raw.scale
        factor = round(target)
        raw = self._raw.multiply_scalar(raw, self._residues(factor, level + 1))
        raw.scale = raw.scale * factor
        raw = self._raw.rescale(raw)
        return self._wrap(raw, ct)

    @staticmethod
    def _scale_ok(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-9 * b

    def _match(self, a: Ciphertext, b: Ciphertext) -> tuple[Ciphertext, Ciphertext]:
        if a.level == b.level and self._scale_ok(a.scale, b.scale):
            return a, b
        if not self.auto_rescale:
            raise MismatchError(
                f"operands differ in level ({a.level}, {b.level}) or scale "
                f"({a.scale:.6g}, {b.scale:.6g}); rescale/drop them to match (manual mode)"
            )
        level = min(a.level, b.level)
        return self._to_level(a, level), self._to_level(b, level)

    def _as_plain(self, values, level: int, scale: float) -> Plaintext:
        if isinstance(values, Plaintext):
            self._check_plaintext(values, "the operation")
            if values.level == level and self._scale_ok(values.scale, scale):
                return values
            return self.encode(values.values, level, scale)
        return self.encode(values, level, scale)

    # ---------------------------------------------------------------- operations
    @_err.track(_err.add_rule)
    def add(self, a: Ciphertext, b) -> Ciphertext:
        self._check(a)
        if isinstance(b, CiphertextOps):
            self._check(b)
            a2, b2 = self._match(a, b)
            return self._wrap(self._raw.add(a2._raw, b2._raw), a, b)
        if _is_scalar(b) and _is_complex_scalar(b):
            b = np.full(self.slots, complex(_finite_scalar(b)))
        elif _is_scalar(b):
            value = _scalar_integer(_finite_scalar(b).real, a.scale)
            return self._wrap(self._raw.add_scalar(a._raw, self._residues(value, a.level)), a)
        pt = self._as_plain(b, a.level, a.scale)
        out = self._wrap(self._raw.add_plain(a._raw, pt._poly), a)
        out.is_complex = out.is_complex or _arrays.is_complex_dtype(pt.values)
        return out

    def sub(self, a: Ciphertext, b) -> Ciphertext:
        self._check(a)
        if isinstance(b, CiphertextOps):
            return self.add(a, self.negate(b))
        if isinstance(b, Plaintext):
            negated = b.values if _arrays.cuda_index(b.values) is not None else np.asarray(b.values)
            return self.add(a, Plaintext(self, None, -1, 0.0, -negated))
        if _is_scalar(b):
            return self.add(a, -b)
        if self._cuda_index is not None and _arrays.cuda_index(b) == self._cuda_index:
            flat, shape = _arrays.device_values(b)  # negated on the GPU
            return self.add(a, -flat if shape is None else -flat.reshape(shape))
        return self.add(a, -self._numeric_values(b))

    @_err.track(_err.negate_rule)
    def negate(self, a: Ciphertext) -> Ciphertext:
        self._check(a)
        return self._wrap(self._raw.negate(a._raw), a)

    def _finish_product(self, raw, like, other=None) -> Ciphertext:
        if self.auto_rescale:
            raw = self._raw.rescale(raw)
        return self._wrap(raw, like, other)

    @_err.track(_err.multiply_rule)
    def multiply(self, a: Ciphertext, b) -> Ciphertext:
        """ct * ct (relinearized), ct * plaintext/array, ct * scalar; rescaled automatically
        unless the context was made with auto_rescale=False. Integer scalars cost no level."""
        self._check(a)
        if isinstance(b, CiphertextOps):
            self._check(b)
            a2, b2 = self._match(a, b)
            if self.auto_rescale:
                if a2.level == 0:
                    raise ParameterError("multiply: the operands are at level 0; no level left")
                # Relinearization's ModDown and the rescale are one division by P q_l.
                raw = self._raw.multiply_divide(a2._raw, b2._raw, self._keys().relin)
                return self._wrap(raw, a, b)
            raw = self._raw.multiply(a2._raw, b2._raw, self._keys().relin)
            return self._finish_product(raw, a, b)
        if _is_scalar(b):
            return self._multiply_scalar(a, b)
        level = a.level
        if self.auto_rescale and level == 0:
            raise ParameterError("multiply: the ciphertext is at level 0; no level left")
        if isinstance(b, Plaintext) and b.level == level:
            pt = b
        else:
            # Scale chosen so the product rescales exactly to the next level's standard scale.
            pt_scale = (
                self._scales[level - 1] * self._divisors[level] / a.scale
                if self.auto_rescale
                else self._scales[level]
            )
            pt = self._as_plain(b, level, pt_scale)
        raw = self._raw.multiply_plain(a._raw, pt._poly)
        raw.scale = a.scale * pt.scale
        out = self._finish_product(raw, a)
        out.is_complex = out.is_complex or _arrays.is_complex_dtype(pt.values)
        return out

    def _multiply_scalar(self, a: Ciphertext, c) -> Ciphertext:
        c = _finite_scalar(c)
        if isinstance(c, (int, np.integer)) or (
            isinstance(c, (float, np.floating)) and float(c).is_integer() and abs(c) < 2**62
        ):
            raw = self._raw.multiply_scalar(a._raw, self._residues(int(c), a.level))
            raw.scale = a.scale
            return self._wrap(raw, a)
        if _is_complex_scalar(c):
            return self.multiply(a, np.full(self.slots, complex(c)))
        level = a.level
        if not self.auto_rescale:
            # Manual mode: the constant at the level's scale, no rescale (like ct * ct).
            factor = self._scales[level]
            k = _scalar_integer(c.real, factor)
            raw = self._raw.multiply_scalar(a._raw, self._residues(k, level))
            raw.scale = a.scale * factor
            return self._wrap(raw, a)
        if level == 0:
            raise ParameterError("multiply: the ciphertext is at level 0; no level left")
        factor = self._scales[level - 1] * self._divisors[level] / a.scale
        k = _scalar_integer(c.real, factor)
        raw = self._raw.multiply_scalar(a._raw, self._residues(k, level))
        raw.scale = a.scale * factor
        return self._wrap(self._raw.rescale(raw), a)

    def linear_combination(
        self,
        cts: Sequence[Ciphertext],
        coeffs: Sequence[float],
        constant: float = 0.0,
        level: int | None = None,
        scale: float | None = None,
    ) -> Ciphertext:
        """sum_i coeffs[i] cts[i] + constant, landing at `level` (default: one below the lowest
        operand) with `scale` (default: that level's standard scale), with one rescale and no
        alignment: every operand is read at level + 1 as it is (dropping primes is free) and
        multiplied by the integer round(c_i scale q_(level+1) / scale_i), which absorbs its own
        scale."""
        cts, coeffs = _as_list(cts, "ciphertexts"), _as_list(coeffs, "coefficients")
        if not cts or len(cts) != len(coeffs):
            raise ParameterError("linear_combination needs as many coefficients as ciphertexts")
        for c in cts:
            self._check(c)
        coeffs = [_real_scalar(k, "linear_combination coefficients") for k in coeffs]
        constant = _real_scalar(constant, "linear_combination's constant")
        low = min(c.level for c in cts)
        level = low - 1 if level is None else integer_arg(level, "level must be an integer")
        if not 0 <= level < low:
            raise ParameterError(
                f"linear_combination: target level {level} must be below every operand's level "
                f"(lowest {low}) and at least 0"
            )
        top = level + 1
        target = (
            self._scales[level] if scale is None else _positive_scale(scale)
        ) * self._divisors[top]
        scalars = [
            self._residues(_scalar_integer(k, target / c.scale), top) for c, k in zip(cts, coeffs)
        ]
        const = self._residues(_scalar_integer(constant, target), top)
        acc = self._raw.linear_combination([c._raw for c in cts], scalars, const, top)
        acc.scale = target
        return self._wrap(self._raw.rescale(acc), cts[0])

    def prime(self, level: int) -> int:
        """q_level, the prime a rescale at `level` divides by (with levels of two primes, with
        32-bit words, their product)."""
        return self._divisors[level]

    def _same_level(self, a: Ciphertext, b: Ciphertext):
        """The raw operands at the lower of their levels (the higher one's first rows: free)."""
        level = min(a.level, b.level)
        ra = a._raw if a.level == level else self._raw.drop_level(a._raw, level)
        rb = b._raw if b.level == level else self._raw.drop_level(b._raw, level)
        return ra, rb

    def product(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """a b relinearized and rescaled, at one level below the lower operand, with scale
        a.scale b.scale / q_l: no level or scale matching (poly_eval plans its scales)."""
        self._check(a)
        self._check(b)
        if min(a.level, b.level) == 0:
            raise ParameterError("multiply: an operand is at level 0; no level left")
        ra, rb = self._same_level(a, b)
        return self._wrap(self._raw.multiply_divide(ra, rb, self._keys().relin), a, b)

    def chebyshev_product(self, a: Ciphertext, b: Ciphertext, c: Ciphertext) -> Ciphertext:
        """2 a b - c like product(a, b) (any levels and scales), with c (at the product's level
        or above, any scale) subtracted, times k = round(S_a S_b / 2 S_c), inside the product's
        division by P q_l: c needs no alignment (poly_eval's T_a+b = 2 T_a T_b - T_a-b)."""
        for x in (a, b, c):
            self._check(x)
        level = min(a.level, b.level)
        if level == 0 or c.level < level:
            raise ParameterError("chebyshev_product: a, b above level 0, c at their level or above")
        ra, rb = self._same_level(a, b)
        k = round(a.scale * b.scale / (2 * c.scale))
        raw = self._raw.multiply_divide(
            ra, rb, self._keys().relin, c._raw, self._residues(k, level)
        )
        raw = self._raw.multiply_scalar(raw, self._residues(2, raw.level))
        return self._wrap(raw, a, b)

    def square(self, a: Ciphertext) -> Ciphertext:
        return self.multiply(a, a)

    @_err.track(_err.rescale_rule)
    def rescale(self, a: Ciphertext) -> Ciphertext:
        self._check(a)
        return self._wrap(self._raw.rescale(a._raw), a)

    def drop_level(self, a: Ciphertext, level: int) -> Ciphertext:
        """The ciphertext at a lower level with that level's standard scale."""
        self._check(a)
        return self._to_level(a, self._level_arg(level))

    @_err.track(_err.galois_rule(lambda ctx, _: 1))
    def conj(self, a: Ciphertext) -> Ciphertext:
        return self._apply_galois_element(a, 2 * self.params.n - 1, "conjugation", "conjugation")

    rotate = _err.track(_err.galois_rule(_err.rotation_switches))(KeyedContext.rotate)
    rotate_many = _err.track_many(KeyedContext.rotate_many)

    def precision_bits(self, ct: Ciphertext) -> float | None:
        """-log2(ct.error_bound): bits of precision of every slot in absolute terms, estimated
        without the secret key (a heuristic 6-sigma bound, see ember.ckks_error); None where
        an operation on the way has no estimate (bootstrapping, poly_eval, matvec, ...)."""
        self._check(ct)
        bound = ct.error_bound
        return None if bound is None else -math.log2(max(bound, 2.0**-1000))

    def sum_slots(self, a: Ciphertext) -> Ciphertext:
        """Every slot holds the sum of all slots (needs rotation keys 1, 2, 4, ...)."""
        acc, step = a, 1
        while step < self.slots:
            acc = acc + self.rotate(acc, step)
            step *= 2
        return acc

    def inner_product(self, a: Ciphertext, b) -> Ciphertext:
        return self.sum_slots(self.multiply(a, b))

    def poly_eval(
        self,
        a: Ciphertext,
        coeffs: Sequence[float],
        basis: str = "chebyshev",
        interval: tuple[float, float] = (-1.0, 1.0),
    ) -> Ciphertext:
        """p(a) for p = sum c_i T_i((2a - (lo + hi)) / (hi - lo)) (Chebyshev basis) or
        sum c_i a^i (basis="power"); see ember.polyeval for the algorithm and its depth."""
        from .polyeval import evaluate

        self._check(a)
        return evaluate(self, a, coeffs, basis, interval)

    def _boot(self, slots: int | None = None) -> Bootstrapper:
        if slots is not None:
            slots = integer_arg(slots, "bootstrapping slots must be an integer power of two")
        key = None if slots in (None, self.slots) else slots
        if key not in self._bootstrappers:
            self._bootstrappers[key] = Bootstrapper(self, key)
        return self._bootstrappers[key]

    def bootstrap(
        self, a: Ciphertext, slots: int | None = None, real: bool | None = None
    ) -> Ciphertext:
        """A fresh ciphertext of the same values at the top level (ctx.max_level), from one at
        level ctx.min_bootstrap_level or above (SlotToCoeff runs on the levels below); needs
        ctx.eval_keys(sk, bootstrap=True). slots=n (a power of two below ctx.slots) bootstraps a
        sparsely packed vector of n values faster (its keys come from eval_keys(...,
        bootstrap_slots=[n])). A ciphertext of real values (a.is_complex False) takes one EvalMod
        instead of two, about a quarter faster; real=True bootstraps the real part of a complex
        ciphertext, real=False forces the complex circuit. See ember.bootstrap."""
        self._check(a)
        return self._boot(slots).bootstrap(a, real)

    def bootstrap_many(
        self, cts: Sequence[Ciphertext], slots: int | None = None, real: bool | None = None
    ) -> list[Ciphertext]:
        """ctx.bootstrap of each ciphertext (same order), with the ones of real values taken two
        at a time: a + i b goes through the complex circuit, whose two EvalMods return a and b,
        so a pair costs one complex bootstrap (an odd one out takes the real variant).
        real=True treats every ciphertext as real (their real parts), real=False bootstraps
        each one alone by the complex circuit."""
        for a in cts:
            self._check(a)
        boot = self._boot(slots)
        out: list = [None] * len(cts)
        reals = [i for i, a in enumerate(cts) if (not a.is_complex if real is None else bool(real))]
        for i, j in zip(reals[0::2], reals[1::2]):
            pair = boot.bootstrap_pair(cts[i], cts[j])
            if pair is None:  # their level-0 scales differ: one at a time
                pair = boot.bootstrap(cts[i], True), boot.bootstrap(cts[j], True)
            out[i], out[j] = pair
        if len(reals) % 2:
            out[reals[-1]] = boot.bootstrap(cts[reals[-1]], True)
        for i, a in enumerate(cts):
            if out[i] is None:
                out[i] = boot.bootstrap(a, False)
        return out

    def matvec(self, matrix, a: Ciphertext) -> Ciphertext:
        """matrix @ a for a plaintext slots x slots matrix (diagonal method, baby-step
        giant-step with hoisted baby steps); see ember.linalg."""
        from .linalg import matvec

        self._check(a)
        return matvec(self, self._numeric_values(matrix), a)
