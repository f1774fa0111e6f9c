"""Benchmarks behind ``ember bench``: JSON-ready dictionaries, never used as test conditions."""

from __future__ import annotations

import platform
import time

from . import _ember, _ember_bench, devices, resolve_device
from .errors import ParameterError

NTT_LOG_N = [12, 13, 14, 15, 16, 17]
NTT_LIMBS = [1, 8, 24, 40, 64]


def _device_name(dev: str) -> str:
    if dev == "cpu":
        return platform.processor() or platform.machine()
    index = int(dev.split(":")[1]) if ":" in dev else 0
    for d in devices():
        if d.kind == "cuda" and d.index == index:
            return d.name
    return dev


def bench_ntt(device: str | None = None, quick: bool = False, prime_bits: int = 50) -> dict:
    """Batched NTT and INTT times for N = 2^12..2^17 and 1..64 limbs, every schedule, with the
    effective bandwidth and the ratio to the one-pass floor (each word read and written once at
    the measured device copy bandwidth)."""
    dev = resolve_device(device)
    cuda = dev.startswith("cuda")
    log_ns = [12, 13] if quick else NTT_LOG_N
    limbs_list = [1, 8] if quick else NTT_LIMBS
    if not cuda and not quick:
        limbs_list = [1, 8, 24]
    variants = ["auto"] + list(_ember.ntt_variants(dev))
    copy_gbps = _ember_bench.copy_bandwidth(dev, 512 if cuda else 64, 20 if cuda else 3)
    warmup, iters = (5, 50) if cuda else (1, 3)
    rows = []
    for log_n in log_ns:
        for limbs in limbs_list:
            for r in _ember_bench.bench_ntt(log_n, limbs, dev, variants, prime_bits, warmup, iters):
                floor_us = r["bytes_per_pass"] / (copy_gbps * 1e3)
                r["floor_us"] = floor_us
                for key in ("forward", "inverse"):
                    r[f"{key}_gbps"] = r["bytes_per_pass"] / (r[f"{key}_us"] * 1e3)
                    r[f"{key}_over_floor"] = r[f"{key}_us"] / floor_us
                    r[f"{key}_cold_over_floor"] = r[f"{key}_cold_us"] / floor_us
                rows.append(r)
    best = {}
    for r in rows:
        if r["variant"].startswith("auto"):
            continue
        key = f"{r['log_n']}x{r['limbs']}"
        score = r["forward_us"] + r["inverse_us"]
        if key not in best or score < best[key][1]:
            best[key] = (r["variant"], score)
    return {
        "benchmark": "ntt",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "device_name": _device_name(dev),
        "copy_gbps": copy_gbps,
        "prime_bits": prime_bits,
        "results": rows,
        "fastest_variant": {k: v[0] for k, v in best.items()},
    }


def bench_ntt32(device: str | None = None, quick: bool = False) -> dict:
    """The NTT on 32-bit words against the same code on 64-bit words, over the same 30-bit primes
    (N = 2^12..2^17, 1..64 limbs): microseconds per batch, bytes per pass, and whether both give
    the same words. Big-integer CKKS's residue products use the 32-bit transforms."""
    dev = resolve_device(device)
    cuda = dev.startswith("cuda")
    log_ns = [12, 13] if quick else NTT_LOG_N
    limbs_list = [1, 8] if quick else (NTT_LIMBS if cuda else [1, 8])
    warmup, iters = (5, 50) if cuda else (1, 3)
    rows = []
    for log_n in log_ns:
        for limbs in limbs_list:
            r = _ember_bench.bench_ntt32(log_n, limbs, dev, warmup, iters)
            for key in ("forward", "inverse"):
                r[f"{key}_speedup"] = r[f"{key}64_us"] / r[f"{key}32_us"]
            rows.append(r)
    return {
        "benchmark": "ntt32",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "device_name": _device_name(dev),
        "results": rows,
        "all_equal": all(r["forward_equal_64"] and r["roundtrip_ok"] for r in rows),
    }


# (name, log N, bits of Q's primes, bits of P's primes, dnum). The two N = 2^16 sets are Phantom's
# own CKKS benchmark sets ({60, 35 x 40} + 4 x 60 with dnum 9, and {60, 41 x 40} + 1 x 60).
CKKS_SETS = [
    ("N14", 14, [60] + [40] * 7, [60], 8),
    ("N15", 15, [60] + [40] * 17, [60, 60], 9),
    ("N16_36+4", 16, [60] + [40] * 35, [60] * 4, 9),
    ("N16_42+1", 16, [60] + [40] * 41, [60], 42),
]


