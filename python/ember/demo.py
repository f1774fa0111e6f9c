"""The flagship demo: encrypted inference of a logistic model with CKKS, on the GPU when present.

Encrypts 8192 feature values under the 128-bit-secure preset N14_L8, evaluates
sigmoid(w x + b) slot-wise on the ciphertext (a Chebyshev approximation), decrypts and compares
with numpy. On a GPU it then repeats the computation on the CPU with the same randomness and
checks that both devices produced bit-identical ciphertexts.
"""

from __future__ import annotations

import time

import numpy as np

from . import _ember, backends, ckks, resolve_device, ring
from .polyeval import chebyshev_coefficients

W, B, DEGREE, INTERVAL = 2.0, -0.5, 7, (-3.0, 3.0)


def _run(device: str, x: np.ndarray, key: bytes | None):
    ctx = ckks.Context("N14_L8", device=device)
    if key is not None:
        ctx._sampler = ring.Sampler(key)  # same randomness on both devices (demo check only)
    t0 = time.perf_counter()
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk))
    t1 = time.perf_counter()
    coeffs = chebyshev_coefficients(lambda t: 1 / (1 + np.exp(-t)), DEGREE, INTERVAL)
    ct = ctx.encrypt(x, pk)
    y = ctx.poly_eval(ct * W + B, coeffs, interval=INTERVAL)
    out = ctx.decrypt(y, sk)
    t2 = time.perf_counter()
    words = [y._raw.poly(i).to_numpy() for i in range(y._raw.size)]
    return ctx, out, words, t1 - t0, t2 - t1


def _no_gpu() -> str:
    """Why the demo ran on the CPU."""
    if not _ember.cuda_compiled():
        return "this build has no CUDA backend: reinstall with EMBER_CUDA=ON on a CUDA machine"
    if not _ember.cuda_devices():
        return "no GPU is visible"
    return "a CPU device was asked for: run `ember demo --device cuda`"


def main(device: str | None = None) -> int:
    dev = resolve_device(device)
    x = np.random.default_rng(7).uniform(-1, 1, 8192)
    key = bytes(range(32)) if dev != "cpu" else None
    print(
        f"Ember demo: encrypted sigmoid(w x + b) with CKKS, preset N14_L8 (128-bit), "
        f"device={dev} (backends: {', '.join(backends())})"
    )
    _ctx, out, words, t_keys, t_eval = _run(dev, x, key)
    expected = 1 / (1 + np.exp(-(W * x + B)))
    err = float(np.max(np.abs(out - expected)))
    ok = err < 5e-2
    print(
        f"  keys {t_keys * 1e3:.0f} ms; encrypt + evaluate (degree {DEGREE}) + decrypt "
        f"{t_eval * 1e3:.0f} ms on {dev}"
    )
    print(
        f"  max |decrypted - numpy| = {err:.2e} (approximation error of the degree-{DEGREE} "
        f"polynomial included)"
    )
    if dev != "cpu":
        _, _, words_cpu, _, t_cpu = _run("cpu", x, key)
        same = all(np.array_equal(a, b) for a, b in zip(words, words_cpu))
        print(f"  same on cpu: {t_cpu * 1e3:.0f} ms, ciphertexts bit-identical: {same}")
        ok = ok and same
    else:
        print(f"  skipped: the GPU run and its bit-identity check against the CPU ({_no_gpu()})")
    print("demo OK" if ok else "demo FAILED")
    return 0 if ok else 1
