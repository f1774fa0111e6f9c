"""What BFV and BGV share in Python: parameter sets of primes and a plaintext modulus t, the batch
encoder (N slots as a 2 x N/2 matrix through the NTT modulo t) and the coefficient encoder,
plaintexts and ciphertexts with operators, and a Context base class whose subclasses
(``ember.bfv.Context``, ``ember.bgv.Context``) supply the scheme's scaling of the message.

Values are integers modulo t: arrays (and lists) of inputs must lie in (-t, t) and are reduced,
decryption returns them centered in (-t/2, t/2]. Arrays must hold integers: integer dtypes,
floats only when integral, object arrays only of integers; anything else (bools, fractions, NaN,
strings, a uint64 above t that would wrap when cast) raises ParameterError. A scalar operand
(``x + k``, ``x * k``: a Python or numpy integer, or an integral float) may be any size and is
reduced exactly modulo t, as Python integers are exact. Slots: row 0 is slots 0..N/2-1, row 1 slots N/2..N-1; rotate(k)
rotates both rows left by k, swap_rows() exchanges them.

On a GPU context, an integer CUDA array (torch, CuPy, any DLPack producer) on the context's GPU
is encoded there (range check, reduction modulo t, the slot order and the inverse NTT modulo t:
no copy to the host), its plaintext stays in device memory for encryption and the operators, and
decrypt(..., like=cuda_array) / out="dlpack" decodes into device memory (ember.arrays).
"""

from __future__ import annotations

import math
import numbers
import struct
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from . import _ember, ring
from . import arrays as _arrays
from . import serialize as _ser
from ._ops import CiphertextOps
from ._persistent import Persistent
from .arrays import as_array, flatten_input, reshape_output, to_output
from .errors import DecryptionError, MismatchError, ParameterError, SerializationError
from .ring import generate_ntt_primes, is_prime
from .rlwe import (
    EvalKeys,
    KeyedContext,
    PublicKey,
    SecretKey,
    check_security,
    describe,
    integer_arg,
    short_repr,
)

__all__ = ["Ciphertext", "IntegerContext", "IntegerParams", "Plaintext"]


