"""HELR (ember.apps.helr): the data and reference pieces, the packed slot algorithm simulated in
numpy against the reference step, and encrypted training on a small insecure bootstrapping set
(N = 2^12, 4 x 4 pooled pixels, batches of 256, 2 iterations): the encrypted weights track the
numpy reference after every iteration, every iteration bootstraps, and two CPU devices give the
same ciphertexts as one."""

from __future__ import annotations

from pathlib import Path

import ember
import numpy as np
import pytest
from ember.apps import helr_data
from ember.apps.helr import WEIGHT_TOLERANCE, HelrTrainer, Layout, small_insecure_params

MNIST = Path(__file__).resolve().parents[3] / "shared" / "data" / "mnist"
needs_mnist = pytest.mark.skipif(
    not (MNIST / "train-images-idx3-ubyte.gz").exists(), reason=f"no MNIST data at {MNIST}"
)


def test_sigmoid_fit_is_kim_et_al_sigma3():
    # sigma_3(x) = 0.5 + 1.20096 (x / 8) - 0.81562 (x / 8)^3 fits sigmoid(x) on [-8, 8].
    c = helr_data.sigmoid_fit(3)
    assert np.allclose(c, [0.5, -1.20096 / 8, 0.0, 0.81562 / 512], atol=1e-5)
    x = np.linspace(-8, 8, 101)
    assert np.max(np.abs(np.polynomial.Polynomial(c)(x) - 1 / (1 + np.exp(x)))) < 0.12


def test_nesterov_weights():
    etas = helr_data.nesterov_weights(32)
    lam = [1.0]
    for _ in range(32):
        lam.append((1 + np.sqrt(1 + 4 * lam[-1] ** 2)) / 2)
    assert etas[0] == 0.0
    assert np.allclose(etas, [(1 - lam[t]) / lam[t + 1] for t in range(32)])
    assert all(-1 < e < 0 for e in etas[1:]) and etas[-1] < etas[1]


def _roll(x, step):
    """ctx.rotate's slot semantics: slot i gets slot i + step."""
    return np.roll(x, -step)


@pytest.mark.parametrize(
    "slots, features, samples",
    [
        (2048, 17, 200),  # 32 padded features, 64 samples a block; the last block partly zero
        (32768, 197, 1024),  # N16_boot's: 256 padded features, 128 samples a block, 4 blocks
    ],
)
def test_packed_slot_algorithm_is_the_reference_step(rng, slots, features, samples):
    """The slot algorithm of ember.apps.helr on plain complex vectors (np.roll for rotations)
    gives the reference gradient step in every slot of every feature block."""
    layout = Layout(slots, features)
    z = rng.uniform(-1, 1, (samples, features)) / np.sqrt(features)
    v = rng.uniform(-3, 3, features)
    a0, a1, _, a3 = helr_data.sigmoid_fit(3)
    step = 0.5 / len(z)
    vs = layout.spread(v)
    total = np.zeros(layout.slots, dtype=complex)
    for zc in layout.complex_blocks(z):
        u = zc * vs
        for s in layout.feature_steps():
            u = u + _roll(u, s)
        uc = np.conj(u)
        t = a0 * (1 + 1j) + a1 * u + a3 / 4 * uc * (3 * u * u + np.conj(u * u))
        total += t * np.conj(zc)
    for s in layout.row_steps():
        total = total + _roll(total, s)
    total = total * layout.row_mask(step)
    for s in layout.row_steps():
        total = total + _roll(total, -s)
    poly = np.polynomial.Polynomial(helr_data.sigmoid_fit(3))
    want = step * (poly(z @ v) @ z)
    assert np.allclose(total.real, layout.spread(want), atol=1e-12)
    assert np.allclose(layout.first_rows(total.real), want, atol=1e-12)


