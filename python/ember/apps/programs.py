"""The shipped applications (examples/circuits/*.c): which function of which file, a meaningful
input set for each, what it must give, and the published figures to compare with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import ciphers

# ARCTYREX (four to eight A100s, the TFHE library's parameters) and its peers, as published.
ARCTYREX = "ARCTYREX, A100"


@dataclass(frozen=True)
class App:
    """A C function to compile and run encrypted.

    ci: small enough for CI (compiled in well under a minute, a few thousand bootstraps);
    the others are for the benchmark. example(rng) -> (inputs, expected outputs or None): one
    meaningful input set and, where an independent reference exists, what the outputs must be."""

    name: str
    source: str
    function: str
    summary: str
    ci: bool = False
    paper: dict = field(default_factory=dict)
    example: Callable | None = None


def _aes_example(rng):
    key = bytes(rng.integers(0, 256, 16, dtype=np.uint8))
    pt = bytes(rng.integers(0, 256, 16, dtype=np.uint8))
    rk = ciphers.aes128_expand_key(key)
    ct = ciphers.aes128_encrypt_block(rk, pt)
    return {"rk": list(rk), "in": list(ct)}, {"out": list(pt)}


def _sbox_example(rng):
    v = rng.integers(0, 256, 4)
    return {"in": v}, {"out": [ciphers.INV_SBOX[int(i)] for i in v]}


def _u64(v) -> np.ndarray:
    return np.array([int(x) for x in v], dtype=np.uint64)


def _simon_example(rng):
    k1, k0, x, y = (int(v) for v in rng.integers(0, 2**63, 4, dtype=np.uint64) * 2 + 1)
    rk = ciphers.simon128_expand_key(k1, k0)
    cx, cy = ciphers.simon128_encrypt(rk, x, y)
    return {"rk": _u64(rk), "ct": _u64([cx, cy])}, {"pt": _u64([x, y])}


def _speck_example(rng):
    k1, k0, x, y = (int(v) for v in rng.integers(0, 2**63, 4, dtype=np.uint64) * 2 + 1)
    rk = ciphers.speck128_expand_key(k1, k0)
    cx, cy = ciphers.speck128_encrypt(rk, x, y)
    return {"rk": _u64(rk), "ct": _u64([cx, cy])}, {"pt": _u64([x, y])}


def _round_example(encrypt):
    def example(rng):
        x, y, k = (int(v) for v in rng.integers(0, 2**63, 3, dtype=np.uint64) * 2 + 1)
        # The circuit undoes one round: encrypting (x, y) with round key k gives its input.
        cx, cy = encrypt([k], x, y)
        return {"in": _u64([cx, cy]), "k": k}, {"out": _u64([x, y])}

    return example


def _logreg_example(frac: int):
    """Features in [-1, 1], weights in [-1/2, 1/2], bias in [-1/4, 1/4] (Q.frac): |z| <= 2.25,
    where the truncated series is still close to the sigmoid."""

    def example(rng):
        one = 1 << frac
        x = rng.integers(-one, one + 1, 4)
        w = rng.integers(-one // 2, one // 2 + 1, 4)
        b = int(rng.integers(-one // 4, one // 4 + 1))
        return {"x": x, "w": w, "b": b}, None

    return example


def _vector(n: int, lo: int, hi: int, names=("a", "b")):
    def example(rng):
        return {k: rng.integers(lo, hi, n) for k in names}, None

    return example


def _mnist_example(encrypted_weights: bool, hidden8: bool):
    """A test image (and the model's weights where they are parameters); the expected output is
    the numpy model's class (or its first 8 hidden activations)."""

    def example(rng):
        from .dinn import activation
        from .flows import mnist_model, mnist_test_images

        model = mnist_model()
        x, _ = mnist_test_images()
        img = x[int(rng.integers(0, len(x)))]
        h = 8 if hidden8 else model.hidden
        inputs = {"x": img}
        if encrypted_weights:
            inputs.update(neg=(model.w[:h] < 0).astype(np.int64), bias=model.b[:h])
            if not hidden8:
                inputs["v"] = model.v
        if hidden8:
            return inputs, {"h": (activation(model.sums(img)[0, :8]) > 0).astype(np.int64)}
        return inputs, {"return": int(model.predict(img)[0])}

    return example


APPS = {
    a.name: a
    for a in [
        App(
            "add32",
            "add32.c",
            "add32",
            "32-bit addition",
            ci=True,
            paper={ARCTYREX: {"seconds_1": 1.70}},
        ),
        App(
            "mul32",
            "mul32.c",
            "mul32",
            "32-bit multiplication",
            ci=True,
            paper={ARCTYREX: {"seconds_1": 2.83}},
        ),
        App(
            "dot8",
            "dot8.c",
            "dot8",
            "16-bit dot product, length 8 (dot500's piece for CI)",
            ci=True,
            example=_vector(8, -1000, 1000),
        ),
        App(
            "dot500",
            "dot500.c",
            "dot500",
            "16-bit dot product, length 500",
            paper={ARCTYREX: {"seconds_8": 14.8, "gates": 922_308, "depth": 128}},
            example=_vector(500, -1000, 1000),
        ),
        App(
            "matvec",
            "matvec.c",
            "matvec",
            "125-vector times 125x4 matrix, 16-bit",
            example=lambda rng: (
                {"v": rng.integers(-100, 100, 125), "m": rng.integers(-100, 100, (125, 4))},
                None,
            ),
        ),
        App(
            "matmul2",
            "matmul2.c",
            "matmul2",
            "2x2 matrix product, 16-bit (matmul10's loops at a small size)",
        ),
        App(
            "matmul10",
            "matmul10.c",
            "matmul10",
            "10x10 matrix product, 16-bit",
            example=lambda rng: (
                {"a": rng.integers(-100, 100, (10, 10)), "b": rng.integers(-100, 100, (10, 10))},
                None,
            ),
        ),
        App(
            "vadd500",
            "vadd500.c",
            "vadd500",
            "vector addition, 500 x 32-bit",
        ),
        App(
            "logreg_small",
            "logreg_small.c",
            "logreg_small",
            "logistic regression, 4 features, 32-bit, 4 terms (returns ~80640 sigmoid)",
            ci=True,
            example=_logreg_example(8),
        ),
        App(
            "logreg_large",
            "logreg_large.c",
            "logreg_large",
            "logistic regression, 4 features, 64-bit, 6 terms (returns ~1451520 sigmoid)",
            example=_logreg_example(16),
        ),
        App(
            "aes_sbox4",
            "aes128_dec.c",
            "aes_inv_sbox4",
            "four AES inverse S-box lookups at encrypted indices",
            ci=True,
            example=_sbox_example,
        ),
        App(
            "aes_round",
            "aes128_dec.c",
            "aes_inv_round",
            "one middle round of AES-128 decryption",
        ),
        App(
            "aes128",
            "aes128_dec.c",
            "aes128_decrypt",
            "AES-128 decryption of one block from encrypted round keys",
            paper={
                ARCTYREX: {"seconds_1": 45.0, "seconds_2": 30.0},
                "Google transpiler": {"seconds_1": 243.0},
                "Fregata": {"seconds_1": 9.0},
            },
            example=_aes_example,
        ),
        App(
            "simon_round",
            "simon128.c",
            "simon128_dec_round",
            "one Simon 128/128 round (decryption)",
            ci=True,
            paper={ARCTYREX: {"seconds_1": 0.21}},
            example=_round_example(ciphers.simon128_encrypt),
        ),
        App(
            "simon128",
            "simon128.c",
            "simon128_decrypt",
            "Simon 128/128 decryption, 68 rounds",
            example=_simon_example,
        ),
        App(
            "speck_round",
            "speck128.c",
            "speck128_dec_round",
            "one Speck 128/128 round (decryption)",
            ci=True,
            paper={ARCTYREX: {"seconds_1": 0.59}},
            example=_round_example(ciphers.speck128_encrypt),
        ),
        App(
            "speck128",
            "speck128.c",
            "speck128_decrypt",
            "Speck 128/128 decryption, 32 rounds",
            example=_speck_example,
        ),
        App(
            "mnist_plain8",
            "mnist_dinn.c",
            "mnist_dinn_hidden8",
            "MNIST network, weights compiled in: its first 8 hidden neurons (for CI)",
            ci=True,
            example=_mnist_example(False, True),
        ),
        App(
            "mnist_plain",
            "mnist_dinn.c",
            "mnist_dinn",
            "MNIST network (FHE-DiNN style), weights compiled in",
            example=_mnist_example(False, False),
        ),
        App(
            "mnist_enc8",
            "mnist_dinn_enc.c",
            "mnist_dinn_enc_hidden8",
            "MNIST network, weights encrypted: its first 8 hidden neurons (for CI)",
            ci=True,
            example=_mnist_example(True, True),
        ),
        App(
            "mnist_enc",
            "mnist_dinn_enc.c",
            "mnist_dinn_enc",
            "MNIST network (FHE-DiNN style), weights as encrypted parameters (ARCTYREX's way)",
            example=_mnist_example(True, False),
        ),
    ]
}


__all__ = ["APPS", "App"]
