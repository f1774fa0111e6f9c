"""CGGI on the GPU: every gate, the programmable bootstrapping and the bootstrapping key's transform
give the CPU's ciphertexts word for word (keys and inputs made on the CPU and moved through their
serialized bytes), and GPU results decrypt to the truth tables. Skipped without a GPU by this
directory's conftest."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from ember import cggi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from test_cggi import GATES

TRUTH = GATES  # gate name -> its truth function on numpy bools
GATES = list(TRUTH)


def _pair(name: str):
    params = cggi.Params.preset(name, insecure=True)
    cpu = cggi.Context(params, device="cpu")
    gpu = cggi.Context(params, device="cuda")
    ck = cpu.keygen()
    sk = cpu.server_key(ck, progress=False)
    gck = gpu.client_key_from_bytes(ck.to_bytes())
    gsk = gpu.server_key_from_bytes(sk.to_bytes())
    return cpu, gpu, ck, sk, gck, gsk


@pytest.fixture(scope="module", params=["test_insecure", "bool_128"])
def kit(request):
    return _pair(request.param)


def _moved(gpu, c):
    return gpu.ciphertext_from_bytes(c.to_bytes())


@pytest.mark.parametrize("gate", GATES)
def test_every_gate_gives_the_cpu_words(kit, gate):
    cpu, gpu, ck, sk, gck, gsk = kit
    a_bits = np.array([0, 0, 1, 1] * 4, dtype=bool)
    b_bits = np.array([0, 1, 0, 1] * 4, dtype=bool)
    a, b = cpu.encrypt(a_bits, ck), cpu.encrypt(b_bits, ck)
    want = getattr(cpu, gate)(a, b, sk)
    got = getattr(gpu, gate)(_moved(gpu, a), _moved(gpu, b), gsk)
    assert got.device.startswith("cuda")
    assert got.to_bytes() == want.to_bytes()
    assert np.array_equal(gpu.decrypt(got, gck), TRUTH[gate](a_bits, b_bits))


def test_mux_and_a_chain_on_the_gpu(kit):
    cpu, gpu, ck, sk, gck, gsk = kit
    rng = np.random.default_rng(7)
    s, x, y = (rng.integers(0, 2, 64).astype(bool) for _ in range(3))
    es, ex, ey = (cpu.encrypt(v, ck) for v in (s, x, y))
    want = cpu.mux(es, ex, ey, sk)
    got = gpu.mux(_moved(gpu, es), _moved(gpu, ex), _moved(gpu, ey), gsk)
    assert got.to_bytes() == want.to_bytes()
    assert np.array_equal(gpu.decrypt(got, gck), np.where(s, x, y))
    # 50 dependent XORs on the GPU alone.
    acc, ref = _moved(gpu, ex), x.copy()
    for _ in range(50):
        acc = gpu.xor(acc, _moved(gpu, ey), gsk)
        ref ^= y
    assert np.array_equal(gpu.decrypt(acc, gck), ref)


@pytest.mark.parametrize("gate", ["maj", "xor3"])
def test_three_input_gates_give_the_cpu_words(kit, gate):
    cpu, gpu, ck, sk, gck, gsk = kit
    rng = np.random.default_rng(9)
    x, y, z = (rng.integers(0, 2, 64).astype(bool) for _ in range(3))
    ex, ey, ez = (cpu.encrypt(v, ck) for v in (x, y, z))
    want = getattr(cpu, gate)(ex, ~ey, ez, sk)
    got = getattr(gpu, gate)(_moved(gpu, ex), ~_moved(gpu, ey), _moved(gpu, ez), gsk)
    assert got.to_bytes() == want.to_bytes()
    ny = ~y
    ref = (x & ny) | (x & z) | (ny & z) if gate == "maj" else x ^ ny ^ z
    assert np.array_equal(gpu.decrypt(got, gck), ref)


def test_take_gives_the_cpu_words(kit):
    cpu, gpu, ck, _, gck, _ = kit
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, 300).astype(bool)
    ex = cpu.encrypt(x, ck)
    idx = rng.integers(0, 300, 1000)
    want = cpu.take(ex, idx)
    got = gpu.take(_moved(gpu, ex), idx)
    assert got.to_bytes() == want.to_bytes()
    assert np.array_equal(gpu.decrypt(got, gck), x[idx])


def test_programmable_bootstrapping_gives_the_cpu_words():
    cpu, gpu, ck, sk, gck, gsk = _pair("test_int_insecure")
    values = np.arange(16) % 8
    q = cpu.encrypt_int(values, ck, bits=3)
    want = cpu.apply_lut(q, lambda v: (v * v + 1) % 8, sk)
    got = gpu.apply_lut(_moved(gpu, q), lambda v: (v * v + 1) % 8, gsk)
    assert got.to_bytes() == want.to_bytes()
    assert np.array_equal(gpu.decrypt_int(got, gck), (values * values + 1) % 8)


@pytest.mark.parametrize("group", [1, 2, 4])
def test_every_rotation_group_gives_the_cpu_words(kit, group):
    # The Fourier rotation's ciphertexts per block (backend option cggi_rotation_group) change
    # which kernel runs, never the words; 37 ciphertexts leave a partial group.
    import ember

    cpu, gpu, ck, sk, _gck, gsk = kit
    rng = np.random.default_rng(group)
    x, y = rng.integers(0, 2, 37).astype(bool), rng.integers(0, 2, 37).astype(bool)
    ex, ey = cpu.encrypt(x, ck), cpu.encrypt(y, ck)
    want = cpu.xnor(ex, ey, sk)
    with ember.using_backend_options("cuda", cggi_rotation_group=group):
        got = gpu.xnor(_moved(gpu, ex), _moved(gpu, ey), gsk)
    assert got.to_bytes() == want.to_bytes()


def test_large_batch_on_the_gpu():
    cpu, gpu, ck, _sk, gck, gsk = _pair("test_insecure")
    rng = np.random.default_rng(3)
    # Past the 2^18 ciphertexts of one chunk of the key switch and rotation (Context's split).
    n = (1 << 18) + 37
    a_bits, b_bits = rng.integers(0, 2, n).astype(bool), rng.integers(0, 2, n).astype(bool)
    a = _moved(gpu, cpu.encrypt(a_bits, ck))
    b = _moved(gpu, cpu.encrypt(b_bits, ck))
    assert np.array_equal(gpu.decrypt(gpu.nand(a, b, gsk), gck), ~(a_bits & b_bits))


def test_bootstrap_noise_on_1e5_gpu_samples_matches_prediction():
    # bool_128 on the GPU: the phase error of 10^5 bootstraps has the predicted variance (the
    # sample variance's relative standard deviation is sqrt(2 / (m - 1)): 5 of them, plus the
    # model's 8 % allowance, as in tests/python/test_cggi_noise.py) and a zero mean.
    import math

    samples = 100_000
    ctx = cggi.Context("bool_128", device="cuda")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    predicted = ctx.predicted_noise(ck=ck)["bootstrap"]
    bits = ctx.encrypt(np.random.default_rng(9).integers(0, 2, samples).astype(bool), ck)
    e = ctx.phase_errors(ctx.bootstrap(bits, sk), ck)
    assert e.size == samples
    tol = 5 * math.sqrt(2 / (samples - 1))
    ratio = float(np.var(e)) / predicted
    assert 1 - tol - 0.08 < ratio < 1 + tol, ratio
    assert abs(float(np.mean(e))) < 5 * math.sqrt(predicted / samples)


def test_moves_to_the_gpu_and_back():
    params = cggi.Params.preset("test_insecure", insecure=True)
    cpu = cggi.Context(params, device="cpu")
    ck = cpu.keygen()
    sk = cpu.server_key(ck, progress=False)
    x = np.array([0, 1, 0, 1], dtype=bool)
    y = np.array([0, 0, 1, 1], dtype=bool)
    a, b = cpu.encrypt(x, ck), cpu.encrypt(y, ck)
    gpu = cpu.to("cuda")
    got = gpu.nor(a.to(gpu.device), b.to(gpu.device), sk.to(gpu.device))
    assert got.device == gpu.device
    assert got.to("cpu").to_bytes() == cpu.nor(a, b, sk).to_bytes()
