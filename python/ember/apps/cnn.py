"""HE-Booster's encrypted MNIST CNN in BGV: the quantized network of ember.apps.cnn_model run on
encrypted pixels, one image per ciphertext set ("single": one pixel per ciphertext) or the same
pixel of `slots` images in each ciphertext ("packed"), on one device or split over several.

The scores of the integer network exceed any one plaintext modulus BGV can carry, so the
network runs once per plaintext modulus t_i (batching primes, one BGV context each) and the
client recombines the decrypted residues by CRT, as CryptoNets does: the product of the t_i
exceeds twice the worst-case bound of every intermediate, so the scores come back exactly.

Each layer is a matrix of small integer weights applied to ciphertexts: one
``linear_combinations`` call per layer (out[j] = sum_i W[j, i] in[i] + b[j], one backend kernel)
and the squares are ciphertext products with relinearization and a modulus switch.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .. import bgv, resolve_device
from ..dist import device_set, partition_rows
from ..errors import ParameterError
from ..ring import generate_ntt_primes
from .cnn_model import CONV_OUT, HIDDEN, QuantModel, load_images
from .dinn import PIXELS

MODEL_FILE = "cnn_mnist.npz"
# The plaintext moduli are = 1 mod 2^15, so they batch for every ring up to N = 2^14.
T_RING_LOG_N = 14

# Parameter sets: the ring, the primes of Q (q_0 first; each square drops the last one) and P,
# and the size of each plaintext modulus. The noise left after the network decides them: see
# docs/cnn.md. "N14" is 128-bit secure (log2 QP <= 438 at N = 2^14); "test" is a small
# insecure ring for CI with the same moduli and the same depth.
PRESETS = {
    "N14": {"log_n": 14, "q_bits": (60, 60, 60, 60), "special_bits": (60,), "t_bits": 36},
    "test": {
        "log_n": 10,
        "q_bits": (60, 60, 60, 60),
        "special_bits": (60,),
        "t_bits": 36,
        "insecure": True,
    },
}


# ---------------------------------------------------------------- files
def model_path() -> Path:
    """The trained weights: $EMBER_CNN_MODEL, else the copy installed with the package
    (ember/cnn), else examples/cnn of the source tree."""
    env = os.environ.get("EMBER_CNN_MODEL")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent
    for d in (here / "cnn", here.parent.parent / "examples" / "cnn"):
        if (d / MODEL_FILE).exists():
            return d / MODEL_FILE
    raise ParameterError(f"{MODEL_FILE} was not found: set EMBER_CNN_MODEL to its path")


def default_data_dir() -> Path:
    """$EMBER_MNIST, else ../shared/data/mnist from the current folder (the repository root),
    else next to the source tree."""
    env = os.environ.get("EMBER_MNIST")
    if env:
        return Path(env)
    candidates = [
        Path.cwd().parent / "shared" / "data" / "mnist",
        Path(__file__).resolve().parents[3].parent / "shared" / "data" / "mnist",
    ]
    return next((d for d in candidates if d.is_dir()), candidates[0])


def load_model(path=None) -> QuantModel:
    return QuantModel.load(path or model_path())


# ---------------------------------------------------------------- plaintext moduli and CRT
def crt_moduli(bound: int, bits: int) -> list[int]:
    """The fewest distinct batching primes of `bits` bits whose product exceeds 2 * bound + 1,
    so that every value in [-bound, bound] is recovered from its residues."""
    for count in range(1, 16):
        ts = [int(t) for t in generate_ntt_primes(bits, 1 << T_RING_LOG_N, count, [])]
        if math.prod(ts) > 2 * bound + 1:
            return ts
    raise ParameterError(f"a bound of 2^{bound.bit_length()} needs too many {bits}-bit moduli")


def crt_combine(residues: list, moduli: list[int]) -> list[int]:
    """Centered integers from their residues: residues[i][k] is value k modulo moduli[i]."""
    total = math.prod(moduli)
    out = []
    for k in range(len(residues[0])):
        v = 0
        for r, t in zip(residues, moduli):
            m = total // t
            v += int(r[k]) % t * m * pow(m, -1, t)
        v %= total
        out.append(v - total if v > total // 2 else v)
    return out


def make_params(preset: str, bound: int) -> list[bgv.Params]:
    """One BGV parameter set per plaintext modulus of the CRT for values up to `bound`."""
    if preset not in PRESETS:
        raise ParameterError(f"unknown CNN preset '{preset}': choose from {', '.join(PRESETS)}")
    spec = dict(PRESETS[preset])
    bits = spec.pop("t_bits")
    return [
        bgv.Params(plain_modulus=t, name=f"cnn-{preset}", **spec) for t in crt_moduli(bound, bits)
    ]


# ---------------------------------------------------------------- encrypted layers
# Outputs per linear_combinations call of a sparse layer (the convolution): a block of outputs
# reads only the inputs some of its weights touch.
SPARSE_BLOCK = 64


def linear_layer(ctx, cts: list, weights: np.ndarray, bias) -> list:
    """out[j] = sum_i weights[j, i] * cts[i] + bias[j] (bias: integers of any size, or None).
    A dense matrix is one ctx.linear_combinations call; a sparse one (the convolution, 25 of
    784 weights per output) goes by blocks of SPARSE_BLOCK outputs, each over the inputs it
    uses, so no pass reads ciphertexts only to multiply them by zero."""
    weights = np.asarray(weights)
    bias = [0] * len(weights) if bias is None else [int(b) for b in bias]
    used = weights != 0
    if used.mean() > 0.5:
        return ctx.linear_combinations(cts, weights, bias)
    out = []
    for lo in range(0, len(weights), SPARSE_BLOCK):
        hi = min(lo + SPARSE_BLOCK, len(weights))
        cols = np.nonzero(used[lo:hi].any(axis=0))[0]
        if not len(cols):  # all-zero rows: the bias alone, still a ciphertext
            cols = np.array([0])
        block = weights[lo:hi][:, cols]
        out += ctx.linear_combinations([cts[c] for c in cols], block, bias[lo:hi])
    return out


def _square_all(ctx, cts: list) -> list:
    return [ctx.multiply(c, c) for c in cts]


def _on(cts: list, device: str) -> list:
    return [c.to(device) for c in cts]


def _sum_partials(partials: list) -> list:
    """Element-wise sum of each device's partial ciphertexts, on the first device."""
    head = partials[0]
    dev = head[0]._ctx.device
    out = list(head)
    for part in partials[1:]:
        out = [a + b for a, b in zip(out, _on(part, dev))]
    return out


