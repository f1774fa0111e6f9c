"""``ember bench circuit``: a compiled circuit (ARCTYREX's length-500 16-bit dot product when
it has been compiled, else a shorter one) run encrypted on 1, 2, 4, ... devices in wave and
dataflow mode, each run checked against the plaintext evaluation.

Per run: seconds (host wall clock of circ.run, keys already on every device), gates and
bootstraps per second, speedup over one device in the same mode, the scheduler's host times
(planning; enqueueing, which on CPU devices includes the work; waiting at the end), the time of
the same run with every bootstrap replaced by a copy (``seconds_without_bootstraps``: what the
scheduler costs besides the bootstraps: planning, gathers, linear steps, copies), launches,
cross-device copies and spills."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from . import cggi
from .circuit import Circuit, RunOptions
from .dist import device_set, scaling_counts

DOT500 = Path("examples/circuits/compiled/dot500.circuit")


def _dot_source(length: int) -> str:
    return (
        "#include <stdint.h>\n"
        f"int32_t dot(const int16_t a[{length}], const int16_t b[{length}]) {{\n"
        "  int32_t s = 0;\n"
        f"  for (int i = 0; i < {length}; i++) s += a[i] * b[i];\n"
        "  return s;\n}\n"
    )


def _circuit(path, function: str, length: int) -> tuple:
    """(circuit, description, compile seconds or None)."""
    from .compiler import compile_c, compile_source

    if path is None and DOT500.exists():
        path = DOT500
    if path is None:
        t0 = time.perf_counter()
        circ = compile_source(_dot_source(length), "dot", f"dot{length}.c")
        return circ, f"dot product, length {length}, int16 (compiled)", time.perf_counter() - t0
    path = Path(path)
    if path.suffix == ".c":
        t0 = time.perf_counter()
        circ = compile_c(path, function)
        return circ, f"{path} ({function}, compiled)", time.perf_counter() - t0
    return Circuit.load(path), str(path), None


def _inputs(circ: Circuit, rng) -> dict:
    out = {}
    for p in circ.inputs:
        lo, hi = (-(1 << (p.width - 1)), 1 << (p.width - 1)) if p.signed else (0, 1 << p.width)
        out[p.name] = rng.integers(lo, hi, size=p.shape) if p.shape else int(rng.integers(lo, hi))
    return out


def bench_circuit(
    devices="all",
    quick: bool = False,
    circuit=None,
    function: str = "dot",
    params: str | None = None,
) -> dict:
    from .bench import _device_name

    names = device_set(devices)
    gpu = names[0].startswith("cuda")
    circ, source, compile_s = _circuit(circuit, function, 1 if quick else (64 if gpu else 8))
    preset = params or ("bool_128" if gpu and not quick else "test_insecure")
    ctx = cggi.Context(cggi.Params.preset(preset, insecure=preset.endswith("insecure")), names[0])
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    for d in names:  # replicate the key before timing (cached by ServerKey.to)
        sk.to(d)
    plain = _inputs(circ, np.random.default_rng(1))
    want = circ.evaluate(**plain)
    ins = circ.encrypt_inputs(ctx, ck, **plain)
    counts = scaling_counts(len(names))
    stats = circ.stats()
    rows = []
    for mode in ("wave", "dataflow"):
        first = None
        for k in counts:
            devs = names[:k]
            t0 = time.perf_counter()
            outs = circ.run(ctx, sk, ins, devices=devs, mode=mode, progress=False)
            seconds = time.perf_counter() - t0
            run = circ.last_run_stats
            got = circ.decrypt_outputs(ctx, ck, outs)
            ok = all(np.array_equal(np.asarray(got[n]), np.asarray(want[n])) for n in want)
            dry = RunOptions(mode=mode, skip_bootstrap=True)
            t0 = time.perf_counter()
            circ.run(ctx, sk, ins, devices=devs, options=dry, progress=False)
            dry_s = time.perf_counter() - t0
            first = first or seconds
            rows.append(
                {
                    "mode": mode,
                    "devices": k,
                    "seconds": round(seconds, 4),
                    "gates_per_s": round(stats["gates"] / seconds, 1),
                    "bootstraps_per_s": round(stats["bootstraps"] / seconds, 1),
                    "speedup": round(first / seconds, 3),
                    "seconds_without_bootstraps": round(dry_s, 4),
                    "plan_s": round(run["plan_seconds"], 4),
                    "issue_s": round(run["issue_seconds"], 4),
                    "wait_s": round(run["wait_seconds"], 4),
                    "launches": run["launches"],
                    "cross_device_copies": run["cross_device_copies"],
                    "cross_device_transfers": run["cross_device_transfers"],
                    "spilled": run["spilled"],
                    "gates_per_device": run["gates_per_device"],
                    "peak_live_per_device": run["peak_live_per_device"],
                    "matches_plaintext": ok,
                }
            )
    return {
        "benchmark": "circuit",
        "date": time.strftime("%Y-%m-%d"),
        "circuit": source,
        "compile_seconds": None if compile_s is None else round(compile_s, 1),
        "params": preset,
        "gates": stats["gates"],
        "bootstraps": stats["bootstraps"],
        "depth": stats["depth"],
        "widest_wave": stats["widest_wave"],
        "widest_wave_bootstraps": stats["widest_wave_bootstraps"],
        "devices": names,
        "device_names": [_device_name(d) for d in names],
        "default_mode": "wave",
        "results": rows,
    }
