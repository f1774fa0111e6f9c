"""Benchmark of everyday use: save/load and pickle throughput, loading onto each device of a set,
the cost of CKKS error tracking, and Params.for_depth sets running their depth; JSON-ready."""

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
