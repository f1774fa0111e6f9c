"""HEAAN (big-integer CKKS), CPU vs GPU: with the same fixed sampler key, contexts on "cpu" and on
the GPU produce the same words for the keys, encryptions, BigPoly arithmetic, rescaling, HE Mul
(CRT, NTT, Garner, centered reduction), the automorphism, rotation and conjugation keys and
rotations, and the same words and doubles for encoding and decoding, at a small size and at
N = 2^14 with log Q = 300.

Skipped without a GPU by this directory's conftest; EMBER_EQUIV_DEVICE=cpu runs it CPU against CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DEVICE_SPEC
from ember import _ember

KEY = bytes(range(32))


def run(device: str, n: int, log_q: int) -> dict:
    """Every HEAAN step on `device` from the fixed key; the words of each result."""
    primes = _ember.generate_ntt_primes(30, n, (3 * log_q + 20) // 29 + 2)
    ctx = _ember.HeaanContext(n, log_q, primes, device)
    s = _ember.Sampler(KEY, 0)
    sk = ctx.generate_secret(s)
    pk = ctx.generate_public(sk, s)
    rk = ctx.generate_relin(sk, s)
    rng = np.random.default_rng(n)
    words = (log_q + 63) // 64
    mx = rng.integers(0, 2**63, (n, words), dtype=np.uint64)
    my = rng.integers(0, 2**63, (n, words), dtype=np.uint64)
    px, py = (
        _ember.BigPoly.from_numpy(mx, log_q, device),
        _ember.BigPoly.from_numpy(my, log_q, device),
    )
    a = ctx.encrypt_secret(px, sk, s)
    b = ctx.encrypt_public(py, pk, s)
    c = ctx.multiply(a, b, rk)
    r = ctx.rescale(c, 30)
    rot_key = ctx.generate_rotation(sk, 5, s)  # a rotation by one slot
    conj_key = ctx.generate_rotation(sk, 2 * n - 1, s)
    rot, rot_low = ctx.apply_galois(a, rot_key), ctx.apply_galois(r, rot_key)
    conj = ctx.apply_galois(b, conj_key)
    out = {
        "rot_key": (rot_key.b.to_numpy(), rot_key.a.to_numpy()),
        "conj_key": (conj_key.b.to_numpy(), conj_key.a.to_numpy()),
        "rot": (rot.c0.to_numpy(), rot.c1.to_numpy()),
        "rot_after_mul": (rot_low.c0.to_numpy(), rot_low.c1.to_numpy()),
        "conj": (conj.c0.to_numpy(), conj.c1.to_numpy()),
        "automorphism": px.automorphism(pow(5, 7, 2 * n)).to_numpy(),
        # encoding and decoding on the device (special FFT, rounding, words; signed division)
        "encoded": ctx.encode_slots(
            rng.uniform(-1, 1, n // 2) + 1j * rng.uniform(-1, 1, n // 2), 30
        ).to_numpy(),
        "decoded": ctx.decode_slots(ctx.decrypt(r, sk), 30, n // 2, True, False),
        "decoded_wide": ctx.decode_slots(px, 70, n // 2, False, False),
        "pk": (pk.b.to_numpy(), pk.a.to_numpy()),
        "rk": (rk.b.to_numpy(), rk.a.to_numpy()),
        "a": (a.c0.to_numpy(), a.c1.to_numpy()),
        "b": (b.c0.to_numpy(), b.c1.to_numpy()),
        "mul": (c.c0.to_numpy(), c.c1.to_numpy()),
        "rescaled": (r.c0.to_numpy(), r.c1.to_numpy()),
        "down": ctx.mod_down(r, 37).c0.to_numpy(),
        "dec": ctx.decrypt(r, sk).to_numpy(),
        "add": px.add(py).to_numpy(),
        "sub": px.sub(py).to_numpy(),
        "neg": px.negate().to_numpy(),
        "left": px.shifted(log_q + 70, 70, 0).to_numpy(),
        "right": px.shifted(log_q - 65, 0, 65).to_numpy(),
    }
    return out


@pytest.mark.parametrize("n, log_q", [(64, 120), (1 << 14, 300)])
def test_heaan_words_equal_cpu(n, log_q):
    cpu, gpu = run("cpu", n, log_q), run(DEVICE_SPEC, n, log_q)
    for name in cpu:
        want = cpu[name] if isinstance(cpu[name], tuple) else (cpu[name],)
        got = gpu[name] if isinstance(gpu[name], tuple) else (gpu[name],)
        for w, g in zip(want, got):
            assert np.array_equal(w, g), name


def test_heaan_spread_over_gpus_equals_one_gpu():
    gpus = [f"cuda:{g.index}" for g in _ember.cuda_devices()]
    if DEVICE_SPEC == "cpu" or len(gpus) < 2:
        pytest.skip("needs two GPUs")
    n, log_q = 1 << 13, 240
    primes = _ember.generate_ntt_primes(30, n, (3 * log_q + 20) // 29 + 2)
    ctx = _ember.HeaanContext(n, log_q, primes, gpus[0])
    s = _ember.Sampler(KEY, 0)
    sk = ctx.generate_secret(s)
    rk = ctx.generate_relin(sk, s)
    rng = np.random.default_rng(3)
    words = (log_q + 63) // 64
    m = [
        _ember.BigPoly.from_numpy(
            rng.integers(0, 2**63, (n, words), dtype=np.uint64), log_q, gpus[0]
        )
        for _ in range(2)
    ]
    a, b = ctx.encrypt_secret(m[0], sk, s), ctx.encrypt_secret(m[1], sk, s)
    one = ctx.multiply(a, b, rk)
    for count in range(2, min(4, len(gpus)) + 1):
        devs = gpus[:count]
        keys = [rk if d == gpus[0] else ctx.key_on(rk, d) for d in devs]
        spread = ctx.multiply_spread(a, b, keys, devs)
        assert np.array_equal(spread.c0.to_numpy(), one.c0.to_numpy()), count
        assert np.array_equal(spread.c1.to_numpy(), one.c1.to_numpy()), count


def test_heaan_cuda_tensor_encoded_and_decrypted_on_the_gpu(monkeypatch):
    """A CUDA tensor encodes on the GPU into the words a CPU context makes of the same values,
    and decrypts into a CUDA tensor bit-identical to the CPU's decryption, with every host copy
    of the values refused while it runs."""
    torch = pytest.importorskip("torch")
    if DEVICE_SPEC == "cpu":
        pytest.skip("needs a GPU")
    import warnings

    from ember import heaan
    from ember.errors import SecurityWarning
    from test_gpu_torch import _refuse_host_copies

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        params = heaan.Params.preset("N14_logQ300", insecure=True)
    cpu, gpu = heaan.Context(params, "cpu"), heaan.Context(params, DEVICE_SPEC)
    sk = cpu.keygen()
    gsk = gpu.secret_key_from_bytes(sk.to_bytes())
    values = torch.linspace(-1, 1, 3000, dtype=torch.float64, device=DEVICE_SPEC).reshape(30, 100)
    host = np.linspace(-1, 1, 3000)
    expected_words = cpu.encode(host)[0].to_numpy()
    _refuse_host_copies(monkeypatch, torch=torch)
    m, shape = gpu.encode(values)
    ct = gpu.encrypt(values, gsk)
    out = gpu.decrypt(ct, gsk, like=values)
    monkeypatch.undo()
    assert shape == (30, 100) and np.array_equal(m.to_numpy(), expected_words)
    assert out.is_cuda and out.shape == (30, 100)
    # The bytes carry the slots, not the input's shape: the CPU decrypts every slot.
    want = cpu.decrypt(cpu.ciphertext_from_bytes(ct.to_bytes()), sk)[: host.size]
    assert np.array_equal(out.cpu().numpy().reshape(-1), want)
    assert np.max(np.abs(want - host)) < 2**-12
