"""Big-integer CKKS (HEAAN): ciphertext coefficients mod 2^bits as multi-word integers.

The original, non-RNS form of CKKS (Cheon, Kim, Kim and Song, the HEAAN library) as Jung et al.
accelerate it: the modulus of a fresh ciphertext is Q = 2^log_q, rescaling divides by 2^log_p (a
shift), the relinearization key lives mod Q^2 (HEAAN's special modulus P is Q), and each HE Mul
converts the big-integer coefficients to residues mod NTT-friendly primes (CRT), multiplies in NTT
form and converts back (the inverse CRT). Same answers on the CPU and the GPU, word for word.

    from ember import heaan
    ctx = heaan.Context(heaan.Params.preset("N14_logQ200"))
    sk = ctx.keygen(); pk = ctx.public_key(sk); ctx.set_relin_key(ctx.relin_key(sk))
    ctx.set_rotation_keys(ctx.rotation_keys(sk, rotations=[1, 4], conjugation=True))
    x = ctx.encrypt(values, pk); y = x * x + x.rotate(1); v = ctx.decrypt(y.conj(), sk)

docs/heaan.md has the parameters, the security of each preset and the measured HE Mul.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass

import numpy as np

from . import _ember, resolve_device
from . import arrays as _arrays
from . import serialize as _ser
from ._persistent import Persistent
from .arrays import as_array, flatten_input, reshape_output, to_output
from .errors import MismatchError, MissingKeyError, ParameterError, SerializationError
from .ring import Sampler, generate_ntt_primes
from .rlwe import check_security, galois_element, integer_arg, rotation_steps

__all__ = ["Ciphertext", "Context", "Params", "PublicKey", "RelinKey", "RotationKeys", "SecretKey"]

# The products' primes: below 2^30, so that the 32-bit-word kernels take the same primes.
PRIME_BITS = 30


@dataclass(frozen=True)
class Params:
    """N = 2^log_n, fresh ciphertexts mod Q = 2^log_q, scale 2^log_p. The key-switching modulus
    is Q^2 (log2 = 2 log_q), which the 128-bit bound must hold unless insecure=True."""

    log_n: int
    log_q: int
    log_p: int
    hamming_weight: int = 0  # 0: uniform ternary secret
    insecure: bool = False
    security: int = 128
    name: str = ""

    def __post_init__(self):
        if not 4 <= self.log_n <= 17:
            raise ParameterError(f"log_n must be in [4, 17], got {self.log_n}")
        if not 0 < self.log_p < self.log_q:
            raise ParameterError(
                f"log_p ({self.log_p}) must be positive and below log_q ({self.log_q})"
            )
        check_security(
            self.log_n, 2 * self.log_q, self.security, self.insecure, self.hamming_weight
        )

    @property
    def n(self) -> int:
        return 1 << self.log_n

    @property
    def slots(self) -> int:
        return self.n // 2

    @property
    def levels(self) -> int:
        """Multiplications (each rescaled by log_p) a fresh ciphertext allows."""
        return self.log_q // self.log_p - 1

    def product_primes(self) -> list[int]:
        """NTT-friendly primes below 2^30 covering the relinearization product N 2^(3 log_q)
        (with a sign and a bit to spare)."""
        need = 3 + self.log_n + 3 * self.log_q
        count = math.ceil(need / (PRIME_BITS - 1)) + 1
        return generate_ntt_primes(PRIME_BITS, self.n, count)

    @staticmethod
    def presets() -> list[str]:
        return list(_PRESETS)

    @staticmethod
    def preset(name: str, insecure: bool = False) -> Params:
        """A named set. Jung et al.'s sets (N16_logQ1200 and Table 2's N = 2^14..2^17 with
        log Q = 300..2400) are about 80-bit: they need insecure=True."""
        if name not in _PRESETS:
            raise ParameterError(f"unknown HEAAN preset {name!r}; one of {', '.join(_PRESETS)}")
        log_n, log_q, log_p = _PRESETS[name]
        return Params(log_n, log_q, log_p, insecure=insecure, name=name)


# name -> (log_n, log_q, log_p). The first four hold 128-bit security (2 log_q within the bound
# for N, rlwe.SECURITY_128_MAX_LOGQP); the rest need insecure=True.
_PRESETS = {
    "N14_logQ200": (14, 200, 30),
    "N15_logQ420": (15, 420, 30),
    "N16_logQ880": (16, 880, 30),
    "N17_logQ1760": (17, 1760, 30),
    # Jung et al.'s Table 2 and their HE Mul benchmark (about 80-bit security).
    "N14_logQ300": (14, 300, 30),
    "N15_logQ600": (15, 600, 30),
    "N16_logQ1200": (16, 1200, 30),
    "N17_logQ2400": (17, 2400, 30),
    # Small and insecure: CPU tests.
    "test_N10_logQ120": (10, 120, 30),
}


class SecretKey(Persistent):
    """The secret's ternary coefficients (the client's: keep its bytes secret)."""

    def __init__(self, ctx: Context, raw):
        self._ctx, self._raw = ctx, raw

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        values = np.asarray(self._raw.values, dtype=np.int8)
        return _ser.pack(_ser.KIND_SECRET_KEY, self._ctx.params_id, 0, values.tobytes(), mac_key)


class PublicKey(Persistent):
    """An encryption of zero mod Q: (b, a) with b = -a s + e."""

    def __init__(self, ctx: Context, raw):
        self._ctx, self._raw = ctx, raw

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        payload = _words_bytes(self._raw.b) + _words_bytes(self._raw.a)
        return _ser.pack(_ser.KIND_PUBLIC_KEY, self._ctx.params_id, 0, payload, mac_key)


class RelinKey(Persistent):
    """The relinearization key mod Q^2 (stored as its words; kept in NTT form in memory)."""

    def __init__(self, ctx: Context, raw):
        self._ctx, self._raw = ctx, raw

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        b, a = self._ctx._raw.key_words(self._raw)
        payload = _words_bytes(b) + _words_bytes(a)
        return _ser.pack(_ser.KIND_EVAL_KEYS, self._ctx.params_id, 0, payload, mac_key)


class RotationKeys(Persistent):
    """Key-switching keys mod Q^2 from s(X^g) to s, one per Galois element g: 5^k mod 2N rotates
    the slots left by k, 2N - 1 conjugates them (stored as words; kept in NTT form in memory)."""

    def __init__(self, ctx: Context, keys: dict):
        self._ctx, self._keys = ctx, dict(keys)

    @property
    def galois_elements(self) -> list[int]:
        return sorted(self._keys)

    def __contains__(self, galois: int) -> bool:
        return galois in self._keys

    def __or__(self, other: RotationKeys) -> RotationKeys:
        """The keys of both sets (of the same context)."""
        if not isinstance(other, RotationKeys) or other._ctx is not self._ctx:
            raise MismatchError("only rotation keys of the same HEAAN context can be merged")
        return RotationKeys(self._ctx, {**self._keys, **other._keys})

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        parts = [_ROTATION_COUNT.pack(len(self._keys))]
        for g in self.galois_elements:
            b, a = self._ctx._raw.key_words(self._keys[g])
            parts += [_ROTATION_ELEMENT.pack(g), _words_bytes(b), _words_bytes(a)]
        payload = b"".join(parts)
        return _ser.pack(_ser.KIND_HEAAN_ROTATION_KEYS, self._ctx.params_id, 0, payload, mac_key)

    def __repr__(self) -> str:
        return f"heaan.RotationKeys(galois_elements={self.galois_elements})"


class Ciphertext(Persistent):
    """c0 + c1 s = m + e mod 2^bits, m carrying the slots times 2^scale_bits."""

    def __init__(self, ctx: Context, raw, scale_bits: int, shape=None):
        self._ctx, self._raw, self.scale_bits, self.shape = ctx, raw, scale_bits, shape

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        head = _CIPHERTEXT_HEAD.pack(self.bits, self.scale_bits)
        payload = head + _words_bytes(self._raw.c0) + _words_bytes(self._raw.c1)
        return _ser.pack(_ser.KIND_CIPHERTEXT, self._ctx.params_id, 0, payload, mac_key)

    @property
    def bits(self) -> int:
        """log2 of the current modulus."""
        return self._raw.bits

    def __add__(self, other):
        return self._ctx.add(self, other)

    def __sub__(self, other):
        return self._ctx.sub(self, other)

    def __neg__(self):
        return Ciphertext(self._ctx, self._ctx._raw.negate(self._raw), self.scale_bits, self.shape)

    def __mul__(self, other):
        return self._ctx.multiply(self, other)

    def rescale(self, bits: int | None = None) -> Ciphertext:
        return self._ctx.rescale(self, bits)

    def rotate(self, steps: int) -> Ciphertext:
        """The slots rotated left by `steps` (see Context.rotate)."""
        return self._ctx.rotate(self, steps)

    def conj(self) -> Ciphertext:
        """The slots' complex conjugates (see Context.conj)."""
        return self._ctx.conj(self)

    def __repr__(self) -> str:
        return f"heaan.Ciphertext(bits={self.bits}, scale=2^{self.scale_bits})"


