"""The Python operators every scheme's Ciphertext shares; each forwards to its context."""

from __future__ import annotations

import copy

from . import serialize as _ser
from ._persistent import Persistent


class CiphertextOps(Persistent):
    """+ - * (both sides), unary -, rotate and level, forwarded to ``self._ctx``."""

    __array_priority__ = 1000  # numpy arrays defer to our operators

    @property
    def level(self) -> int:
        return self._raw.level

    @property
    def device(self) -> str:
        return self._ctx.device

    def on_stream(self, stream):
        """A copy of this ciphertext whose operations run on `stream` (an ember.Stream of its
        device): work on different streams of a GPU runs concurrently. Results stay on the
        stream of their first operand; operands on other streams are ordered with events, so
        mixing streams is always correct. The default stream is where everything starts."""
        from .errors import MismatchError, ParameterError

        handle = getattr(stream, "handle", None)
        if handle is None:
            raise ParameterError(f"on_stream needs an ember.Stream, got {stream!r}")
        if stream.device != self.device:
            raise MismatchError(
                f"the stream is on {stream.device} and the ciphertext on {self.device}: make "
                f"the stream with ember.Stream('{self.device}')"
            )
        moved = copy.copy(self)
        moved._raw = self._raw.on_stream(handle)
        return moved

    def to(self, device: str):
        """This ciphertext on `device` ("cuda:1", "cpu", ...), bound to its context's copy there
        (ctx.to(device), evaluation keys included); itself when it is there already. GPU to
        GPU copies go peer to peer where the GPUs allow it."""
        ctx = self._ctx.to(device)
        if ctx is self._ctx:
            return self
        moved = copy.copy(self)
        moved._ctx, moved._raw = ctx, self._raw.to(ctx.device)
        return moved

    @property
    def form(self) -> str:
        """ "coeff" or "eval": how the polynomials are stored. BFV keeps fresh ciphertexts and their
        products, relinearizations and rotations in coefficient form (as SEAL and Phantom do);
        everything else is in eval form. Every operation accepts either."""
        return self._raw.form

    def __add__(self, other):
        return self._ctx.add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._ctx.sub(self, other)

    def __rsub__(self, other):
        return self._ctx.add(self._ctx.negate(self), other)

    def __neg__(self):
        return self._ctx.negate(self)

    def __mul__(self, other):
        return self._ctx.multiply(self, other)

    __rmul__ = __mul__

    def rotate(self, steps: int):
        """Rotates the slots left by `steps` (see the context's rotate)."""
        return self._ctx.rotate(self, steps)

    def _serialize(self, head: bytes, mac_key: bytes | None = None) -> bytes:
        """The ciphertext's bytes: the scheme's header fields, then every polynomial (in eval
        form: a BFV ciphertext kept in coefficient form is transformed first); with `mac_key`,
        authenticated by a keyed MAC."""
        r = self._raw
        if r.form != "eval":
            r = self._ctx._raw.to_form(r, "eval")
        body = b"".join(_ser.poly_bytes(r.poly(i)) for i in range(r.size))
        return _ser.pack(_ser.KIND_CIPHERTEXT, r.params_id, r.key_id, head + body, mac_key)
