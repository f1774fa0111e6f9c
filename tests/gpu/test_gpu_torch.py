"""torch and CuPy arrays on the GPU in and out of a GPU context. CKKS reads a CUDA tensor or CuPy
array on its own GPU in place (encoding on the device) and decodes into device memory handed
over through DLPack (like=, out="dlpack"): the tests forbid every copy of the values to the host
while they run, and compare the words and values with a CPU context's bit for bit. CGGI still
encodes on the host (a copy there); BFV/BGV's device path is tested in
test_gpu_integer_device.py. Skipped without a GPU by this directory's conftest,
without torch, and (CuPy tests) without CuPy."""

from __future__ import annotations

import ember.arrays
import numpy as np
import pytest
from ember import bgv, cggi, ckks
from ember.errors import ParameterError


def _refuse_host_copies(monkeypatch, torch=None, cupy=None):
    """Makes every route of an array's values to the host fail while the test runs: the
    library's own copies (Tensor.cpu/numpy/__array__/tolist, torch.from_numpy, cupy.asnumpy)
    and ember's (arrays.to_numpy, through which every host copy of an input goes)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the values were copied to the host")

    monkeypatch.setattr(ember.arrays, "to_numpy", refuse)
    if torch is not None:
        for name in ("cpu", "numpy", "__array__", "tolist"):
            monkeypatch.setattr(torch.Tensor, name, refuse)
        monkeypatch.setattr(torch, "from_numpy", refuse)
    if cupy is not None:
        monkeypatch.setattr(cupy, "asnumpy", refuse)  # (cupy.ndarray, a C type, takes no patch)


def test_cuda_tensor_encoded_and_decoded_on_the_gpu_without_host_copies(monkeypatch):
    torch = pytest.importorskip("torch")
    ctx = ckks.Context("N13_L3", device="cuda")
    sk = ctx.keygen()
    t = torch.linspace(-1, 1, 24, dtype=torch.float64, device="cuda").reshape(2, 3, 4)
    expected = t.clone()
    _refuse_host_copies(monkeypatch, torch=torch)
    pt = ctx.encode(t)
    assert pt.encoded_on_device and pt.shape == (2, 3, 4)
    ct = ctx.encrypt(t, sk)
    got = ctx.decrypt(ct * 2 - t, sk, like=t)
    raw = ctx.decrypt(ct, sk, out="dlpack")
    from_raw = torch.from_dlpack(raw)
    decoded = ctx.decode(pt, like=t)
    monkeypatch.undo()
    assert decoded.device == t.device and torch.allclose(decoded, expected, atol=1e-6)
    assert isinstance(got, torch.Tensor) and got.device == t.device
    assert tuple(got.shape) == (2, 3, 4)
    assert torch.allclose(got, expected, atol=1e-4)
    assert from_raw.device == t.device and tuple(from_raw.shape) == (2, 3, 4)
    assert torch.allclose(from_raw, expected, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "complex64", "int64"])
def test_cuda_tensor_words_equal_the_cpu_context(dtype):
    """A CUDA tensor encoded in place on the GPU gives the words a CPU context encodes from the
    same values; the decryptions (on the GPU, like=tensor) equal the CPU's bit for bit."""
    torch = pytest.importorskip("torch")
    from ember import ring

    key = bytes(32)
    cpu = ckks.Context("N13_L3", device="cpu")
    gpu = ckks.Context("N13_L3", device="cuda")
    gen = torch.Generator().manual_seed(3)
    host = torch.rand(cpu.slots, generator=gen, dtype=torch.float64) * 2 - 1
    if dtype.startswith("complex"):
        host = torch.complex(host, host.flip(0))
    host = host.to(getattr(torch, dtype)) if dtype != "int64" else (host * 100).to(torch.int64)
    t = host.to("cuda")
    for level, scale in ((cpu.max_level, None), (1, 2.0**70), (0, None)):
        c = cpu.encode(host.numpy(), level, scale)
        g = gpu.encode(t, level, scale)
        assert g.encoded_on_device
        np.testing.assert_array_equal(g._poly.to_numpy(), c._poly.to_numpy())
    sparse = t[:64]
    np.testing.assert_array_equal(
        gpu.encode(sparse, sparse=True)._poly.to_numpy(),
        cpu.encode(host[:64].numpy(), sparse=True)._poly.to_numpy(),
    )
    cpu._sampler, gpu._sampler = ring.Sampler(key), ring.Sampler(key)
    sk_c, sk_g = cpu.keygen(), gpu.keygen()
    cpu._sampler, gpu._sampler = ring.Sampler(key, 1), ring.Sampler(key, 1)
    ct_c, ct_g = cpu.encrypt(host.numpy(), sk_c), gpu.encrypt(t, sk_g)
    got = gpu.decrypt(ct_g, sk_g, like=t)
    assert got.device == t.device
    np.testing.assert_array_equal(got.cpu().numpy(), cpu.decrypt(ct_c, sk_c))


def test_cuda_tensor_mismatches():
    torch = pytest.importorskip("torch")
    t = torch.linspace(-1, 1, 8, dtype=torch.float64, device="cuda")
    # A CPU context copies a CUDA tensor to the host (documented) and returns it on its device.
    cpu = ckks.Context("N13_L3", device="cpu")
    sk = cpu.keygen()
    back = cpu.decrypt(cpu.encrypt(t, sk), sk, like=t)
    assert back.device == t.device and torch.allclose(back[:8], t, atol=1e-5)
    if torch.cuda.device_count() < 2:
        return
    other = ckks.Context("N13_L3", device="cuda:1")
    with pytest.raises(ParameterError, match="cuda:0"):
        other.encode(t)


def test_cupy_arrays_encoded_and_decoded_on_the_gpu_without_host_copies(monkeypatch):
    cupy = pytest.importorskip("cupy")
    ctx = ckks.Context("N13_L3", device="cuda")
    sk = ctx.keygen()
    a = cupy.linspace(-1, 1, 24, dtype=cupy.float64).reshape(4, 6)
    expected = cupy.asnumpy(a)
    _refuse_host_copies(monkeypatch, cupy=cupy)
    ct = ctx.encrypt(a, sk)
    got = ctx.decrypt(ct, sk, like=a)
    monkeypatch.undo()
    assert isinstance(got, cupy.ndarray) and got.shape == (4, 6)
    assert np.allclose(cupy.asnumpy(got), expected, atol=1e-5)
    cpu = ckks.Context("N13_L3", device="cpu")
    np.testing.assert_array_equal(
        ctx.encode(a)._poly.to_numpy(), cpu.encode(expected)._poly.to_numpy()
    )


def test_cuda_tensors_through_ckks_on_the_gpu():
    """Arithmetic with CUDA tensors as operands (encoded in place too) and out="torch" (a CPU
    tensor, as before)."""
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