def bench_ckks(device: str | None = None, quick: bool = False) -> dict:
    """CKKS operations at the top level of each set: encode, encrypt, decrypt, add,
    multiply+relinearize, rescale, rotate, 8 hoisted rotations (ms, medians), and the key-read
    floor of one key switch (the relinearization key read once at the copy bandwidth)."""
    dev = resolve_device(device)
    cuda = dev.startswith("cuda")
    sets = CKKS_SETS[:1] if quick or not cuda else CKKS_SETS
    copy_gbps = _ember_bench.copy_bandwidth(dev, 512 if cuda else 64, 20 if cuda else 3)
    rows = []
    for name, log_n, q_bits, p_bits, dnum in sets:
        r = _ember_bench.bench_ckks(
            log_n, q_bits, p_bits, dnum, dev, 3 if cuda else 1, 20 if cuda else 3
        )
        r["name"] = name
        r["key_read_floor_ms"] = r["key_bytes"] / (copy_gbps * 1e6)
        rows.append(r)
    return {
        "benchmark": "ckks",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "device_name": _device_name(dev),
        "copy_gbps": copy_gbps,
        "results": rows,
    }


def _integer_sets(scheme: str) -> list[tuple]:
    """(name, log N, bits of Q's primes, bits of P's primes, t) of every preset: the paper sets."""
    from . import bfv, bgv

    mod = {"bfv": bfv, "bgv": bgv}[scheme]
    out = []
    for name in mod.Params.presets():
        p = mod.Params.preset(name)
        out.append((name, p.log_n, list(p.q_bits), list(p.special_bits), int(p.plain_modulus)))
    return out


def bench_integer(scheme: str, device: str | None = None, quick: bool = False) -> dict:
    """BFV or BGV at the top level of each preset (the paper sets): key generation, encryption,
    decryption, add, multiply (+ relinearize), rotate, row swap (and BGV modulus switching), ms
    medians."""
    dev = resolve_device(device)
    cuda = dev.startswith("cuda")
    sets = _integer_sets(scheme)
    if quick or not cuda:
        sets = sets[:1]
    rows = []
    for name, log_n, q_bits, p_bits, t in sets:
        r = _ember_bench.bench_integer(
            scheme, log_n, q_bits, p_bits, t, dev, 3 if cuda else 1, 20 if cuda else 3
        )
        r["name"] = name
        rows.append(r)
    return {
        "benchmark": scheme,
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "device_name": _device_name(dev),
        "results": rows,
    }


def _median_ms(fn, runs: int, sync) -> float:
    times = []
    for _ in range(runs):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2]


