"""HE-Booster's encrypted MNIST CNN (ember.apps.cnn): the batched linear combinations it stands on,
the plaintext moduli against the worst-case bound, and encrypted scores equal to the quantized
model's, one image per ciphertext and packed, on one and two devices."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from ember import bfv, bgv
from ember.apps import cnn
from ember.apps.cnn_model import PIXELS, QuantModel, conv_matrix, patch_index
from ember.errors import ParameterError

MNIST = Path(__file__).resolve().parents[3] / "shared" / "data" / "mnist"
# The source tree's weights: the sanitized run imports a copy of the package without them.
WEIGHTS = Path(__file__).resolve().parents[2] / "examples" / "cnn" / "cnn_mnist.npz"


@pytest.fixture(scope="module")
def model() -> QuantModel:
    return cnn.load_model(WEIGHTS)


def small_context(module, t=65537):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = module.Params(
            log_n=10, plain_modulus=t, q_bits=(50, 50, 50), special_bits=(55,), insecure=True
        )
    ctx = module.Context(p, device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    return ctx, sk


@pytest.mark.parametrize("module", [bgv, bfv])
def test_linear_combinations_match_a_loop_of_operations(module):
    ctx, sk = small_context(module)
    t = ctx.plain_modulus
    rng = np.random.default_rng(1)
    values = rng.integers(-100, 100, (12, ctx.slots))
    cts = [ctx.encrypt(v, sk) for v in values]
    if module is bgv:  # a product and a modulus switch: a plaintext factor other than 1
        cts = [c * c for c in cts]
        values = values * values
    w = rng.integers(-40, 40, (5, 12))
    w[3] = 0
    w[4, 7] = 3 * t + 5  # reduced modulo t
    consts = [int(k) for k in rng.integers(-1000, 1000, 5)]
    consts[2] = 2**80 + 7  # any size
    out = ctx.linear_combinations(cts, w, consts)
    assert len(out) == 5
    for j, o in enumerate(out):
        loop = cts[0] * int(w[j, 0])
        for i in range(1, 12):
            loop = loop + cts[i] * int(w[j, i])
        loop = loop + consts[j]
        want = (values.T.astype(object) @ w[j].astype(object) + consts[j]) % t
        want = np.where(want > t // 2, want - t, want).astype(np.int64)
        np.testing.assert_array_equal(ctx.decrypt(o, sk), want)
        np.testing.assert_array_equal(ctx.decrypt(loop, sk), want)
        assert o.level == loop.level


def test_linear_combinations_refuse_bad_shapes():
    ctx, sk = small_context(bgv)
    cts = [ctx.encrypt([1, 2], sk) for _ in range(3)]
    with pytest.raises(ParameterError, match="3 columns"):
        ctx.linear_combinations(cts, np.ones((2, 4), dtype=np.int64))
    with pytest.raises(ParameterError, match="constants"):
        ctx.linear_combinations(cts, np.ones((2, 3), dtype=np.int64), [1])
    with pytest.raises(ParameterError, match="integers"):
        ctx.linear_combinations(cts, np.full((2, 3), 0.5))


def test_conv_matrix_is_the_strided_convolution(model):
    rng = np.random.default_rng(2)
    img = rng.integers(0, 16, (28, 28))
    padded = np.zeros((29, 29), dtype=np.int64)
    padded[:28, :28] = img
    direct = np.array(
        [
            [
                [
                    int((padded[2 * r : 2 * r + 5, 2 * c : 2 * c + 5] * w.reshape(5, 5)).sum())
                    for c in range(13)
                ]
                for r in range(13)
            ]
            for w in model.conv_w
        ]
    ).reshape(-1)
    np.testing.assert_array_equal(conv_matrix(model.conv_w) @ img.reshape(-1), direct)
    assert patch_index().max() == PIXELS  # the padding column and row


def largest_input(model: QuantModel) -> np.ndarray:
    """An image driving filter f's windows to their largest sum: pixel_max wherever the filter
    weight is positive (the windows overlap, so per pixel: where most of its windows' weights are
    positive)."""
    f = int(np.argmax(np.where(model.conv_w > 0, model.conv_w, 0).sum(axis=1)))
    m = conv_matrix(model.conv_w)[f * 169 : (f + 1) * 169]
    return np.where(m.sum(axis=0) > 0, model.pixel_max, 0).astype(np.int64)


def test_plain_moduli_exceed_twice_the_bound(model):
    bounds = model.bounds()
    assert bounds["largest"] == max(v for k, v in bounds.items() if k != "largest")
    for preset in cnn.PRESETS:
        params = cnn.make_params(preset, bounds["largest"])
        moduli = [int(p.plain_modulus) for p in params]
        assert len(set(moduli)) == len(moduli)
        assert np.prod([float(t) for t in moduli]) > 2 * bounds["largest"]
        assert all(p.batching for p in params)
    assert not cnn.make_params("N14", bounds["largest"])[0].insecure
    # The bound holds on test images and on an input built to be large.
    x = np.vstack([model.pixels(np.full((1, PIXELS), 255)), largest_input(model)[None, :]])
    layers = model.layers(x)
    for name, v in layers.items():
        assert max(abs(int(a)) for a in np.asarray(v).flat) <= bounds[name], name
    assert max(abs(int(a)) for a in layers["conv"].flat) > bounds["conv"] // 2
    # Past any one plaintext modulus: only their CRT recovers these scores.
    moduli = [int(p.plain_modulus) for p in cnn.make_params("test", bounds["largest"])]
    assert max(abs(int(a)) for a in layers["scores"].flat) > max(moduli)


def test_crt_combine_recovers_signed_values():
    moduli = cnn.crt_moduli(2**90, 41)
    values = [0, 1, -1, 2**89, -(2**89) + 3]
    residues = [[v % t for v in values] for t in moduli]
    assert cnn.crt_combine(residues, moduli) == values


@pytest.fixture(scope="module")
def session(model):
    return cnn.CnnSession(model, "test", ["cpu"])


def test_packed_scores_equal_the_quantized_model(model, session):
    from ember.apps.cnn_model import load_images

    images, _ = load_images(MNIST, "t10k")
    x = np.vstack([largest_input(model)[None, :], model.pixels(images[:3])])
    with ThreadPoolExecutor(1) as pool:
        scores = session.evaluate(session.encrypt(x, packed=True), pool)
    got = session.decrypt(scores, len(x))
    want = model.scores(x)
    assert [[int(v) for v in row] for row in got.tolist()] == [
        [int(v) for v in row] for row in want.tolist()
    ]


def test_run_cnn_single_image_on_two_devices(session):
    two = cnn.CnnSession(session.model, "test", ["cpu:0", "cpu:1"])
    r = cnn.run_cnn(MNIST, devices=["cpu:0", "cpu:1"], mode="single", images=1, session=two)
    assert r["scores_equal"] and r["predictions_equal"]
    assert r["devices"] == ["cpu", "cpu:1"] and r["images"] == 1
