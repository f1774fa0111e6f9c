"""Runs a shipped application: compile (cached), check the circuit against the native build of
the same C file, encrypt the inputs, run on the chosen devices, decrypt, and compare."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from .cache import compile_cached, load_saved, save_seconds
from .programs import APPS, App


def circuits_dir() -> Path:
    """Where the applications' C files are: $EMBER_CIRCUITS_DIR, else the copy installed with
    the package (ember/circuits), else examples/circuits of the source tree."""
    env = os.environ.get("EMBER_CIRCUITS_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent
    for d in (here / "circuits", here.parent.parent / "examples" / "circuits"):
        if (d / "add32.c").exists():
            return d
    raise ParameterError(
        "the applications' C files were not found: set EMBER_CIRCUITS_DIR to examples/circuits"
    )


def get_app(name: str) -> App:
    if name not in APPS:
        raise ParameterError(f"unknown application {name!r}; available: {', '.join(APPS)}")
    return APPS[name]


def compile_app(name: str, use_cache: bool = True, directory=None, precompiled=None):
    """(Circuit, info) of the application `name` (see cache.compile_cached). `precompiled`: a
    folder written by `ember apps compile --out` (or export_apps); its `<name>.circuit` is used
    as it is when present, so that a machine without Yosys runs the programs compiled elsewhere."""
    app = get_app(name)
    if precompiled is not None:
        found = load_precompiled(name, precompiled)
        if found is not None:
            return found
    return compile_cached(Path(directory or circuits_dir()) / app.source, app.function, use_cache)


def load_precompiled(name: str, folder):
    """(Circuit, info) from `folder/<name>.circuit`, or None when the folder has no such file."""
    target = Path(folder) / f"{name}.circuit"
    return load_saved(target) if target.exists() else None


def export_apps(names, folder, use_cache: bool = True, directory=None) -> list:
    """Compiles (cached) each application and writes `folder/<name>.circuit` with its compile
    time beside it: the folder a machine without Yosys passes as `precompiled`. Returns
    [(name, gates, compile seconds)]."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    done = []
    for name in names:
        circ, info = compile_app(name, use_cache, directory)
        circ.save(folder / f"{name}.circuit")
        if info["compile_seconds"] is not None:
            save_seconds(folder / f"{name}.circuit", info["compile_seconds"])
        done.append((name, circ.stats()["gates"], info["compile_seconds"]))
    return done


def inputs_for(app: App, circ, rng) -> tuple:
    """(one input set, expected outputs or None): the application's meaningful example, else
    random values of every input's type."""
    if app.example is not None:
        return app.example(rng)
    from ..compiler.native import random_inputs

    sets = random_inputs(circ, 1, rng)
    return {k: v[0] for k, v in sets.items()}, None


def equal_outputs(got: dict, want: dict) -> bool:
    """Every output in `want` equal in `got` (ints, arrays; signed or unsigned 64-bit words)."""
    for k, w in want.items():
        g = np.asarray(got[k]).astype(object).reshape(-1)
        w = np.asarray(w).astype(object).reshape(-1)
        if g.shape != w.shape or any(int(a) != int(b) for a, b in zip(g, w)):
            return False
    return True


def check_native(app: App, circ, n: int, rng, directory=None, extra: dict | None = None) -> dict:
    """circ.evaluate against the native build on n random input sets (plus `extra`, one set):
    {"sets": n, "mismatches": count, "first": a description of the first mismatch or None}."""
    from ..compiler.native import mismatches, random_inputs, run_native

    path = Path(directory or circuits_dir()) / app.source
    sets = random_inputs(circ, n, rng)
    if extra is not None:  # the example set, last
        for p in circ.inputs:
            one = np.asarray(extra.get(p.name, 0), dtype=object)
            one = np.broadcast_to(one, p.shape).astype(sets[p.name].dtype)
            sets[p.name] = np.concatenate([sets[p.name], one[None]])
        n += 1
    got = circ.evaluate(batched=True, **sets)
    want = run_native(path, app.function, circ, sets, n)
    bad = mismatches(got, want, n)
    first = None
    if bad:
        k, idx = next(iter(bad.items()))
        i = int(idx[0])
        first = (
            f"output {k}, set {i}: circuit {np.asarray(got[k])[i]!r}, native {want[k][i]!r}, "
            f"inputs { ({p: np.asarray(v)[i].tolist() for p, v in sets.items()}) }"
        )
    return {"sets": n, "mismatches": int(sum(len(v) for v in bad.values())), "first": first}


