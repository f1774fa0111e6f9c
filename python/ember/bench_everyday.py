"""Benchmark of everyday use: save/load and pickle throughput, loading onto each device of a set,
the cost of CKKS error tracking, Params.for_depth sets running their depth, and CKKS / BFV / BGV
encoding through the host against the device; JSON-ready."""

from __future__ import annotations

import pickle
import time

import numpy as np

from . import ckks, dist, persist
from . import ckks_error as _err


def _seconds(fn, repeat: int) -> float:
    """Best wall-clock seconds of `repeat` calls (the first call is a warm-up)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(device: str | None = None, devices=None, depth: int = 4, repeat: int = 5) -> dict:
    """On `device` (default device when None): a Params.for_depth(depth) CKKS context; times
    dump_bytes/load_bytes of a ciphertext and of the evaluation keys, a pickle round trip, a
    tracked ct * ct against its tracking rule alone, the depth's squarings; then loads the saved
    ciphertext onto every device of `devices` (default: the device; "all": every GPU) and checks
    that each decrypts to the same values. Correctness flags: decryption after loading equals
    before, the error bound holds over the squarings, every device agrees."""
    params = ckks.Params.for_depth(depth, precision_bits=20)
    ctx = ckks.Context(params, device=device)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1], progress=False))
    x = np.random.default_rng(1).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, ctx.public_key(sk))
    want = ctx.decrypt(ct, sk)

    blob = persist.dump_bytes(ct)
    product = ct * ct
    keys_blob = persist.dump_bytes(ctx._keys())
    timings = {
        "save_ciphertext": _seconds(lambda: persist.dump_bytes(ct), repeat),
        "load_ciphertext": _seconds(lambda: persist.load_bytes(blob, ctx=ctx), repeat),
        "save_eval_keys": _seconds(lambda: persist.dump_bytes(ctx._keys()), 1),
        "load_eval_keys": _seconds(lambda: persist.load_bytes(keys_blob, ctx=ctx), 1),
        "pickle_round_trip": _seconds(lambda: pickle.loads(pickle.dumps(ct)), repeat),
        "multiply_tracked": _seconds(lambda: ct * ct, repeat),
        "tracking_rule_only": _seconds(lambda: _err.multiply_rule(ctx, product, ct, ct), repeat),
    }
    loaded_ok = bool(np.array_equal(ctx.decrypt(persist.load_bytes(blob, ctx=ctx), sk), want))

    y, expect = ct, x
    t0 = time.perf_counter()
    for _ in range(depth):
        y, expect = y * y, expect * expect
    timings["depth_squarings"] = time.perf_counter() - t0
    err = float(np.max(np.abs(ctx.decrypt(y, sk) - expect)))

    names = dist.device_set(devices if devices is not None else ctx.device)
    secret = persist.dump_bytes(sk)
    per_device = {}
    for name in names:
        there = persist.load_bytes(blob, device=name)  # a context re-created on that device
        key = persist.load_bytes(secret, ctx=there._ctx)
        per_device[name] = bool(np.array_equal(there._ctx.decrypt(there, key), want))
    return {
        "benchmark": "everyday",
        "device": ctx.device,
        "devices": names,
        "parameters": {
            "log_n": params.log_n,
            "levels": params.levels,
            "scale_bits": params.scale_bits,
            "log2_qp": params.total_bits,
            "dnum": params.dnum,
        },
        "bytes": {"ciphertext": len(blob), "eval_keys": len(keys_blob)},
        "seconds": {k: round(v, 6) for k, v in timings.items()},
        "error": {"measured": err, "bound": y.error_bound},
        "correct": {
            "load_equals_before": loaded_ok,
            "error_bound_holds": bool(y.error_bound is not None and err <= y.error_bound),
            "every_device_decrypts_the_same": all(per_device.values()),
            "per_device": per_device,
        },
    }


# ---------------------------------------------------------------- encoding on the device


def _device_array(values: np.ndarray, device: str):
    """values on `device` in the array library a user would have there: a torch tensor (CUDA
    when the device is a GPU), else the numpy array itself."""
    try:
        import torch
    except ImportError:
        return values
    return torch.from_numpy(values).to(device if device.startswith("cuda") else "cpu")


def _synchronize(array) -> None:
    if type(array).__module__.split(".")[0] == "torch" and array.is_cuda:
        import torch

        torch.cuda.synchronize(array.device)


def _as_host(a) -> np.ndarray:
    return a.cpu().numpy() if hasattr(a, "cpu") else np.asarray(a)


class _Paths:
    """The four steps the encoding benchmarks time, for values t (on ctx's device) and keys
    (pk, sk): encrypt through the host (t copied there, encoded there, uploaded) or from t
    itself, and decrypt the device path's ciphertext through the host (decoded there, the
    result uploaded to t's device) or into t's device."""

    def __init__(self, ctx, pk, sk, t):
        self.ctx, self.pk, self.sk, self.t = ctx, pk, sk, t
        self.ct = self.device_encrypt()

    def host_encrypt(self):
        return self.ctx.encrypt(_as_host(self.t), self.pk)

    def device_encrypt(self):
        return self.ctx.encrypt(self.t, self.pk)

    def host_decrypt(self):
        out = _device_array(self.ctx.decrypt(self.ct, self.sk), self.ctx.device)
        _synchronize(out)
        return out

    def device_decrypt(self):
        out = self.ctx.decrypt(self.ct, self.sk, like=self.t)
        _synchronize(out)
        return out

    def seconds(self, repeat: int) -> dict:
        """Best of `repeat` seconds of each step, by the names the reports use."""
        return {
            "encode_encrypt_host_path": _seconds(self.host_encrypt, repeat),
            "encode_encrypt_device_path": _seconds(self.device_encrypt, repeat),
            "decrypt_decode_host_path": _seconds(self.host_decrypt, repeat),
            "decrypt_decode_device_path": _seconds(self.device_decrypt, repeat),
        }


def _encoding_on(name: str, preset: str, repeat: int) -> dict:
    """run_encoding's measurements on one device."""
    from . import _ember

    ctx = ckks.Context(preset, device=name)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    x = np.random.default_rng(2).uniform(-1, 1, ctx.slots)
    t = _device_array(x, ctx.device)
    paths = _Paths(ctx, pk, sk, t)
    new_host, old_host = _as_host(paths.device_decrypt()), _as_host(paths.host_decrypt())
    old_words = ctx.encode(x)._poly.to_numpy()
    new_words = ctx.encode(t)._poly.to_numpy()
    return {
        "values": f"{type(t).__module__.split('.')[0]} array of {ctx.slots} float64 on "
        + (str(t.device) if hasattr(t, "device") else "cpu"),
        "encoded_on_device": bool(ctx.encode(t).encoded_on_device),
        "seconds": {k: round(v, 6) for k, v in paths.seconds(repeat).items()},
        "correct": {
            "device_path_error": float(np.max(np.abs(new_host - x))),
            "device_path_within_1e-5": bool(np.max(np.abs(new_host - x)) < 1e-5),
            "paths_agree_within_1e-9": bool(np.max(np.abs(new_host - old_host)) < 1e-9),
            "encoded_words_equal_fraction": float(np.mean(old_words == new_words)),
        },
        "gpu": [g.name for g in _ember.cuda_devices() if f"cuda:{g.index}" == ctx.device],
    }


def run_encoding(
    device: str | None = None, devices=None, preset: str = "N16_L35", repeat: int = 5
) -> dict:
    """CKKS encode+encrypt and decrypt+decode of a full-slot array (a torch tensor on the
    device when torch is installed, else numpy) through the host (values copied there, the
    host's special FFT, the result uploaded back into a tensor) against the device path
    (ctx.encrypt(tensor) / ctx.decrypt(ct, sk, like=tensor): encoding and decoding on the
    context's device); best of `repeat` seconds each, per device of `devices` (default: the
    device; "all": every GPU), one after another. Preset: N16_L35 (N = 2^16, no bootstrapping).
    Correctness flags: the device path's error, the two paths' agreement, the fraction of
    equal encoded words (the same FFT code on both: 1.0)."""
    names = dist.device_set(devices if devices is not None else ckks.resolve_device(device))
    per_device = {name: _encoding_on(name, preset, repeat) for name in names}
    params = ckks.Params.preset(preset)
    return {
        "benchmark": "ckks_encoding",
        "device": names[0],
        "devices": names,
        "parameters": {
            "preset": preset,
            "log_n": params.log_n,
            "levels": params.levels,
            "slots": params.slots,
        },
        "per_device": per_device,
        "correct": all(
            r["correct"]["device_path_within_1e-5"] and r["correct"]["paths_agree_within_1e-9"]
            for r in per_device.values()
        ),
    }


_INTEGER_PRESETS = {"bfv": "N15_t65537", "bgv": "N15_t65537"}


def _integer_encoding_on(name: str, scheme: str, preset: str, repeat: int) -> dict:
    """run_integer_encoding's measurements of one scheme on one device."""
    from . import bfv, bgv, ring

    module = {"bfv": bfv, "bgv": bgv}[scheme]
    ctx = module.Context(preset, device=name)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    t_mod = ctx.plain_modulus
    x = np.random.default_rng(3).integers(-(t_mod // 2), t_mod // 2 + 1, ctx.slots)
    t = _device_array(x, ctx.device)
    paths = _Paths(ctx, pk, sk, t)
    words = []
    for encrypt in (paths.host_encrypt, paths.device_encrypt):
        ctx._sampler = ring.Sampler(bytes(32), 1)  # the same draws for both paths
        words.append(encrypt().to_bytes())
    ctx._sampler = ring.Sampler()
    device_result, host_result = _as_host(paths.device_decrypt()), _as_host(paths.host_decrypt())
    return {
        "preset": preset,
        "log_n": ctx.params.n.bit_length() - 1,
        "plain_modulus": t_mod,
        "values": f"{type(t).__module__.split('.')[0]} array of {ctx.slots} int64 on "
        + (str(t.device) if hasattr(t, "device") else "cpu"),
        "encoded_on_device": bool(ctx.encode(t).on_device),
        "ms": {k: round(1e3 * v, 4) for k, v in paths.seconds(repeat).items()},
        "correct": {
            "ciphertext_words_equal": words[0] == words[1],
            "decryptions_equal": bool(np.array_equal(device_result, host_result)),
            "decrypts_to_input": bool(np.array_equal(device_result, x)),
        },
    }


def run_integer_encoding(
    device: str | None = None, devices=None, presets: dict | None = None, repeat: int = 5
) -> dict:
    """BFV and BGV encode+encrypt and decrypt+decode of a full-slot int64 array (a torch tensor
    on the device when torch is installed, else numpy) through the host path (values copied to
    the host, encoded there; decrypted and decoded there, the result uploaded to the tensor's
    device) against the device path (ctx.encrypt(tensor) / ctx.decrypt(ct, sk, like=tensor):
    encoding and decoding on the context's device); best of `repeat`, in ms, per device of
    `devices` (default: the device; "all": every GPU), one after another. Presets (default:
    BFV and BGV N15_t65537, N = 2^15): {"bfv": name, "bgv": name}. Correctness flags: the two
    paths' ciphertext words with the same sampler draws, their decryptions, and the input."""
    presets = dict(_INTEGER_PRESETS if presets is None else presets)
    names = dist.device_set(devices if devices is not None else ckks.resolve_device(device))
    per_device = {
        name: {s: _integer_encoding_on(name, s, p, repeat) for s, p in presets.items()}
        for name in names
    }
    return {
        "benchmark": "integer_encoding",
        "device": names[0],
        "devices": names,
        "parameters": {"presets": presets},
        "per_device": per_device,
        "correct": all(
            all(r["correct"].values()) for schemes in per_device.values() for r in schemes.values()
        ),
    }
