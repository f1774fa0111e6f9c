"""BFV and BGV encoding and decoding on the device, CPU vs GPU: an integer CUDA tensor encoded on
the GPU gives the coefficients a CPU context encodes on the host, its encryption (same sampler
key) the same ciphertext words, the operators with it the same words, and decrypt(like=tensor)
a CUDA tensor equal to the CPU's decryption; batched and coefficient encodings. While the device
path runs, every route of the values to the host is blocked (as in test_gpu_torch.py). A value
outside (-t, t) raises the host path's ParameterError.

Skipped without a GPU by this directory's conftest; EMBER_EQUIV_DEVICE=cpu runs the equivalence
tests CPU against CPU (host arrays through the same device path) and skips the torch-only ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ember.arrays
import numpy as np
import pytest
from ember import bfv, bgv, ring
from ember.errors import ParameterError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ctwords import same_words

KEY = bytes(32)
SCHEMES = {"bfv": bfv, "bgv": bgv}
PARAMS = {
    "bfv": {"log_n": 12, "plain_modulus": 65537, "q_bits": (40, 40, 40), "special_bits": (45,)},
    "bgv": {"log_n": 12, "plain_modulus": 65537, "q_bits": (50, 36, 36), "special_bits": (50,)},
}


class Side:
    def __init__(self, scheme, device):
        params = SCHEMES[scheme].Params(**PARAMS[scheme], insecure=True)
        self.ctx = SCHEMES[scheme].Context(params, device=device)
        self.ctx._sampler = ring.Sampler(KEY)
        self.sk = self.ctx.keygen()
        self.pk = self.ctx.public_key(self.sk)
        self.ctx.set_eval_keys(self.ctx.eval_keys(self.sk))

    def reseed(self, nonce):
        self.ctx._sampler = ring.Sampler(KEY, nonce)


@pytest.fixture(scope="module", params=list(SCHEMES))
def pair(request, gpu):
    return Side(request.param, "cpu"), Side(request.param, gpu)


def _on_device(values: np.ndarray, device: str):
    """The values as the device path reads them: a CUDA torch tensor on a GPU, else (CPU self-
    check) the numpy array itself."""
    if device.startswith("cuda"):
        torch = pytest.importorskip("torch")
        return torch.from_numpy(values).to(device)
    return values


def _encode(ctx, values, batched: bool):
    """The device path's plaintext (encode / encode_coeffs of a CUDA array on a GPU context)."""
    if ctx._cuda_index is None:
        pt = ctx._encode_native(values, batched)
    else:
        pt = ctx.encode(values) if batched else ctx.encode_coeffs(values)
    assert pt.on_device
    return pt


def _count(values) -> int:
    """How many values an array holds (torch tensors have numel, numpy and CuPy arrays size)."""
    return int(values.numel()) if hasattr(values, "numel") else int(np.size(values))


def _decrypt(ctx, ct, sk, like):
    """The device path's decryption as a numpy array (decrypt(like=CUDA tensor) on a GPU)."""
    if ctx._cuda_index is None:
        return ctx.decode(ctx._decrypt_plaintext(ct, sk), out="numpy")[: _count(like)]
    got = ctx.decrypt(ct, sk, like=like)  # every slot: the ciphertext of a 1-D input has no shape
    assert got.device == like.device and tuple(got.shape) == (ctx.slots,)
    return got.cpu().numpy()[: _count(like)]