def bench_boot(device: str | None = None, quick: bool = False, params: str | None = None) -> dict:
    """One full-slot bootstrap of complex values (the preset `params`, default N16_boot on a GPU;
    N12_boot_insecure on the CPU or with quick; N16_boot32 / N12_boot32_insecure for 32-bit
    words), one of real values (the real variant), two real ciphertexts in one
    bootstrap (bootstrap_many), and one sparse-slot bootstrap of slots/8 values, each encrypted
    at the top level and dropped to the input level: latency (host wall clock, synchronized,
    median), its phases, precision against the values (mean and worst slot, bits; the fresh
    encryption's error included) and against the decrypted input (the bootstrap's own error,
    mean), output level, key memory and count, key generation time, HMult and HRot (by one slot)
    at every level from the output level down (the lower median of two passes), and the
    amortized multiplication time per slot of Jung et al.: (bootstrap + one multiplication at
    each usable level) / (usable levels x slots)."""
    import numpy as np

    from . import ckks

    dev = resolve_device(device)
    cuda = dev.startswith("cuda")
    name = params or ("N16_boot" if cuda and not quick else "N12_boot_insecure")
    runs = 10 if cuda else 2

    def sync():
        _ember.synchronize(dev)

    ctx = ckks.Context(ckks.Params.preset(name), device=dev)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    t0 = time.perf_counter()
    sparse = ctx.slots // 8
    ek = ctx.eval_keys(sk, bootstrap=True, progress=False)
    sync()
    keygen_s = time.perf_counter() - t0
    full_key_bytes, full_keys = ek.nbytes, 1 + len(ek.galois) + 2
    # With a rotation by one slot for HRot at every level after bootstrapping (not counted in
    # key_memory_mb).
    ek = ctx.eval_keys(sk, rotations=[1], bootstrap=True, bootstrap_slots=[sparse], progress=False)
    ctx.set_eval_keys(ek)
    rng = np.random.default_rng(0)

    # Complex values (the circuit with two EvalMods), then real values (the real variant).
    # Inputs are encrypted at the top level (a fresh ciphertext's precision: with 32-bit words
    # some levels have lower scales) and brought down to the bootstrap's input level.
    def fresh(v, **kw):
        return ctx.drop_level(ctx.encrypt(v, pk, **kw), ctx.min_bootstrap_level)

    values = rng.uniform(-1, 1, ctx.slots) + 1j * rng.uniform(-1, 1, ctx.slots)
    ct = fresh(values)
    t0 = time.perf_counter()
    out = ctx.bootstrap(ct)  # first call: encodes the transforms' diagonals
    sync()
    first_ms = (time.perf_counter() - t0) * 1e3
    err = np.abs(ctx.decrypt(out, sk) - values)
    own = np.abs(ctx.decrypt(out, sk) - ctx.decrypt(ct, sk))  # the bootstrap's own error
    boot_ms = _median_ms(lambda: ctx.bootstrap(ct), runs, sync)
    phases: dict = {}
    ctx._boot().bootstrap(ct, phases=phases, sync=sync)
    reals = rng.uniform(-1, 1, ctx.slots)
    rct = fresh(reals)
    rout = ctx.bootstrap(rct)
    rerr = np.abs(ctx.decrypt(rout, sk) - reals)
    real_ms = _median_ms(lambda: ctx.bootstrap(rct), runs, sync)
    real_phases: dict = {}
    ctx._boot().bootstrap(rct, phases=real_phases, sync=sync)
    # Two real ciphertexts in one complex bootstrap.
    others = rng.uniform(-1, 1, ctx.slots)
    pair = [rct, fresh(others)]
    pout = ctx.bootstrap_many(pair)
    perr = np.concatenate([np.abs(ctx.decrypt(o, sk) - v) for o, v in zip(pout, (reals, others))])
    pair_ms = _median_ms(lambda: ctx.bootstrap_many(pair), runs, sync)
    few = rng.uniform(-1, 1, sparse)
    sct = fresh(few, sparse=True)
    sout = ctx.bootstrap(sct, slots=sparse)
    serr = np.abs(ctx.decrypt(sout, sk)[:sparse] - few)
    sparse_ms = _median_ms(lambda: ctx.bootstrap(sct, slots=sparse), runs, sync)
    mult_ms, rot_ms = {}, {}
    x = out
    # The levels for computation: from the output level down to the next bootstrap's input.
    usable = ctx.max_level - ctx.min_bootstrap_level
    # Two passes over the levels, the lower median of each kept: a transient of one pass (clocks,
    # the allocator returning memory after the bootstraps) does not decide a level's figure.
    for _ in range(2):
        for level in range(ctx.max_level, ctx.min_bootstrap_level, -1):
            x = ctx.drop_level(out, level)
            for times, fn in ((mult_ms, lambda x=x: x * x), (rot_ms, lambda x=x: x.rotate(1))):
                ms = _median_ms(fn, runs, sync)
                times[level] = min(ms, times.get(level, ms))
    amortized_us = (boot_ms + sum(mult_ms.values())) * 1e3 / (usable * ctx.slots)
    return {
        "benchmark": "boot",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "device_name": _device_name(dev),
        "preset": name,
        "word_bits": ctx.params.word_bits,
        "log_n": ctx.params.log_n,
        "slots": ctx.slots,
        "log_qp": ctx.params.total_bits,
        "dnum": ctx.params.dnum,
        "bootstrap_ms": boot_ms,
        "first_bootstrap_ms": first_ms,
        "phases_ms": phases,
        "precision_mean_bits": float(-np.log2(err.mean())),
        "precision_min_bits": float(-np.log2(err.max())),
        "bootstrap_error_mean_bits": float(-np.log2(own.mean())),
        "levels_left": usable,
        "output_level": out.level,
        "real": {
            "bootstrap_ms": real_ms,
            "phases_ms": real_phases,
            "precision_mean_bits": float(-np.log2(rerr.mean())),
            "precision_min_bits": float(-np.log2(rerr.max())),
        },
        "real_pair": {
            "bootstrap_ms": pair_ms,
            "per_ciphertext_ms": pair_ms / 2,
            "precision_mean_bits": float(-np.log2(perr.mean())),
            "precision_min_bits": float(-np.log2(perr.max())),
        },
        "sparse": {
            "slots": sparse,
            "bootstrap_ms": sparse_ms,
            "precision_mean_bits": float(-np.log2(serr.mean())),
            "precision_min_bits": float(-np.log2(serr.max())),
        },
        "eval_keys": full_keys,
        "key_memory_mb": full_key_bytes / 2**20,
        "diagonal_memory_mb": ctx._boot().plaintext_bytes() / 2**20,
        "keygen_s": keygen_s,
        "multiply_ms_by_level": mult_ms,
        "rotate_ms_by_level": rot_ms,
        "amortized_mult_us_per_slot": amortized_us,
        "runs": runs,
    }


