"""``ember bench heaan``: big-integer CKKS's HE Mul and HRot (a rotation by one slot: two
automorphisms and a key switch) with the time of each phase (CRT, NTT, iNTT, iCRT, other; Jung et
al.'s Table 7), encoding and decryption (numpy values, and CUDA tensors on a GPU) and, in the same
run, RNS CKKS's multiply at the same N and log Q (a JSON-ready dictionary, never a test
condition)."""

from __future__ import annotations

import time
import warnings

import numpy as np

from . import _ember, _ember_bench, heaan, resolve_device
from .errors import SecurityWarning

# Jung et al. (the seed paper), N = 2^16, log Q = 1200: HE Mul on one GPU and on CPUs, ms.
PAPER = {
    "titan_rtx_ms": 38.1,
    "titan_rtx_phases_ms": {"crt": 4.1, "ntt": 3.7, "intt": 4.7, "icrt": 19.4, "other": 6.2},
    "v100_ms": 33.7,
    "v100x4_speedup": 2.02,
    "xeon_24_cores_ms": 74.8,
}


def _median(values):
    return sorted(values)[len(values) // 2]


def _wait(devices) -> None:
    """Waits for the work queued on each device (the timings' end: the result is ready there)."""
    for d in devices:
        _ember.synchronize(d)


def _bench_rotation(ctx, sk, ct, values, runs: int) -> dict:
    """HRot by one slot (its own key) on a fresh ciphertext: seconds, phases, the key's
    generation and the decrypted error against numpy's roll."""
    t0 = time.perf_counter()
    ctx.set_rotation_keys(ctx.rotation_keys(sk, rotations=[1]))
    key_s = time.perf_counter() - t0
    ctx.rotate(ct, 1)  # warm-up: the automorphism's first launch, the memory pool
    times, phases = [], []
    for _ in range(runs):
        t = time.perf_counter()
        rot = ctx.rotate(ct, 1)
        _wait([ctx.device])
        times.append(time.perf_counter() - t)
    for _ in range(runs):
        phases.append(ctx.rotate_phases(ct, 1)[1])
    err = float(np.max(np.abs(ctx.decrypt(rot, sk) - np.roll(values, -1))))
    return {
        "rotation_keygen_s": round(key_s, 3),
        "hrot_ms": round(_median(times) * 1e3, 3),
        "hrot_phases_ms": {k: round(_median([p[k] for p in phases]) * 1e3, 3) for k in phases[0]},
        "hrot_max_error": err,
        "hrot_correct": err < 2.0**-10,
    }


def _bench_encoding(ctx, sk, ct, values, runs: int) -> dict:
    """encode and decrypt of every slot: numpy values (staged through the device), and on a GPU
    context a CUDA torch tensor read and written in place (when torch is installed)."""

    def timed(f):
        f()  # warm-up
        out = []
        for _ in range(runs):
            t = time.perf_counter()
            f()
            out.append(time.perf_counter() - t)
        return round(_median(out) * 1e3, 3)

    result = {
        "encode_numpy_ms": timed(lambda: ctx.encode(values)),  # ends with a synchronization
        "decrypt_numpy_ms": timed(lambda: ctx.decrypt(ct, sk)),
    }
    if ctx._cuda_index is not None:
        try:
            import torch
        except ImportError:
            return result
        tensor = torch.as_tensor(values, device=ctx.device)
        sync = torch.cuda.synchronize
        result["encode_cuda_tensor_ms"] = timed(lambda: (ctx.encode(tensor), sync()))
        result["decrypt_to_cuda_tensor_ms"] = timed(
            lambda: (ctx.decrypt(ct, sk, like=tensor), sync())
        )
        same = ctx.decrypt(ct, sk, like=tensor).cpu().numpy()
        result["device_decrypt_equals_host"] = bool(np.array_equal(same, ctx.decrypt(ct, sk)))
    return result


def bench_heaan(device: str | None = None, quick: bool = False, preset: str | None = None) -> dict:
    dev = resolve_device(device)
    cuda = dev.startswith("cuda")
    name = preset or ("N16_logQ1200" if cuda and not quick else "N14_logQ300")
    with warnings.catch_warnings():  # the paper's sets are about 80-bit: benchmark only
        warnings.simplefilter("ignore", SecurityWarning)
        params = heaan.Params.preset(name, insecure=True)
    runs = 10 if cuda else 3
    t0 = time.perf_counter()
    ctx = heaan.Context(params, device=dev)
    sk = ctx.keygen()
    ctx.set_relin_key(ctx.relin_key(sk))
    keygen_s = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, ctx.slots), rng.uniform(-1, 1, ctx.slots)
    a, b = ctx.encrypt(x, sk), ctx.encrypt(y, sk)
    ctx.multiply(a, b, rescale=False)  # warm-up: tables, transforms, memory pool
    times, phases = [], []
    for _ in range(runs):
        t = time.perf_counter()
        prod = ctx.multiply(a, b, rescale=False)
        _wait([dev])
        times.append(time.perf_counter() - t)
    for _ in range(runs):
        phases.append(ctx.multiply_phases(a, b)[1])
    err = float(np.max(np.abs(ctx.decrypt(prod.rescale(), sk) - x * y)))
    hrot = _bench_rotation(ctx, sk, a, x, runs)
    encoding = _bench_encoding(ctx, sk, a, x, runs)
    # The same HE Mul spread over 2 and 4 GPUs (Jung et al.'s placement of the four products).
    gpus = [f"cuda:{g.index}" for g in _ember.cuda_devices()] if cuda else []
    spread = {}
    for count in (2, 4):
        if len(gpus) < count:
            continue
        devs = [dev] + [g for g in gpus if g != dev][: count - 1]
        same = ctx.multiply(a, b, rescale=False, devices=devs)  # warm-up: key copies, tables
        same_words = bool(
            np.array_equal(same._raw.c0.to_numpy(), prod._raw.c0.to_numpy())
            and np.array_equal(same._raw.c1.to_numpy(), prod._raw.c1.to_numpy())
        )
        t_spread = []
        for _ in range(runs):
            t = time.perf_counter()
            ctx.multiply(a, b, rescale=False, devices=devs)
            _wait(devs)
            t_spread.append(time.perf_counter() - t)
        spread[str(count)] = {
            "he_mul_ms": round(_median(t_spread) * 1e3, 3),
            "same_words_as_one_gpu": same_words,
        }
    # RNS CKKS in the same run: the same N and log Q (a 60-bit prime and 30-bit ones), one special
    # prime group per digit as the CKKS benchmark's largest set.
    q_bits = [60] + [30] * ((params.log_q - 60) // 30)
    rns = _ember_bench.bench_ckks(
        params.log_n, q_bits, [60] * 4, len(q_bits) // 4 + 1, dev, 3 if cuda else 1, runs
    )
    return {
        "benchmark": "heaan",
        "date": time.strftime("%Y-%m-%d"),
        "device": dev,
        "preset": name,
        "log_n": params.log_n,
        "log_q": params.log_q,
        "log_p": params.log_p,
        "tensor_primes": ctx._raw.tensor_primes(params.log_q),
        "relin_primes": ctx._raw.relin_primes,
        "keygen_s": round(keygen_s, 3),
        "he_mul_ms": round(_median(times) * 1e3, 3),
        "he_mul_phases_ms": {k: round(_median([p[k] for p in phases]) * 1e3, 3) for k in phases[0]},
        "max_error_after_rescale": err,
        **hrot,
        "encoding": encoding,
        "spread_over_gpus": spread,
        "rns_ckks_same_n_logq": {
            "q_bits": sum(q_bits),
            "multiply_relin_ms": rns["multiply_relin_ms"],
            "multiply_relin_rescale_ms": rns["multiply_relin_rescale_ms"],
        },
        "paper": PAPER,
    }