def evaluate(ctx, pixels: list, model: QuantModel, devices: list[str], pool) -> list:
    """The network on encrypted pixel ciphertexts (on ctx's device) over `devices`: each layer's
    outputs split into contiguous ranges, one per device, the inputs broadcast; the next layer's
    partial sums over each device's range are added on the first device. One device: the plain
    path. Returns the 10 score ciphertexts on ctx's device."""
    k = len(devices)
    conv_w = model.conv_matrix()
    conv_b = np.repeat(model.conv_b, CONV_OUT // len(model.conv_b))
    ctxs = [ctx.to(d) for d in devices]
    inputs = [pixels] + [_on(pixels, d) for d in devices[1:]]

    def conv_and_dense1(d: int, lo: int, hi: int) -> list:
        sq = _square_all(ctxs[d], linear_layer(ctxs[d], inputs[d], conv_w[lo:hi], conv_b[lo:hi]))
        bias = model.dense1_b if d == 0 else None
        return linear_layer(ctxs[d], sq, model.dense1_w[:, lo:hi], bias)

    ranges = partition_rows(CONV_OUT, k)
    hidden = _sum_partials(
        list(pool.map(lambda a: conv_and_dense1(a[0], *a[1]), enumerate(ranges)))
    )

    def dense2(d: int, lo: int, hi: int) -> list:
        sq = _square_all(ctxs[d], _on(hidden[lo:hi], devices[d]))
        bias = model.dense2_b if d == 0 else None
        return linear_layer(ctxs[d], sq, model.dense2_w[:, lo:hi], bias)

    ranges = partition_rows(HIDDEN, k)
    return _sum_partials(list(pool.map(lambda a: dense2(a[0], *a[1]), enumerate(ranges))))


class CnnSession:
    """Keys and contexts of the CRT: one BGV context per plaintext modulus on `devices[0]`
    (replicated to the other devices when used), the client's secret keys and the server's
    evaluation keys (relinearization)."""

    def __init__(self, model: QuantModel, preset: str, devices: list[str]):
        self.model, self.devices = model, devices
        self.bound = model.bounds()["largest"]
        self.params = make_params(preset, self.bound)
        self.moduli = [int(p.plain_modulus) for p in self.params]
        t0 = time.perf_counter()
        self.contexts = [bgv.Context(p, device=devices[0]) for p in self.params]
        self.secret_keys = []
        for ctx in self.contexts:
            sk = ctx.keygen()
            self.secret_keys.append(sk)
            ctx.set_eval_keys(ctx.eval_keys(sk))
        for ctx in self.contexts:  # the evaluation keys on every device, once
            for d in devices[1:]:
                ctx.to(d)
        self.keygen_seconds = time.perf_counter() - t0
        self.slots = self.contexts[0].slots

    def encrypt(self, x: np.ndarray, packed: bool) -> list:
        """Per context: 784 ciphertexts, pixel j of every image in x (packed; up to `slots`
        images) or of the one image (single: its pixel in slot 0)."""
        x = np.asarray(x, dtype=np.int64).reshape(-1, PIXELS)
        if not packed and len(x) != 1:
            raise ParameterError("single mode encrypts one image at a time")
        if len(x) > self.slots:
            raise ParameterError(f"{len(x)} images do not fit in {self.slots} slots")
        # The client encrypts with its secret key (symmetric: a fresh ciphertext costs one
        # polynomial product instead of three and starts with less noise).
        return [
            [ctx.encrypt(x[:, j], sk) for j in range(PIXELS)]
            for ctx, sk in zip(self.contexts, self.secret_keys)
        ]

    def evaluate(self, encrypted: list, pool) -> list:
        return [
            evaluate(ctx, cts, self.model, self.devices, pool)
            for ctx, cts in zip(self.contexts, encrypted)
        ]

    def decrypt(self, scores: list, count: int) -> np.ndarray:
        """[count, 10] exact integer scores (Python ints) recombined from the residues."""
        out = np.empty((count, len(scores[0])), dtype=object)
        for c in range(len(scores[0])):
            residues = [
                ctx.decrypt(s[c], sk)[:count]
                for ctx, sk, s in zip(self.contexts, self.secret_keys, scores)
            ]
            out[:, c] = crt_combine(residues, self.moduli)
        return out

    def describe(self) -> dict:
        p = self.params[0]
        return {
            "log_n": p.log_n,
            "q_bits": list(p.q_bits),
            "special_bits": list(p.special_bits),
            "plain_moduli": self.moduli,
            "bound_bits": self.bound.bit_length(),
            "secure": not p.insecure,
            "slots": self.slots,
        }


def _devices(device: str | None, devices) -> list[str]:
    """The device set: `devices` (a list, a count, or "all"), else the one `device` (None: the
    default device)."""
    device = resolve_device(device)
    if devices is None:
        return device_set(device)
    if isinstance(devices, int):
        kind = "cuda" if device.startswith("cuda") else "cpu"
        return [f"{kind}:{i}" for i in range(devices)]
    return device_set(devices)


def _predict(scores) -> np.ndarray:
    return np.array([int(np.argmax(np.array(row, dtype=float))) for row in scores.tolist()])


def _argmax_exact(scores) -> np.ndarray:
    """The first index of the largest (Python integer) score per row."""
    out = []
    for row in scores.tolist():
        best = max(row)
        out.append(row.index(best))
    return np.array(out, dtype=np.int64)


def run_cnn(
    data_dir=None,
    device: str | None = None,
    devices=None,
    mode: str = "single",
    images: int = 1,
    preset: str = "N14",
    progress: bool = False,
    model_file=None,
    session: CnnSession | None = None,
) -> dict:
    """Encrypted inference of the first `images` MNIST test images. mode "single": one image per
    ciphertext set (784 ciphertexts per plaintext modulus), images one after another, latency per
    image; "packed": `slots` images per ciphertext set, throughput. Checks the decrypted scores
    against the quantized plaintext model (exact integers). Returns a JSON-ready dict."""
    if mode not in ("single", "packed"):
        raise ParameterError(f"mode must be 'single' or 'packed', got {mode!r}")
    model = session.model if session else load_model(model_file)
    test_images, labels = load_images(data_dir or default_data_dir(), "t10k")
    if not 1 <= images <= len(test_images):
        raise ParameterError(f"images must be in [1, {len(test_images)}], got {images}")
    x = model.pixels(test_images[:images])
    labels = labels[:images]
    devs = _devices(device, devices)
    sess = session or CnnSession(model, preset, devs)
    plain_scores = model.scores(x)
    secs = {"encrypt": 0.0, "evaluate": 0.0, "decrypt": 0.0}
    got = np.empty((images, 10), dtype=object)
    batch = 1 if mode == "single" else sess.slots
    with ThreadPoolExecutor(len(devs)) as pool:
        for start in range(0, images, batch):
            chunk = x[start : start + batch]
            t0 = time.perf_counter()
            enc = sess.encrypt(chunk, packed=mode == "packed")
            t1 = time.perf_counter()
            scores = sess.evaluate(enc, pool)
            t2 = time.perf_counter()
            got[start : start + len(chunk)] = sess.decrypt(scores, len(chunk))
            t3 = time.perf_counter()
            secs["encrypt"] += t1 - t0
            secs["evaluate"] += t2 - t1
            secs["decrypt"] += t3 - t2
            if progress:
                print(
                    f"cnn {mode}: {start + len(chunk)}/{images} images, evaluate {t2 - t1:.2f} s",
                    flush=True,
                )
    predicted = _argmax_exact(got)
    plain_predicted = _argmax_exact(plain_scores)
    batches = math.ceil(images / batch)
    return {
        "app": "cnn_mnist",
        "mode": mode,
        "device": devs[0],
        "devices": devs,
        "images": images,
        "params": sess.describe(),
        "keygen_s": sess.keygen_seconds,
        "encrypt_s": secs["encrypt"],
        "evaluate_s": secs["evaluate"],
        "decrypt_s": secs["decrypt"],
        "evaluate_s_per_batch": secs["evaluate"] / batches,
        "images_per_s": images / secs["evaluate"] if secs["evaluate"] else None,
        "accuracy": float((predicted == labels).mean()),
        "plain_accuracy": float((plain_predicted == labels).mean()),
        "scores_equal": bool(all(a == b for a, b in zip(got.flat, plain_scores.flat))),
        "predictions_equal": bool(np.array_equal(predicted, plain_predicted)),
    }


def bench_cnn(
    device: str = "cuda",
    devices="1,2,4",
    data_dir=None,
    single_images: int = 2,
    packed_images: int | None = None,
    preset: str = "N14",
    progress: bool = False,
) -> dict:
    """One-image latency (single mode, the mean over `single_images` after one untimed image)
    and packed throughput per device count ("1,2,4": the first 1, 2, 4 devices of `device`'s
    kind; counts above those present are skipped). packed_images defaults to one full batch
    (slots, at most the 10,000 test images). Key generation and encryption are timed apart
    from the evaluation; every row says whether the decrypted scores equal the plaintext
    model's."""
    model = load_model()
    counts = [int(c) for c in str(devices).split(",") if c.strip()]
    kind = "cuda" if str(device).startswith("cuda") else "cpu"
    if kind == "cuda":
        from .. import _ember

        present = len(_ember.cuda_devices())
        counts = [c for c in counts if c <= present]
    rows = []
    for count in counts:
        devs = [f"{kind}:{i}" for i in range(count)]
        sess = CnnSession(model, preset, devs)
        packed = min(packed_images or sess.slots, 10000)
        # A first image, not timed: the device's first use (kernel loads, memory pools).
        run_cnn(data_dir, devices=devs, mode="single", images=1, session=sess)
        single = run_cnn(
            data_dir,
            devices=devs,
            mode="single",
            images=single_images,
            session=sess,
            progress=progress,
        )
        pack = run_cnn(
            data_dir, devices=devs, mode="packed", images=packed, session=sess, progress=progress
        )
        rows.append(
            {
                "devices": count,
                "device_names": devs,
                "keygen_s": sess.keygen_seconds,
                "single_latency_s": single["evaluate_s"] / single_images,
                "single_encrypt_s": single["encrypt_s"] / single_images,
                "single_equal": single["scores_equal"],
                "packed_images": packed,
                "packed_images_per_s": pack["images_per_s"],
                "packed_evaluate_s": pack["evaluate_s"],
                "packed_encrypt_s": pack["encrypt_s"],
                "packed_equal": pack["scores_equal"],
                "packed_accuracy": pack["accuracy"],
            }
        )
    return {
        "app": "cnn_mnist",
        "device": device,
        "preset": preset,
        "params": sess.describe() if rows else None,
        "ops_per_image": op_counts(model),
        "rows": rows,
    }


def op_counts(model: QuantModel) -> dict:
    """Per plaintext modulus and image set: scalar multiply-adds (nonzero weights) and
    ciphertext squares (each a relinearization and a modulus switch)."""
    macs = int(
        np.count_nonzero(model.conv_matrix())
        + np.count_nonzero(model.dense1_w)
        + np.count_nonzero(model.dense2_w)
    )
    return {"scalar_macs": macs, "squares": CONV_OUT + HIDDEN, "levels_used": 2}


__all__ = [
    "PRESETS",
    "CnnSession",
    "bench_cnn",
    "crt_combine",
    "crt_moduli",
    "default_data_dir",
    "evaluate",
    "linear_layer",
    "load_model",
    "make_params",
    "model_path",
    "op_counts",
    "run_cnn",
]
