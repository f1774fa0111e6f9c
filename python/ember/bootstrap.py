"""CKKS bootstrapping (the `boot` layer): a circuit of CKKS operations that refreshes a ciphertext
to the top level.

Steps (Cheon-Han-Kim-Kim-Song, with Bossuat et al.'s EvalMod and sparse-secret encapsulation, in
the SlotToCoeff-first order):

1. SlotToCoeff, on the input at level stc_levels (the lowest message primes): the decoding map U0
   (z = U0 (t_lo + i t_hi)) as the special FFT's butterfly stages merged into `stc_levels`
   matrices with few diagonals, each evaluated by baby-step giant-step with hoisted baby
   rotations, turns the slots z into the coefficients (Re z, Im z) at level 0 (bit-reversed).
2. Encapsulation (optional, default): key switch at level 0 from the user's dense secret s to an
   ephemeral sparse secret s' (h' nonzeros; its key holds only the rows of q_0 and P, so it is an
   RLWE sample modulo q_0 P), so that after ModRaise |I| <= (h' + 1) / 2.
3. ModRaise: the residues mod q_0 lifted to the whole chain Q_L; the plaintext becomes t = m + q_0 I.
   With encapsulation, a key switch s' -> s at the top level follows.
4. CoeffToSlot: the inverse of U0 in `cts_levels` matrices; conjugation splits the real and the
   imaginary parts.
5. EvalMod: x -> C sin(2 pi x) on each part (slots t / q_0 = I + m / q_0) as a Chebyshev
   approximation of cos(2 pi (x - 1/4) / 2^r) on [-(K + 1), K + 1] followed by r double-angle
   steps, with C = q_0 / (2 pi scale) folded into them: the output is the values, at the top
   message level with its standard scale.

Every constant factor is folded into the transforms' plaintext diagonals, which are encoded once
(per level and scale) and kept on the context's device. The level layout of a bootstrapping
parameter set, from the top: CoeffToSlot primes, EvalMod primes, the message primes (the lowest
stc_levels of them are SlotToCoeff's), q_0 (see BootstrapParams).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .errors import MissingKeyError, ParameterError
from .rlwe import galois_element

__all__ = ["BootstrapParams", "Bootstrapper"]


@dataclass(frozen=True)
class BootstrapParams:
    """The bootstrapping part of a CKKS parameter set.

    cts_levels / stc_levels: levels (merged FFT stages) of CoeffToSlot / SlotToCoeff. CoeffToSlot
    has its own primes of cts_bits at the top; SlotToCoeff runs first, on the stc_levels lowest
    message-sized primes (a ciphertext is bootstrapped from level >= stc_levels). eval_bits:
    primes (and scale) of EvalMod. message_ratio_bits: q_0 over the scale of the coefficients
    at level 0. k: the bound on |I| (the multiple of q_0 that ModRaise adds); with encapsulation
    it is (sparse_hw + 1) // 2 unless given. double_angle: r. degree: Chebyshev degree of the
    cosine. sparse_hw: Hamming weight of the ephemeral secret (0 turns encapsulation off; k must
    then bound I for the user's secret).
    """

    cts_levels: int = 3
    stc_levels: int = 3
    cts_bits: int = 56
    eval_bits: int = 60
    message_ratio_bits: int = 13
    k: int = 0
    double_angle: int = 2
    degree: int = 56
    sparse_hw: int = 32

    def __post_init__(self):
        if self.cts_levels < 1 or self.stc_levels < 1:
            raise ParameterError("cts_levels and stc_levels must be >= 1")
        for name in ("cts_bits", "eval_bits"):
            if not 30 <= getattr(self, name) <= 61:
                raise ParameterError(f"{name} must be in [30, 61]")
        if not 4 <= self.message_ratio_bits <= 30:
            raise ParameterError("message_ratio_bits must be in [4, 30]")
        if not 0 <= self.double_angle <= 8 or not 3 <= self.degree <= 255:
            raise ParameterError("double_angle must be in [0, 8] and degree in [3, 255]")
        if self.sparse_hw < 0 or (self.sparse_hw == 0 and self.k < 1):
            raise ParameterError("without encapsulation (sparse_hw=0), give k, the bound on |I|")
        if self.k == 0:
            object.__setattr__(self, "k", (self.sparse_hw + 1) // 2)

    @property
    def poly_levels(self) -> int:
        """Levels of the cosine's evaluation: one squaring, then ember.polyeval's schedule for
        the even polynomial's degree / 2 in the square (see Bootstrapper)."""
        return 1 + _chebyshev_depth(self.degree // 2)

    @property
    def eval_levels(self) -> int:
        return self.poly_levels + self.double_angle

    @property
    def levels(self) -> int:
        """Levels one bootstrap consumes (SlotToCoeff's, EvalMod's and CoeffToSlot's)."""
        return self.cts_levels + self.eval_levels + self.stc_levels

    def prime_bits(self) -> list[int]:
        """Bits of the primes above the message chain, from the lowest (EvalMod) up."""
        return [self.eval_bits] * self.eval_levels + [self.cts_bits] * self.cts_levels


class _Depth:
    """A stand-in ciphertext that only tracks its level: ember.polyeval run on it with
    _DepthContext gives the exact depth of its schedule."""

    scale = 1.0

    def __init__(self, level: int):
        self.level = level


class _DepthContext:
    def multiply(self, a, b):
        if isinstance(b, _Depth):
            return _Depth(min(a.level, b.level) - 1)
        return _Depth(a.level if float(b).is_integer() else a.level - 1)

    def product(self, a, b):
        return _Depth(min(a.level, b.level) - 1)

    def chebyshev_product(self, a, b, c):
        return _Depth(min(a.level, b.level) - 1)

    def add(self, a, b):
        return _Depth(min(a.level, b.level)) if isinstance(b, _Depth) else a

    sub = add

    def drop_level(self, a, level):
        return _Depth(level)

    def linear_combination(self, cts, coeffs, constant=0.0, level=None, scale=None):
        return _Depth(min(c.level for c in cts) - 1 if level is None else level)

    def prime(self, level):
        return 1.0

    def scale_at(self, level):
        return 1.0


def _chebyshev_depth(degree: int) -> int:
    from .polyeval import evaluate

    top = 64
    out = evaluate(_DepthContext(), _Depth(top), [0.5] * (degree + 1), "chebyshev", (-1.0, 1.0))
    return top - out.level


# ---------------------------------------------------------------- the special FFT, factored


def _rot_group(slots: int, n: int) -> np.ndarray:
    g = np.empty(slots, dtype=np.int64)
    e = 1
    for j in range(slots):
        g[j] = e
        e = e * 5 % (2 * n)
    return g


def _butterfly_stage(slots: int, n: int, length: int, inverse: bool) -> dict[int, np.ndarray]:
    """One stage of the special FFT (block length `length`) as {rotation offset: diagonal}:
    out = sum_o diag_o * rot(x, o), rot(x, o)[s] = x[s + o]. Forward: u + xi v, u - xi v; the
    inverse undoes it."""
    h = length // 2
    s = np.arange(slots)
    p = s % length
    top = p < h
    j = np.where(top, p, p - h)
    g = _rot_group(slots, n)
    xi = np.exp(2j * np.pi * (g[j] % (4 * length)) / (4 * length))
    if inverse:
        parts = [
            (0, np.where(top, 0.5, -0.5 / xi)),
            (h, np.where(top, 0.5, 0)),
            (-h, np.where(top, 0, 0.5 / xi)),
        ]
    else:
        parts = [(0, np.where(top, 1, -xi)), (h, np.where(top, xi, 0)), (-h, np.where(top, 0, 1))]
    out: dict[int, np.ndarray] = {}
    for o, v in parts:
        o %= slots
        out[o] = out.get(o, 0) + np.asarray(v, dtype=complex)
    return out


def _compose(after: dict, first: dict, slots: int) -> dict[int, np.ndarray]:
    """The diagonals of (after o first): sum_{a,b} after_a * rot(first_b, a) at offset a + b."""
    out: dict[int, np.ndarray] = {}
    for oa, da in after.items():
        for ob, db in first.items():
            o = (oa + ob) % slots
            out[o] = out.get(o, 0) + da * np.roll(db, -oa)
    return {o: v for o, v in out.items() if np.any(v != 0)}


def _split(count: int, groups: int) -> list[int]:
    """count stages into `groups` consecutive groups, as even as possible (larger ones first)."""
    base, extra = divmod(count, groups)
    return [base + (1 if i < extra else 0) for i in range(groups)]


def dft_matrices(n: int, levels: int, inverse: bool) -> list[dict[int, np.ndarray]]:
    """The decoding map U0 (inverse=False: bit-reversed coefficients -> slots) or its inverse
    (slots -> bit-reversed coefficients) as `levels` sparse-diagonal matrices in the order they
    are applied."""
    slots = n // 2
    log_slots = slots.bit_length() - 1
    if not 1 <= levels <= log_slots:
        raise ParameterError(f"the FFT level budget must be in [1, {log_slots}]")
    lengths = [1 << k for k in range(1, log_slots + 1)]
    if inverse:
        lengths = lengths[::-1]
    mats, at = [], 0
    for size in _split(log_slots, levels):
        m = _butterfly_stage(slots, n, lengths[at], inverse)
        for length in lengths[at + 1 : at + size]:
            m = _compose(_butterfly_stage(slots, n, length, inverse), m, slots)
        mats.append(m)
        at += size
    return mats


# Cost of a giant step (its sum's ModDown, then a full key switch) in units of a double-hoisted
# baby step (a key product and one pass adding P sigma(c0)): about 0.6 ms against 0.1 ms on an
# H200 at N = 2^16.
GIANT_COST = 6.0


def _bsgs_plan(offsets, slots: int) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Baby-step giant-step split of the offsets o = G + b: (d, n1, [(offset, giant, baby)])
    with baby steps b = 0, d, ..., (n1 - 1) d."""
    d = 0
    for o in offsets:
        d = math.gcd(d, o)
    d = math.gcd(d, slots) or slots
    period = slots // d
    ms = [((o // d + period // 2) % period) - period // 2 for o in offsets]
    lo = min(ms)
    span = max(ms) - lo + 1
    # Baby steps share one decomposition (hoisted), giant steps are full key switches: pick
    # the power of two n1 minimizing (n1 - 1) + GIANT_COST (ceil(span / n1) - 1).
    n1 = min(
        (1 << k for k in range(span.bit_length() + 1)),
        key=lambda b: (b - 1) + GIANT_COST * (math.ceil(span / b) - 1),
    )
    plan = []
    for o, m in zip(offsets, ms):
        b = (m - lo) % n1
        plan.append((o, (o - b * d) % slots, b * d))
    return d, n1, plan


# ---------------------------------------------------------------- the circuit


class Bootstrapper:
    """Bootstrapping for one CKKS context with bootstrapping parameters (ctx.params.boot), for
    full slots (slots = N/2) or sparse slots (a power of two n < N/2: a vector of n values
    repeated over the slots, as ctx.encrypt(..., sparse=True) packs it).

    SlotToCoeff runs first, on the input at level stc_levels (its message-sized primes are the
    bottom of the chain): the slots z become the coefficients (Re z, Im z) at level 0, with the
    scale q_0 / 2^message_ratio_bits. After ModRaise, CoeffToSlot brings the raised coefficients
    back to the slots, and EvalMod removes the multiples of q_0 and lands on the message top level
    with its standard scale: the output needs no transform after EvalMod.

    Sparse slots: after ModRaise, log2(N / 2n) rotations by n, 2n, ... (SubSum) keep only the
    coefficients of the subring Z[X^(N/2n)] (times N/2n), so the transforms are those of the ring
    of degree 2n, on n-periodic slot vectors.

    Real values take one EvalMod (on the real part of CoeffToSlot's output, the coefficients
    Re z), complex values two; a pair of real ciphertexts a + i b takes the complex circuit and
    its two EvalMods return a and b.
    """

    def __init__(self, ctx, slots: int | None = None):
        bp = ctx.params.boot
        if bp is None:
            raise ParameterError(
                "these parameters have no bootstrapping levels: use a preset with 'boot' in its "
                "name or Params(..., boot=BootstrapParams())"
            )
        n = ctx.params.n
        full = n // 2
        slots = full if slots is None else int(slots)
        budget = max(bp.cts_levels, bp.stc_levels)
        if slots & (slots - 1) or not 1 << budget <= slots <= full:
            raise ParameterError(
                f"bootstrapping slots must be a power of two in [2^{budget}, {full}] "
                f"(at least 2^max(cts_levels, stc_levels)), got {slots}"
            )
        self.ctx, self.bp = ctx, bp
        self.n, self.slots, self.boot_slots = n, full, slots
        self.sparse = slots < full
        # The transforms act on n-periodic slot vectors (n = N/2 for full slots).
        self.period = slots
        self.cts = [
            ("cts", i, self._planned(m))
            for i, m in enumerate(dft_matrices(2 * slots, bp.cts_levels, True))
        ]
        self.stc = [
            ("stc", i, self._planned(m))
            for i, m in enumerate(dft_matrices(2 * slots, bp.stc_levels, False))
        ]
        self.top = ctx._raw.max_level
        self.out_level = ctx.max_level
        self.min_level = bp.stc_levels  # SlotToCoeff's levels, at the bottom of the chain
        self.eval_top = self.top - bp.cts_levels
        self.q0 = float(ctx._moduli[0])  # Q_0: one prime, or with 32-bit words two
        # Scale of the coefficients at level 0: |t / q_0| <= 2^-ratio keeps sin(2 pi x) ~ 2 pi x
        # within 2^-23 relative for |z| <= 1; larger ratios lose more to the noise at level 0
        # (2^-13 measured best for the worst slot at N = 2^16, and good at N = 2^12).
        self.delta0 = self.q0 / 2.0**bp.message_ratio_bits
        span = bp.k + 1  # t / q_0 in (-(k + 1/2), k + 1/2)
        self.span = span
        r = bp.double_angle
        from .polyeval import chebyshev_coefficients

        # The cosine cos(2 pi (span u - 1/4) / 2^r) = g(u - shift) with g(v) = cos(2 pi span v /
        # 2^r) even: with v' = kappa (u - shift) (kappa folded into CoeffToSlot, the shift a free
        # constant) and w = v'^2 - 1 in [-1, 1] (one squaring), g is a Chebyshev polynomial of
        # half the degree in w: about a third fewer products than the degree in u.
        self.shift = 1.0 / (4 * span)
        reach = 1.0 + self.shift  # |u - shift| <= reach
        self.kappa = math.sqrt(2.0) / reach
        self.cheb = chebyshev_coefficients(
            lambda w: np.cos(
                2 * np.pi * span * reach * np.sqrt(np.maximum(w + 1, 0) / 2) / (1 << r)
            ),
            bp.degree // 2,
        )
        # EvalMod's output constant C = q_0 / (2 pi delta0) (sin(2 pi t / q_0) C = z) folded into
        # the double angles: Y_k = c_k cos(2^k theta) with c_(k-1) = sqrt(2 c_k) gives
        # Y_(k+1) = Y_k^2 - c_(k+1), and c_0 scales the Chebyshev coefficients.
        consts = [self.q0 / (2 * np.pi * self.delta0)]
        for _ in range(r):
            consts.append(math.sqrt(2 * consts[-1]))
        self.double_angle_consts = consts[::-1]  # c_0 .. c_r
        # Encoded diagonals by (stage, factor, level, plaintext scale). SlotToCoeff's depend on
        # the input's scale, so entries beyond one set per stage are evicted least recently
        # used: bounded device memory.
        self._plain_cache: OrderedDict = OrderedDict()
        self._plain_cache_limit = len(self.cts) + len(self.stc) + 3
        self._monomials: dict = {}
        x_n2 = np.zeros(n)
        x_n2[n // 2] = 1.0
        self._x_n2 = x_n2  # X^(N/2): multiplies every slot by i

    def _sub_sum_steps(self) -> list[int]:
        steps, step = [], self.boot_slots
        while self.sparse and step < self.slots:
            steps.append(step)
            step *= 2
        return steps

    def _planned(self, m: dict) -> tuple:
        offsets = sorted(m)
        d, n1, plan = _bsgs_plan(offsets, self.period)
        return m, d, n1, plan

    def rotations(self) -> list[int]:
        """Rotation steps whose keys the transforms (and SubSum) need."""
        steps = set(self._sub_sum_steps())
        for _, _, (_, d, n1, plan) in self.cts + self.stc:
            steps.update(b for _, _, b in plan)
            steps.update(g for _, g, _ in plan)
        return sorted(s for s in steps if s % self.slots)

    # ---------------------------------------------------------------- linear transforms
    def _transform(self, x, planned, factor: complex, target_scale: float, key: tuple):
        """sum_o diag_o * rot(x, o) times `factor`, rescaled once, landing at `target_scale`."""
        baby_keys, giant_keys, terms = self._transform_operands(
            x, planned, factor, target_scale, key
        )
        out = self.ctx._wrap(
            self.ctx._raw.linear_transform_hoisted(x._raw, baby_keys, giant_keys, terms), x
        )
        out.is_complex = True
        out._raw.scale = target_scale  # x.scale * pt_scale / q_level
        return out

    def _transform_operands(self, x, planned, factor: complex, target_scale: float, key: tuple):
        """The baby-step keys, giant-step keys and (baby index, plaintext) terms per giant of
        _transform (its diagonals encoded once and cached)."""
        ctx = self.ctx
        raw = ctx._raw
        m, _, _, plan = planned
        level = x.level
        pt_scale = target_scale * self.ctx.prime(level) / x.scale
        cache_key = key + (level, round(math.log2(pt_scale) * 1e9))
        plains = self._plain_cache.get(cache_key)
        if plains is not None:
            self._plain_cache.move_to_end(cache_key)
        if plains is None:
            plains = {}
            reps = self.slots // self.period
            for o, g, _ in plan:
                diag = np.tile(np.roll(m[o] * factor, g), reps)
                coeffs, _ = ctx._slots_to_coeffs(diag)
                # Over Q_l u P: the baby steps stay in that basis until each giant's ModDown.
                plains[o] = raw.encode_coeffs(coeffs, level, pt_scale, True)
            self._plain_cache[cache_key] = plains
            while len(self._plain_cache) > self._plain_cache_limit:
                self._plain_cache.popitem(last=False)
        by_giant: dict[int, list] = {}
        for o, g, b in plan:
            by_giant.setdefault(g, []).append((o, b))
        # Double hoisting (C++): baby rotations share one ModUp and skip their ModDown; each
        # giant step's plaintext sum takes one ModDown, then its rotation (of the unrescaled sum,
        # so its key-switching noise is negligible) stays in Q u P; one division by P q_l ends
        # the stage.
        nonzero = sorted({b for _, _, b in plan if b})
        index = {0: 0} | {b: i + 1 for i, b in enumerate(nonzero)}
        baby_keys = [ctx._galois_key(galois_element(b, self.n)) for b in nonzero]
        giants = sorted(by_giant)
        giant_keys = [ctx._galois_key(galois_element(g, self.n)) if g else None for g in giants]
        terms = [[(index[b], plains[o]) for o, b in by_giant[g]] for g in giants]
        return baby_keys, giant_keys, terms

    def _run_transforms(self, x, stages, factor: complex, final_scale: float):
        """The stages in order, the first times `factor`, ending at `final_scale`. The product
        of the plaintext scales is fixed (final * prod q / input scale); it is spread evenly so
        that no stage's diagonals or rescaling lose precision."""
        for i, (stage_name, index, planned) in enumerate(stages):
            remaining = len(stages) - i
            qs = [float(self.ctx.prime(x.level - j)) for j in range(remaining)]
            log_pt = math.log2(final_scale) + sum(map(math.log2, qs)) - math.log2(x.scale)
            pt_scale = 2.0 ** (log_pt / remaining)
            target = final_scale if remaining == 1 else x.scale * pt_scale / qs[0]
            f = factor if i == 0 else 1.0
            x = self._transform(x, planned, f, target, (stage_name, index, f))
        return x

    def _times_i(self, x, sign: int = 1):
        """x times i (or -i): the monomial X^(N/2), exact and free of levels."""
        ctx = self.ctx
        mono = self._monomials.get((x.level, sign))
        if mono is None:
            mono = ctx._raw.encode_coeffs(sign * self._x_n2, x.level, 1.0)
            self._monomials[(x.level, sign)] = mono
        out = ctx._wrap(ctx._raw.multiply_plain(x._raw, mono), x)
        out._raw.scale = x.scale
        return out

    # ---------------------------------------------------------------- EvalMod
    def _eval_mod(self, u):
        """C sin(2 pi span u / kappa) = z from u / kappa in [-1, 1] (standard scale of the
        EvalMod top level), landing at the message top level with its standard scale."""
        ctx = self.ctx
        c = self.double_angle_consts
        v = ctx.add(u, -self.kappa * self.shift)
        w = ctx.add(ctx.multiply(v, v), -1.0)
        y = ctx.poly_eval(w, self.cheb * c[0])
        for ck in c[1:]:
            y = ctx.add(ctx.multiply(y, y), -ck)
        if y.level < self.out_level:
            raise AssertionError("bootstrap: EvalMod used more levels than planned")
        y = ctx.drop_level(y, self.out_level) if y.level > self.out_level else y
        y.is_complex = False
        return y

    def plaintext_bytes(self) -> int:
        """Device memory of the precomputed diagonals."""
        return sum(
            8 * p.limbs * p.n for plains in self._plain_cache.values() for p in plains.values()
        )

    # ---------------------------------------------------------------- the whole circuit
    def _input(self, ct):
        """ct at the level SlotToCoeff starts from."""
        ctx = self.ctx
        if ctx._keys().boot is None and self.bp.sparse_hw:
            raise MissingKeyError(
                "no bootstrapping keys: generate them with ctx.eval_keys(sk, bootstrap=True)"
            )
        if ct.level < self.min_level:
            raise ParameterError(
                f"bootstrap needs a ciphertext at level >= {self.min_level} "
                f"(ctx.min_bootstrap_level: SlotToCoeff runs on the levels below), got level "
                f"{ct.level}; bootstrap before the last {self.min_level} levels are used"
            )
        return ct if ct.level == self.min_level else ctx._to_level(ct, self.min_level)

    def bootstrap(self, ct, real: bool | None = None, phases: dict | None = None, sync=None):
        """The circuit. real=None follows ct.is_complex; real=True bootstraps the real part of
        the slots (one EvalMod instead of two). With `phases` (and a device `sync`), the
        milliseconds of each step are recorded there (benchmarks)."""
        real = not ct.is_complex if real is None else bool(real)
        re, im = self._circuit(self._input(ct), not real, phases, sync)
        if real:
            return re
        out = self.ctx._wrap(self.ctx._raw.add(re._raw, self._times_i(im)._raw), re)
        out.is_complex = True
        return out

    def bootstrap_pair(self, a, b):
        """Two ciphertexts of real values in one complex bootstrap: a + i b (i is the monomial
        X^(N/2), exact and free) through the circuit, whose two EvalMods return a and b. Returns
        None when the two cannot share a bootstrap (their scales differ)."""
        ctx = self.ctx
        raw = ctx._raw
        a, b = self._real_part(self._input(a)), self._real_part(self._input(b))
        if not math.isclose(a.scale, b.scale, rel_tol=1e-12):
            return None
        packed = ctx._wrap(raw.add(a._raw, self._times_i(b)._raw), a)
        packed.is_complex = True
        return self._circuit(packed, True, None, None)

    def _real_part(self, ct):
        """(ct + conj ct) / 2 for a complex ciphertext (the 1/2 in the scale); ct if real."""
        if not ct.is_complex:
            return ct
        ctx = self.ctx
        out = ctx._wrap(ctx._raw.add(ct._raw, ctx.conj(ct)._raw), ct)
        out._raw.scale = ct.scale * 2
        out.is_complex = False
        return out

    def _circuit(self, ct, imaginary: bool, phases: dict | None, sync):
        """SlotToCoeff to EvalMod on ct at min_level: the ciphertexts of Re z and (with
        `imaginary`) Im z at the message top level, or None for the latter."""
        import time

        marks = [time.perf_counter()]

        def mark(name):
            if phases is not None:
                sync()
                now = time.perf_counter()
                phases[name] = (now - marks[-1]) * 1e3
                marks.append(now)

        ctx = self.ctx
        raw = ctx._raw
        bp = self.bp
        keys = ctx._keys()
        # SlotToCoeff: slots z -> coefficients (Re z, Im z) delta0 (bit-reversed) at level 0.
        x = self._run_transforms(ct, self.stc, 1.0, self.delta0)
        if x.level != 0:
            raise AssertionError("bootstrap: SlotToCoeff ended above level 0")
        mark("slot_to_coeff")
        c = x._raw
        if bp.sparse_hw:
            c = raw.switch_key(c, keys.boot[0])
        c = raw.mod_raise(c, self.top)
        if bp.sparse_hw:
            c = raw.switch_key(c, keys.boot[1])
        # Slots now decode to U0 t / scale: with scale q_0 span, CoeffToSlot yields t / (q_0 span).
        c.scale = self.q0 * self.span
        x = ctx._wrap(c, ct)
        x.is_complex = True
        for step in self._sub_sum_steps():  # sparse: t -> (N/2n) t restricted to the subring
            x = ctx._wrap(raw.add(x._raw, ctx.rotate(x, step)._raw), x)
            x._raw.scale = c.scale * 2
            c = x._raw
        mark("mod_raise")
        # CoeffToSlot, landing at the EvalMod top level's standard scale; 1/2 for the split and
        # EvalMod's kappa.
        x = self._run_transforms(x, self.cts, 0.5 * self.kappa, ctx.scale_at(self.eval_top))
        if x.level != self.eval_top:
            raise AssertionError("bootstrap: CoeffToSlot ended at an unexpected level")
        mark("coeff_to_slot")
        conj = ctx.conj(x)
        re = ctx._wrap(raw.add(x._raw, conj._raw), x)
        re.is_complex = False
        re = self._eval_mod(re)
        im = None
        if imaginary:
            im = self._times_i(ctx._wrap(raw.sub(x._raw, conj._raw), x), -1)
            im.is_complex = False
            im = self._eval_mod(im)
        mark("eval_mod")
        return re, im


def generate_boot_keys(ctx, sk, progress: bool = True):
    """The two encapsulation keys (s -> sparse s' at level 0, s' -> s) for ctx.params.boot."""
    bp = ctx.params.boot
    if not bp.sparse_hw:
        return None
    raw = ctx._raw
    sparse = raw.keygen(ctx._sampler, bp.sparse_hw)
    to_sparse = raw.switching_key(sk._raw, sparse, ctx._sampler, sk._raw.key_id, True)
    from_sparse = raw.switching_key(sparse, sk._raw, ctx._sampler, sk._raw.key_id, False)
    return to_sparse, from_sparse