def test_layout_and_parameter_errors(tmp_path):
    with pytest.raises(ember.ParameterError, match="features"):
        Layout(2048, 1025)
    with pytest.raises(ember.ParameterError, match="levels"):
        HelrTrainer(MNIST, "cpu", small_insecure_params(levels=2))
    with pytest.raises(ember.ParameterError, match="bootstrapping"):
        HelrTrainer(MNIST, "cpu", "N13_L3")
    with pytest.raises(ember.ParameterError, match="MNIST"):
        HelrTrainer(tmp_path, "cpu", small_insecure_params())
    with pytest.raises(ember.ParameterError, match="features=50"):
        helr_data.load_digits(MNIST, "t10k", 50)


@pytest.fixture(scope="module")
def trainer():
    # 7 levels between bootstraps, one more than an iteration takes: the iteration runs on the
    # lowest 6 and the bootstrapped v is brought down to the data's level, as on N16_boot.
    return HelrTrainer(
        MNIST, "cpu", small_insecure_params(7), iterations=2, batch=256, features=16, seed=3
    )


@pytest.fixture(scope="module")
def one_device(trainer):
    return trainer.run(["cpu"])


@needs_mnist
def test_encrypted_training_tracks_the_reference(trainer, one_device):
    ctx = trainer.ctx
    res = one_device
    assert len(res["max_weight_difference"]) == 2
    assert max(res["max_weight_difference"]) <= WEIGHT_TOLERANCE
    assert max(res["max_v_difference"]) <= WEIGHT_TOLERANCE
    for got, (w_ref, _) in zip(res["weights_per_iteration"], trainer.reference):
        assert np.max(np.abs(got - w_ref)) <= WEIGHT_TOLERANCE
    # The model moved (a zero model would match a zero reference trivially).
    assert np.max(np.abs(trainer.reference[-1][0])) > 50 * WEIGHT_TOLERANCE
    # v went down to the bootstrapping level every iteration and came back to the top for the
    # next one (only a bootstrap raises a level); the last v is not needed, w never is.
    for lv in res["levels"]:
        assert lv["v_bootstrapped_from"] == ctx.min_bootstrap_level
        assert lv["w"] == ctx.min_bootstrap_level + 1
    assert [lv["v"] for lv in res["levels"]] == [ctx.max_level, ctx.min_bootstrap_level]
    assert abs(res["encrypted_accuracy"] - res["plaintext_accuracy"]) <= 0.005
    assert res["plaintext_accuracy"] > 0.7


@needs_mnist
def test_two_devices_give_the_same_ciphertexts(trainer, one_device):
    two = trainer.run(["cpu", "cpu:1"])
    for a, b in zip(one_device["weights_per_iteration"], two["weights_per_iteration"]):
        assert np.array_equal(a, b)
    assert two["max_weight_difference"] == one_device["max_weight_difference"]
    # The second device computes its part with the product's, the feature sum's and the
    # conjugation keys only: the bootstrapping keys stay on the first.
    keys = trainer.ctx._context_on("cpu:1")._eval_keys
    assert keys.boot is None and len(keys.galois) == len(trainer.layout.feature_steps()) + 1


@needs_mnist
def test_report_is_json_ready(trainer, one_device):
    import json

    from ember.apps.helr import _report

    rep = _report(trainer, one_device)
    json.loads(json.dumps(rep))
    assert rep["weights_ok"] and rep["accuracy_ok"] and rep["weight_bound_ok"]
    assert rep["operations_per_iteration"]["bootstraps_real"] == 1
    assert rep["samples_per_ciphertext"] == 2048 // 32
    assert rep["data_level"] == trainer.ctx.max_level - 1
    assert rep["operations_per_iteration"]["scalar_products"] == 2 * 2 + 3
    assert rep["complex_ciphertexts_per_batch"] == 2


@needs_mnist
def test_command_line_runs_helr(capsys):
    """`ember apps run helr` on the CPU (its small insecure size), two iterations: the report's
    checks pass and the exit status says so."""
    from ember.cli import main

    args = ["apps", "run", "helr", "--device", "cpu", "--iterations", "2", "--no-progress"]
    assert main(args + ["--data", str(MNIST)]) == 0
    out = capsys.readouterr().out
    assert '"weights_ok": true' in out and '"accuracy_ok": true' in out
