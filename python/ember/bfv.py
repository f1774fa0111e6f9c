"""BFV: exact arithmetic on encrypted integers modulo t, the message scaled by Q/t.

Multiplication is the HPS-style exact one: both operands lifted (centered, exactly) from Q to
Q u R, tensored there, scaled by t/Q with exact rounding (DivideRound) and brought back to Q
(then relinearized). It uses only exact conversions, so no approximation error (BEHZ's Montgomery
/ Shenoy-Kumaresan corrections) is added and the CPU and GPU results are identical. mod_switch
drops primes to shrink a ciphertext before sending it. See ember.integer for encoding and the
operators.
"""

from __future__ import annotations

import math
from typing import ClassVar

from . import _ember
from .errors import ParameterError, SerializationError
from .integer import Ciphertext, IntegerContext, IntegerParams, Plaintext
from .rlwe import EvalKeys, PublicKey, SecretKey

__all__ = ["Ciphertext", "Context", "EvalKeys", "Params", "Plaintext", "PublicKey", "SecretKey"]


class Params(IntegerParams):
    __doc__ = IntegerParams.__doc__
    # The paper sets (N, log2 QP): last listed size is the special prime, one digit per prime of
    # Q (SEAL's and Phantom's layout).
    _PRESETS: ClassVar[dict] = {
        "N12_t65537": {"log_n": 12, "q_bits": (36, 36), "special_bits": (37,)},  # 109
        "N13_t65537": {"log_n": 13, "q_bits": (50, 50), "special_bits": (52,)},  # 152
        "N14_t65537": {"log_n": 14, "q_bits": (59, 59, 59), "special_bits": (60,)},  # 237
        "N15_Q496_t65537": {"log_n": 15, "q_bits": (55,) * 8, "special_bits": (56,)},  # 496
        "N15_t65537": {"log_n": 15, "q_bits": (55,) * 15, "special_bits": (55,)},  # 880
    }


def aux_primes(params: Params, aux_bits: int | None = None) -> list[int]:
    """The primes R of the multiplication's extended basis: log2 R above log2(t N Q) + 2 (the
    centered tensor times t, with margin), as few as 60-bit primes take, of the smallest size
    that keeps that count (faster GPU transforms; see bfv::choose_aux_primes). aux_bits 50, 57
    or 60 forces their size instead (None chooses); other values raise ParameterError."""
    return list(
        _ember.bfv_aux_primes(
            params.n,
            list(params.q_primes),
            list(params.p_primes),
            int(params.plain_modulus),
            _aux_bits(aux_bits),
        )
    )


def _aux_bits(aux_bits) -> int:
    """The C++ form of aux_bits: 0 for automatic."""
    if aux_bits is None:
        return 0
    if isinstance(aux_bits, bool) or not isinstance(aux_bits, int) or aux_bits not in (50, 57, 60):
        raise ParameterError(f"aux_bits must be None (automatic), 50, 57 or 60, got {aux_bits!r}")
    return aux_bits


class Context(IntegerContext):
    """A BFV context on one device: ctx.slots (N), ctx.plain_modulus, ctx.max_level.

    aux_bits: the size of the auxiliary primes R of the multiplication (None: chosen per
    parameter set, see aux_primes; 50, 57 or 60 forces it, for comparisons). Products are the
    same whatever the size; R is part of the context's fingerprint, so keys and ciphertexts
    belong to contexts with the same aux_bits."""

    scheme = "BFV"

    def __init__(
        self,
        params: Params | str,
        device: str | None = None,
        aux_bits: int | None = None,
        _like=None,
    ):
        if isinstance(params, str):
            params = Params.preset(params)
        self.aux_bits = aux_bits
        self._aux = _aux_bits(aux_bits)
        super().__init__(params, device, _like)

    def _replica_options(self) -> dict:
        return {"aux_bits": self.aux_bits}

    def _make_raw(self, like):
        p = self.params
        return _ember.BfvContext(
            p.n,
            list(p.q_primes),
            list(p.p_primes),
            p.dnum,
            int(p.plain_modulus),
            self._aux,
            self.device,
            like,
        )

    def _encrypt_raw(self, pt: Plaintext, key, symmetric: bool):
        if pt.on_device:  # scaled from backend memory
            m = pt._device
            if symmetric:
                return self._raw.encrypt_symmetric_coeffs(m, key, self._sampler)
            return self._raw.encrypt_coeffs(m, key, self._sampler)
        if symmetric:
            return self._raw.encrypt_symmetric(pt.coeffs, key, self._sampler)
        return self._raw.encrypt(pt.coeffs, key, self._sampler)

    def _plain_for_add(self, pt: Plaintext, raw):
        key = ("scaled", raw.level)
        if key not in pt._cache:
            pt._cache[key] = (
                self._raw.scale_plain_coeffs(pt._device, raw.level)
                if pt.on_device
                else self._raw.scale_plain(pt.coeffs, raw.level)
            )
        return pt._cache[key]

    def _scalar_residues(self, raw, k: int) -> list[int]:
        """round(Q_level (k mod t) / t) per prime: the constant k as a BFV message."""
        t = self.plain_modulus
        q = math.prod(self._raw.prime(i) for i in range(raw.level + 1))
        v = (q * (k % t) + t // 2) // t
        return self._residues(v, raw.level)

    def _check_factor(self, factor: int) -> None:
        if factor != 1:
            raise SerializationError(f"BFV ciphertext with plaintext factor {factor}: it must be 1")

    def _matched(self, a, b):
        level = min(a.level, b.level)
        a = a if a.level == level else self._raw.mod_switch(a, level)
        b = b if b.level == level else self._raw.mod_switch(b, level)
        return a, b

    def _add_ct(self, a, b):
        return self._raw.add(*self._matched(a, b))

    def _multiply_ct(self, a, b):
        a, b = self._matched(a, b)
        return self._raw.multiply(a, b, self._keys().relin)
