"""CGGI (TFHE): encrypted Boolean gates and programmable bootstrapping of small integers.

A bit is an LWE ciphertext of +1/8 (true) or -1/8 (false) on the torus; an integer m of 1 to 4
bits is m / 2^(bits+1) (the top bit of the torus is a padding bit). Every gate is one linear
combination, one key switch to the small key and one blind rotation (KS-then-PBS, as tfhe-rs's
Boolean and shortint defaults); MUX takes two. Every call is vectorized: one call evaluates an
array of gates of one type in one batch. See docs/cggi.md for the parameters, the noise model and
the failure probabilities.

    from ember import cggi
    ctx = cggi.Context(cggi.Params.preset("bool_128"), device="auto")
    ck = ctx.keygen(); sk = ctx.server_key(ck)
    c = ctx.nand(ctx.encrypt(a, ck), ctx.encrypt(b, ck), sk)
    ctx.decrypt(c, ck)
"""

from __future__ import annotations

import math
import struct
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _ember
from . import arrays as _arrays
from . import serialize as _ser
from ._persistent import Persistent
from ._progress import Progress
from .arrays import to_numpy, to_output
from .errors import MismatchError, ParameterError, SecurityWarning, SerializationError

__all__ = [
    "Bits",
    "ClientKey",
    "Context",
    "Ints",
    "Params",
    "ServerKey",
    "gaussian",
    "predicted_noise",
    "tuniform",
]

_NOISE_KINDS = {"gaussian": 0, "tuniform": 1}
# encrypt_int refuses integer widths whose predicted LUT failure probability is above this.
MAX_LOG2_P_FAIL_LUT = -30


def gaussian(std: float) -> tuple:
    """A rounded Gaussian noise of standard deviation `std` in torus units (a fraction of 1)."""
    return ("gaussian", float(std))


def tuniform(bound_log2: int) -> tuple:
    """tfhe-rs's TUniform(b): the integers of [-2^b, 2^b] on the 2^torus_bits scale, the two
    ends half as likely as the others."""
    return ("tuniform", int(bound_log2))


def _noise_std(noise: tuple, torus_bits: int) -> float:
    kind, value = noise
    if kind == "gaussian":
        return float(value)
    return math.sqrt((2.0 ** (2 * int(value) + 1) + 1) / 6) / 2.0**torus_bits


