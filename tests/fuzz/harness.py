"""Seeded mutation fuzzing of Ember's deserializers (pure Python, CPU, small insecure parameters).

Every object kind of every scheme ("ckks-ct", "bgv-ek", ...) is serialized once; each input is a
mutation of those bytes, fed to the matching ``*_from_bytes`` and classified:

- rejected: SerializationError (the deserializer refused it),
- crashed: any other exception, at load or at use (must never happen),
- equivalent: accepted, and it is the same object (same decryption / same key bytes),
- refused-at-use: accepted, and Ember refuses to use it (another key set's id: MismatchError;
  exhausted noise: DecryptionError),
- different: accepted, and it computes something else.

Mutation classes say what a reader can know. "raw" (byte flips, truncations, extensions: the
checksum is not recomputed), "header", "field-invalid" (out-of-range scheme fields),
"words-unreduced" and "coeffs" (secret key coefficients that are not one ternary polynomial) must
all be rejected. "field-valid" (another in-range value: a scale, a flag, a BGV factor, a Galois
element, a seed) and "words-reduced" (another residue) are checked for keys (secret keys are
ternary; public and evaluation keys are loaded with ``sk=`` and so verified against the secret),
but for ciphertexts they are unverifiable: any in-range header and any reduced words encrypt
*something*. "coeffs-valid" replaces a secret key by another valid ternary secret (same Hamming
weight): also unverifiable. With a MAC (``mac=True``) every mutation must be rejected: mutated
blobs keep the old tag, are re-tagged with a wrong key, or are stripped to the unkeyed format.
"""

from __future__ import annotations

import hashlib
import math
import struct
import warnings
from dataclasses import dataclass, field

import numpy as np
from ember import bfv, bgv, ckks
from ember import serialize as ser
from ember.errors import DecryptionError, MismatchError, SecurityWarning, SerializationError

SCHEMES = ("ckks", "bfv", "bgv")
OBJECTS = ("ct", "sk", "pk", "ek")
KINDS = tuple(f"{s}-{o}" for s in SCHEMES for o in OBJECTS)
OUTCOMES = ("rejected", "crashed", "equivalent", "refused-at-use", "different")
CLASSES = (
    "raw",
    "header",
    "field-invalid",
    "field-valid",
    "words-unreduced",
    "words-reduced",
    "coeffs",
    "coeffs-valid",
)
MAC_KEY = bytes(range(32))
WRONG_MAC_KEY = bytes(range(1, 33))
HEADER = struct.Struct("<4sHHQQQ")
POLY_START = {"ct": HEADER.size + 17, "sk": HEADER.size, "pk": HEADER.size + 40}
EK_KEY_HEAD = struct.Struct("<QQI32s")


def unverifiable(kind: str, cls: str) -> bool:
    """Mutation classes whose result no reader can tell from a genuine object without a MAC."""
    obj = kind.split("-")[1]
    if obj == "ct":
        return cls in ("field-valid", "words-reduced")
    return obj == "sk" and cls == "coeffs-valid"


# ------------------------------------------------------------------------------------ targets
@dataclass
class Target:
    """One serialized object, its reader and its judge, and where its fields and words are."""

    kind: str
    ctx: object
    sk: object
    blob: bytes  # unkeyed
    load: object  # (blob, mac_key) -> object
    judge: object  # object -> outcome
    fields: list = field(default_factory=list)  # (offset, fmt, invalid values, valid values)
    polys: list = field(default_factory=list)  # (offset, primes) of each polynomial
    n: int = 0


def _params(scheme: str):
    # Small insecure sets on purpose: their SecurityWarning says nothing here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        return _insecure_params(scheme)


def _insecure_params(scheme: str):
    if scheme == "ckks":
        return ckks.Params(
            log_n=10, levels=2, scale_bits=30, first_mod_bits=40, special_mod_bits=40, insecure=True
        )
    mod = bfv if scheme == "bfv" else bgv
    # BGV's secret has a fixed Hamming weight, so that the weight check is exercised too.
    hw = 64 if scheme == "bgv" else 0
    return mod.Params(
        log_n=10,
        plain_modulus=12289,
        q_bits=(40, 30),
        special_bits=(45,),
        hamming_weight=hw,
        insecure=True,
    )


