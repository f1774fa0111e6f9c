"""Issue 25's hardening on the GPU: exact decoding of large values, flooding and deserialization
checks give the CPU's results on the GPU, and a child forked after the parent used the GPU gets a
clear DeviceError (a CUDA context does not survive fork) instead of a hang or a crash.

Skipped without a GPU by this directory's conftest."""

from __future__ import annotations

import sys
from pathlib import Path

import ember
import numpy as np
import pytest
from ember import bfv, ckks, ring

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from isolated import run_python

KEY = bytes(range(32))


def _pair(scheme, preset, gpu):
    out = []
    for device in ("cpu", gpu):
        ctx = scheme.Context(preset, device=device)
        ctx._sampler = ring.Sampler(KEY)
        out.append(ctx)
    return out


@pytest.mark.parametrize("value", [2e14, 1e30])
def test_large_values_decrypt_identically(gpu, value):
    cpu, dev = _pair(ckks, "N13_L3", gpu)
    sk_c, sk_g = cpu.keygen(), dev.keygen()
    x = np.full(cpu.slots, value)
    x[::5] = -value / 3
    a, b = cpu.encrypt(x, sk_c), dev.encrypt(x, sk_g)
    for i in range(2):
        assert np.array_equal(a._raw.poly(i).to_numpy(), b._raw.poly(i).to_numpy())
    va, vb = cpu.decrypt(a, sk_c), dev.decrypt(b, sk_g)
    assert np.array_equal(va, vb)
    assert np.max(np.abs(va - x)) / value < 1e-9


def test_wrapped_values_raise_on_the_gpu(gpu):
    _, dev = _pair(ckks, "N13_L3", gpu)
    sk = dev.keygen()
    dev.set_eval_keys(dev.eval_keys(sk))
    y = dev.encrypt(np.linspace(0.5, 1, dev.slots), sk) * 1e30
    with pytest.raises(ember.DecryptionError):
        dev.decrypt(y, sk)


def test_flooding_on_the_gpu_matches_the_cpu_draw(gpu):
    # Same sampler key and draw order: the flooding noise, hence the output, is the same words.
    params = ckks.Params(log_n=13, scale_bits=50, levels=1, first_mod_bits=58, special_mod_bits=60)
    outs = []
    for device in ("cpu", gpu):
        ctx = ckks.Context(params, device=device)
        ctx._sampler = ring.Sampler(KEY)
        sk = ctx.keygen()
        ct = ctx.encrypt(np.linspace(-1, 1, ctx.slots), sk)
        outs.append(ctx.decrypt(ct, sk, flood=True, noise_bits=12, security_bits=20))
    assert np.array_equal(outs[0], outs[1])
    assert np.max(np.abs(outs[0] - np.linspace(-1, 1, len(outs[0])))) < 1e-2


def test_serialized_keys_verify_on_the_gpu(gpu):
    _, dev = _pair(bfv, "N12_t65537", gpu)
    sk = dev.keygen()
    ek = dev.eval_keys(sk, rotations=[1])
    loaded = dev.eval_keys_from_bytes(ek.to_bytes(mac_key=bytes(32)), mac_key=bytes(32), sk=sk)
    assert sorted(loaded.galois) == sorted(ek.galois)
    assert dev.secret_key_from_bytes(sk.to_bytes()) is not None


def test_forked_child_gets_a_device_error(gpu):
    if gpu == "cpu":
        pytest.skip(
            "the CPU backend computes in forked children (tests/python/test_process_safety)"
        )
    code = f"""
        import os
        import numpy as np
        import ember
        from ember import ckks

        ctx = ckks.Context("N13_L3", device={gpu!r})
        sk = ctx.keygen()
        ctx.encrypt(np.ones(4), sk)  # the parent initializes the GPU
        pid = os.fork()
        if pid == 0:
            try:
                ctx.encrypt(np.ones(4), sk)
                os._exit(3)  # must not compute on an inherited CUDA context
            except ember.DeviceError as e:
                os._exit(0 if "fork" in str(e) else 4)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0, os.WEXITSTATUS(status)
        ctx.decrypt(ctx.encrypt(np.ones(4), sk), sk)  # the parent still works
        print("OK")
    """
    out = run_python(code, timeout=300, hang="the forked child hung on the GPU")
    assert "OK" in out
