"""What the RLWE schemes (CKKS, BFV, BGV) share in Python: the security table, Galois elements,
the key classes with their serialization, and a context base class with key generation, key
loading and rotations. Each scheme's Context derives from ``KeyedContext`` and supplies
``_raw`` (its C++ context), ``params``, ``device``, ``slots`` and ``_wrap``.
"""

from __future__ import annotations

import struct
import warnings
from collections.abc import Iterable, Sequence

import numpy as np

from . import ring
from . import serialize as _ser
from ._ops import CiphertextOps
from ._persistent import Persistent
from ._progress import Progress
from .dist import ReplicaSet, map_over_devices
from .errors import (
    DeviceMemoryError,
    MismatchError,
    MissingKeyError,
    ParameterError,
    SecurityWarning,
    SerializationError,
)
from .ring import Sampler

__all__ = [
    "SECURITY_128_MAX_LOGQP",
    "SPARSE_SECRET_128_MAX_LOGQP",
    "EvalKeys",
    "KeyedContext",
    "PublicKey",
    "SecretKey",
    "describe",
    "integer_arg",
    "rotation_steps",
    "short_repr",
]

# Largest log2(QP) for 128-bit security with a ternary secret (HomomorphicEncryption.org standard,
# classical attacks). N = 2^16 and 2^17 have no row in the standard; their bounds are the
# lattice-estimator figures OpenFHE's tables use (1772 and 3544 bits).
SECURITY_128_MAX_LOGQP = {10: 27, 11: 54, 12: 109, 13: 218, 14: 438, 15: 881, 16: 1772, 17: 3544}


# Sparse secrets (exactly h nonzero coefficients) have no row in the standard, and hybrid attacks
# make them weaker than uniform ternary ones at the same modulus. A sparse secret counts as
# 128-bit only where a lattice-estimator run covers it: (log_n, h) -> the largest log2(QP) of that
# run. Both rows are published runs of LWE.estimate (malb/lattice-estimator, BDGL16 reduction
# cost, Gaussian error of sigma 3.2, 2N samples), whose cheapest attack (bdd_mitm_hybrid) costs
# 2^128.5: N = 2^15, log2 q = 819, h = 192; N = 2^16, log2 q = 1726, h = 320. A set with more
# nonzeros and no larger modulus is at least as hard.
SPARSE_SECRET_128_MAX_LOGQP = {(15, 192): 819, (16, 320): 1726}


def check_security(
    log_n: int, log_qp: float, security: int, insecure: bool, hamming_weight: int = 0
) -> None:
    """Refuses log2(QP) above the 128-bit bound for N = 2^log_n, and sparse secrets
    (hamming_weight > 0) that no estimate covers, unless insecure=True; warns with
    SecurityWarning whenever insecure=True is given."""
    if insecure:
        warnings.warn(
            f"insecure=True: these parameters (N = 2^{log_n}, log2(QP) = {log_qp:.0f}"
            + (f", secret of Hamming weight {hamming_weight}" if hamming_weight else "")
            + ") are not checked for security; use them for tests and experiments only",
            SecurityWarning,
            stacklevel=4,
        )
        return
    if security != 128:
        raise ParameterError("only security=128 is tabulated; pass insecure=True otherwise")
    bound = SECURITY_128_MAX_LOGQP.get(log_n, 0)
    if log_qp > bound:
        raise ParameterError(
            f"log2(QP) = {log_qp:.2f} bits exceeds {bound}, the 128-bit security bound for "
            f"N = 2^{log_n}: use fewer or smaller primes, a larger log_n, or insecure=True for "
            "experiments"
        )
    if hamming_weight:
        covered = [
            max_logqp
            for (n, h), max_logqp in SPARSE_SECRET_128_MAX_LOGQP.items()
            if n == log_n and hamming_weight >= h
        ]
        if not covered or log_qp > max(covered):
            rows = ", ".join(
                f"N = 2^{n}: h >= {h}, log2(QP) <= {q}"
                for (n, h), q in SPARSE_SECRET_128_MAX_LOGQP.items()
            )
            raise ParameterError(
                f"a sparse secret of Hamming weight {hamming_weight} at N = 2^{log_n} and "
                f"log2(QP) = {log_qp:.0f} is not covered by a 128-bit security estimate ({rows}); "
                "use hamming_weight=0 (uniform ternary secret) or insecure=True for experiments"
            )


