"""Benchmarks behind ``ember bench``: JSON-ready dictionaries, never used as test conditions."""

from __future__ import annotations

import platform
import time

from . import _ember, devices, resolve_device
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
    copy_gbps = _ember.copy_bandwidth(dev, 512 if cuda else 64, 20 if cuda else 3)
    warmup, iters = (5, 50) if cuda else (1, 3)
    rows = []
    for log_n in log_ns:
        for limbs in limbs_list:
            for r in _ember.bench_ntt(log_n, limbs, dev, variants, prime_bits, warmup, iters):
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
    copy_gbps = _ember.copy_bandwidth(dev, 512 if cuda else 64, 20 if cuda else 3)
    rows = []
    for name, log_n, q_bits, p_bits, dnum in sets:
        r = _ember.bench_ckks(log_n, q_bits, p_bits, dnum, dev, 3 if cuda else 1, 20 if cuda else 3)
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
        r = _ember.bench_integer(
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


def run_bench(what: str, device: str | None = None, quick: bool = False) -> dict:
    if what == "ntt":
        return bench_ntt(device, quick)
    if what == "ckks":
        return bench_ckks(device, quick)
    if what in ("bfv", "bgv"):
        return bench_integer(what, device, quick)
    raise ParameterError(f"unknown benchmark '{what}': available: ntt, ckks, bfv, bgv")