def _collective_ms(into, args, sync, iters: int) -> float:
    """Mean ms of `iters` collectives queued back to back (after one warm-up)."""
    into(*args, sync=False)
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        into(*args, sync=False)
    sync()
    return (time.perf_counter() - t0) * 1e3 / iters


def bench_dist(
    devices=None,
    quick: bool = False,
    log_n: int = 16,
    limbs: int = 40,
    iters: int = 20,
    exchanges=None,
) -> dict:
    """All-gather and reduce-scatter of one polynomial of ``limbs`` limbs at N = 2^log_n over
    k = 2, 4, 8, ... and all devices of ``devices`` ("all" or None: every GPU; without a GPU the
    CPU devices cpu:0 and cpu:1), for each exchange ("nccl" where compiled in, "copy"). Times
    ``iters`` collectives queued back to back (mean ms each); bandwidth as nccl-tests reports it:
    algbw = S / t for a polynomial of S bytes, busbw = algbw (k - 1) / k (the bytes each device
    sends or receives over its link, comparable to the link's bandwidth). The reduce-scatter
    includes the reduction modulo each row's prime."""
    import numpy as np

    from . import dist, ring

    names = dist.device_set("all" if devices in (None, "auto") else devices)
    if len(names) < 2 and names[0].startswith("cpu"):
        names = ["cpu:0", "cpu:1"]
    if quick:
        log_n, limbs, iters = min(log_n, 12), min(limbs, 8), min(iters, 3)
    gpus = names[0].startswith("cuda")
    if exchanges is None:
        exchanges = (["nccl"] if gpus and dist.nccl_available() else []) + ["copy"]
    n = 1 << log_n
    _, basis = ring.make_ring(n, bits=50, count=limbs)
    rng = np.random.default_rng(0)
    q = np.array(basis.primes, dtype=np.uint64)[:, None]
    words = (rng.integers(0, 2**62, size=(limbs, n), dtype=np.uint64) % q).astype(np.uint64)
    size_bytes = limbs * n * 8
    ks = sorted({k for k in (2, 4, 8) if k <= len(names)} | {len(names)})
    rows = []
    for exchange in exchanges:
        for k in ks:
            if k > limbs:
                continue
            comm = dist.Communicator(names[:k], exchange=exchange)
            wholes = [ring.poly(basis, words, "eval", d) for d in comm.devices]
            parts = comm.reduce_scatter(wholes)
            outs = comm.all_gather(parts)
            for op, args in (("all_gather", (parts, outs)), ("reduce_scatter", (wholes, parts))):
                ms = _collective_ms(getattr(comm, op + "_into"), args, comm.synchronize, iters)
                algbw = size_bytes / (ms * 1e-3) / 1e9
                rows.append(
                    {
                        "op": op,
                        "exchange": comm.exchange,
                        "devices": k,
                        "ms": round(ms, 4),
                        "algbw_gb_s": round(algbw, 2),
                        "busbw_gb_s": round(algbw * (k - 1) / k, 2),
                    }
                )
    return {
        "benchmark": "dist",
        "devices": names,
        "device_name": _device_name(names[0]),
        "nccl_compiled": dist.nccl_available(),
        "log_n": log_n,
        "limbs": limbs,
        "poly_bytes": size_bytes,
        "iters": iters,
        "results": rows,
    }


def run_bench(
    what: str,
    device: str | None = None,
    quick: bool = False,
    prime_bits: int = 50,
    devices: str | list | None = None,
    circuit: str | None = None,
    function: str = "dot",
    params: str | None = None,
) -> dict:
    if what == "dist":
        return bench_dist(devices, quick)
    if what == "ntt":
        return bench_ntt(device, quick, prime_bits)
    if what == "ntt32":
        return bench_ntt32(device, quick)
    if what == "ckks":
        return bench_ckks(device, quick)
    if what == "ckks32":
        from .bench_ckks32 import bench_ckks32

        return bench_ckks32(device, quick)
    if what == "boot":
        return bench_boot(device, quick, params)
    if what in ("bfv", "bgv"):
        return bench_integer(what, device, quick)
    if what == "cggi":
        from .bench_cggi import bench_cggi

        return bench_cggi(device, quick)
    if what == "heaan":
        from .bench_heaan import bench_heaan

        return bench_heaan(device, quick, params)
    if what == "multi":
        from .bench_multi import bench_multi

        return bench_multi(devices or "all", quick)
    if what == "split":
        from .bench_multi import bench_split

        return bench_split(devices or "all", quick)
    if what == "circuit":
        from .bench_circuit import bench_circuit

        return bench_circuit(devices or "all", quick, circuit, function, params)
    raise ParameterError(
        f"unknown benchmark '{what}': available: ntt, ntt32, ckks, ckks32, boot, bfv, bgv, cggi, heaan, multi, "
        "split, dist, circuit"
    )
