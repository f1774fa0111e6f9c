"""Trains the FHE-DiNN-style MNIST network of ember.apps.dinn in plaintext with numpy and writes
it as examples/circuits/mnist_dinn.npz, the two C programs (weights compiled in; weights as
encrypted parameters) and a 100-image test subset.

    python examples/mnist/train_dinn.py [--data ../shared/data/mnist] [--hidden 1024]
        [--fan-in 64] [--epochs 8] [--seed 0]

Training keeps real-valued shadow weights and runs the integer network forward (straight-through
estimators): each hidden neuron's K largest weights become their signs, the bias is rounded and
clipped to [-16, 15], the activation is bit 4 of the sum (the negacyclic sign the encrypted
network computes), the output weights are rounded to [-3, 3]. Minutes on two cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from dinn_codegen import write_c_programs
from ember.apps import dinn

VQ = 3  # output weights in [-VQ, VQ]


def quantize_hidden(w: np.ndarray, k: int) -> tuple:
    """(idx [H, K], signs [H, K]) of each row's K largest magnitudes."""
    idx = np.argpartition(-np.abs(w), k - 1, axis=1)[:, :k]
    idx.sort(axis=1)
    sign = np.sign(np.take_along_axis(w, idx, axis=1)).astype(np.int64)
    sign[sign == 0] = 1
    return idx, sign


def out_scale(v: np.ndarray) -> float:
    """The step of the output weights: the 99th percentile of |v| maps to VQ (the largest
    magnitude would leave most weights at 0 or +-1)."""
    return float(np.percentile(np.abs(v), 99)) / VQ + 1e-12


def quantize_out(v: np.ndarray) -> np.ndarray:
    return np.clip(np.round(v / out_scale(v)), -VQ, VQ).astype(np.int64)


def to_model(w, b, v, k) -> dinn.Model:
    idx, sign = quantize_hidden(w, k)
    return dinn.Model(idx, sign, np.clip(np.round(b), -16, 15), quantize_out(v))


def train(x, y, hidden: int, k: int, epochs: int, seed: int, log) -> dinn.Model:
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.1, (hidden, dinn.PIXELS)).astype(np.float32)
    b = np.zeros(hidden, np.float32)
    v = rng.normal(0, 0.1, (dinn.CLASSES, hidden)).astype(np.float32)
    params = [w, b, v]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    lr, step, batch = 3e-3, 0, 128
    out_gain = 4 / np.sqrt(hidden)  # keeps the softmax's inputs near unit scale
    xf = x.astype(np.float32)
    rows = np.arange(hidden)[:, None]
    for epoch in range(epochs):
        t0 = time.time()
        perm = rng.permutation(len(x))
        for i in range(0, len(x), batch):
            xb, yb = xf[perm[i : i + batch]], y[perm[i : i + batch]]
            idx, sign = quantize_hidden(w, k)
            wq = np.zeros_like(w)
            wq[rows, idx] = sign
            bq = np.clip(np.round(b), -16, 15)
            s = xb @ wq.T + bq
            s = ((s + 16) % 32) - 16  # bit 4 of the sum: the sign of the sum wrapped mod 32
            h = np.where(s >= 0, 1.0, -1.0).astype(np.float32)
            step_v = out_scale(v)
            vq = np.clip(np.round(v / step_v), -VQ, VQ) * step_v  # straight-through
            logits = h @ vq.T * out_gain
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            g = p
            g[np.arange(len(yb)), yb] -= 1
            g *= out_gain / len(yb)
            gv = g.T @ h
            gs = (g @ vq) * (np.abs(s) <= 8) / 8  # straight-through sign
            grads = [gs.T @ xb, gs.sum(axis=0), gv]
            step += 1
            for j, (p_, g_) in enumerate(zip(params, grads)):
                m1[j] = 0.9 * m1[j] + 0.1 * g_
                m2[j] = 0.999 * m2[j] + 0.001 * g_ * g_
                p_ -= lr * (m1[j] / (1 - 0.9**step)) / (np.sqrt(m2[j] / (1 - 0.999**step)) + 1e-8)
            b[:] = np.clip(b, -16.5, 15.5)
        lr *= 0.75
        model = to_model(w, b, v, k)
        acc = (model.predict(x[:10000]) == y[:10000]).mean()
        log(f"epoch {epoch + 1}/{epochs}: {time.time() - t0:.0f} s, train accuracy {acc:.4f}")
    return to_model(w, b, v, k)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "mnist"))
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--fan-in", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "examples" / "circuits"))
    ap.add_argument(
        "--codegen-only", action="store_true", help="rewrite the C programs from the .npz"
    )
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.codegen_only:
        write_c_programs(dinn.Model.load(out / "mnist_dinn.npz"), out)
        return 0
    x, y = dinn.load_mnist(args.data, "train")
    xt, yt = dinn.load_mnist(args.data, "t10k")
    model = train(x, y, args.hidden, args.fan_in, args.epochs, args.seed, print)
    pred = model.predict(xt)
    acc = float((pred == yt).mean())
    sums = model.sums(xt)
    inside = float(((sums >= -16) & (sums < 16)).mean())
    print(f"test accuracy {acc:.4f}; hidden sums inside [-16, 16): {inside:.4f}")
    model.save(out / "mnist_dinn.npz", test_accuracy=acc)
    write_c_programs(model, out)
    # 100 test images (binarized, packed) with their labels, for the runner and CI.
    np.savez_compressed(
        out / "mnist_test100.npz", bits=np.packbits(xt[:100], axis=1), labels=yt[:100]
    )
    print(f"wrote {out}/mnist_dinn.npz, mnist_dinn.c, mnist_dinn_enc.c, mnist_test100.npz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
