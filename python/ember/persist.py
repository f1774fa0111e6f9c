"""ember.save / ember.load (and pickle, copy.deepcopy): one Ember object per file or blob.

A saved object is one ``ember.serialize`` blob of kind KIND_FILE (magic, format version, the
parameter fingerprint of its context, a checksum or, with ``mac_key``, a keyed MAC) whose payload
is a small JSON header naming the object (its scheme and class, its parameters, its context's
device and options, and Python-side attributes such as a CKKS ciphertext's error bound or an
array's shape), followed by the object's own bytes (``to_bytes``, read back by the context's
``*_from_bytes``). Circuits keep their own format (``Circuit.save``), which ``load`` recognizes.

Objects that need a context (keys, plaintexts, ciphertexts) are read into ``ctx`` when given
(MismatchError when its parameters are not the ones stored), else into a context re-created from
the stored parameters on ``device`` (default: the device it was saved from).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import struct

import numpy as np

from . import serialize as _ser
from .arrays import as_array
from .errors import Error, MismatchError, ParameterError, SerializationError

__all__ = ["dump_bytes", "load", "load_bytes", "save"]

_SCHEMES = ("ckks", "bfv", "bgv", "cggi", "heaan")
_CIRCUIT_MAGIC = b"EMBERCIR"
_META_LEN = struct.Struct("<I")
_META_MAX = 1 << 20  # a header is a few hundred bytes; refuse absurd lengths before reading


def _module(scheme: str):
    from . import bfv, bgv, cggi, ckks, heaan

    return {"ckks": ckks, "bfv": bfv, "bgv": bgv, "cggi": cggi, "heaan": heaan}[scheme]


# ---------------------------------------------------------------- parameters
def _params_scheme(params) -> str:
    for scheme in _SCHEMES:
        if type(params) is _module(scheme).Params:
            return scheme
    raise ParameterError(f"not an Ember parameter set: {type(params).__name__}")


def params_to_json(params) -> dict:
    """The constructor arguments of a Params (primes included, so re-creating it is exact)."""
    out = {}
    for f in dataclasses.fields(params):
        if not f.init:
            continue
        value = getattr(params, f.name)
        if dataclasses.is_dataclass(value):
            value = dataclasses.asdict(value)
        elif isinstance(value, tuple):
            value = [int(v) if isinstance(v, (int, np.integer)) else v for v in value]
        out[f.name] = value
    return out


def params_from_json(scheme: str, fields: dict):
    mod = _module(scheme)
    try:
        args = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
        if scheme == "ckks" and args.get("boot") is not None:
            args["boot"] = mod.BootstrapParams(**args["boot"])
        return mod.Params(**args)
    except (TypeError, ValueError, KeyError) as e:
        raise SerializationError(f"malformed {scheme} parameters in the file: {e}") from None


# ---------------------------------------------------------------- objects <-> parts
def _scheme_of_context(ctx) -> str:
    from . import cggi

    if isinstance(ctx, cggi.Context):
        return "cggi"
    return ctx.scheme.lower()


def _is_context(obj) -> bool:
    from . import cggi, heaan
    from .rlwe import KeyedContext

    return isinstance(obj, (KeyedContext, cggi.Context, heaan.Context))


def _params_id(ctx) -> int:
    raw_id = getattr(ctx, "params_id", None)
    return int(raw_id if raw_id is not None else ctx._raw.params_id)


def _context_options(ctx) -> dict:
    return ctx._replica_options() if hasattr(ctx, "_replica_options") else {}


def _object_parts(obj) -> tuple:
    """(context or None, class name, the object's own bytes, Python-side attributes)."""
    from . import cggi, ckks, heaan, integer, rlwe
    from ._ops import CiphertextOps

    if isinstance(obj, heaan.Ciphertext):
        extra = {"shape": list(obj.shape)} if obj.shape is not None else {}
        return obj._ctx, "Ciphertext", obj.to_bytes(), extra
    if isinstance(obj, (heaan.SecretKey, heaan.PublicKey, heaan.RelinKey, heaan.RotationKeys)):
        return obj._ctx, type(obj).__name__, obj.to_bytes(), {}
    if isinstance(obj, CiphertextOps):
        extra = {}
        for name in ("error_bound", "value_bound", "shape"):
            value = getattr(obj, name, None)
            if value is not None:
                extra[name] = list(value) if name == "shape" else float(value)
        return obj._ctx, "Ciphertext", obj.to_bytes(), extra
    for cls in (rlwe.SecretKey, rlwe.PublicKey, rlwe.EvalKeys, cggi.ClientKey, cggi.ServerKey):
        if isinstance(obj, cls):
            return obj._ctx, cls.__name__, obj.to_bytes(), {}
    if isinstance(obj, (cggi.Bits, cggi.Ints)):
        return obj._ctx, type(obj).__name__, obj.to_bytes(), {}
    if isinstance(obj, ckks.Plaintext):
        return obj._ctx, "Plaintext", _ckks_plaintext_bytes(obj), {}
    if isinstance(obj, integer.Plaintext):
        return obj._ctx, "Plaintext", _integer_plaintext_bytes(obj), {}
    raise ParameterError(
        f"ember.save cannot store a {type(obj).__name__}: it stores parameters, contexts, keys, "
        "plaintexts, ciphertexts and circuits"
    )


def _object_from_parts(ctx, name: str, blob: bytes, extra: dict):
    from . import cggi

    if name == "Ciphertext":
        ct = ctx.ciphertext_from_bytes(blob)
        for attr in ("error_bound", "value_bound"):
            if attr in extra:
                setattr(ct, attr, float(extra[attr]))
        if "shape" in extra:
            ct.shape = tuple(int(d) for d in extra["shape"])
        return ct
    readers = {
        "SecretKey": "secret_key_from_bytes",
        "PublicKey": "public_key_from_bytes",
        "EvalKeys": "eval_keys_from_bytes",
        "RelinKey": "relin_key_from_bytes",
        "RotationKeys": "rotation_keys_from_bytes",
        "ClientKey": "client_key_from_bytes",
        "ServerKey": "server_key_from_bytes",
        "Bits": "ciphertext_from_bytes",
        "Ints": "ciphertext_from_bytes",
    }
    if name in readers and hasattr(ctx, readers[name]):
        obj = getattr(ctx, readers[name])(blob)
        if name in ("Bits", "Ints") and type(obj).__name__ != name:
            raise SerializationError(f"the file says {name} but holds {type(obj).__name__}")
        return obj
    if name == "Plaintext" and not isinstance(ctx, cggi.Context):
        if _scheme_of_context(ctx) == "ckks":
            return _ckks_plaintext_from_bytes(ctx, blob)
        return _integer_plaintext_from_bytes(ctx, blob)
    raise SerializationError(f"unknown object kind {name!r} for a {_scheme_of_context(ctx)} file")


def _npy_bytes(values) -> bytes:
    buf = io.BytesIO()
    np.save(buf, as_array(values), allow_pickle=False)  # a GPU array: copied to the host
    return buf.getvalue()


def _npy_from(data) -> np.ndarray:
    try:
        return np.load(io.BytesIO(bytes(data)), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise SerializationError(f"malformed array in the file: {e}") from None


def _ckks_plaintext_bytes(pt) -> bytes:
    """Level, scale, the encoded polynomial (eval form) and the values it was encoded from."""
    raw = pt._ctx._raw
    head = struct.pack("<Id", pt.level, pt.scale)
    body = head + _ser.poly_bytes(pt._poly) + _npy_bytes(pt.values)
    return _ser.pack(_ser.KIND_PLAINTEXT, raw.params_id, 0, body)


def _ckks_plaintext_from_bytes(ctx, blob: bytes):
    from .ckks import Plaintext

    _, payload = _ser.unpack(blob, _ser.KIND_PLAINTEXT, ctx._raw.params_id)
    rd = _ser.Reader(payload)
    level, scale = rd.unpack("<Id")
    if level > ctx._raw.max_level:
        raise SerializationError(f"plaintext level {level} is above the chain's top")
    ctx._check_scale(level, scale)
    poly = rd.poly(ctx._raw.q_basis(level), ctx.device, ctx._word_bits)
    values = _npy_from(rd.take(len(payload) - rd.pos))
    return Plaintext(ctx, poly, level, scale, values)


def _integer_plaintext_bytes(pt) -> bytes:
    raw = pt._ctx._raw
    coeffs = np.ascontiguousarray(pt.coeffs, dtype="<u8")
    body = struct.pack("<BQ", int(pt.batched), coeffs.size) + coeffs.tobytes()
    return _ser.pack(_ser.KIND_PLAINTEXT, raw.params_id, 0, body)


def _integer_plaintext_from_bytes(ctx, blob: bytes):
    from .integer import Plaintext

    _, payload = _ser.unpack(blob, _ser.KIND_PLAINTEXT, ctx._raw.params_id)
    rd = _ser.Reader(payload)
    batched, count = rd.unpack("<BQ")
    if batched > 1 or count != ctx.params.n or (batched and ctx._encoder is None):
        raise SerializationError("malformed plaintext header (encoding flag or size)")
    coeffs = np.frombuffer(rd.take(8 * count), dtype="<u8").astype(np.uint64)
    rd.done()
    if np.any(coeffs >= np.uint64(ctx.plain_modulus)):
        raise SerializationError("plaintext coefficients must be reduced modulo t")
    return Plaintext(ctx, coeffs, bool(batched))


# ---------------------------------------------------------------- the container
def _describe(obj) -> tuple[dict, bytes, int]:
    """(JSON header, the object's own bytes, parameter fingerprint) of any storable object."""
    if _is_context(obj):
        scheme = _scheme_of_context(obj)
        meta = {"object": "Context", "device": obj.device, "options": _context_options(obj)}
        return meta | _params_meta(scheme, obj.params), b"", _params_id(obj)
    try:
        scheme = _params_scheme(obj)
    except ParameterError:
        pass
    else:
        return {"object": "Params"} | _params_meta(scheme, obj), b"", 0
    ctx, name, blob, extra = _object_parts(obj)
    meta = {"object": name, "device": ctx.device, "options": _context_options(ctx)}
    meta |= _params_meta(_scheme_of_context(ctx), ctx.params) | {"extra": extra}
    return meta, blob, _params_id(ctx)


def _params_meta(scheme: str, params) -> dict:
    return {"scheme": scheme, "params": params_to_json(params)}


def dump_bytes(obj, mac_key: bytes | None = None) -> bytes:
    """The bytes ember.save writes for `obj` (a circuit: its own format)."""
    from .circuit import Circuit

    if isinstance(obj, Circuit):
        return obj.to_bytes()
    meta, blob, params_id = _describe(obj)
    head = json.dumps(meta, separators=(",", ":")).encode()
    payload = _META_LEN.pack(len(head)) + head + blob
    return _ser.pack(_ser.KIND_FILE, params_id, 0, payload, mac_key)


def _stored_params_id(blob: bytes) -> int:
    if len(blob) < _ser._HEADER.size:
        raise SerializationError(f"{len(blob)} bytes is too short to be an Ember object")
    return _ser._HEADER.unpack_from(blob)[3]


def _read_meta(payload) -> tuple[dict, memoryview]:
    rd = _ser.Reader(payload)
    (length,) = rd.unpack("<I")
    if length > _META_MAX:
        raise SerializationError(f"header length {length} is out of range")
    try:
        meta = json.loads(bytes(rd.take(length)).decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise SerializationError(f"malformed header: {e}") from None
    if not isinstance(meta, dict) or meta.get("scheme") not in _SCHEMES:
        raise SerializationError("malformed header: no scheme named")
    if not isinstance(meta.get("params"), dict) or not isinstance(meta.get("object"), str):
        raise SerializationError("malformed header: no parameters or object kind")
    return meta, payload[rd.pos :]


def _make_context(meta: dict, params, device):
    mod = _module(meta["scheme"])
    options = meta.get("options") or {}
    if not isinstance(options, dict):
        raise SerializationError("malformed header: context options")
    device = device if device is not None else meta.get("device")
    try:
        return mod.Context(params, device=device, **options)
    except TypeError as e:
        raise SerializationError(f"malformed context options {options!r}: {e}") from None


def load_bytes(blob, ctx=None, device: str | None = None, mac_key: bytes | None = None):
    """The object in `blob` (from dump_bytes or a file ember.save wrote); see load."""
    from .circuit import Circuit

    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise SerializationError(f"expected bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    if blob[: len(_CIRCUIT_MAGIC)] == _CIRCUIT_MAGIC:
        return Circuit.from_bytes(blob)
    stored_id = _stored_params_id(blob)
    _, payload = _ser.unpack(blob, _ser.KIND_FILE, stored_id, mac_key)
    meta, inner = _read_meta(payload)
    if ctx is not None:
        _check_context(ctx, meta, stored_id)
    try:
        params = ctx.params if ctx is not None else params_from_json(meta["scheme"], meta["params"])
        kind = meta["object"]
        if kind == "Params":
            return params
        if kind == "Context":
            return ctx if ctx is not None else _make_context(meta, params, device)
        extra = meta.get("extra") or {}
        if not isinstance(extra, dict):
            raise SerializationError("malformed header: extra attributes")
        owner = ctx if ctx is not None else _make_context(meta, params, device)
        if _params_id(owner) != stored_id:
            raise SerializationError("the stored parameters do not match the stored fingerprint")
        return _object_from_parts(owner, kind, bytes(inner), extra)
    except SerializationError:
        raise
    except Error as e:
        raise SerializationError(f"the file's contents are inconsistent: {e}") from None


def _check_context(ctx, meta: dict, stored_id: int) -> None:
    if not _is_context(ctx):
        raise ParameterError(f"ctx must be an Ember context, got {type(ctx).__name__}")
    scheme = _scheme_of_context(ctx)
    if scheme != meta["scheme"]:
        raise MismatchError(f"the file holds a {meta['scheme']} object, ctx is a {scheme} context")
    if meta["object"] != "Params" and stored_id != _params_id(ctx):
        raise MismatchError(
            f"the file's {meta['object']} was made with other parameters than ctx (fingerprint "
            "mismatch): load it without ctx, or into a context of its parameters"
        )


def save(obj, path, mac_key: bytes | None = None) -> None:
    """Writes `obj` (parameters, a context, a key, a plaintext, a ciphertext of any scheme or a
    circuit) to `path`. With `mac_key` (16 to 64 secret bytes) the file carries a keyed MAC and
    load needs the same key. Secret and client keys are written only because you ask: keep such
    files secret."""
    data = dump_bytes(obj, mac_key)
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # a reader never sees a half-written file


def load(path, ctx=None, device: str | None = None, mac_key: bytes | None = None):
    """The object ember.save wrote to `path`. Keys, plaintexts and ciphertexts are read into
    `ctx` when given (MismatchError when ctx has other parameters than the file's), else into a
    context re-created from the stored parameters on `device` (default: the device they were
    saved from); load the context first and pass it to share it (and its evaluation keys).
    Malformed, truncated or foreign files raise SerializationError."""
    with open(path, "rb") as f:
        return load_bytes(f.read(), ctx, device, mac_key)


# ---------------------------------------------------------------- pickle and deepcopy
def _restore(blob: bytes, ctx=None):
    return load_bytes(blob, ctx)


def reduce_object(obj):
    """__reduce__ of Ember objects: a context (and parameters) as its bytes; anything bound to
    a context as (its context, its bytes), so objects pickled together share one context."""
    if _is_context(obj) or not hasattr(obj, "_ctx"):
        return _restore, (dump_bytes(obj),)
    return _restore, (dump_bytes(obj), obj._ctx)


def deep_copy(obj):
    """copy.deepcopy: a context or parameters re-created from their bytes; anything bound to a
    context read back from its bytes into the same context (contexts are shared, not copied)."""
    if _is_context(obj) or not hasattr(obj, "_ctx"):
        return load_bytes(dump_bytes(obj))
    return load_bytes(dump_bytes(obj), obj._ctx)