@pytest.mark.parametrize("batched", [True, False])
def test_device_encoding_and_encryption_equal_the_cpu_host_path(pair, batched):
    cpu, dev = pair
    t = cpu.ctx.plain_modulus
    rng = np.random.default_rng(11)
    v = rng.integers(-t + 1, t, 3000).astype(np.int64)
    x = _on_device(v, dev.ctx.device)
    host = cpu.ctx.encode(v) if batched else cpu.ctx.encode_coeffs(v)
    pt = _encode(dev.ctx, x, batched)
    np.testing.assert_array_equal(pt.coeffs, host.coeffs)
    for key_name, nonce in (("pk", 1), ("sk", 2)):
        cpu.reseed(nonce)
        dev.reseed(nonce)
        a = cpu.ctx.encrypt(host, getattr(cpu, key_name))
        b = dev.ctx.encrypt(pt, getattr(dev, key_name))
        assert same_words(a, b) and a._raw.factor == b._raw.factor
    expected = cpu.ctx.decrypt(a, cpu.sk)[: v.size]
    np.testing.assert_array_equal(_decrypt(dev.ctx, b, dev.sk, x), expected)
    # The operators with the device plaintext: the host plaintext's words.
    w = _on_device(v[::-1].copy(), dev.ctx.device)
    pw_host = cpu.ctx.encode(v[::-1].copy()) if batched else cpu.ctx.encode_coeffs(v[::-1].copy())
    pw = _encode(dev.ctx, w, batched)
    for op in (lambda c, p: c + p, lambda c, p: c - p, lambda c, p: c * p):
        assert same_words(op(a, pw_host), op(b, pw))
    deeper_a, deeper_b = a * a, b * b
    assert same_words(deeper_a + pw_host, deeper_b + pw)
    np.testing.assert_array_equal(
        _decrypt(dev.ctx, deeper_b - pw, dev.sk, x),
        cpu.ctx.decrypt(deeper_a - pw_host, cpu.sk)[: v.size],
    )


def test_device_encoding_of_narrow_integer_dtypes(pair):
    cpu, dev = pair
    v = np.arange(-100, 100, dtype=np.int64)
    for dtype in (np.int8, np.int16, np.int32):
        pt = _encode(dev.ctx, _on_device(v.astype(dtype), dev.ctx.device), True)
        np.testing.assert_array_equal(pt.coeffs, cpu.ctx.encode(v).coeffs)


def test_out_of_range_value_raises_on_the_device(pair):
    cpu, dev = pair
    t = cpu.ctx.plain_modulus
    for bad in ([0, t, 1], [-t, 0]):
        x = _on_device(np.array(bad, dtype=np.int64), dev.ctx.device)
        with pytest.raises(ParameterError, match=r"\(-t, t\)"):
            _encode(dev.ctx, x, True)
        with pytest.raises(ParameterError, match=r"\(-t, t\)"):
            cpu.ctx.encode(np.array(bad))


def _refuse_host_copies(monkeypatch, torch):
    """Every route of a tensor's values to the host fails while the test runs (see
    test_gpu_torch.py)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the values were copied to the host")

    monkeypatch.setattr(ember.arrays, "to_numpy", refuse)
    for name in ("cpu", "numpy", "__array__", "tolist"):
        monkeypatch.setattr(torch.Tensor, name, refuse)
    monkeypatch.setattr(torch, "from_numpy", refuse)


@pytest.mark.parametrize("scheme", list(SCHEMES))
@pytest.mark.parametrize("batched", [True, False])
def test_cuda_tensors_in_and_out_without_host_copies(monkeypatch, gpu, scheme, batched):
    if not gpu.startswith("cuda"):
        pytest.skip("CUDA tensors need a GPU (EMBER_EQUIV_DEVICE=cpu)")
    torch = pytest.importorskip("torch")
    side = Side(scheme, gpu)
    ctx, sk = side.ctx, side.sk
    t = ctx.plain_modulus
    x = torch.arange(-600, 600, device=gpu, dtype=torch.int64).reshape(30, 40) * 50
    y = torch.full((30, 40), 7, device=gpu, dtype=torch.int32)
    expected = ((x * 8 + 7 + t // 2) % t) - t // 2
    _refuse_host_copies(monkeypatch, torch)
    pt = ctx.encode(x) if batched else ctx.encode_coeffs(x)
    ct = ctx.encrypt(pt, side.pk)
    py = ctx.encode(y) if batched else ctx.encode_coeffs(y)
    z = ct * 8 + py
    got = ctx.decrypt(z, sk, like=x)
    raw = torch.from_dlpack(ctx.decrypt(ct, sk, out="dlpack"))
    decoded = ctx.decode(pt, like=x)
    bad = x.clone()
    bad[3, 4] = t
    with pytest.raises(ParameterError, match=r"\(-t, t\)"):
        ctx.encode(bad) if batched else ctx.encode_coeffs(bad)
    monkeypatch.undo()
    assert pt.on_device and py.on_device
    assert got.device == x.device and got.dtype == torch.int64 and tuple(got.shape) == (30, 40)
    assert torch.equal(got, expected)
    assert raw.device == x.device and torch.equal(raw, x)
    assert decoded.device == x.device and torch.equal(decoded, x)
