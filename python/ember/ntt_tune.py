"""NTT autotuning (``ember tune``): measures every CUDA NTT schedule on the GPU it runs on and
keeps the fastest per size and direction, by the rules below, in a table file that
``ember.set_backend_options(device, ntt_table=path)`` applies in-process and
bench/make_ntt_table.py turns into a built-in table (src/backend/cuda/launch/tuned/)."""

from __future__ import annotations

import time

from . import _ember, resolve_device
from .errors import DeviceError

FLOAT_BITS = 50  # kMaxFloatModulusBits: primes of at most this many bits take the FP64 path
# Sizes with a cluster schedule (launch/ntt_cluster.cu); elsewhere "cluster" runs the warp-shuffle
# one, so a measured win there is noise and is not kept.
CLUSTER_LOG_N = range(12, 17)
# On the integer path the cluster schedule is kept only where it beats every other one by this
# factor: inside a scheme's chain of kernels a cluster waits for 8 or 16 free block slots in one
# GPC while the previous kernel drains, which the isolated benchmark does not see. Measured on an
# H200 (2026-11-22) with ties taken: BFV N14 (integer path) relinearization and rotation 14 %
# slower, while on the FP64 path the ties made CKKS N14 and BGV N13 rotations 2-12 % faster.
CLUSTER_MARGIN_INT = 0.95
#: The `format` of a table file (ember.options.load_ntt_table reads it).
TABLE_FORMAT = "ember-ntt-table"


def select(results: list, cluster_margin: float) -> dict:
    """{(log_n, limbs): {"forward": (variant, us), "inverse": (variant, us)}} from the rows of
    `ember bench ntt`: per size and direction the fastest schedule, where a cluster schedule must
    be at least 1 / cluster_margin times as fast as the fastest other one. Rows of "auto" and
    rows whose round trip failed are ignored."""
    fastest: dict = {}
    for r in results:
        if r["variant"].startswith("auto") or not r["roundtrip_ok"]:
            continue
        if r["variant"] == "cluster" and r["log_n"] not in CLUSTER_LOG_N:
            continue
        kind = "cluster" if r["variant"] == "cluster" else "other"
        for direction in ("forward", "inverse"):
            t = r[f"{direction}_us"]
            slot = fastest.setdefault((r["log_n"], r["limbs"], direction), {})
            if kind not in slot or t < slot[kind][1]:
                slot[kind] = (r["variant"], t)
    best: dict = {}
    for (log_n, limbs, direction), slot in fastest.items():
        other, cluster = slot.get("other"), slot.get("cluster")
        keep_cluster = cluster and (not other or cluster[1] <= cluster_margin * other[1])
        best.setdefault((log_n, limbs), {})[direction] = cluster if keep_cluster else other
    return best


def table_rows(sweep: dict, cluster_margin: float) -> list[dict]:
    """The selected rows of one sweep (`ember bench ntt --json`) as a table file lists them."""
    return [
        {
            "log_n": log_n,
            "limbs": limbs,
            "forward": e["forward"][0],
            "inverse": e["inverse"][0],
            "forward_us": round(e["forward"][1], 2),
            "inverse_us": round(e["inverse"][1], 2),
        }
        for (log_n, limbs), e in sorted(select(sweep["results"], cluster_margin).items())
    ]


def table_file(fp64_sweep: dict, int_sweep: dict, gpu: dict | None = None) -> dict:
    """The table file of a GPU from its two sweeps (primes of at most 50 bits, then larger)."""
    if fp64_sweep["prime_bits"] > FLOAT_BITS or int_sweep["prime_bits"] <= FLOAT_BITS:
        raise ValueError(
            f"the first sweep needs primes of at most {FLOAT_BITS} bits, the second larger ones"
        )
    gpu = gpu or {}
    return {
        "format": TABLE_FORMAT,
        "version": 1,
        "gpu": gpu.get("name", fp64_sweep.get("device_name", "")),
        "multiprocessors": gpu.get("multiprocessors", 0),
        "bandwidth_gbs": gpu.get("bandwidth_gbs", 0.0),
        "copy_gbps": fp64_sweep.get("copy_gbps"),
        "date": fp64_sweep.get("date", time.strftime("%Y-%m-%d")),
        "fp64": {
            "prime_bits": fp64_sweep["prime_bits"],
            "rows": table_rows(fp64_sweep, 1.0),
        },
        "integer": {
            "prime_bits": int_sweep["prime_bits"],
            "rows": table_rows(int_sweep, CLUSTER_MARGIN_INT),
        },
    }


def tune(device: str | None = None, quick: bool = False, progress=None) -> dict:
    """Sweeps every NTT schedule on the GPU (`ember bench ntt` at 50- and 60-bit primes) and
    returns its table file. Raises DeviceError where the device is no GPU."""
    from .bench import bench_ntt

    dev = resolve_device(device)
    gpus = {g.index: g for g in _ember.cuda_devices()}
    index = int(dev.split(":")[1]) if dev.startswith("cuda:") else -1
    if index not in gpus:
        raise DeviceError(
            "there is no GPU to tune here: "
            + (
                f"device {dev!r} is not one of the visible GPUs "
                f"({', '.join(f'cuda:{i} {g.name}' for i, g in gpus.items())})"
                if gpus
                else "no CUDA GPU is visible (ember info lists the devices); the NTT autotune "
                "table is for CUDA GPUs"
            )
        )
    info = gpus[index]
    gpu = {
        "name": info.name,
        "multiprocessors": info.multiprocessors,
        "bandwidth_gbs": round(info.memory_bandwidth_gbs, 1),
    }
    sweeps = []
    for bits in (FLOAT_BITS, 60):
        if progress:
            progress(f"ember tune: {info.name}, {bits}-bit primes ...")
        sweeps.append(bench_ntt(dev, quick=quick, prime_bits=bits))
    return table_file(*sweeps, gpu=gpu)
