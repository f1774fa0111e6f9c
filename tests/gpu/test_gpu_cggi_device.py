"""CGGI bits and integers in GPU memory: a CUDA tensor encrypts with its messages added on the GPU
(the masks and noise from the host's CSPRNG, as the host path draws them) and decrypts into a
CUDA tensor, with every host copy of the values refused while it runs; the CPU decrypts the same
ciphertexts to the same values, and gates and lookups run on them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DEVICE_SPEC
from ember import cggi
from test_gpu_torch import _refuse_host_copies


@pytest.fixture
def torch():
    """torch, for tests of CUDA tensors (skipped without it or without a GPU)."""
    module = pytest.importorskip("torch")
    if DEVICE_SPEC == "cpu":
        pytest.skip("needs a GPU")
    return module


def test_cuda_bits_encrypt_and_decrypt_on_the_gpu(monkeypatch, torch):
    gpu = cggi.Context("test_insecure", DEVICE_SPEC)
    cpu = gpu.to("cpu")
    ck = gpu.keygen()
    sk = gpu.server_key(ck)
    rng = np.random.default_rng(5)
    host = rng.integers(0, 2, size=(6, 40)).astype(bool)
    bits = torch.from_numpy(host).to(DEVICE_SPEC)
    ints = torch.from_numpy(host.astype(np.int32)).to(DEVICE_SPEC)
    _refuse_host_copies(monkeypatch, torch=torch)
    a = gpu.encrypt(bits, ck)
    b = gpu.encrypt(ints, ck)
    out = gpu.decrypt(a, ck, like=bits)
    conj = gpu.decrypt(gpu.and_(a, b, sk), ck, like=bits)
    monkeypatch.undo()
    assert out.is_cuda and out.dtype == torch.bool and tuple(out.shape) == host.shape
    assert np.array_equal(out.cpu().numpy(), host)
    assert np.array_equal(conj.cpu().numpy(), host)
    assert np.array_equal(cpu.decrypt(a.to("cpu"), ck), host)
    assert np.array_equal(cpu.decrypt(b.to("cpu"), ck), host)
    assert np.array_equal(gpu.decrypt(a, ck), host)  # the host path's decryption agrees
    with pytest.raises(ValueError, match="0 or 1"):
        gpu.encrypt(torch.tensor([0, 2, 1], device=DEVICE_SPEC), ck)


def test_cuda_integers_encrypt_and_decrypt_on_the_gpu(monkeypatch, torch):
    gpu = cggi.Context("int2_128", DEVICE_SPEC)
    cpu = gpu.to("cpu")
    ck = gpu.keygen()
    host = np.random.default_rng(6).integers(0, 4, size=(3, 7))
    values = torch.from_numpy(host).to(DEVICE_SPEC)
    _refuse_host_copies(monkeypatch, torch=torch)
    q = gpu.encrypt_int(values, ck, bits=2)
    out = gpu.decrypt(q, ck, like=values)
    monkeypatch.undo()
    assert out.is_cuda and out.dtype == torch.int64 and tuple(out.shape) == host.shape
    assert np.array_equal(out.cpu().numpy(), host)
    assert np.array_equal(cpu.decrypt_int(q.to("cpu"), ck), host)
    with pytest.raises(ValueError, match="\\[0, 4\\)"):
        gpu.encrypt_int(torch.tensor([0, 4], device=DEVICE_SPEC), ck, bits=2)