class Context(Persistent):
    """HEAAN on one device (device=None: the default device)."""

    scheme = "HEAAN"

    def __init__(self, params: Params, device: str | None = None):
        if not isinstance(params, Params):
            raise ParameterError(f"expected heaan.Params, got {type(params).__name__}")
        self.params = params
        self.device = resolve_device(device)
        primes = params.product_primes()
        self._raw = _ember.HeaanContext(params.n, params.log_q, primes, self.device)
        # The parameters' fingerprint in every serialized object (as the RNS schemes' params_id).
        fields = (params.log_n, params.log_q, params.log_p, params.hamming_weight, *primes)
        digest = hashlib.blake2b(repr(("HEAAN", fields)).encode(), digest_size=8).digest()
        self.params_id = int.from_bytes(digest, "little")
        self.slots = params.slots
        self._sampler = Sampler()
        self._relin: RelinKey | None = None
        self._relin_on: dict = {}
        self._rotation: RotationKeys | None = None
        # The GPU whose memory encode/decrypt read and write in place (None: a CPU context).
        self._cuda_index = (
            int(self.device.split(":")[1]) if self.device.startswith("cuda") else None
        )

    # ------------------------------------------------------------------ keys
    def keygen(self) -> SecretKey:
        return SecretKey(self, self._raw.generate_secret(self._sampler, self.params.hamming_weight))

    def public_key(self, sk: SecretKey) -> PublicKey:
        return PublicKey(self, self._raw.generate_public(self._key(sk, SecretKey), self._sampler))

    def relin_key(self, sk: SecretKey) -> RelinKey:
        """The relinearization key mod Q^2, in NTT form over the product primes."""
        return RelinKey(self, self._raw.generate_relin(self._key(sk, SecretKey), self._sampler))

    def set_relin_key(self, rk: RelinKey) -> None:
        self._key(rk, RelinKey)
        self._relin = rk
        self._relin_on = {}  # the key's copies on other devices (multiply(devices=...))

    def rotation_keys(self, sk: SecretKey, rotations=(), conjugation: bool = False) -> RotationKeys:
        """Keys for rotating the slots left by each step of `rotations` (negative allowed; steps
        equal mod slots share a key) and, with conjugation=True, for conjugating them (the names
        of ckks.Context.eval_keys). Each is as large as the relinearization key."""
        raw_sk = self._key(sk, SecretKey)
        elements = {galois_element(k, self.params.n) for k in rotation_steps(rotations)}
        elements.discard(1)  # a rotation by a multiple of the slots needs no key
        if conjugation:
            elements.add(2 * self.params.n - 1)
        keys = {g: self._raw.generate_rotation(raw_sk, g, self._sampler) for g in sorted(elements)}
        return RotationKeys(self, keys)

    def set_rotation_keys(self, keys: RotationKeys) -> None:
        """The keys rotate and conj use (replacing those set before; merge sets with |)."""
        if not isinstance(keys, RotationKeys):
            raise ParameterError(f"expected heaan.RotationKeys, got {type(keys).__name__}")
        if keys._ctx is not self:
            raise MismatchError("the rotation keys belong to another HEAAN context")
        self._rotation = keys

    def _key(self, key, kind):
        if not isinstance(key, kind):
            raise ParameterError(f"expected a heaan.{kind.__name__}, got {type(key).__name__}")
        if key._ctx is not self:
            raise MismatchError("the key belongs to another HEAAN context")
        return key._raw

    # ------------------------------------------------------------------ serialization
    def _replica_options(self) -> dict:
        return {}

    def ciphertext_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> Ciphertext:
        """A ciphertext from Ciphertext.to_bytes (width, scale and words checked)."""
        _, payload = _ser.unpack(blob, _ser.KIND_CIPHERTEXT, self.params_id, mac_key)
        rd = _ser.Reader(payload)
        bits, scale_bits = rd.unpack(_CIPHERTEXT_HEAD.format)
        if not self.params.log_p <= bits <= self.params.log_q or not 0 < scale_bits < 2 * bits:
            raise SerializationError(
                f"ciphertext of {bits} bits at scale 2^{scale_bits} is out of range for log Q = "
                f"{self.params.log_q} and log p = {self.params.log_p}"
            )
        c0, c1 = self._read_words(rd, bits), self._read_words(rd, bits)
        rd.done()
        return Ciphertext(self, _ember.HeaanCiphertext(c0, c1), scale_bits)

    def secret_key_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> SecretKey:
        _, payload = _ser.unpack(blob, _ser.KIND_SECRET_KEY, self.params_id, mac_key)
        rd = _ser.Reader(payload)
        values = np.frombuffer(bytes(rd.take(self.params.n)), dtype=np.int8).astype(np.int64)
        rd.done()
        if np.any(np.abs(values) > 1):
            raise SerializationError("a HEAAN secret key's coefficients must be -1, 0 or 1")
        h = self.params.hamming_weight
        if h and int(np.count_nonzero(values)) != h:
            raise SerializationError(f"the secret key must have exactly {h} nonzero coefficients")
        return SecretKey(self, _ember.HeaanSecretKey(values))

    def public_key_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> PublicKey:
        _, payload = _ser.unpack(blob, _ser.KIND_PUBLIC_KEY, self.params_id, mac_key)
        rd = _ser.Reader(payload)
        b, a = self._read_words(rd, self.params.log_q), self._read_words(rd, self.params.log_q)
        rd.done()
        return PublicKey(self, _ember.HeaanPublicKey(b, a))

    def relin_key_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> RelinKey:
        _, payload = _ser.unpack(blob, _ser.KIND_EVAL_KEYS, self.params_id, mac_key)
        rd = _ser.Reader(payload)
        wide = 2 * self.params.log_q
        b, a = self._read_words(rd, wide), self._read_words(rd, wide)
        rd.done()
        return RelinKey(self, self._raw.key_from_words(b, a))

    def rotation_keys_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> RotationKeys:
        """Rotation keys from RotationKeys.to_bytes: Galois elements odd, in (1, 2N) and
        strictly increasing, every word reduced mod Q^2."""
        _, payload = _ser.unpack(blob, _ser.KIND_HEAAN_ROTATION_KEYS, self.params_id, mac_key)
        rd = _ser.Reader(payload)
        (count,) = rd.unpack(_ROTATION_COUNT.format)
        two_n, wide = 2 * self.params.n, 2 * self.params.log_q
        if not 1 <= count < self.params.n:
            raise SerializationError(f"rotation key count {count} out of range [1, N)")
        keys, last = {}, 1
        for _ in range(count):
            (g,) = rd.unpack(_ROTATION_ELEMENT.format)
            if g % 2 == 0 or not last < g < two_n:
                raise SerializationError(
                    f"Galois element {g} after {last}: the elements must be odd, in (1, {two_n}) "
                    "and increasing"
                )
            b, a = self._read_words(rd, wide), self._read_words(rd, wide)
            keys[g], last = self._raw.key_from_words(b, a, g), g
        rd.done()
        return RotationKeys(self, keys)

    def _read_words(self, rd, bits: int):
        """N coefficients of `bits` bits as little-endian words, each reduced mod 2^bits."""
        words = (bits + 63) // 64
        data = np.frombuffer(bytes(rd.take(self.params.n * words * 8)), dtype="<u8")
        data = data.reshape(self.params.n, words).astype(np.uint64)
        top = bits - 64 * (words - 1)
        if top < 64 and np.any(data[:, -1] >> np.uint64(top)):
            raise SerializationError(f"a coefficient has bits set above its {bits}-bit modulus")
        return _ember.BigPoly.from_numpy(data, bits, self.device)

    # ------------------------------------------------------------------ encoding
    def encode(self, values) -> tuple[object, tuple | None]:
        """(the message polynomial mod Q, the input's shape): up to `slots` real or complex
        values times 2^log_p, rounded. CKKS's special FFT, the scaling, the rounding and the
        words run on the context's device; a CUDA torch tensor or CuPy array on this context's
        GPU is read there in place (no host copy)."""
        on_gpu = self._gpu_values(values)
        if on_gpu is not None:
            flat, shape = on_gpu
        else:
            values, shape = flatten_input(values)
            flat = np.ascontiguousarray(np.asarray(as_array(values), dtype=complex).reshape(-1))
        if flat.shape[0] > self.slots:
            raise ParameterError(f"{flat.shape[0]} values do not fit in {self.slots} slots")
        return self._raw.encode_slots(flat, self.params.log_p), shape

    def _gpu_values(self, values):
        """(flat values in this context's GPU memory, shape) for a GPU array this context reads
        in place, else None (a GPU array on a CPU context is copied to the host); one on another
        GPU than this context's is refused."""
        if not _arrays.on_context_gpu(values, self._cuda_index, self.device):
            return None
        flat, shape = _arrays.device_values(values)
        _arrays.synchronize_producer(flat)
        return flat, shape

    def decode(
        self, poly, scale_bits: int, complex: bool = False, *, shape=None, out=None, like=None
    ):
        """The slots of a message polynomial (read signed) divided by 2^scale_bits: their real
        parts, or the complex values with complex=True, on the context's device. out="dlpack"
        or like= a CUDA torch tensor / CuPy array (a GPU context) keep them in GPU memory
        (ember.arrays), in `shape` (default: every slot); otherwise a numpy array."""
        if _arrays.device_output_wanted(out, like, self._cuda_index):
            shape = tuple(shape) if shape is not None else (self.slots,)
            array = self._raw.decode_slots(
                poly, scale_bits, math.prod(shape), bool(complex), True, list(shape)
            )
            return _arrays.from_device(array, like)
        z = self._raw.decode_slots(poly, scale_bits, self.slots, bool(complex), False)
        if out is None and like is None:
            return z
        return to_output(reshape_output(z, shape), out, like)

    # ------------------------------------------------------------------ encryption
    def encrypt(self, values, key: PublicKey | SecretKey) -> Ciphertext:
        m, shape = self.encode(values)
        if isinstance(key, SecretKey):
            raw = self._raw.encrypt_secret(m, self._key(key, SecretKey), self._sampler)
        else:
            raw = self._raw.encrypt_public(m, self._key(key, PublicKey), self._sampler)
        return Ciphertext(self, raw, self.params.log_p, shape)

    def decrypt(self, ct: Ciphertext, sk: SecretKey, complex: bool = False, *, out=None, like=None):
        """The slots (float64; complex128 with complex=True) in the encrypted array's shape.
        out="dlpack" or like= a CUDA tensor / CuPy array decode on the GPU into GPU memory (no
        host round trip; ember.arrays)."""
        self._check(ct)
        m = self._raw.decrypt(ct._raw, self._key(sk, SecretKey))
        if _arrays.device_output_wanted(out, like, self._cuda_index):
            return self.decode(m, ct.scale_bits, complex, shape=ct.shape, out=out, like=like)
        z = self.decode(m, ct.scale_bits, complex)
        return to_output(reshape_output(z, ct.shape), out, like)

    # ------------------------------------------------------------------ arithmetic
    def _check(self, ct) -> Ciphertext:
        if not isinstance(ct, Ciphertext):
            raise ParameterError(f"expected a heaan.Ciphertext, got {type(ct).__name__}")
        if ct._ctx is not self:
            raise MismatchError("the ciphertext belongs to another HEAAN context")
        return ct

    def _aligned(self, a: Ciphertext, b: Ciphertext):
        self._check(a)
        self._check(b)
        if a.scale_bits != b.scale_bits:
            raise MismatchError(
                f"scales 2^{a.scale_bits} and 2^{b.scale_bits} differ: rescale one of them first"
            )
        bits = min(a.bits, b.bits)
        ra = a._raw if a.bits == bits else self._raw.mod_down(a._raw, bits)
        rb = b._raw if b.bits == bits else self._raw.mod_down(b._raw, bits)
        return ra, rb

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._aligned(a, b)
        return Ciphertext(self, self._raw.add(ra, rb), a.scale_bits, a.shape)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._aligned(a, b)
        return Ciphertext(self, self._raw.sub(ra, rb), a.scale_bits, a.shape)

    def multiply(
        self, a: Ciphertext, b: Ciphertext, rescale: bool = True, devices=None
    ) -> Ciphertext:
        """HE Mul with relinearization (set_relin_key first), then a rescale by log_p unless
        rescale=False. devices: a list starting with this context's device, or "all": the four
        polynomial products placed on up to four devices as Jung et al. do (the same words as
        on one device)."""
        if self._relin is None:
            raise ParameterError("multiply needs a relinearization key: ctx.set_relin_key(...)")
        ra, rb = self._aligned_for_product(a, b)
        if devices is None:
            raw = self._raw.multiply(ra, rb, self._relin._raw)
        else:
            names = self._spread_devices(devices)
            keys = [self._relin_replica(d) for d in names]
            raw = self._raw.multiply_spread(ra, rb, keys, names)
        out = Ciphertext(self, raw, a.scale_bits + b.scale_bits, a.shape)
        return self.rescale(out) if rescale else out

    def _spread_devices(self, devices) -> list[str]:
        from .dist import device_set

        names = device_set(devices)
        if self.device in names:  # this context's device first
            names.remove(self.device)
        names.insert(0, self.device)
        return names[:4]

    def _relin_replica(self, device: str):
        if device == self.device:
            return self._relin._raw
        if device not in self._relin_on:
            self._relin_on[device] = self._raw.key_on(self._relin._raw, device)
        return self._relin_on[device]

    def _aligned_for_product(self, a: Ciphertext, b: Ciphertext):
        self._check(a)
        self._check(b)
        bits = min(a.bits, b.bits)
        if bits <= self.params.log_p:
            raise ParameterError(
                f"the ciphertexts have {bits} bits of modulus left: no level for a product"
            )
        ra = a._raw if a.bits == bits else self._raw.mod_down(a._raw, bits)
        rb = b._raw if b.bits == bits else self._raw.mod_down(b._raw, bits)
        return ra, rb

    def rescale(self, ct: Ciphertext, bits: int | None = None) -> Ciphertext:
        """Divides by 2^bits (default log_p): the scale and the modulus lose that many bits."""
        self._check(ct)
        bits = self.params.log_p if bits is None else int(bits)
        if not 0 < bits < ct.bits or bits > ct.scale_bits:
            raise ParameterError(
                f"cannot rescale by {bits} bits a ciphertext of {ct.bits} bits at scale "
                f"2^{ct.scale_bits}"
            )
        return Ciphertext(self, self._raw.rescale(ct._raw, bits), ct.scale_bits - bits, ct.shape)

    # ------------------------------------------------------------------ rotations
    def _rotation_key(self, g: int, what: str):
        if self._rotation is None or g not in self._rotation:
            raise MissingKeyError(
                f"no key for {what}: ctx.set_rotation_keys(ctx.rotation_keys(sk, ...)) with it"
            )
        return self._rotation._keys[g]

    def _rotation_plan(self, steps: int) -> list[int]:
        """The Galois elements whose automorphisms rotate by `steps`: its own key, else the
        power-of-two keys of its binary digits (as ckks.Context.rotate)."""
        n, slots = self.params.n, self.slots
        steps %= slots
        if steps == 0:
            return []
        g = galois_element(steps, n)
        if self._rotation is not None and g in self._rotation:
            return [g]
        plan, bit = [], 0
        while steps >> bit:
            if (steps >> bit) & 1:
                gb = galois_element(1 << bit, n)
                if self._rotation is None or gb not in self._rotation:
                    raise MissingKeyError(
                        f"no key for rotation {steps} and none for the power of two 2^{bit} "
                        "to compose it from: generate them with ctx.rotation_keys(sk, "
                        "rotations=[...])"
                    )
                plan.append(gb)
            bit += 1
        return plan

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """The slots rotated left by `steps` (slot i gets slot i + steps mod slots; negative
        steps rotate right): one key switch with that step's key, else one per power-of-two
        key its binary digits need (MissingKeyError when one is missing)."""
        self._check(ct)
        steps = integer_arg(steps, "rotation steps must be integers")
        raw = ct._raw
        for g in self._rotation_plan(steps):
            raw = self._raw.apply_galois(raw, self._rotation._keys[g])
        if raw is ct._raw:
            raw = raw.copy()
        return Ciphertext(self, raw, ct.scale_bits, ct.shape)

    def conj(self, ct: Ciphertext) -> Ciphertext:
        """The slots' complex conjugates (needs rotation_keys(..., conjugation=True))."""
        self._check(ct)
        key = self._rotation_key(2 * self.params.n - 1, "conjugation (conjugation=True)")
        return Ciphertext(self, self._raw.apply_galois(ct._raw, key), ct.scale_bits, ct.shape)

    def rotate_phases(self, ct: Ciphertext, steps: int) -> tuple[Ciphertext, dict]:
        """rotate by a step with its own key, with the seconds of each phase (CRT, NTT, iNTT,
        iCRT, other: the automorphisms and sums), each ending with a synchronization."""
        self._check(ct)
        g = galois_element(integer_arg(steps, "rotation steps must be integers"), self.params.n)
        raw, phases = self._raw.apply_galois_phases(ct._raw, self._rotation_key(g, f"{steps}"))
        return Ciphertext(self, raw, ct.scale_bits, ct.shape), dict(phases)

    def multiply_phases(self, a: Ciphertext, b: Ciphertext) -> tuple[Ciphertext, dict]:
        """multiply(rescale=False) with the seconds of each phase (CRT, NTT, iNTT, iCRT, other),
        each phase ending with a synchronization: for benchmarks."""
        if self._relin is None:
            raise ParameterError("multiply needs a relinearization key: ctx.set_relin_key(...)")
        ra, rb = self._aligned_for_product(a, b)
        raw, phases = self._raw.multiply_phases(ra, rb, self._relin._raw)
        return Ciphertext(self, raw, a.scale_bits + b.scale_bits, a.shape), dict(phases)


_CIPHERTEXT_HEAD = struct.Struct("<II")  # bits, scale_bits
_ROTATION_COUNT = struct.Struct("<I")  # keys in a RotationKeys blob
_ROTATION_ELEMENT = struct.Struct("<Q")  # each key's Galois element, before its words


def _words_bytes(poly) -> bytes:
    return np.ascontiguousarray(poly.to_numpy(), dtype="<u8").tobytes()