@dataclass(frozen=True)
class Params(Persistent):
    """CGGI parameters. Fill in a literal or take a preset (``Params.preset(name)``):

    - ``bool_128``: tfhe-rs's Boolean DEFAULT_PARAMETERS (n = 805, k = 3, N = 512, LWE noise
      std 5.86e-6, GLWE 9.3e-10, PBS base log 10 x 2 levels, KS base log 3 x 5 levels; u32
      torus). tfhe-rs states 132-bit security and a failure probability of 2^-64.3 per gate.
    - ``int2_128``: tfhe-rs's PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M64 (2-bit integers; u64
      torus, n = 791, k = 2, N = 1024): 132-bit security, p-fail 2^-65.0 as stated there.
    - ``int4_128``: tfhe-rs's PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M64 (4-bit integers; u64
      torus, n = 887, k = 1, N = 2048): 132-bit security, p-fail 2^-64.1 as stated there.
    - ``tfhe_lib_insecure``: the TFHE library's gate set (n = 630, N = 1024, k = 1, noise 2^-15
      and 2^-25, bk 7 x 3, ks 2 x 8; cuFHE, ARCTYREX): below the 128-bit floor, so it needs
      ``insecure=True``.
    - ``test_insecure`` (u32) and ``test_int_insecure`` (u64): tiny sets for fast tests, no
      security at all (insecure by their name).

    Every literal is validated: sizes must be consistent, the products exact, and (unless
    insecure=True) both the LWE (n) and the GLWE (k N) noise at or above the 128-bit floor of
    Zama's concrete-security-curves (log2 std >= -0.026405 dim + 2.4826, dim >= 450).
    The failure probabilities of ``predicted_noise`` are this library's own computation.
    """

    n: int
    k: int
    N: int
    lwe_noise: tuple
    glwe_noise: tuple
    bk_base_log: int
    bk_levels: int
    ks_base_log: int
    ks_levels: int
    torus_bits: int = 32
    insecure: bool = False
    name: str = ""
    fingerprint: int = field(default=0, init=False, compare=False)
    meets_security_floor: bool = field(default=False, init=False, compare=False)

    def __post_init__(self):
        for noise in (self.lwe_noise, self.glwe_noise):
            if not (isinstance(noise, tuple) and len(noise) == 2 and noise[0] in _NOISE_KINDS):
                raise ParameterError(
                    f"noise must be cggi.gaussian(std) or cggi.tuniform(b), got {noise!r}"
                )
        fp, secure, _, _ = _ember.cggi_check_params(**self._fields())
        object.__setattr__(self, "fingerprint", fp)
        object.__setattr__(self, "meets_security_floor", secure)
        if self.insecure and not secure and not self.name.startswith("test_"):
            warnings.warn(
                f"insecure=True: the CGGI parameters {self.name or '(literal)'} are below the "
                "128-bit security floor; use them for tests and experiments only",
                SecurityWarning,
                stacklevel=3,
            )

    def _fields(self) -> dict:
        return {
            "torus_bits": self.torus_bits,
            "n": self.n,
            "k": self.k,
            "N": self.N,
            "lwe_kind": _NOISE_KINDS[self.lwe_noise[0]],
            "lwe_value": float(self.lwe_noise[1]),
            "glwe_kind": _NOISE_KINDS[self.glwe_noise[0]],
            "glwe_value": float(self.glwe_noise[1]),
            "bk_base_log": self.bk_base_log,
            "bk_levels": self.bk_levels,
            "ks_base_log": self.ks_base_log,
            "ks_levels": self.ks_levels,
            "insecure": self.insecure,
        }

    @staticmethod
    def preset_names() -> list[str]:
        return list(_ember.cggi_preset_names())

    @classmethod
    def preset(cls, name: str, insecure: bool = False) -> Params:
        """A named preset. Those below the security floor (tfhe_lib_insecure) need
        insecure=True; the test presets are insecure by their name."""
        d = dict(_ember.cggi_preset(name))
        if not d["insecure"] or name.startswith("test_"):
            pass
        elif not insecure:
            raise ParameterError(
                f"the preset {name!r} is below the 128-bit security floor: pass insecure=True "
                "to use it (for comparisons and tests only)"
            )
        return cls(**d)

    def predicted_noise(self, message_bits: int = 0, key_weight: int | None = None) -> dict:
        """See the module function predicted_noise."""
        return predicted_noise(self, message_bits, key_weight)


def predicted_noise(params: Params, message_bits: int = 0, key_weight: int | None = None) -> dict:
    """The noise model of docs/cggi.md for `params` (variances in torus units squared):

    - ``bootstrap``: variance of a bootstrap's output (blind rotation plus extraction),
      n [(k+1) l N (B^2+2)/12 s_bk^2 + (1/2)(1 + k N/2)(B^-2l - q^-2)/12];
    - ``key_switch``: variance the key switch adds,
      k N [l_ks s_lwe^2 (B_ks^2+2)/12 + (1/2)(B_ks^-2l_ks - q^-2)/12];
    - ``mod_switch``: variance of rounding to 1/2N before the blind rotation, (1+n/2)/(48 N^2);
    - ``p_fail_gate``: the largest failure probability of a two-input gate whose inputs are fresh
      bootstrap outputs (AND-type: margin 1/8, 2-norm^2 2; XOR-type: margin 1/4, 2-norm^2 8),
      erfc(margin / sqrt(2 v));
    - ``p_fail_gate3``: the same for the three-input gates (MAJ: margin 1/8, 2-norm^2 3; XOR3:
      margin 1/4, 2-norm^2 12);
    - ``p_fail_lut``: for message_bits > 0, of a LUT on a fresh bootstrap output (margin
      2^-(bits+2)).

    The factors 1/2 and n/2 are the expected Hamming weight of a uniform binary key (over n):
    pass ``key_weight`` (the small key's number of ones) to predict for one key.
    """
    q = 2.0**params.torus_bits
    n, k, N = params.n, params.k, params.N
    b, lv = 2.0**params.bk_base_log, params.bk_levels
    bks, lks = 2.0**params.ks_base_log, params.ks_levels
    s_bk = _noise_std(params.glwe_noise, params.torus_bits)
    s_ks = _noise_std(params.lwe_noise, params.torus_bits)
    dec = max(b ** (-2 * lv) - q**-2, 0.0) / 12
    weight = n / 2 if key_weight is None else key_weight
    v_br = n * (k + 1) * lv * N * (b * b + 2) / 12 * s_bk**2 + weight * (1 + k * N / 2) * dec
    ks_dec = max(bks ** (-2 * lks) - q**-2, 0.0) / 12
    v_ks = k * N * (lks * s_ks**2 * (bks * bks + 2) / 12 + 0.5 * ks_dec)
    v_ms = (1 + weight) / (48.0 * N * N)

    def log2_p_fail(margin: float, v: float) -> float:
        x = margin / math.sqrt(2 * v)
        p = math.erfc(x)
        if p > 1e-300:
            return math.log2(p)
        # Below the float range: erfc(x) = exp(-x^2) / (x sqrt(pi)) (1 - O(1/x^2)).
        return -x * x / math.log(2) - math.log2(x * math.sqrt(math.pi))

    gates = max(
        log2_p_fail(1 / 8, 2 * v_br + v_ks + v_ms), log2_p_fail(1 / 4, 8 * v_br + v_ks + v_ms)
    )
    gates3 = max(
        log2_p_fail(1 / 8, 3 * v_br + v_ks + v_ms), log2_p_fail(1 / 4, 12 * v_br + v_ks + v_ms)
    )
    out = {
        "bootstrap": v_br,
        "key_switch": v_ks,
        "mod_switch": v_ms,
        "gate_input_and": 2 * v_br + v_ks + v_ms,
        "gate_input_xor": 8 * v_br + v_ks + v_ms,
        "p_fail_gate": 2.0**gates,
        "log2_p_fail_gate": gates,
        "gate_input_maj": 3 * v_br + v_ks + v_ms,
        "gate_input_xor3": 12 * v_br + v_ks + v_ms,
        "p_fail_gate3": 2.0**gates3,
        "log2_p_fail_gate3": gates3,
    }
    if message_bits:
        lut = log2_p_fail(2.0 ** -(message_bits + 2), v_br + v_ks + v_ms)
        out["p_fail_lut"] = 2.0**lut
        out["log2_p_fail_lut"] = lut
    return out


