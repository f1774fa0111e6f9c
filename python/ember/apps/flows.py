"""The applications that are more than one circuit call: FHE-DiNN's MNIST inference without the
compiler, and AES transciphering; each returns a JSON-ready report like runner.run_app."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ParameterError
from .runner import circuits_dir, compile_app, device_list, make_keys


def mnist_test_images(directory=None, count: int = 100) -> tuple:
    """(binarized images [count, 784], labels): the 100-image subset shipped beside the C files
    (examples/circuits/mnist_test100.npz)."""
    path = Path(directory or circuits_dir()) / "mnist_test100.npz"
    with np.load(path) as z:
        bits = np.unpackbits(z["bits"], axis=1)[:, :784]
        labels = z["labels"].astype(np.int64)
    return bits[:count], labels[:count]


def mnist_model(directory=None):
    from .dinn import Model

    return Model.load(Path(directory or circuits_dir()) / "mnist_dinn.npz")


def run_mnist_fhe(
    device: str | None = None,
    preset: str = "int4_128",
    images: int = 1,
    progress: bool = True,
    directory=None,
    data_dir=None,
    batch: int = 16,
) -> dict:
    """FHE-DiNN's way on the first `images` MNIST test images (from the IDX files in `data_dir`,
    else the 100 shipped beside the C files): encrypted pixels, free weighted sums, one bootstrap
    per hidden neuron, `batch` images a server call; the encrypted scores must equal the
    plaintext network's."""
    from .dinn import encrypted_scores, load_mnist

    model = mnist_model(directory)
    if data_dir is not None:
        x, labels = load_mnist(data_dir, "t10k")
    else:
        x, labels = mnist_test_images(directory)
    if not 1 <= images <= len(x):
        raise ParameterError(f"images must be between 1 and {len(x)} for this test set")
    pick = np.arange(images)
    ctx, ck, sk, keys_s = make_keys(preset, [device], progress)

    def bar(done, total):
        if progress:
            print(f"\rimage {done}/{total}", end="\n" if done == total else "", flush=True)

    scores, secs, boots = encrypted_scores(ctx, ck, sk, model, x[pick], bar, batch)
    plain = model.scores(x[pick])
    pred = np.argmax(scores, axis=1)
    return {
        "app": "mnist_fhe",
        "summary": "FHE-DiNN inference without the compiler (linear sums + one bootstrap a neuron)",
        "hidden": model.hidden,
        "fan_in": model.fan_in,
        "images": len(pick),
        "batch": batch,
        "accuracy": round(float(np.mean(pred == labels[pick])), 4),
        "predictions_match_plaintext": bool(np.array_equal(pred, np.argmax(plain, axis=1))),
        "scores_match_plaintext": bool(np.array_equal(scores, plain)),
        "bootstraps": int(boots),
        "bootstraps_per_image": model.hidden,
        "partial_scores_per_image": len(model.partial_groups()),
        "device": ctx.device,
        "preset": preset,
        "seconds": {"keys": round(keys_s, 3), **{k: round(v, 3) for k, v in secs.items()}},
        "seconds_per_image": round(secs["server"] / max(len(pick), 1), 3),
        "ok": bool(np.array_equal(scores, plain)),
    }


def run_transcipher_app(
    device: str | None = None,
    devices=None,
    preset: str = "bool_128",
    blocks: int = 1,
    seed: int | None = None,
    progress: bool = True,
    directory=None,
    precompiled=None,
) -> dict:
    """AES-128 transciphering of `blocks` random blocks (see transcipher.py)."""
    from .transcipher import run_transcipher

    if blocks < 1:
        raise ParameterError("transciphering needs at least one block")
    rng = np.random.default_rng(seed)
    circ, cinfo = compile_app("aes128", directory=directory, precompiled=precompiled)
    devs = device_list(device, devices)
    ctx, ck, sk, keys_s = make_keys(preset, devs, progress)
    key = bytes(rng.integers(0, 256, 16, dtype=np.uint8))
    data = bytes(rng.integers(0, 256, 16 * blocks, dtype=np.uint8))
    run_devices = None if devs == [ctx.device] else devs
    rep = run_transcipher(ctx, ck, sk, circ, key, data, run_devices, progress)
    stats = circ.stats()
    return {
        "app": "transcipher",
        "summary": "AES-128 transciphering: AES ciphertext + CGGI-encrypted key -> CGGI data",
        "gates": stats["gates"],
        "bootstraps": stats["bootstraps"],
        "depth": stats["depth"],
        "compile": cinfo,
        "devices": devs,
        "preset": preset,
        "keys_seconds": round(keys_s, 3),
        **rep,
    }


def run_helr_app(device=None, devices=None, data_dir=None, iterations=None, progress=True) -> dict:
    """HELR: logistic-regression training on encrypted MNIST 3 vs 8, bootstrapped each step."""
    from .helr import run_helr

    rep = run_helr(data_dir, device, devices, iterations, progress)
    rep["ok"] = bool(rep["weights_ok"] and rep["accuracy_ok"])
    return rep


def run_cnn_app(device=None, devices=None, data_dir=None, mode="single", images=1, progress=True):
    """HE-Booster's MNIST CNN in BGV: encrypted images, exact scores of the quantized model."""
    from .cnn import run_cnn

    if devices is not None:
        devices = device_list(device, devices)
    rep = run_cnn(
        data_dir,
        device=device,
        devices=devices,
        mode=mode,
        images=images,
        preset="N14",
        progress=progress,
    )
    rep["ok"] = bool(rep["scores_equal"] and rep["predictions_equal"])
    return rep


FLOWS = {
    "mnist_fhe": run_mnist_fhe,
    "transcipher": run_transcipher_app,
    "helr": run_helr_app,
    "cnn": run_cnn_app,
}

__all__ = [
    "FLOWS",
    "mnist_model",
    "mnist_test_images",
    "run_cnn_app",
    "run_helr_app",
    "run_mnist_fhe",
    "run_transcipher_app",
]