@dataclass(frozen=True)
class IntegerParams(Persistent):
    """A validated BFV/BGV parameter set.

    log_n: ring degree N = 2^log_n. plain_modulus: t (a prime = 1 mod 2N enables batching; any
    t >= 2 works with the coefficient encoder). q_bits: sizes of the primes of Q (BGV: q_0 first;
    each modulus switch drops the last). special_bits: sizes of the key-switching primes P.
    dnum: digits of the key-switching decomposition (default: the most primes per digit that fit
    under P). Refuses sets weaker than 128 bits unless insecure=True.
    """

    log_n: int
    plain_modulus: int = 65537
    q_bits: tuple = (60, 60)
    special_bits: tuple = (60,)
    dnum: int | None = None
    hamming_weight: int = 0
    security: int = 128
    insecure: bool = False
    name: str = "custom"
    q_primes: tuple = field(default=(), compare=False, repr=False)
    p_primes: tuple = field(default=(), compare=False, repr=False)

    _PRESETS: ClassVar[dict] = {}  # per scheme

    def __post_init__(self):
        if not 10 <= self.log_n <= 17:
            raise ParameterError(f"log_n={self.log_n} is out of range: use 10..17")
        q_bits, p_bits = tuple(self.q_bits), tuple(self.special_bits)
        object.__setattr__(self, "q_bits", q_bits)
        object.__setattr__(self, "special_bits", p_bits)
        if not q_bits or not p_bits:
            raise ParameterError("q_bits and special_bits need at least one prime each")
        for b in q_bits + p_bits:
            if not 20 <= int(b) <= 60:
                raise ParameterError(f"prime size {b} bits is out of range: use 20..60")
        t = int(self.plain_modulus)
        if not 2 <= t < 2**60:
            raise ParameterError(f"plain_modulus={t} is out of range: use 2 <= t < 2^60")
        if t >= 2 ** (min(q_bits) - 1):
            raise ParameterError(
                f"plain_modulus={t} must be below every prime of Q (the smallest has "
                f"{min(q_bits)} bits); use larger q_bits or a smaller t"
            )
        if not 0 <= self.hamming_weight <= self.n:
            raise ParameterError("hamming_weight must be in [0, N]")
        check_security(
            self.log_n,
            sum(q_bits) + sum(p_bits),
            self.security,
            self.insecure,
            self.hamming_weight,
        )
        if self.dnum is None:
            alpha = sum(p_bits) // max(q_bits)
            if alpha < 1:
                raise ParameterError(
                    f"P ({sum(p_bits)} bits) is smaller than the largest prime of Q "
                    f"({max(q_bits)} bits): key switching would add large errors; use larger "
                    "special_bits"
                )
            object.__setattr__(self, "dnum", math.ceil(len(q_bits) / alpha))
        if not 1 <= self.dnum <= len(q_bits):
            raise ParameterError(f"dnum={self.dnum} must be in [1, {len(q_bits)}]")
        alpha = math.ceil(len(q_bits) / self.dnum)
        object.__setattr__(self, "dnum", math.ceil(len(q_bits) / alpha))
        if not self.q_primes:
            qs = _primes_of_sizes(q_bits, self.n, [])
            ps = _primes_of_sizes(p_bits, self.n, qs)
            object.__setattr__(self, "q_primes", tuple(qs))
            object.__setattr__(self, "p_primes", tuple(ps))
        exact = sum(math.log2(q) for q in self.q_primes + self.p_primes)
        if not self.insecure:
            check_security(self.log_n, exact, self.security, False, self.hamming_weight)

    @property
    def n(self) -> int:
        return 1 << self.log_n

    @property
    def batching(self) -> bool:
        """True when t is a prime = 1 mod 2N (the batch encoder is available)."""
        t = int(self.plain_modulus)
        return is_prime(t) and (t - 1) % (2 * self.n) == 0

    @property
    def total_bits(self) -> int:
        return sum(self.q_bits) + sum(self.special_bits)

    @classmethod
    def for_depth(
        cls, depth: int, plain_modulus: int = 65537, slots: int | None = None, security: int = 128
    ):
        """The smallest 128-bit-secure set whose ciphertexts survive `depth` multiplications
        (squarings of fresh ciphertexts decrypt exactly) modulo `plain_modulus`, with at least
        `slots` slots. Raises ParameterError saying what to lower when no ring degree up to
        2^17 holds it. See ember.params_select."""
        from .params_select import integer_for_depth

        scheme = cls.__module__.rsplit(".", 1)[-1]
        return integer_for_depth(cls, scheme, depth, plain_modulus, slots, security)

    @classmethod
    def presets(cls) -> list[str]:
        """Names of the built-in parameter sets (all 128-bit secure)."""
        return list(cls._PRESETS)

    @classmethod
    def preset(cls, name: str):
        if name not in cls._PRESETS:
            raise ParameterError(f"unknown preset '{name}': choose from {', '.join(cls._PRESETS)}")
        return cls(name=name, **cls._PRESETS[name])


def _primes_of_sizes(bits: tuple, n: int, exclude: list) -> list[int]:
    """Distinct NTT-friendly primes, one of each requested size (in order)."""
    pools, taken = {}, list(exclude)
    for b in sorted(set(bits)):
        pools[b] = list(generate_ntt_primes(int(b), n, bits.count(b), taken))
        taken += pools[b]
    return [pools[b].pop(0) for b in bits]