@dataclass
class SchemeSet:
    """A context with its keys and a reference ciphertext."""

    scheme: str
    ctx: object
    sk: object
    pk: object
    ek: object
    ct: object
    plain: np.ndarray


def make_scheme_set(scheme: str, seed: int = 0) -> SchemeSet:
    mod = {"ckks": ckks, "bfv": bfv, "bgv": bgv}[scheme]
    ctx = mod.Context(_params(scheme), device="cpu")
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ek = ctx.eval_keys(sk, rotations=[1])
    ctx.set_eval_keys(ek)
    rng = np.random.default_rng(seed)
    if scheme == "ckks":
        values = rng.uniform(-1, 1, ctx.slots)
    else:
        t = ctx.plain_modulus
        values = rng.integers(-(t // 2), t // 2, ctx.slots)
    ct = ctx.encrypt(values, pk)
    if scheme == "bgv":  # a product carries a BGV factor other than 1 after the modulus switch
        ct = ct * ct
    plain = ctx.decrypt(ct, sk)
    return SchemeSet(scheme, ctx, sk, pk, ek, ct, plain)


def _primes(basis) -> list[int]:
    return [int(q) for q in basis.primes]


def _ct_target(s: SchemeSet) -> Target:
    ctx, raw = s.ctx, s.ct._raw
    q_level = _primes(ctx._raw.q_basis(raw.level))
    n = ctx.params.n
    words = len(q_level) * n * 8
    polys = [(POLY_START["ct"] + i * words, q_level) for i in range(raw.size)]
    levels_invalid = [ctx._raw.max_level + 1, 2**32 - 1]
    size_invalid = [0, 1, 4, 2**31]
    fields = [(32, "<I", levels_invalid, []), (36, "<I", size_invalid, [])]
    if s.scheme == "ckks":
        low, high = ctx.scale_bounds(raw.level)
        bad = [5e-324, 1e-310, 0.0, -0.0, -1.0, -raw.scale, 0.5, math.inf, -math.inf, math.nan]
        bad += [high * 4, 1e308, 2.0**1000]
        good = [raw.scale * 2, raw.scale / 2, raw.scale * (1 + 2**-40), low, high]
        fields += [(40, "<d", bad, good), (48, "<B", list(range(2, 256)), [0, 1])]
    else:
        t = ctx.plain_modulus
        factor_bad = [0, t, t + 1, 2 * t, 2**64 - 1]
        factor_good = [] if s.scheme == "bfv" else [1, 2, t - 1, raw.factor + 1]
        if s.scheme == "bfv":
            factor_bad += [2, t - 1]
        fields += [(40, "<Q", factor_bad, factor_good), (48, "<B", list(range(2, 256)), [0, 1])]

    def load(blob, mac_key):
        return ctx.ciphertext_from_bytes(blob, mac_key=mac_key)

    def judge(obj):
        try:
            out = ctx.decrypt(obj, s.sk)
        except (MismatchError, DecryptionError):
            return "refused-at-use"
        same = out.dtype == s.plain.dtype and np.array_equal(out, s.plain)
        return "equivalent" if same else "different"

    return Target("ct", ctx, s.sk, s.ct.to_bytes(), load, judge, fields, polys, n)


def _key_judge(s: SchemeSet, original: bytes):
    def judge(obj):
        if obj.to_bytes() == original:
            return "equivalent"
        if hasattr(obj, "_raw") and hasattr(obj._raw, "s"):  # a secret key: try it
            try:
                out = s.ctx.decrypt(s.ct, obj)
            except (MismatchError, DecryptionError):
                return "refused-at-use"
            if np.array_equal(out, s.plain):
                return "equivalent"
        return "different"

    return judge


def _sk_target(s: SchemeSet) -> Target:
    ctx = s.ctx
    blob = s.sk.to_bytes()
    full = _primes(ctx._raw.full_basis())

    def load(b, mac_key):
        return ctx.secret_key_from_bytes(b, mac_key=mac_key)

    polys = [(POLY_START["sk"], full)]
    return Target("sk", ctx, s.sk, blob, load, _key_judge(s, blob), [], polys, ctx.params.n)


def _pk_target(s: SchemeSet) -> Target:
    ctx = s.ctx
    blob = s.pk.to_bytes()
    q = _primes(ctx._raw.q_basis(ctx._raw.max_level))

    def load(b, mac_key):
        return ctx.public_key_from_bytes(b, mac_key=mac_key, sk=s.sk)

    fields = [(64, "<Q", [1, 2, 2**64 - 1], [])]
    seeds = [(32, "32s", [], ["seed"])]
    polys = [(POLY_START["pk"], q)]
    return Target(
        "pk", ctx, s.sk, blob, load, _key_judge(s, blob), fields + seeds, polys, ctx.params.n
    )


def _ek_target(s: SchemeSet) -> Target:
    ctx = s.ctx
    blob = s.ek.to_bytes()
    n = ctx.params.n
    full = _primes(ctx._raw.full_basis())
    (count,) = struct.unpack_from("<I", blob, HEADER.size)
    fields = [(HEADER.size, "<I", [0, count + 1, count + 7, n + 3, 2**32 - 1], [])]
    polys, off = [], HEADER.size + 4
    dnum = ctx._raw.dnum
    poly_bytes = len(full) * n * 8
    for i in range(count):
        galois = struct.unpack_from("<Q", blob, off)[0]
        bad_g = [2, 4, 2 * n, 2 * n + 1, 2**64 - 1, 1] + ([] if i == 0 else [0])
        good_g = [] if i == 0 else [3, 2 * n - 1, galois + 2]
        if i == 0:
            bad_g += [5, 2 * n - 1]  # a Galois element where the relinearization key belongs
        fields += [
            (off, "<Q", bad_g, good_g),
            (off + 8, "<Q", [1, 2**64 - 1], []),
            (off + 16, "<I", [0, dnum + 1, 2**32 - 1], []),
            (off + 20, "32s", [], ["seed"]),
        ]
        off += EK_KEY_HEAD.size
        for _ in range(dnum):
            polys.append((off, full))
            off += poly_bytes

    def load(b, mac_key):
        return ctx.eval_keys_from_bytes(b, mac_key=mac_key, sk=s.sk)

    return Target("ek", ctx, s.sk, blob, load, _key_judge(s, blob), fields, polys, n)


def make_target(s: SchemeSet, obj: str) -> Target:
    t = {"ct": _ct_target, "sk": _sk_target, "pk": _pk_target, "ek": _ek_target}[obj](s)
    t.kind = f"{s.scheme}-{obj}"
    return t


# ------------------------------------------------------------------------------------ mutations
def reseal(body: bytes) -> bytes:
    """Body plus a recomputed (unkeyed) checksum: what anyone can do to Ember bytes."""
    return body + hashlib.blake2b(body, digest_size=16).digest()


def _pick(values: list, rng):
    """One of `values` (Python ints stay exact; rng.choice would convert them to floats)."""
    return values[int(rng.integers(len(values)))]


def _set(body: bytearray, offset: int, fmt: str, value) -> None:
    struct.pack_into(fmt, body, offset, value)


def mutate_raw(blob: bytes, rng) -> bytes:
    b = bytearray(blob)
    how = rng.integers(4)
    if how == 0:
        b[rng.integers(len(b))] ^= int(rng.integers(1, 256))
    elif how == 1:
        b[rng.integers(len(b))] ^= 1 << int(rng.integers(8))
    elif how == 2:
        return bytes(b[: int(rng.integers(len(b)))])
    else:
        return bytes(b) + rng.bytes(int(rng.integers(1, 65)))
    return bytes(b)


def mutate_header(body: bytes, rng) -> bytes:
    b = bytearray(body)
    _magic, _version, kind, params, key_id, length = HEADER.unpack_from(b)
    which = rng.integers(6)
    if which == 0:
        b[rng.integers(4)] ^= int(rng.integers(1, 256))
    elif which == 1:
        _set(b, 4, "<H", int(rng.choice([0, 3, 4, 0xFFFF, int(rng.integers(3, 2**16))])))
    elif which == 2:
        _set(b, 6, "<H", int(rng.choice([k for k in (0, 1, 2, 3, 4, 5, 0xFFFF) if k != kind])))
    elif which == 3:
        _set(b, 8, "<Q", params ^ (1 << int(rng.integers(64))))
    elif which == 4:
        _set(b, 16, "<Q", key_id ^ int(rng.integers(1, 2**63)))
    else:
        deltas = [-1, 1, -8, 8, -length, 2**40]
        _set(b, 24, "<Q", (length + int(rng.choice(deltas))) % 2**64)
    return bytes(b)


def mutate_field(body: bytes, t: Target, rng, valid: bool) -> bytes | None:
    options = [f for f in t.fields if (f[3] if valid else f[2])]
    if not options:
        return None
    offset, fmt, bad, good = options[rng.integers(len(options))]
    values = good if valid else bad
    value = _pick(values, rng)
    b = bytearray(body)
    if value == "seed":
        value = rng.bytes(32)
    _set(b, offset, fmt, value)
    return bytes(b)


def _word_pos(t: Target, rng) -> tuple[int, int]:
    offset, primes = t.polys[rng.integers(len(t.polys))]
    row = int(rng.integers(len(primes)))
    col = int(rng.integers(t.n))
    return offset + (row * t.n + col) * 8, primes[row]


def mutate_words(body: bytes, t: Target, rng, reduced: bool) -> bytes:
    b = bytearray(body)
    for _ in range(int(rng.integers(1, 4))):
        pos, q = _word_pos(t, rng)
        if reduced:
            value = int(rng.integers(q))
        else:
            value = _pick([q, q + 1, 2 * q, 2**64 - 1, int(rng.integers(q, 2**63))], rng)
        _set(b, pos, "<Q", value)
    return bytes(b)


def _secret_coeffs(t: Target) -> np.ndarray:
    """The secret's centered coefficients (one ternary vector)."""
    return ser.centered_rows(t.sk._raw.s)[0].copy()


def _secret_body(body: bytes, t: Target, rows: np.ndarray) -> bytes:
    """The secret key body with the (limbs, N) coefficient residues `rows` in eval form."""
    from ember import ring

    basis = t.ctx._raw.full_basis()
    poly = ring.RnsPoly.from_numpy(
        basis, np.ascontiguousarray(rows, dtype=np.uint64), "coeff", "cpu"
    )
    words = np.ascontiguousarray(poly.ntt().to_numpy(), dtype="<u8").tobytes()
    start = POLY_START["sk"]
    return body[:start] + words + body[start + len(words) :]


def _residues(coeffs: np.ndarray, primes: list[int]) -> np.ndarray:
    return np.stack([np.mod(coeffs, q).astype(np.uint64) for q in primes])


def mutate_coeffs(body: bytes, t: Target, rng, valid: bool) -> bytes:
    primes = _primes(t.ctx._raw.full_basis())
    s = _secret_coeffs(t)
    if valid:  # another ternary secret with the same weight: move or negate one nonzero
        nz, z = np.flatnonzero(s), np.flatnonzero(s == 0)
        i = int(rng.choice(nz))
        if rng.integers(2):
            j = int(rng.choice(z))
            s[j], s[i] = s[i], 0
        else:
            s[i] = -s[i]
        return _secret_body(body, t, _residues(s, primes))
    k = int(rng.integers(t.n))
    how = rng.integers(3)
    if how == 0:  # a coefficient outside {-1, 0, 1}
        s[k] = _pick([2, -2, 3, 1000, -(2**40)], rng)
        return _secret_body(body, t, _residues(s, primes))
    if how == 1:  # residues that disagree across primes
        rows = _residues(s, primes)
        r = int(rng.integers(len(primes)))
        rows[r, k] = (int(rows[r, k]) + int(rng.choice([1, primes[r] - 1]))) % primes[r]
        return _secret_body(body, t, rows)
    # the wrong Hamming weight (or, without one, a nonzero flipped to zero and one added)
    z = np.flatnonzero(s == 0)
    s[int(rng.choice(z))] = int(rng.choice([-1, 1]))
    if not t.ctx.params.hamming_weight:
        s[:] = 0  # no weight to break: the all-zero secret
    return _secret_body(body, t, _residues(s, primes))


def mutate(t: Target, cls: str, rng) -> bytes | None:
    """A mutated body (header + payload, no trailer) of class `cls`, or for "raw" a whole blob;
    None when the class does not apply to the target."""
    body = t.blob[:-16]
    if cls == "raw":
        return mutate_raw(t.blob, rng)
    if cls == "header":
        return mutate_header(body, rng)
    if cls in ("field-invalid", "field-valid"):
        return mutate_field(body, t, rng, cls == "field-valid")
    if cls in ("words-unreduced", "words-reduced"):
        return mutate_words(body, t, rng, cls == "words-reduced")
    if t.kind.endswith("-sk") and cls in ("coeffs", "coeffs-valid"):
        return mutate_coeffs(body, t, rng, cls == "coeffs-valid")
    return None


def _with_mac(body: bytes, keyed: bytes, rng) -> bytes:
    """A mutated body as an attacker without the MAC key can present it."""
    b = bytearray(body)
    how = rng.integers(3)
    if how == 0:  # keep the genuine tag
        _set(b, 4, "<H", ser.VERSION_MAC)
        return bytes(b) + keyed[-32:]
    if how == 1:  # re-tag with another key
        _set(b, 4, "<H", ser.VERSION_MAC)
        return bytes(b) + hashlib.blake2b(bytes(b), digest_size=32, key=WRONG_MAC_KEY).digest()
    return reseal(bytes(b))  # strip the MAC: an unkeyed blob with a valid checksum


# ------------------------------------------------------------------------------------ campaign
@dataclass
class Counts:
    table: dict = field(default_factory=dict)  # (kind, class) -> {outcome: count}
    crashes: list = field(default_factory=list)  # (kind, class, repr) of the first few

    def add(self, kind: str, cls: str, outcome: str, detail: str = "") -> None:
        row = self.table.setdefault((kind, cls), dict.fromkeys(OUTCOMES, 0))
        row[outcome] += 1
        if outcome == "crashed" and len(self.crashes) < 20:
            self.crashes.append((kind, cls, detail))

    def total(self, outcome: str, pred=lambda kind, cls: True) -> int:
        return sum(r[outcome] for (k, c), r in self.table.items() if pred(k, c))

    def failures(self, mac: bool) -> list[str]:
        """What breaks the harness's rules: crashes; accepted mutations with a MAC; accepted
        and different where the meaning is checkable."""
        out = []
        for (k, c), r in sorted(self.table.items()):
            if r["crashed"]:
                out.append(f"{k} {c}: {r['crashed']} crashed")
            accepted = r["equivalent"] + r["refused-at-use"] + r["different"]
            if mac and accepted:
                out.append(f"{k} {c}: {accepted} accepted despite the MAC")
            if not mac and r["different"] and not unverifiable(k, c):
                out.append(f"{k} {c}: {r['different']} accepted and different")
        return out


def classify(t: Target, blob: bytes, mac_key) -> tuple[str, str]:
    try:
        obj = t.load(blob, mac_key)
    except SerializationError:
        return "rejected", ""
    except Exception as e:  # noqa: BLE001  (any other exception is the finding)
        return "crashed", f"load: {type(e).__name__}: {e}"
    try:
        return t.judge(obj), ""
    except Exception as e:  # noqa: BLE001
        return "crashed", f"use: {type(e).__name__}: {e}"


def run_target(t: Target, inputs: int, rng, counts: Counts, mac: bool = False) -> None:
    classes = [c for c in CLASSES if mutate(t, c, np.random.default_rng(0)) is not None]
    keyed = t.load(t.blob, None).to_bytes(mac_key=MAC_KEY) if mac else None
    done = 0
    while done < inputs:
        cls = classes[done % len(classes)]
        out = mutate(t, cls, rng)
        if cls == "raw":
            blob = mutate_raw(keyed, rng) if mac else out
        elif mac:
            blob = _with_mac(out, keyed, rng)
        else:
            blob = reseal(out)
        if blob in (t.blob, keyed):
            continue  # the mutation changed nothing
        outcome, detail = classify(t, blob, MAC_KEY if mac else None)
        counts.add(t.kind, cls, outcome, detail)
        done += 1


def run_campaign(
    kinds=KINDS, inputs: int = 1000, seed: int = 0, mac: bool = False, sets: dict | None = None
) -> Counts:
    """`inputs` mutated inputs per kind (spread over the applicable classes)."""
    counts = Counts()
    sets = {} if sets is None else sets
    for kind in kinds:
        scheme, obj = kind.split("-")
        if scheme not in sets:
            sets[scheme] = make_scheme_set(scheme, seed)
        target = make_target(sets[scheme], obj)
        rng = np.random.default_rng([seed, KINDS.index(kind), int(mac)])
        run_target(target, inputs, rng, counts, mac)
    return counts
