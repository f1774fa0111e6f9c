"""torch and CuPy arrays on the GPU in and out of a GPU context: CUDA tensors are read through
their library's copy to the host (the encoders run there), results come back on the tensor's
device with like=; values as on the CPU. Skipped without a GPU by this directory's conftest, and
without torch."""

from __future__ import annotations

import numpy as np
import pytest
from ember import bgv, cggi, ckks


def test_cuda_tensors_through_ckks_on_the_gpu():
    torch = pytest.importorskip("torch")
    ctx = ckks.Context("N13_L3", device="cuda")
    sk = ctx.keygen()
    t = torch.linspace(-1, 1, 24, dtype=torch.float64, device="cuda").reshape(2, 3, 4)
    ct = ctx.encrypt(t, sk)
    assert ct.shape == (2, 3, 4)
    got = ctx.decrypt(ct * 2 + t, sk, like=t)
    assert isinstance(got, torch.Tensor) and got.device.type == "cuda"
    assert tuple(got.shape) == (2, 3, 4)
    assert torch.allclose(got, 3 * t, atol=1e-4)
    host = ctx.decrypt(ct, sk, out="torch")
    assert host.device.type == "cpu" and torch.allclose(host, t.cpu(), atol=1e-5)


def test_cuda_tensors_through_bgv_and_cggi_on_the_gpu():
    torch = pytest.importorskip("torch")
    ctx = bgv.Context("N13_t65537", device="cuda")
    sk = ctx.keygen()
    v = torch.arange(12, device="cuda").reshape(3, 4)
    got = ctx.decrypt(ctx.encrypt(v, sk), sk, like=v)
    assert got.device.type == "cuda" and torch.equal(got.to(v.dtype), v)
    g = cggi.Context(cggi.Params.preset("test_insecure", insecure=True), device="cuda")
    ck = g.keygen()
    bits = torch.tensor([[1, 0, 1], [0, 1, 1]], dtype=torch.bool, device="cuda")
    out = g.decrypt(g.encrypt(bits, ck), ck, like=bits)
    assert out.device.type == "cuda" and torch.equal(out.bool(), bits)
    assert np.array_equal(g.decrypt(g.encrypt(bits, ck), ck), bits.cpu().numpy())