def _exact_int(x, what: str) -> int:
    """x as an exact Python int: integers (not bools) as they are, floats only when finite and
    integral; anything else is a ParameterError (`what` names it: "values", "scalar
    operands")."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (float, np.floating)) and math.isfinite(x) and float(x).is_integer():
        return int(x)
    raise ParameterError(f"{what} must be integers, got {describe(x)}: {short_repr(x)}")


def _integer_array(v: np.ndarray) -> np.ndarray:
    """v as int64 or, for object arrays, a list of Python ints, before any range check: no
    value may change on the way (floats must be integral; uint64 is compared before a cast)."""
    if v.dtype == object:
        return np.array([_exact_int(x, "values") for x in v.flat], dtype=object).reshape(v.shape)
    if v.dtype.kind in "iu":
        return v
    if v.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            integral = np.isfinite(v) & (v == np.floor(v))
        if not np.all(integral):
            bad = v[~integral][0]
            raise ParameterError(f"values must be integers, got {bad!r} in a {v.dtype} array")
        return v
    raise ParameterError(f"values must be integers, got dtype {v.dtype}")


class BatchEncoder:
    """N values modulo t <-> a plaintext polynomial: slot (row r, column j) is the evaluation at
    psi^((-1)^r 5^j), so X -> X^(5^k) rotates both rows by k and X -> X^(2N-1) swaps them."""

    def __init__(self, n: int, t: int, device: str):
        self.n, self.t, self.device = n, t, device
        ctx = ring.RingContext.create(n, [t])
        self.basis = ring.RnsBasis.all(ctx)
        log_n = n.bit_length() - 1

        def brv(x):
            return int(format(x, f"0{log_n}b")[::-1], 2)

        idx = np.empty(n, dtype=np.int64)
        e = 1
        for j in range(n // 2):
            idx[j] = brv((e - 1) // 2)  # eval slot k holds a(psi^(2 brv(k) + 1))
            idx[n // 2 + j] = brv((2 * n - e - 1) // 2)
            e = e * 5 % (2 * n)
        self.idx = idx

    def encode(self, values: np.ndarray) -> np.ndarray:
        e = np.zeros(self.n, dtype=np.uint64)
        e[self.idx] = values
        p = ring.RnsPoly.from_numpy(self.basis, e[None, :], "eval", self.device)
        return p.intt().to_numpy()[0]

    def decode(self, coeffs: np.ndarray) -> np.ndarray:
        p = ring.RnsPoly.from_numpy(self.basis, coeffs[None, :], "coeff", self.device)
        return p.ntt().to_numpy()[0][self.idx]


def _is_scalar(value) -> bool:
    """A single number (Python's or numpy's); np.isscalar also says yes to strings."""
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(
        value, (np.str_, np.bytes_)
    )


def _mulmod(v: np.ndarray, k: int, t: int) -> np.ndarray:
    """(v * k) mod t elementwise for v in [0, t)."""
    k %= t
    if t < 2**32:
        return (v.astype(np.uint64) * np.uint64(k)) % np.uint64(t)
    return np.array([int(x) * k % t for x in v], dtype=np.uint64)


class Plaintext(Persistent):
    """Values modulo t encoded as a polynomial (coefficients in [0, t)); `batched` says whether
    they are slots (batch encoder) or the coefficients themselves; `shape`: an n-dimensional
    input's (ember.arrays).

    The coefficients are a numpy array (values from the host) or in the context's backend memory
    (`on_device`: values encoded from an array on the context's GPU, or a decryption's message),
    where encryption scales (BFV) or lifts (BGV) them without a host round trip; `coeffs` copies
    them to the host."""

    shape: tuple | None = None

    def __init__(self, ctx, coeffs, batched: bool):
        """coeffs: N words in [0, t), a numpy array or an _ember.PlainCoeffs (device memory)."""
        self._ctx, self.batched = ctx, batched
        on_host = isinstance(coeffs, np.ndarray)
        self._host = coeffs if on_host else None
        self._device = None if on_host else coeffs
        self._cache = {}

    @property
    def coeffs(self) -> np.ndarray:
        """The N coefficients in [0, t) as a numpy array (a copy to the host when on_device)."""
        if self._host is None:
            self._host = np.asarray(self._device.to_numpy())
        return self._host

    @coeffs.setter
    def coeffs(self, values: np.ndarray) -> None:
        """Replaces the coefficients by host ones (N words in [0, t))."""
        self._host, self._device, self._cache = values, None, {}

    @property
    def on_device(self) -> bool:
        """Whether the coefficients are in the context's backend memory."""
        return self._device is not None

    def _device_coeffs(self):
        """The coefficients in the context's backend memory (host ones uploaded there)."""
        if self._device is not None:
            return self._device
        return self._ctx._plain_encoder.from_numpy(
            np.ascontiguousarray(self._host, dtype=np.uint64)
        )

    @property
    def device(self) -> str:
        return self._ctx.device

    def to(self, device: str):
        """This plaintext for the context on `device` (through the host; the polynomials are
        made there when used)."""
        ctx = self._ctx.to(device)
        if ctx is self._ctx:
            return self
        out = Plaintext(ctx, self.coeffs, self.batched)
        out.shape = self.shape
        return out

    def lifted(self, level: int, factor: int = 1):
        """The centered integer polynomial of factor * m over Q_level, eval form."""
        key = ("lift", level, factor)
        if key not in self._cache and self._device is not None:
            # In backend memory: the product by the factor and the lift run there.
            encoder, t = self._ctx._plain_encoder, self._ctx.plain_modulus
            m = self._device if factor % t == 1 else encoder.multiply(self._device, factor)
            self._cache[key] = encoder.lift(m, self._ctx._raw.q_basis(level), "eval")
        if key not in self._cache:
            ctx, t = self._ctx, self._ctx.plain_modulus
            m = self.coeffs if factor == 1 else _mulmod(self.coeffs, factor, t)
            signed = np.where(m > t // 2, m.astype(np.int64) - np.int64(t), m.astype(np.int64))
            self._cache[key] = ring.RnsPoly.from_signed(
                ctx._raw.q_basis(level), np.ascontiguousarray(signed), "eval", ctx.device
            )
        return self._cache[key]


class Ciphertext(CiphertextOps):
    """Encrypted integers modulo t. Operators: + - * (with ciphertexts, plaintexts, integer arrays
    and integers), unary -, rotate, swap_rows."""

    shape: tuple | None = None  # an n-dimensional input's (ember.arrays): decrypt returns it

    def __init__(self, ctx, raw, batched: bool):
        self._ctx, self._raw, self.batched = ctx, raw, batched

    def swap_rows(self):
        return self._ctx.swap_rows(self)

    def mod_switch(self, level: int | None = None):
        return self._ctx.mod_switch(self, level)

    def __repr__(self):
        return f"Ciphertext(level={self.level}, size={self._raw.size})"

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        """The ciphertext's bytes (with `mac_key`: authenticated by a keyed MAC, to be read with
        the same key)."""
        r = self._raw
        head = struct.pack("<IIQB", r.level, r.size, r.factor, int(self.batched))
        return self._serialize(head, mac_key)


class IntegerContext(KeyedContext):
    """Base of bfv.Context and bgv.Context (which supply _make_raw, _encrypt_raw,
    _plain_for_add, _scalar_residues, _add_ct and _multiply_ct); see the module docstring."""

    _plaintext_type = Plaintext

    def __init__(self, params, device: str | None, _like=None):
        from . import resolve_device

        self.params = params
        self.device = resolve_device(device)
        self.plain_modulus = int(params.plain_modulus)
        self.slots = params.n
        self._sampler = ring.Sampler()
        self._eval_keys = None
        # _like: ctx.to's source context, whose ring (and its per-device tables) this one shares.
        self._raw = self._make_raw(_like._raw if _like is not None else None)
        self.max_level = self._raw.max_level
        self._encoder = (
            BatchEncoder(params.n, self.plain_modulus, self.device) if params.batching else None
        )
        # The GPU whose memory encode/decrypt read and write in place (None: a CPU context).
        self._cuda_index = (
            int(self.device.split(":")[1]) if self.device.startswith("cuda") else None
        )
        self._native_encoder = None

    @property
    def _plain_encoder(self):
        """The C++ encoder of plaintexts in this context's backend memory (made when first
        used)."""
        if self._native_encoder is None:
            order = [] if self._encoder is None else self._encoder.idx.tolist()
            self._native_encoder = _ember.IntegerEncoder(
                self.params.n, self.plain_modulus, order, self.device
            )
        return self._native_encoder

    # ---------------------------------------------------------------- keys
    def eval_keys(self, sk: SecretKey, rotations=(), row_swap: bool = False) -> EvalKeys:
        """Relinearization key and Galois keys for row rotations by `rotations` (negative
        allowed) and for swapping the rows."""
        return self._make_eval_keys(sk, rotations, {2 * self.params.n - 1} if row_swap else set())

    # ---------------------------------------------------------------- encoding
    def _reduce(self, values, count: int, what: str) -> np.ndarray:
        """Integers in (-t, t) -> residues in [0, t), zero-padded to `count`. The range is
        checked on the values as given (exact Python ints of their min and max), before any
        cast that could wrap them."""
        self._check_values(values)
        v = _integer_array(as_array(values))
        if v.ndim != 1:
            raise ParameterError(f"expected a 1-D vector of integers, got shape {v.shape}")
        if v.size > count:
            raise ParameterError(f"{v.size} values do not fit in {count} {what}")
        t = self.plain_modulus
        out = np.zeros(count, dtype=np.uint64)
        if not v.size:
            return out
        lo, hi = int(v.min()), int(v.max())
        if lo <= -t or hi >= t:
            raise ParameterError(
                f"values must be integers in (-t, t) for the plain modulus t={t}; got range "
                f"[{short_repr(lo)}, {short_repr(hi)}]"
            )
        # In range, so below 2^60 in magnitude: int64 holds every value exactly.
        out[: v.size] = np.mod(v.astype(np.int64), np.int64(t)).astype(np.uint64)
        return out

    def encode(self, values) -> Plaintext:
        """Up to `slots` integers into the slots (batch encoder; shorter input is zero-padded)."""
        if self._encoder is None:
            raise ParameterError(
                f"t={self.plain_modulus} does not allow batching (it must be a prime = 1 mod "
                f"2N = {2 * self.params.n}); use encode_coeffs"
            )
        on_gpu = self._gpu_integers(values)
        if on_gpu is not None:
            pt = self._encode_native(on_gpu[0], True)
            pt.shape = on_gpu[1]
            return pt
        values, shape = flatten_input(values)
        pt = Plaintext(self, self._encoder.encode(self._reduce(values, self.slots, "slots")), True)
        pt.shape = shape
        return pt

    def encode_coeffs(self, values) -> Plaintext:
        """Up to N integers as the coefficients of the plaintext polynomial."""
        on_gpu = self._gpu_integers(values)
        if on_gpu is not None:
            pt = self._encode_native(on_gpu[0], False)
            pt.shape = on_gpu[1]
            return pt
        values, shape = flatten_input(values)
        pt = Plaintext(self, self._reduce(values, self.params.n, "coefficients"), False)
        pt.shape = shape
        return pt

    def _gpu_integers(self, values):
        """(flat integers in this context's GPU memory, shape) for an integer GPU array that this
        context reads in place, else None (host values, a CPU context, a non-integer dtype: the
        host path). One on another GPU than this context's is refused."""
        if not _arrays.on_context_gpu(values, self._cuda_index, self.device):
            return None
        on_gpu = _arrays.device_integers(values)
        if on_gpu is not None:
            _arrays.synchronize_producer(on_gpu[0])
        return on_gpu

    def _encode_native(self, values, batched: bool) -> Plaintext:
        """The plaintext of flat integer values (a DLPack array in host memory or on this
        context's GPU) made in this context's backend memory: the range check, the reduction
        modulo t and (batched) the slot order and the inverse NTT modulo t run there; only an
        out-of-range flag comes back. The device path of encode / encode_coeffs."""
        if isinstance(values, np.ndarray):
            values = np.ascontiguousarray(values)
        return Plaintext(self, self._plain_encoder.encode(values, batched), batched)

    def decode(self, pt: Plaintext, *, out: str | None = None, like=None) -> np.ndarray:
        """The plaintext's values (int64, centered modulo t): every slot (or coefficient) by
        default; out= and like= as for decrypt, in the encoded array's shape (on a GPU context,
        like= a GPU array decodes on the GPU)."""
        self._check_plaintext(pt, "decode")
        if _arrays.device_output_wanted(out, like, self._cuda_index):
            array = self._decode_on_device(pt._device_coeffs(), pt.batched, pt.shape)
            return _arrays.from_device(array, like)
        if pt.on_device:
            values = self._plain_encoder.decode(pt._device, pt.batched, self.slots)
        else:
            values = self._centered(self._encoder.decode(pt.coeffs) if pt.batched else pt.coeffs)
        if out is None and like is None:
            return values
        return to_output(reshape_output(values, pt.shape), out, like)

    def _decode_on_device(self, coeffs, batched: bool, shape):
        """The values of plaintext coefficients in backend memory as an int64 DLPack array of
        `shape` (default: every slot) in this GPU's memory."""
        shape = tuple(shape) if shape is not None else (self.slots,)
        return self._plain_encoder.decode(coeffs, batched, math.prod(shape), True, list(shape))

    def _decrypt_plaintext(self, ct: Ciphertext, sk: SecretKey) -> Plaintext:
        """The message of ct as a plaintext in backend memory (BFV's rounding / BGV's reduction
        modulo q_0, then the message modulo t, all on the device; no noise check)."""
        self._check(ct)
        self._check_key(sk, (SecretKey,), "decrypt")
        m = self._raw.decrypt_coeffs(ct._raw, sk._raw, self._plain_encoder)
        pt = Plaintext(self, m, ct.batched)
        pt.shape = ct.shape
        return pt

    def _centered(self, m: np.ndarray) -> np.ndarray:
        t = self.plain_modulus
        return np.where(m > t // 2, m.astype(np.int64) - np.int64(t), m.astype(np.int64))

    def _as_plain(self, values, batched: bool) -> Plaintext:
        if isinstance(values, Plaintext):
            self._check_plaintext(values, "the operation")
            return values
        return self.encode(values) if batched else self.encode_coeffs(values)

    # ---------------------------------------------------------------- encryption
    def encrypt(self, values, key) -> Ciphertext:
        """Encrypts integers (batched into the slots when t allows it, else as coefficients) or a
        Plaintext, with a PublicKey or a SecretKey."""
        self._check_key(key, (PublicKey, SecretKey), "encrypt")
        pt = self._as_plain(values, self._encoder is not None)
        raw = self._encrypt_raw(pt, key._raw, symmetric=isinstance(key, SecretKey))
        out = Ciphertext(self, raw, pt.batched)
        out.shape = pt.shape
        return out

    def decrypt(
        self, ct: Ciphertext, sk: SecretKey, check: bool = True, out: str | None = None, like=None
    ) -> np.ndarray:
        """The values (int64, centered modulo t). With check=True (default) a ciphertext whose
        noise budget is exhausted (less than one bit left) raises DecryptionError instead of
        returning values that may be wrong. (Noise that has overflowed looks uniform modulo Q, so
        its measured budget is ~0 bits: it cannot pass for a valid ciphertext.) The check reads
        one number (the budget) back from the device.

        out="torch" / "dlpack" or like=x convert the result (ember.arrays); on a GPU context,
        like= a CUDA torch tensor or CuPy array and out="dlpack" decrypt and decode on the GPU
        and return device memory (no host round trip)."""
        self._check(ct)
        self._check_key(sk, (SecretKey,), "decrypt")
        if check:
            budget = self._raw.noise_budget(ct._raw, sk._raw)
            if budget < 1:
                raise DecryptionError(
                    f"the noise budget is exhausted ({max(budget, 0):.3f} bits left): the "
                    "decryption would be unreliable; use larger parameters or fewer products"
                )
        if _arrays.device_output_wanted(out, like, self._cuda_index):
            # Decrypted and decoded on the GPU into a buffer handed over through DLPack.
            m = self._raw.decrypt_coeffs(ct._raw, sk._raw, self._plain_encoder)
            return _arrays.from_device(self._decode_on_device(m, ct.batched, ct.shape), like)
        m = np.asarray(self._raw.decrypt(ct._raw, sk._raw), dtype=np.uint64)
        values = self.decode(Plaintext(self, m, ct.batched))
        return to_output(reshape_output(values, ct.shape), out, like)

    def noise_budget(self, ct: Ciphertext, sk: SecretKey) -> int:
        """Bits of noise budget left (0: decryption is no longer reliable)."""
        self._check(ct)
        self._check_key(sk, (SecretKey,), "noise_budget")
        return max(0, math.floor(self._raw.noise_budget(ct._raw, sk._raw)))

    # ---------------------------------------------------------------- serialization
    def ciphertext_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> Ciphertext:
        """A ciphertext from Ciphertext.to_bytes. Checks the level, size, encoding flag and
        plaintext factor; the words themselves cannot be checked without a MAC (any reduced
        words encrypt something)."""
        key_id, payload = _ser.unpack(blob, _ser.KIND_CIPHERTEXT, self._raw.params_id, mac_key)
        rd = _ser.Reader(payload)
        level, size, factor, batched = rd.unpack("<IIQB")
        if level > self.max_level or size not in (2, 3):
            raise SerializationError(
                f"ciphertext level {level} / size {size} out of range: the level must be at most "
                f"{self.max_level} and the size 2 or 3"
            )
        self._check_encoding_flag(batched)
        self._check_factor(factor)
        basis = self._raw.q_basis(level)
        polys = [rd.poly(basis, self.device) for _ in range(size)]
        rd.done()
        raw = self._raw.make_ciphertext(polys, level, 1.0, factor, key_id)
        return Ciphertext(self, raw, bool(batched))

    def _check_encoding_flag(self, batched: int) -> None:
        if batched > 1:
            raise SerializationError(f"ciphertext batched flag {batched}: it must be 0 or 1")
        if batched and self._encoder is None:
            raise SerializationError(
                f"a batched ciphertext, but t={self.plain_modulus} does not allow batching"
            )

    def _check_factor(self, factor: int) -> None:
        """BFV ciphertexts carry factor 1; BGV's (the product of the modulus switches'
        corrections) is a unit modulo t."""
        t = self.plain_modulus
        if not 1 <= factor < t or math.gcd(factor, t) != 1:
            raise SerializationError(
                f"ciphertext plaintext factor {factor}: it must be in [1, t={t}) and invertible "
                "modulo t"
            )

    # ---------------------------------------------------------------- helpers
    def _check_encoding(self, a: Ciphertext, b) -> None:
        if getattr(b, "batched", a.batched) != a.batched:
            raise MismatchError(
                "cannot combine a batched (slots) and a coefficient-encoded operand"
            )

    def _wrap(self, raw, like: Ciphertext) -> Ciphertext:
        out = Ciphertext(self, raw, like.batched)
        if like.shape is not None:
            out.shape = like.shape
        return out

    def _residues(self, value: int, level: int) -> list[int]:
        return [value % self._raw.prime(i) for i in range(level + 1)]

    def _centered_int(self, k: int) -> int:
        t = self.plain_modulus
        k %= t
        return k - t if k > t // 2 else k

    # ---------------------------------------------------------------- operations
    def add(self, a: Ciphertext, b) -> Ciphertext:
        self._check(a)
        if isinstance(b, CiphertextOps):
            self._check(b)
            self._check_encoding(a, b)
            return self._wrap(self._add_ct(a._raw, b._raw), a)
        if _is_scalar(b):
            k = _exact_int(b, "scalar operands")
            return self._wrap(self._raw.add_scalar(a._raw, self._scalar_residues(a._raw, k)), a)
        pt = self._as_plain(b, a.batched)
        self._check_encoding(a, pt)
        return self._wrap(self._raw.add_plain(a._raw, self._plain_for_add(pt, a._raw)), a)

    def sub(self, a: Ciphertext, b) -> Ciphertext:
        self._check(a)
        if isinstance(b, CiphertextOps):
            return self.add(a, self.negate(b))
        if _is_scalar(b):
            return self.add(a, -_exact_int(b, "scalar operands"))
        return self.add(a, self._negated(self._as_plain(b, a.batched)))

    def _negated(self, pt: Plaintext) -> Plaintext:
        """-pt modulo t, where pt's coefficients are (device memory: a product by t - 1)."""
        t = self.plain_modulus
        if pt.on_device:
            neg = Plaintext(self, self._plain_encoder.multiply(pt._device, t - 1), pt.batched)
        else:
            neg = Plaintext(self, (np.uint64(t) - pt.coeffs) % np.uint64(t), pt.batched)
        neg.shape = pt.shape
        return neg

    def linear_combinations(self, cts, weights, constants=None) -> list:
        """out[j] = sum_i weights[j][i] * cts[i] + constants[j] for an integer matrix `weights`
        [m, len(cts)] (entries of any size, reduced modulo t) and optional integer constants
        [m]: m ciphertexts, every output of the matrix in one backend pass. The ciphertexts must
        be relinearized, of one encoding and (BGV) one plaintext factor; the outputs are at the
        lowest of their levels."""
        cts = list(cts)
        if not cts:
            raise ParameterError("linear_combinations needs at least one ciphertext")
        for c in cts:
            self._check(c)
            self._check_encoding(cts[0], c)
        raws = [c._raw for c in cts]
        if len({r.factor for r in raws}) != 1:
            raise ParameterError(
                "linear_combinations: the ciphertexts carry different plaintext factors; bring "
                "them to one level with mod_switch first"
            )
        w = _integer_array(np.asarray(weights))
        if w.ndim != 2 or w.shape[1] != len(cts):
            raise ParameterError(
                f"linear_combinations: weights must be a matrix with {len(cts)} columns (one "
                f"per ciphertext), got shape {w.shape}"
            )
        if constants is None:
            constants = [0] * w.shape[0]
        constants = [_exact_int(k, "constants") for k in constants]
        if len(constants) != w.shape[0]:
            raise ParameterError(
                f"linear_combinations: {len(constants)} constants for {w.shape[0]} outputs"
            )
        level = min(r.level for r in raws)
        residues = self._matrix_residues(w, level)
        const = [self._scalar_residues(raws[0], k) for k in constants]
        out = self._raw.linear_combinations(raws, residues, const, level)
        return [Ciphertext(self, r, cts[0].batched) for r in out]

    def _matrix_residues(self, w: np.ndarray, level: int) -> np.ndarray:
        """[m, n, level + 1] uint64: each weight centered modulo t, then modulo each prime."""
        t = self.plain_modulus
        if w.dtype.kind != "i":  # Python ints, uint64 or integral floats: exactly, one by one
            w = np.array([self._centered_int(int(v)) for v in w.flat], dtype=np.int64).reshape(
                w.shape
            )
        else:
            w = np.mod(w.astype(np.int64), np.int64(t))
            w = np.where(w > t // 2, w - np.int64(t), w)
        primes = np.array([self._raw.prime(i) for i in range(level + 1)], dtype=np.int64)
        return np.mod(w[:, :, None], primes[None, None, :]).astype(np.uint64)

    def negate(self, a: Ciphertext) -> Ciphertext:
        self._check(a)
        return self._wrap(self._raw.negate(a._raw), a)

    def multiply(self, a: Ciphertext, b) -> Ciphertext:
        """ct * ct (relinearized), ct * plaintext/array, ct * integer."""
        self._check(a)
        if isinstance(b, CiphertextOps):
            self._check(b)
            self._check_encoding(a, b)
            return self._wrap(self._multiply_ct(a._raw, b._raw), a)
        if _is_scalar(b):
            k = self._centered_int(_exact_int(b, "scalar operands"))
            return self._wrap(self._raw.multiply_scalar(a._raw, self._residues(k, a.level)), a)
        pt = self._as_plain(b, a.batched)
        self._check_encoding(a, pt)
        return self._wrap(self._raw.multiply_plain(a._raw, pt.lifted(a.level)), a)

    def square(self, a: Ciphertext) -> Ciphertext:
        return self.multiply(a, a)

    def swap_rows(self, a: Ciphertext) -> Ciphertext:
        """Exchanges the two rows of slots (X -> X^(2N-1))."""
        return self._apply_galois_element(a, 2 * self.params.n - 1, "row swap", "row_swap")

    def sum_slots(self, a: Ciphertext) -> Ciphertext:
        """Every slot holds the sum of all N slots (needs rotation keys 1, 2, 4, ... and the row
        swap key)."""
        acc, step = a, 1
        while step < self.slots // 2:
            acc = acc + self.rotate(acc, step)
            step *= 2
        return acc + self.swap_rows(acc)

    def mod_switch(self, a: Ciphertext, level: int | None = None) -> Ciphertext:
        """The ciphertext over fewer primes (default: one fewer): smaller, same message."""
        self._check(a)
        level = a.level - 1 if level is None else integer_arg(level, "level must be an integer")
        if not 0 <= level <= a.level:
            raise ParameterError(f"mod_switch: level must be in [0, {a.level}], got {level}")
        return self._wrap(self._raw.mod_switch(a._raw, level), a)