# The server key's serialized transform domain (see ServerKey.to_bytes).
_KEY_DOMAIN = 1


class ClientKey(Persistent):
    """The secret keys (small LWE key and GLWE key) of one context's parameters."""

    def __init__(self, ctx: Context, raw):
        self._ctx, self._raw = ctx, raw

    @property
    def key_id(self) -> int:
        return self._raw.key_id

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        lwe, glwe = self._raw.lwe(), self._raw.glwe()
        body = struct.pack("<QQ", lwe.size, glwe.size) + lwe.tobytes() + glwe.tobytes()
        return _ser.pack(_ser.KIND_CGGI_CLIENT_KEY, self._raw.params_id, self.key_id, body, mac_key)


class ServerKey(Persistent):
    """Bootstrapping key (NTT domain) and key-switching key, in the context's device memory."""

    def __init__(self, ctx: Context, raw):
        self._ctx, self._raw = ctx, raw

    @property
    def key_id(self) -> int:
        return self._raw.key_id

    @property
    def nbytes(self) -> int:
        return self._raw.nbytes

    @property
    def device(self) -> str:
        return self._ctx.device

    def to(self, device: str) -> ServerKey:
        """This key on `device` (bound to ctx.to(device)), copied there once and cached: the
        bootstrapping key replicated per GPU for work spread over several devices."""
        ctx = self._ctx.to(device)
        if ctx is self._ctx:
            return self
        copies = self.__dict__.setdefault("_copies", {})
        copy = copies.get(ctx.device)
        if copy is None:
            copy = ServerKey(ctx, self._raw.to(ctx.device))
            copy._copies = copies
            copies[ctx.device] = copy
            copies.setdefault(self._ctx.device, self)
        return copy

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        ctx = self._ctx._raw
        bsk = ctx.bsk_to_host(self._raw)
        ksk = ctx.ksk_to_host(self._raw)
        word = "<u4" if self._ctx.params.torus_bits == 32 else "<u8"
        # The transform domain of the bootstrapping key (1: the Fourier doubles of this version;
        # 0 was the Goldilocks residues of earlier ones) is part of the format: a key of another
        # domain is refused, not misread.
        body = (
            struct.pack("<QQB", bsk.size, ksk.size, _KEY_DOMAIN)
            + bsk.astype("<u8").tobytes()
            + ksk.astype(word).tobytes()
        )
        return _ser.pack(_ser.KIND_CGGI_SERVER_KEY, self._raw.params_id, self.key_id, body, mac_key)


