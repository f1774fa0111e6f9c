"""BFV/BGV plaintexts made in backend memory (the device path of encode, encrypt, the operators
and decrypt) against the host path, on the CPU backend: the same coefficients, bit-identical
ciphertexts for the same sampler draws, the same decryptions, and the same ParameterError for a
value outside (-t, t). The GPU runs the same code (tests/gpu/test_gpu_integer_device.py)."""

from __future__ import annotations

import numpy as np
import pytest
from ember import bfv, bgv, ring
from ember.errors import MismatchError, ParameterError
from intref import centered

SCHEMES = {"bfv": bfv, "bgv": bgv}
KEY = bytes(range(32))
# Small sets (fast on a CPU): t = 12289 allows batching; t = 256 only the coefficient encoding.
SMALL = {
    "bfv": {"log_n": 11, "q_bits": (50, 50), "special_bits": (55,)},
    "bgv": {"log_n": 11, "q_bits": (45, 36, 36, 36), "special_bits": (50,)},
}


class Env:
    def __init__(self, scheme: str, t: int):
        self.mod = SCHEMES[scheme]
        params = self.mod.Params(**SMALL[scheme], plain_modulus=t, insecure=True)
        self.ctx = self.mod.Context(params, device="cpu")
        self.ctx._sampler = ring.Sampler(KEY)
        self.sk = self.ctx.keygen()
        self.pk = self.ctx.public_key(self.sk)
        self.ctx.set_eval_keys(self.ctx.eval_keys(self.sk))
        self.t = t
        self.rng = np.random.default_rng(5)

    def rand(self, size=None, dtype=np.int64):
        t = self.t
        return self.rng.integers(-t + 1, t, size or self.ctx.slots).astype(dtype)

    def encrypt_with(self, pt, key, nonce: int):
        """ctx.encrypt(pt, key) with the sampler at a fixed state: the same draws each time."""
        self.ctx._sampler = ring.Sampler(KEY, nonce)
        return self.ctx.encrypt(pt, key)


@pytest.fixture(scope="module", params=list(SCHEMES))
def env(request):
    return Env(request.param, 12289)


@pytest.fixture(scope="module", params=list(SCHEMES))
def coeff_env(request):
    return Env(request.param, 256)


def _both(env, values, batched: bool):
    """(host-path plaintext, device-path plaintext) of the same values."""
    host = env.ctx.encode(values) if batched else env.ctx.encode_coeffs(values)
    return host, env.ctx._encode_native(values, batched)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint16", "uint64"])
def test_device_encoding_equals_the_host_encoding(env, dtype):
    v = env.rand(700)
    if dtype.startswith("uint"):
        v = np.abs(v)
    if dtype == "int8":
        v = np.clip(v, -128, 127)
    v = v.astype(dtype)
    for batched in (True, False):
        host, dev = _both(env, v, batched)
        assert dev.on_device and not host.on_device
        np.testing.assert_array_equal(dev.coeffs, host.coeffs)
        np.testing.assert_array_equal(env.ctx.decode(dev), env.ctx.decode(host))


def test_coefficient_encoding_without_batching(coeff_env):
    env = coeff_env
    v = env.rand()
    host, dev = _both(env, v, False)
    np.testing.assert_array_equal(dev.coeffs, host.coeffs)
    a = env.encrypt_with(host, env.pk, 3)
    b = env.encrypt_with(dev, env.pk, 3)
    assert a.to_bytes() == b.to_bytes()
    np.testing.assert_array_equal(
        env.ctx.decode(env.ctx._decrypt_plaintext(b, env.sk)), centered(v, env.t)
    )
    with pytest.raises(ParameterError, match="batching"):
        env.ctx._encode_native(v, True)


def test_same_ciphertext_words_through_both_paths(env):
    """Encryption of a device plaintext (BFV: scaled from backend memory; BGV: lifted there)
    gives the host path's ciphertext bit for bit, with public and secret keys."""
    v = env.rand()
    for batched in (True, False):
        host, dev = _both(env, v, batched)
        for key, nonce in ((env.pk, 1), (env.sk, 2)):
            a, b = env.encrypt_with(host, key, nonce), env.encrypt_with(dev, key, nonce)
            assert a.to_bytes() == b.to_bytes()
            np.testing.assert_array_equal(env.ctx.decrypt(b, env.sk)[: v.size], centered(v, env.t))


def test_operators_with_device_plaintexts_equal_the_host_ones(env):
    """ct + pt, ct - pt, ct * pt with a device plaintext give the host plaintext's words, also
    for a BGV ciphertext whose plaintext factor is not 1 (after a product's modulus switch)."""
    v, w = env.rand(), env.rand()
    ct = env.encrypt_with(env.ctx.encode(v), env.pk, 4)
    deeper = ct * ct
    host, dev = _both(env, w, True)
    for c in (ct, deeper):
        for op in (lambda x, p: x + p, lambda x, p: x - p, lambda x, p: x * p):
            assert op(c, host).to_bytes() == op(c, dev).to_bytes()
    got = env.ctx.decrypt(deeper - dev, env.sk)
    np.testing.assert_array_equal(got, centered(v * v - w, env.t))


def test_device_decryption_equals_the_host_decryption(env):
    v = env.rand()
    for batched in (True, False):
        pt = env.ctx._encode_native(v, batched)
        ct = env.encrypt_with(pt, env.pk, 5)
        for c in (ct, ct * ct):
            m = env.ctx._decrypt_plaintext(c, env.sk)
            assert m.on_device and m.batched == batched
            np.testing.assert_array_equal(env.ctx.decode(m), env.ctx.decrypt(c, env.sk))


def test_shapes_and_outputs(env):
    v = env.rand(12).reshape(3, 4)
    pt = env.ctx._encode_native(v.reshape(-1), True)
    pt.shape = (3, 4)
    np.testing.assert_array_equal(
        env.ctx.decode(pt, out="numpy"), centered(v.reshape(-1), env.t).reshape(3, 4)
    )
    assert env.ctx.decode(pt).shape == (env.ctx.slots,)


def test_out_of_range_values_raise_the_host_paths_error(env):
    t = env.t
    for bad in ([1, t], [-t, 2], np.array([0, 2**63 + 5], dtype=np.uint64)):
        with pytest.raises(ParameterError, match=r"\(-t, t\)"):
            env.ctx.encode(bad)
        with pytest.raises(ParameterError, match=r"\(-t, t\)"):
            env.ctx._encode_native(np.asarray(bad), True)
    edge = np.array([t - 1, -(t - 1), 0])
    np.testing.assert_array_equal(
        env.ctx._encode_native(edge, True).coeffs, env.ctx.encode(edge).coeffs
    )
    with pytest.raises(ParameterError, match="do not fit"):
        env.ctx._encode_native(np.zeros(env.ctx.slots + 1, dtype=np.int64), True)
    with pytest.raises(ParameterError, match="integer dtype"):
        env.ctx._encode_native(np.zeros(4), True)


def test_device_plaintexts_persist_and_refuse_other_devices(env):
    import pickle

    pt = env.ctx._encode_native(env.rand(), True)
    back = pickle.loads(pickle.dumps(pt))
    np.testing.assert_array_equal(back.coeffs, pt.coeffs)
    other = env.mod.Context(env.ctx.params, device="cpu:1")
    ct = other.encrypt(np.arange(4), other.keygen())
    with pytest.raises(MismatchError, match="plaintext is on cpu"):
        ct * pt
