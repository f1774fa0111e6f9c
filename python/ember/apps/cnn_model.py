"""HE-Booster's MNIST CNN in plaintext: the layer geometry, the integer (quantized) model that
the encrypted network computes exactly, and the worst-case bound of every intermediate.

The network: the 28x28 image padded to 29x29 (a zero row and column at the bottom and right),
5 filters of 5x5 at stride 2 (5 x 13 x 13 = 845 outputs, filter-major), square, dense 845 -> 100,
square, dense 100 -> 10. With integer pixels x (0..pixel_max), integer weights and biases scaled
consistently through the squares (bias of layer k = round(b_k * S_k), S_1 = Sx Sw1,
S_2 = S_1^2 Sw2, S_3 = S_2^2 Sw3), every layer is an exact integer computation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..errors import ParameterError
from .dinn import PIXELS, read_idx

SIDE = 28
PADDED = 29
KERNEL = 5
STRIDE = 2
FILTERS = 5
OUT_SIDE = (PADDED - KERNEL) // STRIDE + 1  # 13
POSITIONS = OUT_SIDE * OUT_SIDE  # 169
CONV_OUT = FILTERS * POSITIONS  # 845
HIDDEN = 100
CLASSES = 10


def patch_index() -> np.ndarray:
    """[169, 25] pixel indices (0..783) of each output position's 5x5 window; the padding
    (row or column 28) is index 784, a zero."""
    idx = np.empty((POSITIONS, KERNEL * KERNEL), dtype=np.int64)
    for r in range(OUT_SIDE):
        for c in range(OUT_SIDE):
            for i in range(KERNEL):
                for j in range(KERNEL):
                    y, x = STRIDE * r + i, STRIDE * c + j
                    idx[r * OUT_SIDE + c, i * KERNEL + j] = (
                        y * SIDE + x if y < SIDE and x < SIDE else PIXELS
                    )
    return idx


def conv_matrix(conv_w: np.ndarray) -> np.ndarray:
    """The convolution as a dense [845, 784] matrix (row f*169 + p reads window p with filter
    f; the padding's columns are dropped since they multiply zeros)."""
    idx = patch_index()
    m = np.zeros((CONV_OUT, PIXELS + 1), dtype=conv_w.dtype)
    for f in range(FILTERS):
        rows = f * POSITIONS + np.arange(POSITIONS)
        m[rows[:, None], idx] = conv_w[f][None, :]
    return m[:, :PIXELS]


def load_images(directory, split: str = "t10k") -> tuple:
    """(grey images uint8 [n, 784], labels int64 [n]) of the MNIST IDX files in `directory`
    (split "train" or "t10k")."""
    d = Path(directory)
    if not (d / f"{split}-images-idx3-ubyte.gz").exists():
        raise ParameterError(
            f"no MNIST files in {d}: pass the folder holding {split}-images-idx3-ubyte.gz "
            "(or set $EMBER_MNIST)"
        )
    images = read_idx(d / f"{split}-images-idx3-ubyte.gz").reshape(-1, PIXELS)
    labels = read_idx(d / f"{split}-labels-idx1-ubyte.gz").astype(np.int64)
    return images, labels


@dataclass
class QuantModel:
    """The integer network: pixels in 0..pixel_max (pixel_max = 255 >> pixel_shift);
    conv_w [5, 25], conv_b [5], dense1_w [100, 845], dense1_b [100], dense2_w [10, 100],
    dense2_b [10], all integers (the biases already at their layer's scale)."""

    pixel_shift: int
    conv_w: np.ndarray
    conv_b: np.ndarray
    dense1_w: np.ndarray
    dense1_b: np.ndarray
    dense2_w: np.ndarray
    dense2_b: np.ndarray

    _SHAPES: ClassVar[dict] = {
        "conv_w": (FILTERS, KERNEL * KERNEL),
        "conv_b": (FILTERS,),
        "dense1_w": (HIDDEN, CONV_OUT),
        "dense1_b": (HIDDEN,),
        "dense2_w": (CLASSES, HIDDEN),
        "dense2_b": (CLASSES,),
    }

    def __post_init__(self):
        self.pixel_shift = int(self.pixel_shift)
        if not 0 <= self.pixel_shift <= 7:
            raise ParameterError(f"pixel_shift={self.pixel_shift}: use 0..7")
        for name, shape in self._SHAPES.items():
            v = np.asarray(getattr(self, name))
            if v.shape != shape or v.dtype.kind not in "iuO":
                raise ParameterError(f"malformed CNN model: {name} must be integers of {shape}")
            setattr(self, name, v.astype(object) if v.dtype == object else v.astype(np.int64))

    @property
    def pixel_max(self) -> int:
        return 255 >> self.pixel_shift

    @classmethod
    def load(cls, path) -> QuantModel:
        with np.load(path, allow_pickle=False) as z:
            big = {k: _from_words(z, k) for k in ("dense2_b",)}
            return cls(
                int(z["pixel_shift"]),
                z["conv_w"],
                z["conv_b"],
                z["dense1_w"],
                z["dense1_b"],
                z["dense2_w"],
                big["dense2_b"],
            )

    def save(self, path, **extra) -> None:
        np.savez_compressed(
            path,
            pixel_shift=np.int64(self.pixel_shift),
            conv_w=self.conv_w.astype(np.int16),
            conv_b=self.conv_b.astype(np.int64),
            dense1_w=self.dense1_w.astype(np.int16),
            dense1_b=self.dense1_b.astype(np.int64),
            dense2_w=self.dense2_w.astype(np.int16),
            **_to_words("dense2_b", self.dense2_b),
            **extra,
        )

    def pixels(self, images) -> np.ndarray:
        """Grey images [n, 784] (0..255) -> the network's integer inputs."""
        return np.asarray(images, dtype=np.int64).reshape(-1, PIXELS) >> self.pixel_shift

    def conv_matrix(self) -> np.ndarray:
        return conv_matrix(self.conv_w)

    def layers(self, x) -> dict:
        """Every intermediate of integer inputs x [n, 784], exactly (Python integers where
        int64 could overflow): conv, conv_sq, dense1, dense1_sq, scores."""
        x = np.asarray(x, dtype=np.int64).reshape(-1, PIXELS)
        conv = x @ self.conv_matrix().T + np.repeat(self.conv_b, POSITIONS)
        conv_sq = conv * conv
        dense1 = conv_sq @ self.dense1_w.T + self.dense1_b  # below 2^62 (checked by bounds)
        dense1_sq = dense1.astype(object) ** 2
        scores = dense1_sq.dot(self.dense2_w.T.astype(object)) + self.dense2_b.astype(object)
        return {
            "conv": conv,
            "conv_sq": conv_sq,
            "dense1": dense1,
            "dense1_sq": dense1_sq,
            "scores": scores,
        }

    def scores(self, x) -> np.ndarray:
        return self.layers(x)["scores"]

    def predict(self, x) -> np.ndarray:
        s = self.scores(x)
        return np.array([int(np.argmax(row)) for row in s.tolist()], dtype=np.int64)

    def bounds(self) -> dict:
        """The worst-case |value| of every intermediate over all inputs in 0..pixel_max (exact
        Python integers): a weighted sum's bound is sum |w| * (the largest |input|) + |b|;
        its square's is the bound squared. Inputs are non-negative, so the conv bound takes the
        positive and negative weights separately."""
        p = self.pixel_max
        cw = self.conv_w.astype(object)
        pos = np.where(cw > 0, cw, 0).sum(axis=1) * p
        neg = np.where(cw < 0, -cw, 0).sum(axis=1) * p
        conv = [
            max(abs(int(pos[f]) + int(b)), abs(-int(neg[f]) + int(b)))
            for f, b in enumerate(self.conv_b.tolist())
        ]
        conv_sq = max(conv) ** 2
        # dense1 reads squares (>= 0): again the positive and negative parts separately.
        sq = [c * c for c in conv for _ in range(POSITIONS)]
        rows = self.dense1_w.tolist()
        d1_pos = [sum(int(w) * s for w, s in zip(row, sq) if w > 0) for row in rows]
        d1_neg = [sum(-int(w) * s for w, s in zip(row, sq) if w < 0) for row in rows]
        dense1 = [
            max(abs(a + int(b)), abs(-n + int(b)))
            for a, n, b in zip(d1_pos, d1_neg, self.dense1_b.tolist())
        ]
        dense1_sq = max(dense1) ** 2
        sq1 = [d * d for d in dense1]
        scores = []
        for row, b in zip(self.dense2_w.tolist(), self.dense2_b.tolist()):
            a = sum(int(w) * s for w, s in zip(row, sq1) if w > 0)
            n = sum(-int(w) * s for w, s in zip(row, sq1) if w < 0)
            scores.append(max(abs(a + int(b)), abs(-n + int(b))))
        return {
            "conv": max(conv),
            "conv_sq": conv_sq,
            "dense1": max(dense1),
            "dense1_sq": dense1_sq,
            "scores": max(scores),
            "largest": max(max(conv), conv_sq, max(dense1), dense1_sq, max(scores)),
        }


def _to_words(name: str, values) -> dict:
    """Integers of any size as (sign, 62-bit words) arrays for an npz (no pickles)."""
    vals = [int(v) for v in np.asarray(values, dtype=object).tolist()]
    width = max(1, max((abs(v).bit_length() + 61) // 62 for v in vals))
    words = np.array(
        [[(abs(v) >> (62 * k)) & ((1 << 62) - 1) for k in range(width)] for v in vals],
        dtype=np.int64,
    )
    return {f"{name}_sign": np.array([v < 0 for v in vals]), f"{name}_words": words}


def _from_words(z, name: str) -> np.ndarray:
    sign, words = z[f"{name}_sign"], z[f"{name}_words"]
    vals = []
    for s, row in zip(sign.tolist(), words.tolist()):
        v = sum(int(w) << (62 * k) for k, w in enumerate(row))
        vals.append(-v if s else v)
    return np.array(vals, dtype=object)


__all__ = [
    "CLASSES",
    "CONV_OUT",
    "HIDDEN",
    "POSITIONS",
    "QuantModel",
    "conv_matrix",
    "load_images",
    "patch_index",
]
