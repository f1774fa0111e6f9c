"""``ember bench multi``: HE-Booster's multi-GPU experiment, independent homomorphic
multiplications (multiply + relinearize) spread over 1, 2, 4, ... devices with ctx.map.

For each parameter set and each device count k (the powers of two below the set's size, and
its size: ember.dist.scaling_counts):
- strong scaling: 8 multiplications over k devices, the operands already on the device that
  computes them (as HE-Booster's data is), speedup = T(8 on 1) / T(8 on k);
- weak scaling: 8 multiplications per device (8 k in all), throughput ratio = (8 k / T) / (8 / T1);
- the same with the operands starting on the first device and the products gathered back to it
  (moves included: peer-to-peer copies between GPUs).
Times are host wall clock around ctx.map with every device synchronized (median of runs)."""

from __future__ import annotations

import time

from . import _ember, _ember_bench, bgv, ckks
from .dist import device_set, scaling_counts


def _sets(quick: bool, cuda: bool) -> list[tuple]:
    """(name, context factory) of HE-Booster's sets: N = 2^15 with 16 levels and N = 2^16."""
    if quick or not cuda:
        small = {"scale_bits": 40, "first_mod_bits": 60, "special_mods": 1, "insecure": True}
        return [
            ("ckks_N12_L4", lambda d: ckks.Context(ckks.Params(log_n=12, levels=4, **small), d)),
            (
                "bgv_N12_L3",
                lambda d: bgv.Context(
                    bgv.Params(log_n=12, q_bits=(40,) * 4, special_bits=(50,), insecure=True), d
                ),
            ),
        ]
    ckks15 = ckks.Params(log_n=15, levels=16, scale_bits=40, first_mod_bits=60, special_mods=2)
    bgv16 = bgv.Params(log_n=16, q_bits=(55,) * 28, special_bits=(55,) * 4)
    return [
        ("ckks_N15_L16", lambda d: ckks.Context(ckks15, d, auto_rescale=False)),
        ("ckks_N16_L35", lambda d: ckks.Context("N16_L35", d, auto_rescale=False)),
        ("bgv_N15_L15", lambda d: bgv.Context("N15_t65537", d, auto_mod_switch=False)),
        ("bgv_N16_L28", lambda d: bgv.Context(bgv16, d, auto_mod_switch=False)),
    ]


def _encrypt_pair(ctx, sk, count: int):
    import numpy as np

    rng = np.random.default_rng(1)
    if ctx.scheme == "CKKS":
        xs = [ctx.encrypt(rng.uniform(-1, 1, ctx.slots), sk) for _ in range(count)]
    else:
        t = ctx.plain_modulus
        xs = [ctx.encrypt(rng.integers(0, t, ctx.slots), sk) for _ in range(count)]
    return xs, xs[::-1]


def _timed_map(ctx, xs, ys, devices, gather: bool, runs: int) -> float:
    """Median ms of ctx.map(a * b) over `devices`, every device synchronized around it."""

    def sync():
        for d in devices:
            _ember.synchronize(d)

    times = []
    for _ in range(runs):
        sync()
        t0 = time.perf_counter()
        out = ctx.map(lambda a, b: a * b, xs, ys, devices=devices, gather=gather)
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        del out
    return sorted(times)[len(times) // 2]


def bench_multi(devices="all", quick: bool = False) -> dict:
    names = device_set(devices)
    cuda = names[0].startswith("cuda")
    counts = scaling_counts(len(names))
    runs = 5 if quick else 15
    rows = []
    for set_name, make in _sets(quick, cuda):
        ctx = make(names[0])
        sk = ctx.keygen()
        ctx.set_eval_keys(ctx.eval_keys(sk))
        base_xs, base_ys = _encrypt_pair(ctx, sk, 8 * max(counts))
        t1 = None
        for k in counts:
            devs = names[:k]
            row = {"set": set_name, "devices": k}
            for label, total in (("strong", 8), ("weak", 8 * k)):
                xs, ys = base_xs[:total], base_ys[:total]
                # Operands placed where map computes them, keys replicated (first map).
                placed_x = ctx.map(lambda a: a, xs, devices=devs, gather=False)
                placed_y = ctx.map(lambda a: a, ys, devices=devs, gather=False)
                _timed_map(ctx, placed_x, placed_y, devs, False, 2)  # warm-up
                row[f"{label}_ms"] = _timed_map(ctx, placed_x, placed_y, devs, False, runs)
                row[f"{label}_moved_ms"] = _timed_map(ctx, xs, ys, devs, True, runs)
                row[f"{label}_ops"] = total
            if k == 1:
                t1 = row["strong_ms"]
                t1_moved = row["strong_moved_ms"]
            row["strong_speedup"] = t1 / row["strong_ms"]
            row["weak_throughput_ratio"] = (8 * k / row["weak_ms"]) / (8 / t1)
            row["strong_moved_speedup"] = t1_moved / row["strong_moved_ms"]
            row["per_op_ms_1dev"] = t1 / 8
            rows.append(row)
        del ctx, sk, base_xs, base_ys
    return {
        "benchmark": "multi",
        "date": time.strftime("%Y-%m-%d"),
        "devices": names,
        "device_names": [_name(d) for d in names],
        "results": rows,
    }


def _name(dev: str) -> str:
    from .bench import _device_name

    return _device_name(dev)


def _split_sets(quick: bool, cuda: bool) -> list[tuple]:
    """(name, scheme, log_n, q_bits, p_bits, dnum) of the single-operation split benchmark:
    Phantom's CKKS N16_36+4 (the issue's set), HE-Booster's N = 2^15 with 16 levels."""
    if quick or not cuda:
        return [("ckks_N12_L9", "ckks", 12, [60] + [40] * 9, [60, 60], 3)]
    return [
        ("ckks_N16_36+4", "ckks", 16, [60] + [40] * 35, [60] * 4, 9),
        ("ckks_N15_L16", "ckks", 15, [60] + [40] * 16, [60, 60], 9),
        ("bgv_N15_L16", "bgv", 15, [55] * 17, [55, 55], 9),
    ]


def bench_split(devices="all", quick: bool = False) -> dict:
    """``ember bench split``: ONE multiplication (with relinearization) and ONE rotation split
    over 1, 2, 4, ... devices (ctx.split), each against the same operation on the first device;
    every split result is checked word for word against it. Operands already split (resident,
    as in HE-Booster's experiment). ``*_ms``: host wall clock per operation over 10 back-to-back
    operations, devices synchronized (median of runs); ``*_latency_ms``: one operation,
    synchronized."""
    names = device_set(devices)
    cuda = names[0].startswith("cuda")
    counts = scaling_counts(len(names))
    rows = []
    for name, scheme, log_n, q_bits, p_bits, dnum in _split_sets(quick, cuda):
        r = _ember_bench.bench_split(
            scheme, log_n, q_bits, p_bits, dnum, 65537, names, counts, 5 if quick else 15
        )
        for s in r["splits"]:
            for op in ("multiply_relin", "rotate"):
                s[f"{op}_speedup"] = r[f"{op}_ms"] / s[f"{op}_ms"]
                s[f"{op}_latency_speedup"] = r[f"{op}_latency_ms"] / s[f"{op}_latency_ms"]
        r["set"] = name
        rows.append(r)
    return {
        "benchmark": "split",
        "date": time.strftime("%Y-%m-%d"),
        "devices": names,
        "device_names": [_name(d) for d in names],
        "results": rows,
    }
