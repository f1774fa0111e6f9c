"""CGGI noise: the measured variance of the phase error after bootstrapping (gates and LUTs)
matches the predicted variance of docs/cggi.md (ember.cggi.predicted_noise) within statistical
bounds, and the presets' predicted failure probabilities are what the docs state."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ember import cggi


@pytest.mark.parametrize(
    ("preset", "samples"), [("test_insecure", 1000), ("test_int_insecure", 1000)]
)
def test_bootstrap_variance_matches_prediction(preset, samples, rng):
    ctx = cggi.Context(preset, device="cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    predicted = ctx.predicted_noise(ck=ck)["bootstrap"]
    # The sample variance of m normal errors has relative standard deviation sqrt(2 / (m - 1)):
    # accept 5 of them, plus 8% for the model's approximations (uniform digits, and the first
    # CMux, whose accumulator mask is still zero, adds no key noise).
    tol = 5 * math.sqrt(2 / (samples - 1))
    bits = ctx.encrypt(rng.integers(0, 2, samples).astype(bool), ck)
    ints = ctx.encrypt_int(rng.integers(0, 16, samples), ck, bits=4)
    for out in (ctx.bootstrap(bits, sk), ctx.apply_lut(ints, list(range(16)), sk)):
        e = ctx.phase_errors(out, ck)
        ratio = float(np.var(e)) / predicted
        assert 1 - tol - 0.08 < ratio < 1 + tol, ratio
        assert abs(float(np.mean(e))) < 5 * math.sqrt(predicted / samples)


def test_preset_failure_probabilities():
    # What docs/cggi.md states, from the same model.
    bool128 = cggi.Params.preset("bool_128").predicted_noise()
    assert bool128["log2_p_fail_gate"] < -64
    for name, bits in (("int2_128", 2), ("int4_128", 4)):
        d = cggi.Params.preset(name).predicted_noise(bits)
        assert d["log2_p_fail_lut"] < -64, (name, d)
    # A 4-bit LUT does not fit bool_128's N = 512: the model says so.
    assert cggi.Params.preset("bool_128").predicted_noise(4)["log2_p_fail_lut"] > -20
