"""FHE-DiNN's MNIST network (Bourse et al., 2018) with integer weights: the model, its plaintext
inference, and its encrypted inference the way FHE-DiNN does it, without the compiler: each
hidden neuron's weighted sum is a free linear combination of the encrypted pixels and its sign
is one programmable bootstrap.

The network: 784 binarized pixels (x = pixel >= 128) -> H hidden neurons, each reading K pixels
with weights +-1 (a sparse ternary layer), bias in [-16, 15], activation h = +1 if bit 4 of the
sum is 0 else -1 -> 10 scores sum_j v[c, j] h[j], v in [-3, 3] -> argmax.

Why bit 4: CGGI integers here have 4 bits of message and a padding bit, so a sum S lives on the
torus as S/32 mod 1, and the negacyclic bootstrap of a constant table returns +1 where
S mod 32 < 16 and -1 elsewhere: that is the sign of S while -16 <= S < 16 and, beyond, the sign
of S wrapped mod 32. The network is defined with that activation (bit 4 of S in two's
complement), so the plaintext model, the compiled C circuits and the encrypted evaluation agree
exactly on every input, and training keeps the sums mostly inside [-16, 16), where it is the
true sign. The 10 scores (up to +-3H) do not fit 4 bits either: the server returns each score
as partial sums of at most 7 units (each within [-7, 7], which decrypts exactly), and the client
adds them. FHE-DiNN's own parameters hold a whole score in one ciphertext; these partial sums
tell the client more than the scores would (see docs/applications.md)."""

from __future__ import annotations

import gzip
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ParameterError

PIXELS = 784
CLASSES = 10
THRESHOLD = 128  # pixel >= 128 is a 1
PARTIAL_BOUND = 7  # sum |v| of one partial score: it lies in [-7, 7], 15 of the 16 messages


