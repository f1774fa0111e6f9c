"""``ember bench apps``: per application its bootstraps, gates, depth, compile time and encrypted
run time on 1, 2, 4, ... devices, beside the published figures (a JSON-ready dictionary, never a
test condition)."""

from __future__ import annotations

import time

import numpy as np

from ..errors import ParameterError
from .programs import APPS
from .runner import compile_app, device_list, equal_outputs, inputs_for, make_keys

# The programs of ARCTYREX's table, in its order, then the rest of the linear algebra.
DEFAULT = [
    "add32",
    "mul32",
    "simon_round",
    "speck_round",
    "aes128",
    "dot500",
    "simon128",
    "speck128",
    "vadd500",
    "matvec",
    "matmul10",
    "logreg_small",
    "logreg_large",
    "mnist_fhe",
    "helr",
    "cnn",
]
# The integer preset beside each Boolean one, for FHE-DiNN's bootstraps of 4-bit sums.
INT_PRESET = {"test_insecure": "test_int_insecure"}
QUICK = ["add32", "simon_round", "aes_sbox4"]


def _counts(devices) -> list:
    """[1, 2, 4] from "1,2,4" (or a list); names ("cuda:0,cuda:1") count as their number."""
    if devices in (None, "all"):
        return [1]
    parts = devices.split(",") if isinstance(devices, str) else list(devices)
    if all(str(p).isdigit() for p in parts):
        return sorted({int(p) for p in parts if int(p) >= 1})
    return [len(parts)]


def _available(device: str) -> int:
    import ember

    if device.startswith("cuda"):
        return sum(1 for d in ember.devices() if d.kind == "cuda")
    return 1


def bench_apps(
    device: str = "cuda",
    devices="1,2,4",
    preset: str = "bool_128",
    programs=None,
    quick: bool = False,
    seed: int = 1,
    progress: bool = False,
    precompiled=None,
    modes="dataflow",
) -> dict:
    """Compiles (cached; `precompiled`: a folder of `<name>.circuit` files, see
    runner.export_apps) and runs each program once per device count that exists and scheduler
    mode (`modes`: "wave", "dataflow" or both, comma-separated); records the circuit's size,
    compile time, run time per count (`seconds`: the first mode; `seconds_<mode>` for each),
    whether the decrypted outputs matched the plaintext evaluation, and the paper's figures."""
    import ember

    from ..bench import _device_name

    dev = ember.resolve_device(device)
    modes = [m for m in modes.split(",") if m] if isinstance(modes, str) else list(modes)
    bad = [m for m in modes if m not in ("wave", "dataflow")]
    if bad or not modes:
        raise ParameterError(f"modes must be wave and/or dataflow, got {modes}")
    names = programs or (QUICK if quick else DEFAULT)
    if isinstance(names, str):
        names = [n for n in names.split(",") if n]
    unknown = [n for n in names if n not in APPS and n not in ("mnist_fhe", "helr", "cnn")]
    if unknown:
        raise ParameterError(f"unknown applications {unknown}; available: {', '.join(APPS)}")
    have = _available(dev)
    counts = [c for c in _counts(devices) if c <= have] or [1]
    rng = np.random.default_rng(seed)
    every = [d for d in device_list(dev, str(max(counts))) if d != dev]
    ctx, ck, sk, keys_s = make_keys(preset, [dev, *every], progress)
    rows = []
    for name in names:
        if name == "mnist_fhe":
            rows.append(_mnist_row(dev, INT_PRESET.get(preset, "int4_128"), progress))
            continue
        if name in ("helr", "cnn"):
            rows.append(_issue30_row(name, dev, counts, progress))
            continue
        app = APPS[name]
        row = {"app": name, "summary": app.summary, "paper": app.paper}
        try:
            circ, cinfo = compile_app(name, precompiled=precompiled)
        except ember.Error as e:  # a program outside this machine's reach: say so, go on
            row["error"] = f"{type(e).__name__}: {e}"
            rows.append(row)
            continue
        stats = circ.stats()
        row.update(
            gates=stats["gates"],
            bootstraps=stats["bootstraps"],
            depth=stats["depth"],
            widest_wave=stats["widest_wave"],
            compile_seconds=cinfo["compile_seconds"],
            compile_cached=cinfo["cached"],
            seconds={},
            ok={},
        )
        inputs, _ = inputs_for(app, circ, rng)
        plain = circ.evaluate(**inputs)
        ins = circ.encrypt_inputs(ctx, ck, **inputs)
        for mode in modes:
            row[f"seconds_{mode}"] = times = {}
            for count in counts:
                devs = device_list(dev, str(count))
                key = str(count) if mode == modes[0] else f"{count}_{mode}"
                try:
                    t1 = time.perf_counter()
                    outs = circ.run(
                        ctx,
                        sk,
                        ins,
                        devices=None if count == 1 else devs,
                        mode=mode,
                        progress=progress,
                    )
                    seconds = time.perf_counter() - t1
                except ember.Error as e:  # several devices before the C++ scheduler has them
                    times[str(count)] = None
                    row["ok"][key] = f"{type(e).__name__}: {e}"
                    continue
                times[str(count)] = round(seconds, 3)
                row["ok"][key] = equal_outputs(circ.decrypt_outputs(ctx, ck, outs), plain)
        row["seconds"] = row[f"seconds_{modes[0]}"]
        one = row["seconds"].get("1")
        if one:
            row["bootstraps_per_second_1"] = round(stats["bootstraps"] / one, 1)
        rows.append(row)
    return {
        "benchmark": "apps",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "device_name": _device_name(dev),
        "device_counts": counts,
        "preset": preset,
        "server_key_seconds": round(keys_s, 3),
        "paper_note": (
            "ARCTYREX: A100 GPUs, the TFHE library's parameters (our tfhe_lib_insecure); "
            "Google transpiler and Fregata as ARCTYREX reports them"
        ),
        "results": rows,
    }


