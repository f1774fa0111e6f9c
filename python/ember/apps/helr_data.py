"""HELR's data and its plaintext reference: MNIST 3 versus 8 pooled to a few features, the
mini-batches, the least-squares polynomial sigmoid, the Nesterov schedule and the numpy training
that the encrypted run is checked against (see docs/helr.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from .dinn import read_idx

SIDE = 28  # MNIST images are 28 x 28
POSITIVE, NEGATIVE = 8, 3  # label 1: the digit 8; label 0 (y = -1 in z = y x): the digit 3
SIGMOID_INTERVAL = 8.0  # the sigmoid is fitted on [-8, 8] (HELR, Kim et al.)


def load_digits(directory, split: str, features: int = 196) -> tuple:
    """(x [n, features + 1], labels [n] in {0, 1}) of the 3s and 8s of an MNIST split ("train"
    or "t10k"): each image average-pooled to sqrt(features) x sqrt(features) pixels, scaled to
    [0, 1], with the bias feature 1 first. `features` must be the square of a divisor of 28
    (196 = 14 x 14, 49 = 7 x 7, 16 = 4 x 4)."""
    side = math.isqrt(features)
    if side * side != features or side < 1 or SIDE % side:
        raise ParameterError(
            f"features={features}: use the square of a divisor of 28 (784, 196, 49, 16, 4, 1)"
        )
    from pathlib import Path

    d = Path(directory)
    images = read_idx(d / f"{split}-images-idx3-ubyte.gz").reshape(-1, SIDE, SIDE)
    labels = read_idx(d / f"{split}-labels-idx1-ubyte.gz").astype(np.int64)
    keep = (labels == POSITIVE) | (labels == NEGATIVE)
    pool = SIDE // side
    pooled = images[keep].reshape(-1, side, pool, side, pool).mean(axis=(2, 4)) / 255.0
    x = np.concatenate([np.ones((pooled.shape[0], 1)), pooled.reshape(-1, features)], axis=1)
    return x, (labels[keep] == POSITIVE).astype(np.int64)


def signed_samples(x, labels) -> np.ndarray:
    """HELR's z_i = y_i x_i with y = +1 for label 1 and -1 for label 0: the log-likelihood's
    gradient is then sum_i sigmoid(-z_i . w) z_i."""
    return np.asarray(x, dtype=np.float64) * np.where(np.asarray(labels) == 1, 1.0, -1.0)[:, None]


def mini_batches(z, batch: int, seed: int) -> list:
    """The training set shuffled once (seeded) and cut into len(z) // batch mini-batches of
    `batch` samples each (the remainder is dropped); iteration t uses batch t mod count."""
    if not 1 <= batch <= len(z):
        raise ParameterError(f"batch={batch} must be in [1, {len(z)}] (the training samples)")
    order = np.random.default_rng(seed).permutation(len(z))
    return [z[order[i * batch : (i + 1) * batch]] for i in range(len(z) // batch)]


def sigmoid_fit(degree: int = 3, interval: float = SIGMOID_INTERVAL) -> np.ndarray:
    """Power-basis coefficients of the least-squares polynomial of the given odd degree fitting
    sigmoid(-x) on [-interval, interval] (uniform weight; degree 3 gives 0.5 - 0.15012 x +
    0.0015930 x^3, Kim et al.'s sigma_3 that HELR uses). The even coefficients besides the
    constant 1/2 are zero: sigmoid(-x) - 1/2 is odd."""
    if degree not in (3, 5, 7):
        raise ParameterError(f"the sigmoid's degree must be 3, 5 or 7, got {degree}")
    grid = np.linspace(-interval, interval, 20001)
    odd = np.stack([grid**k for k in range(1, degree + 1, 2)], axis=1)
    target = 1.0 / (1.0 + np.exp(grid)) - 0.5
    odd_coeffs = np.linalg.lstsq(odd, target, rcond=None)[0]
    coeffs = np.zeros(degree + 1)
    coeffs[0] = 0.5
    coeffs[1::2] = odd_coeffs
    return coeffs


def nesterov_weights(iterations: int) -> list:
    """eta_t of v_(t+1) = (1 - eta_t) w_(t+1) + eta_t w_t (Nesterov's accelerated gradient as
    in HELR): eta_t = (1 - lambda_t) / lambda_(t+1), lambda_1 = 1, lambda_(t+1) =
    (1 + sqrt(1 + 4 lambda_t^2)) / 2; eta is 0 first, then negative (momentum) towards -1."""
    lam, out = 1.0, []
    for _ in range(iterations):
        nxt = (1.0 + math.sqrt(1.0 + 4.0 * lam * lam)) / 2.0
        out.append((1.0 - lam) / nxt)
        lam = nxt
    return out


@dataclass(frozen=True)
class Schedule:
    """What the encrypted run and the reference share: the sigmoid polynomial (power basis),
    the learning rate, Nesterov's eta per iteration and the batch size."""

    sigmoid: np.ndarray
    learning_rate: float
    etas: tuple
    batch: int

    def step_size(self) -> float:
        return self.learning_rate / self.batch


def reference_training(batches: list, schedule: Schedule, features: int) -> list:
    """The plaintext run: [(w_1, v_1), (w_2, v_2), ...] after each iteration, from w_0 = v_0 = 0,
    with w_(t+1) = v_t + (gamma / B) sum_i p(z_i . v_t) z_i (p: the polynomial sigmoid(-x))."""
    w = np.zeros(features)
    v = np.zeros(features)
    poly = np.polynomial.Polynomial(schedule.sigmoid)
    out = []
    for t, eta in enumerate(schedule.etas):
        z = batches[t % len(batches)]
        w_next = v + schedule.step_size() * (poly(z @ v) @ z)
        v = (1.0 - eta) * w_next + eta * w
        w = w_next
        out.append((w.copy(), v.copy()))
    return out


def accuracy(w, x, labels) -> float:
    """Share of samples whose predicted label (x . w > 0 is label 1) is right."""
    predicted = (np.asarray(x) @ np.asarray(w)[: x.shape[1]] > 0).astype(np.int64)
    return float(np.mean(predicted == labels))


__all__ = [
    "NEGATIVE",
    "POSITIVE",
    "Schedule",
    "accuracy",
    "load_digits",
    "mini_batches",
    "nesterov_weights",
    "reference_training",
    "sigmoid_fit",
    "signed_samples",
]