def read_idx(path) -> np.ndarray:
    """An IDX file (gzipped or not): big-endian magic (0x08 = unsigned bytes, ndim), dims."""
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ParameterError(f"{path}: not an IDX file of unsigned bytes")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    body = np.frombuffer(data, np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise ParameterError(f"{path}: {body.size} bytes for dimensions {dims}")
    return body.reshape(dims)


def load_mnist(directory, split: str = "t10k") -> tuple:
    """(binarized images uint8 [n, 784], labels int64 [n]) of the IDX files in `directory`
    (split "train" or "t10k")."""
    d = Path(directory)
    images = read_idx(d / f"{split}-images-idx3-ubyte.gz").reshape(-1, PIXELS)
    labels = read_idx(d / f"{split}-labels-idx1-ubyte.gz").astype(np.int64)
    return binarize(images), labels


def binarize(images) -> np.ndarray:
    return (np.asarray(images).reshape(-1, PIXELS) >= THRESHOLD).astype(np.uint8)


def activation(s) -> np.ndarray:
    """+1 where bit 4 of the integer sum is 0, else -1 (the negacyclic sign, see above)."""
    return np.where((np.asarray(s, dtype=np.int64) & 16) == 0, 1, -1)


@dataclass
class Model:
    """idx [H, K] pixel indices, w [H, K] weights in {-1, 0, 1}, b [H] biases in [-16, 15],
    v [10, H] output weights in [-3, 3]."""

    idx: np.ndarray
    w: np.ndarray
    b: np.ndarray
    v: np.ndarray

    def __post_init__(self):
        self.idx = np.asarray(self.idx, dtype=np.int64)
        self.w = np.asarray(self.w, dtype=np.int64)
        self.b = np.asarray(self.b, dtype=np.int64)
        self.v = np.asarray(self.v, dtype=np.int64)
        h, k = self.idx.shape
        if (
            self.w.shape != (h, k)
            or self.b.shape != (h,)
            or self.v.shape != (CLASSES, h)
            or self.idx.min() < 0
            or self.idx.max() >= PIXELS
            or np.abs(self.w).max() > 1
            or self.b.min() < -16
            or self.b.max() > 15
            or np.abs(self.v).max() > 3
        ):
            raise ParameterError("malformed DiNN model (shapes or weight ranges)")

    @property
    def hidden(self) -> int:
        return self.idx.shape[0]

    @property
    def fan_in(self) -> int:
        return self.idx.shape[1]

    @classmethod
    def load(cls, path) -> Model:
        with np.load(path) as z:
            return cls(z["idx"], z["w"], z["b"], z["v"])

    def save(self, path, **extra) -> None:
        np.savez_compressed(
            path,
            idx=self.idx.astype(np.uint16),
            w=self.w.astype(np.int8),
            b=self.b.astype(np.int8),
            v=self.v.astype(np.int8),
            **extra,
        )

    def dense(self) -> np.ndarray:
        """The hidden weights as a dense [H, 784] matrix."""
        w = np.zeros((self.hidden, PIXELS), dtype=np.int64)
        np.add.at(w, (np.arange(self.hidden)[:, None], self.idx), self.w)
        return w

    def sums(self, x) -> np.ndarray:
        """Hidden pre-activations [n, H] of binarized images x [n, 784]."""
        x = np.asarray(x, dtype=np.float64).reshape(-1, PIXELS)
        # float64 products of 0/1 by small integers are exact (and use BLAS, unlike int64).
        return np.rint(x @ self.dense().T.astype(np.float64)).astype(np.int64) + self.b

    def scores(self, x) -> np.ndarray:
        return activation(self.sums(x)) @ self.v.T

    def predict(self, x) -> np.ndarray:
        """Classes [n]: the first index of the largest score (as the C programs do)."""
        return np.argmax(self.scores(x), axis=1)

    def partial_groups(self) -> list:
        """For each class, its hidden units with v != 0 packed into groups whose sum |v| is at
        most PARTIAL_BOUND: [(class, [(unit, v), ...]), ...]."""
        groups = []
        for c in range(CLASSES):
            cur, total = [], 0
            for j in np.nonzero(self.v[c])[0]:
                a = abs(int(self.v[c, j]))
                if total + a > PARTIAL_BOUND:
                    groups.append((c, cur))
                    cur, total = [], 0
                cur.append((int(j), int(self.v[c, j])))
                total += a
            if cur:
                groups.append((c, cur))
        return groups


def _pool(ctx, parts: list):
    """One Ints holding the parts one after the other. cggi.Context.concat takes Bits only, so
    the integer concatenation goes through the raw context."""
    from ..cggi import Ints

    raw = ctx._raw.concat([p._raw for p in parts])
    return Ints(ctx, raw, (raw.count,))


def encrypted_scores(ctx, ck, sk, model: Model, x, progress=None, batch: int = 16) -> tuple:
    """FHE-DiNN inference on binarized images x [n, 784]: the client encrypts the pixels
    (4-bit integers 0 or 1); the server evaluates (free linear combinations, one bootstrap per
    hidden neuron, free output sums); the client decrypts the partial scores and adds them.
    `batch` images go through the server together, so that one call bootstraps batch x H
    neurons (a GPU needs tens of thousands in flight); every operand is one gather (ctx.take)
    from a pool, so a batch costs about a hundred device calls. Returns (scores [n, 10],
    seconds {"encrypt", "server", "decrypt"}, bootstraps)."""
    x = np.asarray(x, dtype=np.int64).reshape(-1, PIXELS)
    if batch < 1:
        raise ParameterError("batch must be at least one image")
    h_units, k = model.idx.shape
    groups = model.partial_groups()
    width = max(len(g) for _, g in groups)
    # The hidden layer's pool: the batch's pixels x, their complements 1 - x, a trivial zero
    # and the trivial constants 0..31. Column `col` of neuron j reads x[idx] for w = +1,
    # (1 - x[idx]) - 1 for w = -1 and the zero for w = 0, so every term has coefficient +1; the
    # biases minus the -1's come from the constants.
    const = (model.b - (model.w < 0).sum(axis=1)) % 32
    # The output layer's pool: h * v for v = -3..3 (v = 0: the zero), then the zero again.
    factors = (-3, -2, -1, 1, 2, 3)
    scores = np.zeros((len(x), CLASSES), dtype=np.int64)
    secs = {"encrypt": 0.0, "server": 0.0, "decrypt": 0.0}
    for first in range(0, len(x), batch):
        images = x[first : first + batch]
        m = len(images)
        t0 = time.perf_counter()
        enc = ctx.encrypt_int(images.reshape(-1), ck, bits=4)  # the client's message
        t1 = time.perf_counter()
        zero = ctx.mul_scalar(enc[0], 0)
        consts = _pool(ctx, [ctx.add_scalar(zero, c) for c in range(32)])
        pool = _pool(ctx, [enc, ctx.add_scalar(ctx.mul_scalar(enc, -1), 1), zero, consts])
        zero_at, const_at = 2 * m * PIXELS, 2 * m * PIXELS + 1
        base = (np.arange(m) * PIXELS)[:, None]  # image i's pixels start at i * 784
        acc = ctx.take(pool, const_at + np.tile(const, m))
        for col in range(k):
            w, idx = model.w[:, col], model.idx[:, col]
            slot = np.where(w > 0, base + idx, np.where(w < 0, m * PIXELS + base + idx, zero_at))
            acc = ctx.add(acc, ctx.take(pool, slot.reshape(-1)))
        h = ctx.apply_lut(acc, [1] * 16, sk)  # +1 where S mod 32 < 16, else -1 (negacyclic)
        scaled = _pool(ctx, [ctx.mul_scalar(h, v) for v in factors] + [zero])
        blank = len(factors) * m * h_units
        partial = None
        for s in range(width):
            where = np.full((m, len(groups)), blank, dtype=np.int64)
            for g, (_, terms) in enumerate(groups):
                if s < len(terms):
                    unit, v = terms[s]
                    where[:, g] = factors.index(v) * m * h_units + np.arange(m) * h_units + unit
            t = ctx.take(scaled, where.reshape(-1))
            partial = t if partial is None else ctx.add(partial, t)
        t2 = time.perf_counter()
        # Client: each partial score is in [-7, 7]; decryption gives it mod 16.
        got = ctx.decrypt_int(partial, ck).reshape(m, len(groups))
        got = np.where(got >= 8, got - 16, got)
        for j, (c, _) in enumerate(groups):
            scores[first : first + m, c] += got[:, j]
        t3 = time.perf_counter()
        secs["encrypt"] += t1 - t0
        secs["server"] += t2 - t1
        secs["decrypt"] += t3 - t2
        if progress:
            progress(first + m, len(x))
    return scores, secs, h_units * len(x)


__all__ = [
    "CLASSES",
    "PIXELS",
    "Model",
    "activation",
    "binarize",
    "encrypted_scores",
    "load_mnist",
    "read_idx",
]