def device_list(device: str | None, devices) -> list:
    """Device names from --devices: None (the one device), "all" (every GPU, or the device), a
    count ("2": the first two GPUs), or names ("cuda:0,cuda:1"). device None: the default
    device (ember.set_default_device, EMBER_DEVICE, else "auto")."""
    import ember

    device = ember.resolve_device(device)
    if devices is None or devices == []:
        return [device]
    if isinstance(devices, str):
        devices = [d for d in devices.split(",") if d]
    if devices == ["all"]:
        gpus = [f"cuda:{d.index}" for d in ember.devices() if d.kind == "cuda"]
        return gpus if device.startswith("cuda") and gpus else [device]
    if len(devices) == 1 and str(devices[0]).isdigit():
        count = int(devices[0])
        kind = device.split(":")[0]
        return [f"{kind}:{i}" for i in range(count)] if count > 1 else [device]
    return [str(d) for d in devices]


def make_context(preset: str, device: str):
    from .. import cggi

    params = cggi.Params.preset(preset, insecure=preset.endswith("insecure"))
    return cggi.Context(params, device=device)


def make_keys(preset: str, devices: list, progress: bool) -> tuple:
    """(ctx on devices[0], client key, server key, seconds): the keys, and the server key's
    copies on every device made now, so that the runs timed later hold set-up of neither."""
    ctx = make_context(preset, devices[0])
    t0 = time.perf_counter()
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=progress)
    for d in devices:
        sk.to(d)
    return ctx, ck, sk, time.perf_counter() - t0


def run_encrypted(circ, inputs: dict, ctx, ck, sk, devices: list, progress: bool) -> tuple:
    """(decrypted outputs, seconds per step) of one encrypted run (keys from make_keys)."""
    t0 = time.perf_counter()
    ins = circ.encrypt_inputs(ctx, ck, **inputs)
    t1 = time.perf_counter()
    run_devices = None if devices == [ctx.device] else devices
    outs = circ.run(ctx, sk, ins, devices=run_devices, progress=progress)
    t2 = time.perf_counter()
    res = circ.decrypt_outputs(ctx, ck, outs)
    t3 = time.perf_counter()
    return res, {"encrypt": t1 - t0, "run": t2 - t1, "decrypt": t3 - t2}


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return [int(x) for x in v.reshape(-1)] if v.ndim else int(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    return v


def run_app(
    name: str,
    device: str | None = None,
    devices=None,
    preset: str = "bool_128",
    seed: int | None = None,
    n_check: int = 100,
    progress: bool = True,
    use_cache: bool = True,
    directory=None,
    precompiled=None,
) -> dict:
    """Compiles (cached), checks against the native build on n_check random sets and the
    example set, runs the example encrypted and decrypts it. Returns a JSON-ready report whose
    "ok" is True when every check passed."""
    app = get_app(name)
    rng = np.random.default_rng(seed)
    circ, cinfo = compile_app(name, use_cache, directory, precompiled)
    stats = circ.stats()
    inputs, expected = inputs_for(app, circ, rng)
    native = check_native(app, circ, n_check, rng, directory, extra=inputs)
    plain = circ.evaluate(**inputs)
    devs = device_list(device, devices)
    ctx, ck, sk, keys_s = make_keys(preset, devs, progress)
    res, secs = run_encrypted(circ, inputs, ctx, ck, sk, devs, progress)
    report = {
        "app": app.name,
        "summary": app.summary,
        "source": app.source,
        "function": app.function,
        "gates": stats["gates"],
        "bootstraps": stats["bootstraps"],
        "depth": stats["depth"],
        "widest_wave": stats["widest_wave"],
        "compile": cinfo,
        "native_check": native,
        "reference_ok": None if expected is None else equal_outputs(plain, expected),
        "encrypted_matches_plaintext": equal_outputs(res, plain),
        "outputs": {k: _jsonable(v) for k, v in res.items()},
        "devices": devs,
        "preset": preset,
        "seconds": {"keys": round(keys_s, 3), **{k: round(v, 3) for k, v in secs.items()}},
        "bootstraps_per_second": round(stats["bootstraps"] / max(secs["run"], 1e-9), 1),
        "paper": app.paper,
    }
    report["ok"] = bool(
        native["mismatches"] == 0
        and report["reference_ok"] is not False
        and report["encrypted_matches_plaintext"]
    )
    return report


__all__ = [
    "check_native",
    "circuits_dir",
    "compile_app",
    "device_list",
    "equal_outputs",
    "export_apps",
    "get_app",
    "inputs_for",
    "load_precompiled",
    "make_context",
    "make_keys",
    "run_app",
    "run_encrypted",
]
