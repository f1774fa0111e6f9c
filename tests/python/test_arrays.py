"""ember.arrays: n-dimensional input keeps its shape through encryption, operations, saving and
decryption (CKKS, BFV, CGGI); any DLPack producer is accepted where numpy arrays are (here a
wrapper exposing only __dlpack__, and torch tensors where torch is installed); decrypt returns
numpy, DLPack-ready arrays or torch tensors on request."""

from __future__ import annotations

import importlib.util

import ember
import numpy as np
import pytest
from ember import bfv, cggi, ckks


class DLPackOnly:
    """An array that numpy can read only through the DLPack protocol (no __array__)."""

    def __init__(self, array):
        self._array = np.ascontiguousarray(array)

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


@pytest.fixture(scope="module")
def ckks_keys():
    ctx = ckks.Context("N13_L3", device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk))
    return ctx, sk


def test_ckks_shapes_survive_operations_and_saving(ckks_keys, rng, tmp_path):
    ctx, sk = ckks_keys
    x, y = rng.uniform(-1, 1, (3, 4, 5)), rng.uniform(-1, 1, (3, 4, 5))
    a = ctx.encrypt(x, sk)
    assert a.shape == (3, 4, 5)
    out = ctx.decrypt(a * ctx.encrypt(DLPackOnly(y), sk) + y - 0.5, sk)
    assert out.shape == (3, 4, 5)
    np.testing.assert_allclose(out, x * y + y - 0.5, atol=1e-5)
    pt = ctx.encode(x)
    assert pt.shape == (3, 4, 5) and ctx.encrypt(pt, sk).shape == (3, 4, 5)
    ember.save(a, tmp_path / "ct")
    assert ember.load(tmp_path / "ct", ctx=ctx).shape == (3, 4, 5)
    flat = ctx.encrypt(x.reshape(-1), sk)  # 1-D input: all slots, as before
    assert flat.shape is None and ctx.decrypt(flat, sk).shape == (ctx.slots,)


def test_outputs_on_request(ckks_keys, rng):
    ctx, sk = ckks_keys
    x = rng.uniform(-1, 1, (2, 3))
    a = ctx.encrypt(DLPackOnly(x), sk)
    for kwargs in ({"out": "numpy"}, {"out": "dlpack"}, {"like": np.zeros(1)}):
        got = ctx.decrypt(a, sk, **kwargs)
        assert isinstance(got, np.ndarray) and got.shape == (2, 3)
        np.testing.assert_allclose(np.from_dlpack(got), x, atol=1e-6)
    # DLPack operands of + - * (a GPU tensor has no __array__ either).
    y = rng.uniform(-1, 1, 6)
    b = ctx.encrypt(y, sk)
    np.testing.assert_allclose(ctx.decrypt(b + DLPackOnly(y), sk)[:6], 2 * y, atol=1e-5)
    np.testing.assert_allclose(ctx.decrypt(b - DLPackOnly(y), sk)[:6], 0 * y, atol=1e-5)
    with pytest.raises(ember.ParameterError, match="out must be"):
        ctx.decrypt(a, sk, out="list")
    with pytest.raises(ember.ParameterError, match="not both"):
        ctx.decrypt(a, sk, out="numpy", like=x)
    if importlib.util.find_spec("torch") is None:
        with pytest.raises(ember.ParameterError, match="PyTorch"):
            ctx.decrypt(a, sk, out="torch")


def test_integer_and_boolean_shapes(rng):
    ctx = bfv.Context("N12_t65537", device="cpu")
    sk = ctx.keygen()
    v = rng.integers(-1000, 1000, (4, 8))
    ct = ctx.encrypt(DLPackOnly(v), sk)
    got = ctx.decrypt(ct + ct, sk)
    assert got.shape == (4, 8) and np.array_equal(got, 2 * v)
    assert ctx.decrypt(ctx.encrypt(ctx.encode_coeffs(v), sk), sk).shape == (4, 8)

    gctx = cggi.Context("test_insecure", device="cpu")
    ck = gctx.keygen()
    bits = rng.integers(0, 2, (2, 3)).astype(bool)
    b = gctx.encrypt(DLPackOnly(bits), ck)
    np.testing.assert_array_equal(gctx.decrypt(b, ck, out="dlpack"), bits)
    q = gctx.encrypt_int(DLPackOnly(np.array([[1, 2], [3, 4]])), ck, bits=4)
    np.testing.assert_array_equal(gctx.decrypt(q, ck), [[1, 2], [3, 4]])


def test_torch_tensors_in_and_out(ckks_keys):
    torch = pytest.importorskip("torch")
    ctx, sk = ckks_keys
    t = torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(3, 4).requires_grad_(True)
    ct = ctx.encrypt(t, sk)
    got = ctx.decrypt(ct * 2, sk, like=t)
    assert isinstance(got, torch.Tensor) and tuple(got.shape) == (3, 4)
    assert torch.allclose(got, 2 * t.detach(), atol=1e-5)
    assert isinstance(ctx.decrypt(ct, sk, out="torch"), torch.Tensor)
