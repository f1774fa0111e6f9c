"""device=None means the default device everywhere: ember.set_default_device, then
EMBER_DEVICE, then "auto" (contexts of every scheme, the ring layer, the device lists of the
applications)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import bfv, bgv, cggi, ckks, ring
from ember.apps.runner import device_list


@pytest.fixture
def default_device(monkeypatch):
    """Restores the process's default device after the test (set_default_device is global)."""
    monkeypatch.setattr(ember, "_default_device", None)
    monkeypatch.delenv("EMBER_DEVICE", raising=False)
    yield


def contexts():
    return [
        ckks.Context("N13_L3"),
        bfv.Context("N12_t65537"),
        bgv.Context("N13_t65537"),
        cggi.Context("test_insecure"),
    ]


def test_set_default_device_places_new_contexts(default_device):
    ember.set_default_device("cpu:1")
    for ctx in contexts():
        assert ctx.device == "cpu:1", type(ctx)
    basis = ckks.Context("N13_L3")._raw.q_basis(0)
    assert ring.poly(basis, np.zeros((1, basis.n), dtype=np.uint64)).device == "cpu:1"
    assert device_list(None, None) == ["cpu:1"]
    assert ckks.Context("N13_L3", device="cpu").device == "cpu"  # an explicit device wins
    assert ckks.Context("N13_L3", device="auto").device == ember.resolve_device("auto")


def test_ember_device_environment(default_device, monkeypatch):
    monkeypatch.setenv("EMBER_DEVICE", "cpu:2")
    for ctx in contexts():
        assert ctx.device == "cpu:2", type(ctx)
    ember.set_default_device("cpu:1")  # the setting comes before the environment
    assert ckks.Context("N13_L3").device == "cpu:1"


def test_computation_on_the_default_device(default_device, rng):
    ember.set_default_device("cpu:1")
    ctx = ckks.Context("N13_L3")
    sk = ctx.keygen()
    x = rng.uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, sk)
    assert ct.device == "cpu:1"
    np.testing.assert_allclose(ctx.decrypt(ct + ct, sk), 2 * x, atol=1e-6)