class _Batch(Persistent):
    """A vector of LWE ciphertexts of one context (shape kept for decryption)."""

    def __init__(self, ctx: Context, raw, shape: tuple):
        self._ctx, self._raw, self.shape = ctx, raw, tuple(shape)

    def __len__(self) -> int:
        return self._raw.count

    @property
    def key_id(self) -> int:
        return self._raw.key_id

    @property
    def device(self) -> str:
        return self._ctx.device

    def to(self, device: str):
        """These ciphertexts on `device` (GPU to GPU peer to peer where possible), bound to
        ctx.to(device); itself when they are there already."""
        ctx = self._ctx.to(device)
        if ctx is self._ctx:
            return self
        return type(self)(ctx, self._raw.to(ctx.device), self.shape)

    def on_stream(self, stream):
        """The same ciphertexts, whose operations (as first operand) run on `stream`, an
        ember.Stream of their device: batches on different streams of a GPU run concurrently
        (call from several threads; every call returns when its stream is done). Results keep
        the stream."""
        handle = getattr(stream, "handle", None)
        if handle is None:
            raise ParameterError(f"on_stream needs an ember.Stream, got {stream!r}")
        if stream.device != self.device:
            raise MismatchError(
                f"the stream is on {stream.device} and the ciphertexts on {self.device}: make "
                f"the stream with ember.Stream('{self.device}')"
            )
        return type(self)(self._ctx, self._raw.on_stream(handle), self.shape)

    def __getitem__(self, idx):
        if isinstance(idx, (int, np.integer)):
            i = int(idx) + (len(self) if idx < 0 else 0)
            if not 0 <= i < len(self):
                raise IndexError(f"index {idx} out of range for {len(self)} ciphertexts")
            return type(self)(self._ctx, self._ctx._raw.slice(self._raw, i, 1), (1,))
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            if step != 1:
                raise ParameterError("only contiguous slices (step 1) of ciphertexts")
            count = max(stop - start, 0)
            return type(self)(self._ctx, self._ctx._raw.slice(self._raw, start, count), (count,))
        raise ParameterError(f"index ciphertexts with an int or a slice, got {idx!r}")

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        r = self._raw
        words = r.to_host().astype("<u4" if r.torus_bits == 32 else "<u8")
        head = struct.pack("<BBHQQ", r.torus_bits, r.message_bits, len(self.shape), r.dim, r.count)
        head += struct.pack(f"<{len(self.shape)}Q", *self.shape)
        return _ser.pack(
            _ser.KIND_CGGI_CIPHERTEXT, r.params_id, r.key_id, head + words.tobytes(), mac_key
        )


class Bits(_Batch):
    """Encrypted bits (a vector of LWE ciphertexts): ``~b`` is NOT (no bootstrap)."""

    def __invert__(self) -> Bits:
        return self._ctx.not_(self)


class Ints(_Batch):
    """Encrypted integers of `bits` bits with a padding bit: ``a + b``, ``a * 3``, ``a + 1``
    without a bootstrap (the result must stay below 2^bits), ctx.apply_lut for anything else."""

    @property
    def bits(self) -> int:
        return self._raw.message_bits

    def __add__(self, other):
        if isinstance(other, Ints):
            return self._ctx.add(self, other)
        return self._ctx.add_scalar(self, other)

    __radd__ = __add__

    def __mul__(self, other):
        return self._ctx.mul_scalar(self, other)

    __rmul__ = __mul__


