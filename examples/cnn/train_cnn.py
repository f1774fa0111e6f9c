"""Trains HE-Booster's MNIST CNN (ember.apps.cnn_model) in plaintext with numpy and Adam, quantizes
it to integers for BGV and writes examples/cnn/cnn_mnist.npz.

    nice python examples/cnn/train_cnn.py [--data ../shared/data/mnist] [--epochs 20] [--seed 0]

The float network sees pixels / 255; the convolution is a matrix product over the 169 windows
(im2col), so an epoch over the 60,000 images is a few seconds on two cores. Quantization tries
pixel and weight widths from small to large and keeps the first whose integer network reaches
the target test accuracy (the smaller the integers, the smaller the plaintext modulus BGV needs).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from ember.apps import cnn_model as cm

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def init_params(rng) -> dict:
    return {
        "conv_w": rng.normal(0, 1 / 5, (cm.FILTERS, 25)).astype(np.float32),
        "conv_b": np.zeros(cm.FILTERS, np.float32),
        "dense1_w": rng.normal(0, 1 / np.sqrt(cm.CONV_OUT), (cm.HIDDEN, cm.CONV_OUT)).astype(
            np.float32
        ),
        "dense1_b": np.zeros(cm.HIDDEN, np.float32),
        "dense2_w": rng.normal(0, 1 / np.sqrt(cm.HIDDEN), (cm.CLASSES, cm.HIDDEN)).astype(
            np.float32
        ),
        "dense2_b": np.zeros(cm.CLASSES, np.float32),
    }


def forward(p: dict, patches: np.ndarray) -> tuple:
    """patches [B, 169, 25] -> (logits [B, 10], cache for backward)."""
    b = len(patches)
    z1 = patches @ p["conv_w"].T + p["conv_b"]  # [B, 169, 5]
    z1 = z1.transpose(0, 2, 1).reshape(b, cm.CONV_OUT)  # filter-major, as the integer model
    a1 = z1 * z1
    z2 = a1 @ p["dense1_w"].T + p["dense1_b"]
    a2 = z2 * z2
    z3 = a2 @ p["dense2_w"].T + p["dense2_b"]
    return z3, (patches, z1, a1, z2, a2)


def backward(p: dict, cache, logits: np.ndarray, y: np.ndarray) -> tuple:
    patches, z1, a1, z2, a2 = cache
    b = len(y)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    loss = float(-np.log(prob[np.arange(b), y] + 1e-12).mean())
    d3 = prob
    d3[np.arange(b), y] -= 1
    d3 /= b
    g = {"dense2_w": d3.T @ a2, "dense2_b": d3.sum(0)}
    d2 = (d3 @ p["dense2_w"]) * 2 * z2
    g["dense1_w"] = d2.T @ a1
    g["dense1_b"] = d2.sum(0)
    d1 = (d2 @ p["dense1_w"]) * 2 * z1  # [B, 845]
    d1 = d1.reshape(b, cm.FILTERS, cm.POSITIONS)
    g["conv_w"] = np.einsum("bfp,bpk->fk", d1, patches)
    g["conv_b"] = d1.sum(axis=(0, 2))
    return loss, g


def float_predict(p: dict, x01: np.ndarray, idx: np.ndarray) -> np.ndarray:
    out = []
    for s in range(0, len(x01), 2000):
        out.append(forward(p, patches_of(x01[s : s + 2000], idx))[0].argmax(1))
    return np.concatenate(out)


def patches_of(x01: np.ndarray, idx: np.ndarray) -> np.ndarray:
    padded = np.concatenate([x01, np.zeros((len(x01), 1), x01.dtype)], axis=1)
    return padded[:, idx]


def shift_maps(max_shift: int) -> np.ndarray:
    """[(2 s + 1)^2, 784] source indices of the image shifted by (dy, dx) in [-s, s]^2 (784: a
    zero, for pixels shifted in from outside)."""
    maps = []
    rows, cols = np.divmod(np.arange(cm.PIXELS), cm.SIDE)
    for dy in range(-max_shift, max_shift + 1):
        for dx in range(-max_shift, max_shift + 1):
            r, c = rows - dy, cols - dx
            inside = (r >= 0) & (r < cm.SIDE) & (c >= 0) & (c < cm.SIDE)
            maps.append(np.where(inside, r * cm.SIDE + c, cm.PIXELS))
    return np.array(maps)


def train(x01, y, xt01, yt, epochs: int, seed: int, lr: float, batch: int, shift: int) -> dict:
    """Adam with a cosine-decayed rate; each batch shifted at random by up to `shift` pixels
    (the network has few filters and overfits the training images otherwise)."""
    rng = np.random.default_rng(seed)
    p = init_params(rng)
    maps = shift_maps(shift)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(w) for k, w in p.items()}
    idx = cm.patch_index()
    step = 0
    steps_total = epochs * (len(x01) // batch)
    for epoch in range(epochs):
        t0 = time.time()
        order = rng.permutation(len(x01))
        losses = []
        for s in range(0, len(order) - batch + 1, batch):
            sel = order[s : s + batch]
            xb = x01[sel]
            if shift:
                padded = np.concatenate([xb, np.zeros((len(xb), 1), xb.dtype)], axis=1)
                which = maps[rng.integers(0, len(maps), len(xb))]
                xb = np.take_along_axis(padded, which, axis=1)
            logits, cache = forward(p, patches_of(xb, idx))
            loss, g = backward(p, cache, logits, y[sel])
            losses.append(loss)
            step += 1
            rate = lr * 0.5 * (1 + np.cos(np.pi * step / steps_total))  # cosine decay
            for k in p:
                m[k] = 0.9 * m[k] + 0.1 * g[k]
                v[k] = 0.999 * v[k] + 0.001 * g[k] * g[k]
                mh = m[k] / (1 - 0.9**step)
                vh = v[k] / (1 - 0.999**step)
                p[k] -= (rate * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        acc = (float_predict(p, xt01, idx) == yt).mean()
        print(
            f"epoch {epoch + 1}/{epochs}: loss {np.mean(losses):.4f}, float test accuracy "
            f"{acc:.4f} ({time.time() - t0:.1f} s)",
            flush=True,
        )
    return p


def quantize(p: dict, pixel_shift: int, weight_bits: int) -> cm.QuantModel:
    """Weights of each layer to [-(2^(bits-1) - 1), 2^(bits-1) - 1]; each bias at its layer's
    scale: S1 = Sx Sw1, S2 = S1^2 Sw2, S3 = S2^2 Sw3 (the squares square the scale)."""
    top = 2 ** (weight_bits - 1) - 1
    sx = (255 >> pixel_shift) / 1.0  # x_int = (pixel >> shift) ~ x01 * Sx

    def q(w):
        scale = top / float(np.abs(w).max())
        return np.round(w * scale).astype(np.int64), scale

    cw, s_c = q(p["conv_w"].astype(np.float64))
    s1 = sx * s_c
    d1w, s_d1 = q(p["dense1_w"].astype(np.float64))
    s2 = s1 * s1 * s_d1
    d2w, s_d2 = q(p["dense2_w"].astype(np.float64))
    s3 = s2 * s2 * s_d2

    def bias(b, scale):
        # Python integers: the last bias can pass 2^63.
        return np.array([round(float(v) * scale) for v in b], dtype=object)

    return cm.QuantModel(
        pixel_shift,
        cw,
        bias(p["conv_b"], s1).astype(np.int64),
        d1w,
        bias(p["dense1_b"], s2).astype(np.int64),
        d2w,
        bias(p["dense2_b"], s3),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", default=os.environ.get("EMBER_MNIST", str(ROOT.parent / "shared/data/mnist"))
    )
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shift", type=int, default=1, help="random shifts of up to this many pixels")
    ap.add_argument("--target", type=float, default=0.989)
    ap.add_argument("--out", default=str(HERE / "cnn_mnist.npz"))
    ap.add_argument("--float-out", default=None, help="also save the float weights here")
    args = ap.parse_args()

    images, labels = cm.load_images(args.data, "train")
    test_images, test_labels = cm.load_images(args.data, "t10k")
    x01 = images.astype(np.float32) / 255
    xt01 = test_images.astype(np.float32) / 255
    p = train(
        x01, labels, xt01, test_labels, args.epochs, args.seed, args.lr, args.batch, args.shift
    )
    if args.float_out:
        np.savez(args.float_out, **p)
    float_acc = float((float_predict(p, xt01, cm.patch_index()) == test_labels).mean())
    chosen = None
    for pixel_shift in (4, 3, 2):
        for bits in (4, 5, 6, 7, 8):
            model = quantize(p, pixel_shift, bits)
            acc = float((model.predict(model.pixels(test_images)) == test_labels).mean())
            bound = model.bounds()["largest"]
            print(
                f"pixels 0..{255 >> pixel_shift}, {bits}-bit weights: quantized test accuracy "
                f"{acc:.4f}, largest intermediate < 2^{bound.bit_length()}",
                flush=True,
            )
            if acc >= args.target and (chosen is None or bound < chosen[2]):
                chosen = (model, acc, bound)
    if chosen is None:
        raise SystemExit(f"no quantization reached {args.target}: train longer")
    model, acc, bound = chosen
    model.save(
        args.out,
        float_accuracy=np.float64(float_acc),
        quantized_accuracy=np.float64(acc),
        seed=np.int64(args.seed),
        shift=np.int64(args.shift),
        epochs=np.int64(args.epochs),
    )
    print(
        f"wrote {args.out}: accuracy {acc:.4f} (float {float_acc:.4f}), bound 2^{bound.bit_length()}"
    )


if __name__ == "__main__":
    main()