def integer_arg(value, what: str) -> int:
    """`value` as a Python int. Only Python and numpy integers pass: a float step or level is a
    mistake to report, not a number to round, and a bool is not a count. `what` starts the
    message ("rotation steps must be integers")."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ParameterError(f"{what}, got {value!r}")
    return int(value)


def describe(obj) -> str:
    """How an error message names what it got: Ember's own objects with their scheme and public
    class ("a CKKS ciphertext (ember.ckks.Ciphertext)"), anything else by its type."""
    scheme = getattr(getattr(obj, "_ctx", None), "scheme", None)
    cls = type(obj)
    if scheme is not None:
        public = f"ember.{scheme.lower()}.{cls.__name__}"
        kind = "ciphertext" if isinstance(obj, CiphertextOps) else cls.__name__
        return f"a {scheme} {kind} ({public})"
    return (
        "None" if obj is None else f"{cls.__module__}.{cls.__qualname__}".replace("builtins.", "")
    )


def galois_element(step: int, n: int) -> int:
    """The Galois element 5^step mod 2N that rotates the slots (or each batching row) left by
    `step`."""
    slots = n // 2
    return pow(5, step % slots, 2 * n)


# Key errors are Gaussian (sigma 3.2) cut at ceil(6 sigma) = 20 by the sampler, times the
# scheme's error factor (t for BGV); verification allows some slack above that cut.
KEY_ERROR_BOUND = 32


class SecretKey(Persistent):
    def __init__(self, ctx, raw):
        self._ctx, self._raw = ctx, raw

    @property
    def device(self) -> str:
        return self._raw.device

    def to(self, device: str) -> SecretKey:
        """This key on `device` (itself when it is there already)."""
        ctx = self._ctx._context_on(device)
        return self if ctx is self._ctx else SecretKey(ctx, self._raw.to(ctx.device))

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        """Serializes the secret key (only when you ask: keep the bytes secret). With `mac_key`
        the bytes carry a keyed MAC and must be read with the same key."""
        return _ser.pack(
            _ser.KIND_SECRET_KEY,
            self._raw.params_id,
            self._raw.key_id,
            _ser.poly_bytes(self._raw.s),
            mac_key,
        )


class PublicKey(Persistent):
    def __init__(self, ctx, raw):
        self._ctx, self._raw = ctx, raw

    @property
    def device(self) -> str:
        return self._raw.device

    def to(self, device: str) -> PublicKey:
        """This key on `device` (itself when it is there already)."""
        ctx = self._ctx._context_on(device)
        return self if ctx is self._ctx else PublicKey(ctx, self._raw.to(ctx.device))

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        payload = self._raw.seed + struct.pack("<Q", self._raw.seed_nonce)
        return _ser.pack(
            _ser.KIND_PUBLIC_KEY,
            self._raw.params_id,
            self._raw.key_id,
            payload + _ser.poly_bytes(self._raw.b),
            mac_key,
        )

    def verify(self, sk: SecretKey) -> None:
        """Checks that this is a public key of `sk` (b + a s is a small error); raises
        SerializationError otherwise. Without the secret key a public key's words cannot be
        checked: use a MAC for keys that cross a trust boundary."""
        _check_key_id(self._raw.key_id, sk, "the public key")
        raw, s = self._raw, sk._raw.s
        s_q = _rows(s, raw.b.basis, len(raw.b.basis))
        bound = KEY_ERROR_BOUND * self._ctx._raw.error_factor
        if _ser.small_integer_poly(raw.b + raw.a * s_q, bound) is None:
            raise SerializationError(
                "the public key does not belong to this secret key (b + a s is not a small "
                "error): it was corrupted or replaced"
            )


class EvalKeys(Persistent):
    """Relinearization key and Galois keys (by Galois element) of one key set; CKKS
    bootstrapping adds its two encapsulation keys (`boot`)."""

    def __init__(self, ctx, relin, galois: dict, boot: tuple | None = None):
        self._ctx, self.relin, self.galois, self.boot = ctx, relin, galois, boot
        self._copies = {ctx.device: self}  # this key set on each device, shared by the copies

    @property
    def device(self) -> str:
        return self._ctx.device

    def to(self, device: str) -> EvalKeys:
        """These keys on `device`, copied there once (GPU to GPU peer to peer where the GPUs
        allow it): later calls, and ctx.map, reuse the copy."""
        ctx = self._ctx._context_on(device)
        with ctx._replicas.lock:
            copy = self._copies.get(ctx.device)
            if copy is None:
                dev = ctx.device
                boot = tuple(k.to(dev) for k in self.boot) if self.boot else None
                galois = {g: k.to(dev) for g, k in self.galois.items()}
                copy = EvalKeys(ctx, self.relin.to(dev), galois, boot)
                copy._copies = self._copies
                self._copies[dev] = copy
        return copy

    @property
    def rotations(self) -> list[int]:
        n = self._ctx.params.n
        return sorted(s for s in range(n // 2) if galois_element(s, n) in self.galois)

    @property
    def nbytes(self) -> int:
        extra = sum(k.nbytes for k in self.boot) if self.boot else 0
        return self.relin.nbytes + sum(k.nbytes for k in self.galois.values()) + extra

    def to_bytes(self, mac_key: bytes | None = None) -> bytes:
        raw = self._ctx._raw
        # Bootstrapping's encapsulation keys (galois 0) follow the Galois keys.
        keys = [self.relin] + [self.galois[g] for g in sorted(self.galois)] + list(self.boot or ())
        parts = [struct.pack("<I", len(keys))]
        for k in keys:
            parts.append(struct.pack("<QQI", k.galois, k.seed_nonce, k.dnum) + k.seed)
            parts.extend(_ser.poly_bytes(raw.switch_key_part(k, j)) for j in range(k.dnum))
        return _ser.pack(
            _ser.KIND_EVAL_KEYS, self.relin.params_id, self.relin.key_id, b"".join(parts), mac_key
        )

    def verify(self, sk: SecretKey) -> None:
        """Checks every key against the secret key: for each digit j, b_j + a_j s - P W_j s'
        must be one small error polynomial (s' = s^2 for relinearization, s(X^g) for the Galois
        key of g). Raises SerializationError naming the first bad key. Without the secret key
        (or a MAC) key words cannot be verified: a corrupted key gives wrong products and
        rotations. The bootstrapping encapsulation keys involve a sparse secret that is not
        kept, so only their structure is checked (see docs/security.md)."""
        _check_key_id(self.relin.key_id, sk, "the evaluation keys")
        s = sk._raw.s
        _check_switch_key(self._ctx, self.relin, s, s * s, "the relinearization key")
        for g in sorted(self.galois):
            name = f"the Galois key of element {g} ({_galois_name(self._ctx, g)})"
            _check_key_id(self.galois[g].key_id, sk, name)
            _check_switch_key(self._ctx, self.galois[g], s, s.automorphism(g), name)


def _check_key_id(key_id: int, sk: SecretKey, what: str) -> None:
    if key_id != sk._raw.key_id:
        raise SerializationError(
            f"{what} belong(s) to another key set (key id {key_id:#x}, the secret key's is "
            f"{sk._raw.key_id:#x})"
        )


def _galois_name(ctx, g: int) -> str:
    n = ctx.params.n
    if g == 2 * n - 1:
        return "conjugation / row swap"
    steps = [r for r in range(n // 2) if galois_element(r, n) == g]
    return f"rotation by {steps[0]}" if steps else "no rotation step"


def _rows(p, basis, count: int):
    """The first `count` rows of an eval-form polynomial over `basis` (its primes come first)."""
    return ring.RnsPoly.from_numpy(basis, p.to_numpy()[:count].copy(), "eval", p.device)


def _gadget(raw, j: int) -> list[int]:
    """Digit j's gadget per row of the full basis: P mod q_i on the digit's primes of Q, else 0
    (rlwe::Context's gadget_)."""
    primes = [int(q) for q in raw.full_basis().primes]
    q_count = len(raw.q_basis(raw.max_level))
    p_total = 1
    for p in primes[q_count:]:
        p_total *= p
    digit = range(j * raw.alpha, min((j + 1) * raw.alpha, q_count))
    return [p_total % q if i in digit else 0 for i, q in enumerate(primes)]


def _check_switch_key(ctx, key, s, s_from, name: str) -> None:
    """b_j + a_j s - gadget_j s_from (= e_j) is one small polynomial for every digit j."""
    raw = ctx._raw
    bound = KEY_ERROR_BOUND * raw.error_factor
    for j in range(key.dnum):
        b, a = raw.switch_key_part(key, j), raw.switch_key_uniform_part(key, j)
        err = b + a * s - s_from.multiply_scalar_per_limb(_gadget(raw, j))
        if _ser.small_integer_poly(err, bound) is None:
            raise SerializationError(
                f"{name} is wrong for this secret key (digit {j} does not decrypt to a small "
                "error): it was corrupted or replaced; regenerate it with ctx.eval_keys(sk)"
            )


def _check_seed_nonce(nonce: int, what: str) -> None:
    """Ember expands every uniform half from a fresh derived seed with nonce 0."""
    if nonce != 0:
        raise SerializationError(f"{what} seed nonce {nonce}: Ember writes 0 (corrupted data)")


def check_secret_coefficients(ctx, s) -> None:
    """The secret (eval form over Q u P) must be ternary, the same value in every prime, with
    the parameters' Hamming weight when they fix one; raises SerializationError otherwise."""
    rows = _ser.centered_rows(s)
    first = rows[0]
    if np.any(np.abs(first) > 1):
        raise SerializationError(
            "secret key coefficients must be -1, 0 or 1: this is not a secret key of Ember's "
            "distribution (corrupted or foreign data)"
        )
    if np.any(rows != first):
        raise SerializationError(
            "the secret key's residues disagree across primes (not one ternary polynomial)"
        )
    weight = int(np.count_nonzero(first))
    hw = ctx.params.hamming_weight
    if hw and weight != hw:
        raise SerializationError(
            f"the secret key has {weight} nonzero coefficients; these parameters fix "
            f"hamming_weight={hw}"
        )
    if weight == 0:
        raise SerializationError("the secret key is zero (it would encrypt nothing)")


def _article(noun: str) -> str:
    return ("an " if noun[0] in "AEIOU" else "a ") + noun


def short_repr(value, limit: int = 40) -> str:
    """repr(value), cut in the middle when long (a 400-digit integer in a message)."""
    r = repr(value)
    return r if len(r) <= limit else f"{r[: limit // 2]}...{r[-8:]} ({len(r)} characters)"


def _params_id(key) -> int:
    """The parameter fingerprint a key carries (EvalKeys: its relinearization key's)."""
    return key.relin.params_id if isinstance(key, EvalKeys) else key._raw.params_id


def rotation_steps(steps, what: str = "rotations") -> list[int]:
    """A list of rotation steps (integers, negative allowed) from any iterable of them."""
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Iterable):
        raise ParameterError(f"{what} must be a list of integer steps, got {describe(steps)}")
    return [integer_arg(s, "rotation steps must be integers") for s in steps]