def _as_int(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ParameterError(f"{what} must be an integer, got {value!r}")
    return int(value)


class Context(Persistent):
    """A CGGI context on one device ("cpu", "cuda:0", "auto": the first GPU, else the CPU)."""

    def __init__(self, params: Params | str, device: str | None = None):
        from . import resolve_device

        if isinstance(params, str):
            params = Params.preset(params)
        if not isinstance(params, Params):
            raise ParameterError(f"expected cggi.Params or a preset name, got {params!r}")
        self.params = params
        self.device = resolve_device(device)
        self._raw = _ember.CggiContext(**params._fields(), device=self.device)
        self.params_id = self._raw.params_id
        # The GPU whose memory encrypt/decrypt read and write in place (None: a CPU context).
        self._cuda_index = (
            int(self.device.split(":")[1]) if self.device.startswith("cuda") else None
        )

    def __repr__(self) -> str:
        return f"cggi.Context({self.params.name or 'literal'}, device={self.device!r})"

    def to(self, device: str) -> Context:
        """The context of these parameters on `device`, made once and shared by the copies:
        ctx.to("cuda:1").to(ctx.device) is ctx. Ciphertexts and server keys move with their
        own to()."""
        from . import resolve_device

        dev = resolve_device(device)
        if dev == self.device:
            return self
        replicas = self.__dict__.setdefault("_replicas", {self.device: self})
        ctx = replicas.get(dev)
        if ctx is None:
            ctx = Context(self.params, device=dev)
            ctx._replicas = replicas
            replicas[dev] = ctx
        return ctx

    # Ownership checks: objects of another parameter set are refused before any work.
    def _own(self, obj, cls, what: str):
        if not isinstance(obj, cls):
            if isinstance(obj, _Batch) and issubclass(cls, _Batch):
                raise MismatchError(
                    f"{what}: expected {cls.__name__}, got {type(obj).__name__} (bits and "
                    "integers are encoded differently)"
                )
            raise ParameterError(f"{what}: expected {cls.__name__}, got {type(obj).__name__}")
        if obj._raw.params_id != self.params_id:
            raise MismatchError(
                f"{what}: the {cls.__name__} belongs to a context with other parameters"
            )
        dev = getattr(obj, "device", self.device)
        if dev != self.device:
            raise MismatchError(
                f"{what}: the {cls.__name__} is on {dev} and this context on {self.device}: "
                f"move it with .to('{self.device}')"
            )
        return obj._raw

    def _bits(self, raw, shape) -> Bits:
        return Bits(self, raw, shape)

    # Keys.
    def keygen(self) -> ClientKey:
        return ClientKey(self, self._raw.keygen())

    def server_key(self, ck: ClientKey, progress: bool = True) -> ServerKey:
        """The bootstrapping and key-switching keys of `ck` (a progress bar in a terminal)."""
        raw = self._own(ck, ClientKey, "server_key")
        bar = Progress(self.params.n + 1, "CGGI server key", enabled=progress)
        last = [0]

        def step(done, total):
            bar.step(done - last[0])
            last[0] = done

        return ServerKey(self, self._raw.server_key(raw, step if bar.enabled else None))

    # Bits.
    def encrypt(self, bits, ck: ClientKey) -> Bits:
        """Bits (bool or 0/1 integers, any shape) encrypted under ck. A CUDA torch tensor or CuPy
        array on this context's GPU stays there: the masks and noise are drawn on the host, the
        messages added on the GPU."""
        on_gpu = self._gpu_bits(bits)
        if on_gpu is not None:
            flat, shape = on_gpu
            _arrays.synchronize_producer(flat)
            raw = self._raw.encrypt_in_place(flat, 0, self._own(ck, ClientKey, "encrypt"))
            return Bits(self, raw, shape)
        arr = np.asarray(to_numpy(bits) if hasattr(bits, "__dlpack__") else bits)
        if arr.dtype != bool and not np.issubdtype(arr.dtype, np.integer):
            raise ParameterError(f"encrypt takes a bool (or 0/1) array, got dtype {arr.dtype}")
        if arr.dtype != bool and np.any((arr != 0) & (arr != 1)):
            raise ParameterError("encrypt takes bits: values must be 0 or 1")
        flat = np.ascontiguousarray(arr.reshape(-1), dtype=np.uint8)
        raw = self._own(ck, ClientKey, "encrypt")
        return Bits(self, self._raw.encrypt_bits(flat, raw), arr.shape)

    def decrypt(self, c: Bits | Ints, ck: ClientKey, out: str | None = None, like=None):
        """np.ndarray[bool] for Bits, np.ndarray[int64] for Ints (in the encrypted shape);
        out="torch" / "dlpack" or like=x convert it (ember.arrays)."""
        if _arrays.device_output_wanted(out, like, self._cuda_index):
            # On the GPU: bits or integers as uint8 (bool or int64 for a torch or CuPy `like`).
            raw = self._own(c, _Batch, "decrypt")
            key = self._own(ck, ClientKey, "decrypt")
            array = self._raw.decrypt_in_place(raw, key, list(c.shape))
            got = _arrays.from_device(array, like)
            if like is None:
                return got
            if isinstance(c, Ints):
                return got.long() if hasattr(got, "long") else got.astype(np.int64)
            return got.bool() if hasattr(got, "bool") else got.astype(bool)
        if isinstance(c, Ints):
            return to_output(self.decrypt_int(c, ck), out, like)
        raw = self._own(c, Bits, "decrypt")
        key = self._own(ck, ClientKey, "decrypt")
        bits = self._raw.decrypt_bits(raw, key)
        return to_output(np.asarray(bits, dtype=bool).reshape(c.shape), out, like)

    def _gpu_bits(self, bits):
        """(flat uint8 bits in this context's GPU memory, shape) for a GPU array this context
        reads in place, else None (host values; a GPU array on a CPU context goes through the
        host); one on another GPU than this context's is refused."""
        if not _arrays.on_context_gpu(bits, self._cuda_index, self.device):
            return None
        return _arrays.device_bits(bits)

    def constant(self, bits) -> Bits:
        """Trivial encryptions of known bits (no key, no noise): for circuit constants."""
        arr = np.asarray(bits)
        flat = np.ascontiguousarray(arr.reshape(-1).astype(bool), dtype=np.uint8)
        return Bits(self, self._raw.constant(flat), arr.shape)

    def _gate(self, gate, a: Bits, b: Bits, sk: ServerKey) -> Bits:
        ra, rb = self._own(a, Bits, "gate"), self._own(b, Bits, "gate")
        if len(a) != len(b):
            raise ParameterError(f"gate operands of {len(a)} and {len(b)} bits: give equal sizes")
        return Bits(self, self._raw.gate(gate, ra, rb, self._own(sk, ServerKey, "gate")), a.shape)

    def and_(self, a, b, sk):
        return self._gate(_ember.CggiGate.and_, a, b, sk)

    def nand(self, a, b, sk):
        return self._gate(_ember.CggiGate.nand, a, b, sk)

    def or_(self, a, b, sk):
        return self._gate(_ember.CggiGate.or_, a, b, sk)

    def nor(self, a, b, sk):
        return self._gate(_ember.CggiGate.nor, a, b, sk)

    def xor(self, a, b, sk):
        return self._gate(_ember.CggiGate.xor, a, b, sk)

    def xnor(self, a, b, sk):
        return self._gate(_ember.CggiGate.xnor, a, b, sk)

    def andny(self, a, b, sk):
        """(NOT a) AND b."""
        return self._gate(_ember.CggiGate.andny, a, b, sk)

    def andyn(self, a, b, sk):
        """a AND (NOT b)."""
        return self._gate(_ember.CggiGate.andyn, a, b, sk)

    def orny(self, a, b, sk):
        """(NOT a) OR b."""
        return self._gate(_ember.CggiGate.orny, a, b, sk)

    def oryn(self, a, b, sk):
        """a OR (NOT b)."""
        return self._gate(_ember.CggiGate.oryn, a, b, sk)

    def mux(self, s: Bits, a: Bits, b: Bits, sk: ServerKey) -> Bits:
        """s ? a : b, elementwise (two bootstraps per element)."""
        rs, ra, rb = (self._own(x, Bits, "mux") for x in (s, a, b))
        if not len(s) == len(a) == len(b):
            raise ParameterError("mux operands must have equal sizes")
        return Bits(self, self._raw.mux(rs, ra, rb, self._own(sk, ServerKey, "mux")), a.shape)

    def maj(self, a: Bits, b: Bits, c: Bits, sk: ServerKey) -> Bits:
        """The majority of a, b, c elementwise (a full adder's carry): one bootstrap each."""
        return self._gate3("maj", a, b, c, sk)

    def xor3(self, a: Bits, b: Bits, c: Bits, sk: ServerKey) -> Bits:
        """a ^ b ^ c elementwise (a full adder's sum): one bootstrap each."""
        return self._gate3("xor3", a, b, c, sk)

    def _gate3(self, name: str, a: Bits, b: Bits, c: Bits, sk: ServerKey) -> Bits:
        ra, rb, rc = (self._own(x, Bits, name) for x in (a, b, c))
        if not len(a) == len(b) == len(c):
            raise ParameterError(f"{name} operands must have equal sizes")
        raw = getattr(self._raw, name)(ra, rb, rc, self._own(sk, ServerKey, name))
        return Bits(self, raw, a.shape)

    def concat(self, parts) -> Bits:
        """The ciphertexts of several Bits of this context one after the other (a copy; no
        bootstrap): gathers the operands of a batch of gates."""
        parts = list(parts)
        if not parts:
            raise ParameterError("concat needs at least one Bits")
        raws = [self._own(p, Bits, "concat") for p in parts]
        if len(raws) == 1:
            return Bits(self, self._raw.copy(raws[0]), (len(parts[0]),))
        raw = self._raw.concat(raws)
        return Bits(self, raw, (raw.count,))

    def take(self, a: Bits | Ints, indices) -> Bits | Ints:
        """The ciphertexts of `a` at `indices` (a copy, one device gather; indices may repeat),
        like numpy's take on a flat array: builds the operands of the next batched operation
        from a pool of ciphertexts without a call per ciphertext."""
        raw = self._own(a, _Batch, "take")
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iu":
            raise ParameterError(f"take: indices must be integers, not {idx.dtype}")
        flat = idx.reshape(-1)
        if flat.size and (flat.min() < 0 or flat.max() >= len(a)):
            raise ParameterError(
                f"take: indices must lie in [0, {len(a)}); got {flat.min()}..{flat.max()}"
            )
        out = self._raw.take(raw, np.ascontiguousarray(flat, dtype=np.uint32))
        return type(a)(self, out, idx.shape if idx.ndim else (1,))

    def not_(self, a: Bits) -> Bits:
        """NOT, without a bootstrap."""
        return Bits(self, self._raw.not_(self._own(a, Bits, "not_")), a.shape)

    def copy(self, a: Bits | Ints):
        """A copy of the ciphertexts (no bootstrap)."""
        raw = self._own(a, _Batch, "copy")
        return type(a)(self, self._raw.copy(raw), a.shape)

    def bootstrap(self, a: Bits, sk: ServerKey) -> Bits:
        """The identity gate: the same bits with fresh noise."""
        raw = self._own(a, Bits, "bootstrap")
        return Bits(self, self._raw.bootstrap(raw, self._own(sk, ServerKey, "bootstrap")), a.shape)

    # Integers.
    def encrypt_int(self, values, ck: ClientKey, bits: int = 4) -> Ints:
        bits = _as_int(bits, "bits")
        if not 1 <= bits <= 4:
            raise ParameterError(f"bits must be in [1, 4], got {bits}")
        log2_fail = self.predicted_noise(bits)["log2_p_fail_lut"]
        if log2_fail > MAX_LOG2_P_FAIL_LUT:
            raise ParameterError(
                f"{bits}-bit lookups at these parameters fail with probability 2^{log2_fail:.0f} "
                f"per bootstrap (above 2^{MAX_LOG2_P_FAIL_LUT}): use fewer bits or an integer "
                "preset (int2_128, int4_128)"
            )
        if _arrays.on_context_gpu(values, self._cuda_index, self.device):
            on_gpu = _arrays.device_small_integers(values, 1 << bits)
            if on_gpu is not None:
                flat, shape = on_gpu
                _arrays.synchronize_producer(flat)
                key = self._own(ck, ClientKey, "encrypt_int")
                return Ints(self, self._raw.encrypt_in_place(flat, bits, key), shape)
        arr = np.asarray(to_numpy(values) if hasattr(values, "__dlpack__") else values)
        if not np.issubdtype(arr.dtype, np.integer):
            raise ParameterError(f"encrypt_int takes an integer array, got dtype {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() >= 1 << bits):
            raise ParameterError(f"values must be in [0, {1 << bits}) for bits={bits}")
        flat = np.ascontiguousarray(arr.reshape(-1), dtype=np.uint64)
        raw = self._own(ck, ClientKey, "encrypt_int")
        return Ints(self, self._raw.encrypt_ints(flat, bits, raw), arr.shape)

    def decrypt_int(self, q: Ints, ck: ClientKey) -> np.ndarray:
        raw = self._own(q, Ints, "decrypt_int")
        out = self._raw.decrypt_ints(raw, self._own(ck, ClientKey, "decrypt_int"))
        return np.asarray(out, dtype=np.int64).reshape(q.shape)

    def apply_lut(self, q: Ints, fn_or_table, sk: ServerKey) -> Ints:
        """fn(m) (or table[m]) for every encrypted m: one programmable bootstrap each. The
        results must lie in [0, 2^bits)."""
        raw = self._own(q, Ints, "apply_lut")
        size = 1 << q.bits
        if callable(fn_or_table):
            table = [fn_or_table(v) for v in range(size)]
        else:
            table = list(np.asarray(fn_or_table).reshape(-1))
        if len(table) != size:
            raise ParameterError(f"the table needs {size} entries for {q.bits}-bit integers")
        table = [_as_int(v, "table entries") for v in table]
        if any(not 0 <= v < size for v in table):
            raise ParameterError(f"table entries must be in [0, {size})")
        out = self._raw.apply_lut(raw, table, self._own(sk, ServerKey, "apply_lut"))
        return Ints(self, out, q.shape)

    def add(self, a: Ints, b: Ints) -> Ints:
        ra, rb = self._own(a, Ints, "add"), self._own(b, Ints, "add")
        if len(a) != len(b):
            raise ParameterError(f"add operands of {len(a)} and {len(b)} integers")
        return Ints(self, self._raw.add(ra, rb), a.shape)

    def mul_scalar(self, a: Ints, c: int) -> Ints:
        return Ints(
            self,
            self._raw.mul_scalar(self._own(a, Ints, "mul_scalar"), _as_int(c, "the scalar")),
            a.shape,
        )

    def add_scalar(self, a: Ints, v: int) -> Ints:
        return Ints(
            self,
            self._raw.add_scalar(self._own(a, Ints, "add_scalar"), _as_int(v, "the scalar")),
            a.shape,
        )

    def phase_errors(self, c: Bits | Ints, ck: ClientKey) -> np.ndarray:
        """Each ciphertext's phase minus its nearest valid encoding, in torus units: the noise
        (for noise studies; needs the secret key)."""
        raw = self._own(c, _Batch, "phase_errors")
        return np.asarray(self._raw.phase_errors(raw, self._own(ck, ClientKey, "phase_errors")))

    def predicted_noise(self, message_bits: int = 0, ck: ClientKey | None = None) -> dict:
        """predicted_noise for these parameters; with `ck`, for that key's Hamming weight."""
        weight = (
            None if ck is None else int(self._own(ck, ClientKey, "predicted_noise").lwe().sum())
        )
        return predicted_noise(self.params, message_bits, weight)

    # Serialization.
    def ciphertext_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> Bits | Ints:
        key_id, payload = _ser.unpack(blob, _ser.KIND_CGGI_CIPHERTEXT, self.params_id, mac_key)
        r = _ser.Reader(payload)
        torus_bits, message_bits, ndim, dim, count = r.unpack("<BBHQQ")
        if torus_bits != self.params.torus_bits or dim != self.params.k * self.params.N:
            raise SerializationError("ciphertext sizes do not match the parameters")
        if message_bits > 4 or ndim > 32:
            raise SerializationError("malformed ciphertext header")
        shape = r.unpack(f"<{ndim}Q")
        if math.prod(shape) != count:
            raise SerializationError("the ciphertext shape does not match its count")
        width = torus_bits // 8
        words = np.frombuffer(r.take(count * (dim + 1) * width), dtype=f"<u{width}")
        r.done()
        raw = self._raw.batch_from_host(
            np.ascontiguousarray(words, dtype=np.uint64), count, message_bits, key_id
        )
        return (Ints if message_bits else Bits)(self, raw, shape)

    def client_key_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> ClientKey:
        key_id, payload = _ser.unpack(blob, _ser.KIND_CGGI_CLIENT_KEY, self.params_id, mac_key)
        r = _ser.Reader(payload)
        n_lwe, n_glwe = r.unpack("<QQ")
        if n_lwe != self.params.n or n_glwe != self.params.k * self.params.N:
            raise SerializationError("secret key sizes do not match the parameters")
        lwe = np.frombuffer(r.take(n_lwe), dtype=np.uint8)
        glwe = np.frombuffer(r.take(n_glwe), dtype=np.uint8)
        r.done()
        raw = self._raw.client_key_from(
            np.ascontiguousarray(lwe), np.ascontiguousarray(glwe), key_id
        )
        return ClientKey(self, raw)

    def server_key_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> ServerKey:
        key_id, payload = _ser.unpack(blob, _ser.KIND_CGGI_SERVER_KEY, self.params_id, mac_key)
        r = _ser.Reader(payload)
        n_bsk, n_ksk, domain = r.unpack("<QQB")
        if n_bsk > len(payload) // 8 or n_ksk > len(payload):
            raise SerializationError("server key sizes exceed the data")
        if domain != _KEY_DOMAIN:
            raise SerializationError(
                "the bootstrapping key is in another transform domain than this version uses "
                "(an earlier version's key): make a new server key"
            )
        width = self.params.torus_bits // 8
        bsk = np.frombuffer(r.take(n_bsk * 8), dtype="<u8")
        ksk = np.frombuffer(r.take(n_ksk * width), dtype=f"<u{width}")
        r.done()
        raw = self._raw.server_key_from(
            np.ascontiguousarray(bsk, dtype=np.uint64),
            np.ascontiguousarray(ksk, dtype=np.uint64),
            key_id,
        )
        return ServerKey(self, raw)
