"""BGV: exact arithmetic on encrypted integers modulo t, the message in the low digits
(c0 + c1 s = f m + t e).

Every error is a multiple of t; modulus switching (and the ModDown of key switching) divides by a
prime while keeping the message modulo t, which multiplies it by q^-1 mod t: each ciphertext
records that factor f and decryption removes it. By default every ciphertext product is followed
by a modulus switch (auto_mod_switch=True), which keeps the noise near its fresh size so that
depth = number of primes of Q - 1. Operands at different levels or with different factors are
matched automatically. See ember.integer for encoding and the operators.
"""

from __future__ import annotations

from typing import ClassVar

from . import _ember
from .integer import Ciphertext, IntegerContext, IntegerParams, Plaintext
from .rlwe import EvalKeys, PublicKey, SecretKey

__all__ = ["Ciphertext", "Context", "EvalKeys", "Params", "Plaintext", "PublicKey", "SecretKey"]


class Params(IntegerParams):
    __doc__ = IntegerParams.__doc__
    # The paper sets (log N, log2 QP) = (13, 218), (14, 438), (15, 880): SEAL's default primes.
    _PRESETS: ClassVar[dict] = {
        "N13_t65537": {"log_n": 13, "q_bits": (43, 43, 44, 44), "special_bits": (44,)},
        "N14_t65537": {"log_n": 14, "q_bits": (48, 48, 48) + (49,) * 5, "special_bits": (49,)},
        "N15_t65537": {"log_n": 15, "q_bits": (55,) * 15, "special_bits": (55,)},
    }


class Context(IntegerContext):
    """A BGV context on one device: ctx.slots (N), ctx.plain_modulus, ctx.max_level."""

    scheme = "BGV"

    def __init__(
        self,
        params: Params | str,
        device: str | None = None,
        auto_mod_switch: bool = True,
        _like=None,
    ):
        if isinstance(params, str):
            params = Params.preset(params)
        self.auto_mod_switch = auto_mod_switch
        super().__init__(params, device, _like)

    def _replica_options(self) -> dict:
        return {"auto_mod_switch": self.auto_mod_switch}

    def _make_raw(self, like):
        p = self.params
        return _ember.BgvContext(
            p.n, list(p.q_primes), list(p.p_primes), p.dnum, int(p.plain_modulus), self.device, like
        )

    def _encrypt_raw(self, pt: Plaintext, key, symmetric: bool):
        poly = pt.lifted(self.max_level)
        if symmetric:
            return self._raw.encrypt_symmetric(poly, key, self._sampler)
        return self._raw.encrypt(poly, key, self._sampler)

    def _plain_for_add(self, pt: Plaintext, raw):
        return pt.lifted(raw.level, raw.factor)

    def _scalar_residues(self, raw, k: int) -> list[int]:
        return self._residues(self._centered_int(k * raw.factor), raw.level)

    def _add_ct(self, a, b):
        return self._raw.add(a, b)

    def _multiply_ct(self, a, b):
        if self.auto_mod_switch and min(a.level, b.level) > 0:
            # Relinearization's ModDown and the modulus switch are one division by P q_l.
            return self._raw.multiply_divide(a, b, self._keys().relin)
        return self._raw.multiply(a, b, self._keys().relin)
