"""``ember bench cggi``: gate throughput and latency, PBS latency, key sizes and key generation
time (a JSON-ready dictionary, never used as a test condition)."""

from __future__ import annotations

import time

import numpy as np

from . import _ember, resolve_device


def _timed(fn, runs: int) -> float:
    """Median seconds of `runs` calls (each call synchronizes: the contexts' calls return when
    the work is done)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def _gates(name: str, dev: str, batches: list[int], runs: int) -> dict:
    from . import cggi

    ctx = cggi.Context(cggi.Params.preset(name, insecure=True), device=dev)
    ck = ctx.keygen()
    t0 = time.perf_counter()
    sk = ctx.server_key(ck, progress=False)
    keygen = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    out = {
        "server_key_s": round(keygen, 3),
        "bsk_bytes": int(sk._raw.bsk_bytes),
        "ksk_bytes": int(sk._raw.ksk_bytes),
        "gates_per_s": {},
    }
    for batch in batches:
        a = ctx.encrypt(rng.integers(0, 2, batch).astype(bool), ck)
        b = ctx.encrypt(rng.integers(0, 2, batch).astype(bool), ck)
        s = _timed(lambda a=a, b=b: ctx.nand(a, b, sk), runs if batch == 1 else 1)
        if batch == 1:
            out["gate_latency_ms"] = round(s * 1e3, 3)
        out["gates_per_s"][str(batch)] = round(batch / s, 2)
    # The bootstrap's measured noise against the model (docs/cggi.md), on the largest batch.
    if len(a) >= 64:
        e = ctx.phase_errors(ctx.bootstrap(a, sk), ck)
        out["bootstrap_var_measured_over_predicted"] = round(
            float(np.var(e)) / ctx.predicted_noise(ck=ck)["bootstrap"], 3
        )
        out["noise_samples"] = int(e.size)
    out["log2_p_fail_gate_predicted"] = round(ctx.predicted_noise()["log2_p_fail_gate"], 1)
    return out


def _pbs(name: str, bits: int, dev: str, runs: int, batch: int) -> dict:
    """One LUT's latency, and LUTs per second over `batch` ciphertexts in one call."""
    from . import cggi

    ctx = cggi.Context(name, device=dev)
    ck = ctx.keygen()
    t0 = time.perf_counter()
    sk = ctx.server_key(ck, progress=False)
    keygen = time.perf_counter() - t0
    size = 1 << bits
    table = [(v * v + 1) % size for v in range(size)]
    q = ctx.encrypt_int(np.array([size - 1]), ck, bits=bits)
    s = _timed(lambda: ctx.apply_lut(q, table, sk), runs)
    values = np.arange(batch) % size
    many = ctx.encrypt_int(values, ck, bits=bits)
    got = ctx.decrypt_int(ctx.apply_lut(many, table, sk), ck)
    if not np.array_equal(got, np.array(table)[values]):
        raise RuntimeError(f"{name}: a LUT of the benchmark decrypted wrongly")
    s_many = _timed(lambda: ctx.apply_lut(many, table, sk), 1)
    return {
        "bits": bits,
        "server_key_s": round(keygen, 3),
        "bsk_bytes": int(sk._raw.bsk_bytes),
        "ksk_bytes": int(sk._raw.ksk_bytes),
        "pbs_latency_ms": round(s * 1e3, 3),
        "pbs_batch": batch,
        "pbs_per_s": round(batch / s_many, 1),
        "log2_p_fail_lut_predicted": round(ctx.predicted_noise(bits)["log2_p_fail_lut"], 1),
    }


def bench_cggi(device: str | None = None, quick: bool = False) -> dict:
    """Gates per second for batches of NAND gates (1, 64, 1024, and on a GPU 16384 and 65536;
    on the CPU bool_128 stops at 64), one-gate latency, 2- and 4-bit PBS latency and LUTs per second (4096 per call on a GPU, 8 on the
    CPU), key sizes and
    generation times. quick: the test preset only."""
    from .bench import _device_name

    dev = resolve_device(device)
    gpu = dev.startswith("cuda")
    out = {
        "benchmark": "cggi",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "device_name": _device_name(dev),
        "cpu_threads": _ember.cpu_threads(),
        "gates": {},
        "pbs": {},
    }
    out["gates"]["test_insecure"] = _gates("test_insecure", dev, [1, 64, 1024], 5)
    if quick:
        return out
    big = [1, 64, 1024, 16384, 65536] if gpu else [1, 64]
    out["gates"]["bool_128"] = _gates("bool_128", dev, big, 3)
    out["gates"]["tfhe_lib_insecure"] = _gates("tfhe_lib_insecure", dev, [1], 3)
    lut_batch = 4096 if gpu else 8
    out["pbs"]["int2_128"] = _pbs("int2_128", 2, dev, 3, lut_batch)
    out["pbs"]["int4_128"] = _pbs("int4_128", 4, dev, 3, lut_batch)
    return out