def _mnist_row(device: str, preset: str, progress: bool) -> dict:
    """FHE-DiNN's way on one batch of 16 test images (see flows.run_mnist_fhe)."""
    from .flows import run_mnist_fhe

    rep = run_mnist_fhe(device, preset, images=16, progress=progress)
    return {
        "app": "mnist_fhe",
        "summary": rep["summary"],
        "preset": preset,
        "bootstraps": rep["bootstraps"],
        "depth": 1,
        "seconds": {"1": rep["seconds_per_image"]},
        "ok": {"1": rep["ok"]},
        "paper": {},
    }


def _issue30_row(name: str, device: str, counts: list, progress: bool) -> dict:
    """HELR training (seconds per iteration) or the CNN (one-image latency) per device count,
    with the whole benchmark's JSON under "detail" (apps.helr.bench_helr, apps.cnn.bench_cnn)."""
    spec = ",".join(str(c) for c in counts)
    if name == "helr":
        from .helr import bench_helr

        rep = bench_helr(device=device, devices=spec, progress=progress)
        runs = rep["runs"]
        seconds = {k: r["seconds_per_iteration"] for k, r in runs.items()}
        ok = {k: bool(r["weights_ok"] and r["accuracy_ok"]) for k, r in runs.items()}
        summary = "HELR training on encrypted MNIST 3 vs 8: seconds per iteration"
    else:
        from .cnn import bench_cnn

        rep = bench_cnn(device=device, devices=spec, progress=progress)
        seconds = {str(r["devices"]): r["single_latency_s"] for r in rep["rows"]}
        ok = {str(r["devices"]): bool(r["single_equal"] and r["packed_equal"]) for r in rep["rows"]}
        summary = "HE-Booster's MNIST CNN (BGV): seconds for one image"
    return {
        "app": name,
        "summary": summary,
        "seconds": seconds,
        "ok": ok,
        "paper": rep.get("paper", {}),
        "detail": rep,
    }


__all__ = ["DEFAULT", "QUICK", "bench_apps"]