class KeyedContext(Persistent):
    """Keys, key (de)serialization and rotations shared by every RLWE scheme's Context.
    Every public method checks the keys and ciphertexts it is given at the boundary: a wrong
    type is a ParameterError, an object of another scheme or of other parameters a
    MismatchError, so that nothing reaches the C++ bindings with a type they would reject."""

    scheme: str = "RLWE"  # "CKKS", "BFV", "BGV": names the scheme in messages and checks
    _plaintext_type: type  # the scheme's Plaintext class
    _sampler: Sampler
    _eval_keys: EvalKeys | None = None

    # ---------------------------------------------------------------- devices
    @property
    def _word_bits(self) -> int:
        """The width of this context's words: 64, or 32 (CKKS's word_bits=32)."""
        return getattr(self.params, "word_bits", 64)

    def _replica_options(self) -> dict:
        """The constructor's keyword options (besides params and device) that a copy of this
        context on another device keeps."""
        return {}

    @property
    def _replicas(self) -> ReplicaSet:
        reps = self.__dict__.get("_replica_set")
        if reps is None:
            reps = self.__dict__["_replica_set"] = ReplicaSet(self)
        return reps

    def _context_on(self, device: str):
        """The context of these parameters on `device`, made once (without keys)."""
        from . import resolve_device

        dev = resolve_device(device)
        if dev == self.device:
            return self
        reps = self._replicas
        with reps.lock:
            ctx = reps.contexts.get(dev)
            if ctx is None:
                ctx = type(self)(self.params, device=dev, _like=self, **self._replica_options())
                ctx.__dict__["_replica_set"] = reps
                reps.contexts[dev] = ctx
        return ctx

    def to(self, device: str):
        """This context on `device`: the same parameters (ciphertexts keep working across the
        move), and this context's evaluation keys copied there once. Made once per device and
        shared: ctx.to("cuda:1").to(ctx.device) is ctx."""
        ctx = self._context_on(device)
        if ctx is not self and self._eval_keys is not None:
            ctx._eval_keys = self._eval_keys.to(ctx.device)
        return ctx

    def map(
        self,
        fn,
        *iterables,
        devices="all",
        pass_context: bool = False,
        gather: bool = True,
    ) -> list:
        """[fn(*args) for args in zip(*iterables)], the calls spread over a device set ("all":
        every visible GPU, else the CPU; or a list such as ["cuda:0", "cuda:1"] or
        ["cpu:0", "cpu:1"]). Each device takes a contiguous run of the items on its own host
        thread; ciphertexts and plaintexts among the arguments are moved to it, and this
        context's evaluation keys are copied to each device once. Inside fn use the arguments'
        operators and methods (a * b, a.rotate(3)); with pass_context=True fn gets the device's
        context first (fn(ctx_d, *args)) for context methods. Results come back in input order,
        on this context's device (gather=False leaves each on the device that computed it)."""
        return map_over_devices(self, fn, iterables, devices, pass_context, gather)

    def split(self, devices="all", exchange: str = "auto"):
        """One multiplication or rotation spread over several devices, bit-identical to one
        device (see ember.dist.Split): ``sp = ctx.split(["cuda:0", "cuda:1"])``, then
        ``sp.gather(sp.multiply(sp.scatter(x), sp.scatter(y)))``."""
        from .dist import Split

        return Split(self, devices, exchange)

    def _check_device(self, obj_device: str, what: str, how: str) -> None:
        if obj_device != self.device:
            raise MismatchError(
                f"{what} is on {obj_device} and this context on {self.device}: move it with "
                f"{how}.to('{self.device}'), or compute on ctx.to('{obj_device}')"
            )

    # ---------------------------------------------------------------- boundary checks
    def _check(self, ct) -> None:
        """Refuses anything but a ciphertext of this scheme, of this context's parameters and
        on this context's device."""
        if not isinstance(ct, CiphertextOps):
            raise ParameterError(
                f"expected a {self.scheme} ciphertext (ember.{self.scheme.lower()}.Ciphertext), "
                f"got {describe(ct)}"
            )
        if ct._ctx.scheme != self.scheme:
            raise MismatchError(f"expected a {self.scheme} ciphertext, got {describe(ct)}")
        if ct._raw.params_id != self._raw.params_id:
            raise MismatchError("the ciphertext belongs to a context with other parameters")
        if ct._ctx.device != self.device:
            self._check_device(ct._ctx.device, "the ciphertext", "ct")

    def _check_key(self, key, kinds: tuple, op: str) -> None:
        """Refuses a key of the wrong kind (ParameterError), of another scheme or of other
        parameters (MismatchError). Keys of another context with the same parameters pass:
        the C++ layer matches their key set (key_id) where it matters."""
        if not isinstance(key, kinds):
            wanted = " or ".join(_article(k.__name__) for k in kinds)
            hint = " (ctx.keygen())" if kinds == (SecretKey,) else ""
            raise ParameterError(f"{op} needs {wanted}{hint}, got {describe(key)}")
        scheme = getattr(key._ctx, "scheme", None)
        if scheme != self.scheme:
            raise MismatchError(
                f"{op}: the {type(key).__name__} belongs to a {scheme} context, not to this "
                f"{self.scheme} context"
            )
        if _params_id(key) != self._raw.params_id:
            raise MismatchError(
                f"{op}: the {type(key).__name__} belongs to a context with other parameters "
                "(its params_id differs); use keys made by a context with these parameters"
            )
        if key._ctx.device != self.device:
            self._check_device(key._ctx.device, f"{op}: the {type(key).__name__}", "key")

    def _check_plaintext(self, pt, op: str) -> None:
        """Refuses anything but this scheme's Plaintext (`_plaintext_type`) encoded under these
        parameters: another context's plaintext would be read with the wrong moduli."""
        if not isinstance(pt, self._plaintext_type):
            scheme = getattr(getattr(pt, "_ctx", None), "scheme", self.scheme)
            error = MismatchError if scheme != self.scheme else ParameterError
            raise error(
                f"{op} needs a {self.scheme} plaintext (ctx.encode(...)), got {describe(pt)}"
            )
        if pt._ctx._raw.params_id != self._raw.params_id:
            raise MismatchError(
                f"{op}: the plaintext belongs to a context with other parameters; encode the "
                "values with this context"
            )
        if pt._ctx.device != self.device:
            self._check_device(pt._ctx.device, f"{op}: the plaintext", "pt")

    def _check_values(self, values) -> None:
        """Refuses an Ember object where values (numbers) are expected: another scheme's
        plaintext or ciphertext (MismatchError), a key or a ciphertext (ParameterError). The
        scheme's own Plaintext is handled by the caller before this."""
        ctx = getattr(values, "_ctx", None)
        if ctx is None:
            return
        if isinstance(values, CiphertextOps):
            self._check(values)  # another scheme's ciphertext: MismatchError
        what = f"expected numbers or a {self.scheme} plaintext, got {describe(values)}"
        if getattr(ctx, "scheme", self.scheme) != self.scheme:
            raise MismatchError(what)
        raise ParameterError(what)

    # ---------------------------------------------------------------- keys
    def keygen(self) -> SecretKey:
        return SecretKey(self, self._raw.keygen(self._sampler, self.params.hamming_weight))

    def public_key(self, sk: SecretKey) -> PublicKey:
        self._check_key(sk, (SecretKey,), "public_key")
        return PublicKey(self, self._raw.public_key(sk._raw, self._sampler))

    def _make_eval_keys(
        self, sk: SecretKey, rotations: Iterable[int], extra: set, boot=None, progress=True
    ) -> EvalKeys:
        """Relinearization and Galois keys; `boot` (a function of sk) adds bootstrapping's
        encapsulation keys. Shows a progress bar on a terminal; a key set that does not fit in
        device memory raises DeviceMemoryError with the size it needs."""
        self._check_key(sk, (SecretKey,), "eval_keys")
        n = self.params.n
        steps = rotation_steps(rotations)
        elements = sorted({galois_element(r, n) for r in steps if r % (n // 2)} | extra)
        count = 1 + len(elements) + (2 if boot else 0)
        raw = self._raw
        key_bytes = raw.dnum * 2 * len(raw.full_basis()) * n * 8
        bar = Progress(count, "evaluation keys", progress and count > 4)
        try:
            relin = raw.relin_key(sk._raw, self._sampler)
            bar.step()
            galois = {}
            for g in elements:
                galois[g] = raw.galois_key(sk._raw, g, self._sampler)
                bar.step()
            boot_keys = boot(sk) if boot else None
            bar.step(2 if boot else 0)
        except MemoryError as e:
            raise DeviceMemoryError(
                f"the evaluation keys need {count * key_bytes / 2**30:.2f} GiB ({count} keys of "
                f"{key_bytes / 2**20:.1f} MiB) on {self.device} and do not fit: free device "
                "memory, request fewer rotations, or use the CPU"
            ) from e
        return EvalKeys(self, relin, galois, boot_keys)

    def set_eval_keys(self, ek: EvalKeys) -> None:
        self._check_key(ek, (EvalKeys,), "set_eval_keys")
        self._eval_keys = ek

    def _keys(self) -> EvalKeys:
        if self._eval_keys is None:
            raise MissingKeyError("no evaluation keys: call ctx.set_eval_keys(ctx.eval_keys(sk))")
        return self._eval_keys

    def secret_key_from_bytes(self, blob: bytes, mac_key: bytes | None = None) -> SecretKey:
        """A secret key from SecretKey.to_bytes; refuses coefficients outside the secret's
        distribution (ternary, with the parameters' Hamming weight)."""
        key_id, payload = _ser.unpack(blob, _ser.KIND_SECRET_KEY, self._raw.params_id, mac_key)
        rd = _ser.Reader(payload)
        s = rd.poly(self._raw.full_basis(), self.device, self._word_bits)
        rd.done()
        check_secret_coefficients(self, s)
        return SecretKey(self, self._raw.make_secret_key(s, key_id))

    def public_key_from_bytes(
        self, blob: bytes, mac_key: bytes | None = None, sk: SecretKey | None = None
    ) -> PublicKey:
        """A public key from PublicKey.to_bytes; with `sk`, also checks that it belongs to that
        secret key (PublicKey.verify)."""
        key_id, payload = _ser.unpack(blob, _ser.KIND_PUBLIC_KEY, self._raw.params_id, mac_key)
        rd = _ser.Reader(payload)
        seed = bytes(rd.take(32))
        (nonce,) = rd.unpack("<Q")
        _check_seed_nonce(nonce, "public key")
        b = rd.poly(self._raw.q_basis(self._raw.max_level), self.device, self._word_bits)
        rd.done()
        pk = PublicKey(self, self._raw.make_public_key(b, seed, nonce, key_id))
        if sk is not None:
            pk.verify(sk)
        return pk

    def eval_keys_from_bytes(
        self, blob: bytes, mac_key: bytes | None = None, sk: SecretKey | None = None
    ) -> EvalKeys:
        """Evaluation keys from EvalKeys.to_bytes. Their structure is checked (relinearization key
        first, then Galois keys by increasing odd element in (1, 2N), then bootstrapping's two
        keys); with `sk`, every key is also checked against the secret (EvalKeys.verify)."""
        key_id, payload = _ser.unpack(blob, _ser.KIND_EVAL_KEYS, self._raw.params_id, mac_key)
        rd = _ser.Reader(payload)
        (count,) = rd.unpack("<I")
        if not 1 <= count <= self.params.n + 2:
            raise SerializationError(f"evaluation key count {count} out of range")
        keys = [self._read_switch_key(rd, key_id) for _ in range(count)]
        rd.done()
        ek = self._assemble_eval_keys(keys)
        if sk is not None:
            ek.verify(sk)
        return ek

    def _read_switch_key(self, rd, key_id: int):
        galois, nonce, dnum = rd.unpack("<QQI")
        seed = bytes(rd.take(32))
        if dnum != self._raw.dnum:
            raise SerializationError(
                f"evaluation key with {dnum} digits, expected {self._raw.dnum}"
            )
        if galois and (galois % 2 == 0 or not 1 < galois < 2 * self.params.n):
            raise SerializationError(
                f"invalid Galois element {galois}: it must be odd and in (1, {2 * self.params.n})"
            )
        _check_seed_nonce(nonce, "evaluation key")
        parts = [rd.poly(self._raw.full_basis(), self.device, self._word_bits) for _ in range(dnum)]
        return self._raw.make_switch_key(parts, seed, nonce, galois, key_id)

    def _assemble_eval_keys(self, keys: list) -> EvalKeys:
        """Checks the order EvalKeys.to_bytes writes: relin, Galois keys (strictly increasing
        elements: no duplicates), then 0 or 2 bootstrapping keys (only where the parameters
        bootstrap with a sparse secret)."""
        if keys[0].galois != 0:
            raise SerializationError("the first evaluation key must be the relinearization key")
        rest = keys[1:]
        galois_keys = [k for k in rest if k.galois]
        boot = rest[len(galois_keys) :]
        if any(k.galois for k in boot):
            raise SerializationError(
                "a Galois key follows the bootstrapping keys: the evaluation keys are out of order"
            )
        elements = [k.galois for k in galois_keys]
        if any(b <= a for a, b in zip(elements, elements[1:])):
            raise SerializationError(
                "the Galois keys are not in increasing order of element (duplicate or reordered "
                f"keys: {elements})"
            )
        boot_params = getattr(self.params, "boot", None)
        allowed = (0, 2) if boot_params is not None and boot_params.sparse_hw else (0,)
        if len(boot) not in allowed:
            raise SerializationError(
                f"{len(boot)} bootstrapping keys where these parameters take "
                f"{' or '.join(map(str, allowed))}"
            )
        galois = {k.galois: k for k in galois_keys}
        return EvalKeys(self, keys[0], galois, tuple(boot) if boot else None)

    # ---------------------------------------------------------------- rotations
    def _galois_key(self, g: int):
        key = self._keys().galois.get(g)
        if key is None:
            raise MissingKeyError(
                f"no Galois key for element {g}; generate it with ctx.eval_keys(sk, rotations=...)"
            )
        return key

    def _rotation_plan(self, steps: int) -> list[int]:
        """Galois elements whose product rotates by `steps`: the step's own key, else a
        decomposition into the available power-of-two steps (documented fallback)."""
        n = self.params.n
        steps %= n // 2
        if steps == 0:
            return []
        keys = self._keys().galois
        g = galois_element(steps, n)
        if g in keys:
            return [g]
        plan, rest, bit = [], steps, 0
        while rest:
            if rest & 1:
                gb = galois_element(1 << bit, n)
                if gb not in keys:
                    raise MissingKeyError(
                        f"no key for rotation {steps} and no power-of-two key for 2^{bit}; "
                        "generate them with ctx.eval_keys(sk, rotations=...)"
                    )
                plan.append(gb)
            rest >>= 1
            bit += 1
        return plan

    def rotate(self, a, steps: int):
        """Rotates the slots left by `steps` (slot i gets slot i + steps; for BFV/BGV batching,
        within each of the two rows)."""
        self._check(a)
        steps = integer_arg(steps, "rotation steps must be integers")
        raw = a._raw
        for g in self._rotation_plan(steps):
            raw = self._raw.apply_galois(raw, self._galois_key(g))
        return self._wrap(raw, a) if raw is not a._raw else self._wrap(raw.copy(), a)

    def rotate_many(self, a, steps: Sequence[int]) -> list:
        """Several rotations of one ciphertext sharing one key-switching decomposition (hoisting);
        every step needs its own key."""
        self._check(a)
        steps = rotation_steps(steps, "rotate_many's steps")
        n = self.params.n
        half = n // 2
        direct = [galois_element(s, n) for s in steps if s % half]
        keys = [self._galois_key(g) for g in direct]
        rotated = iter(self._raw.apply_galois_hoisted(a._raw, keys)) if keys else iter(())
        return [
            self._wrap(next(rotated), a) if s % half else self._wrap(a._raw.copy(), a)
            for s in steps
        ]

    def _apply_galois_element(self, a, g: int, what: str, how: str):
        self._check(a)
        if g not in self._keys().galois:
            raise MissingKeyError(f"no {what} key: generate it with ctx.eval_keys(sk, {how}=True)")
        return self._wrap(self._raw.apply_galois(a._raw, self._galois_key(g)), a)
