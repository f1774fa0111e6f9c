"""ember.save / ember.load, pickle and copy.deepcopy of every object kind (parameters, contexts,
keys, plaintexts, ciphertexts of CKKS, BFV, BGV and CGGI, circuits): decryption after loading
equals decryption before; truncated, corrupted and foreign files raise SerializationError; a
context of other parameters raises MismatchError."""

from __future__ import annotations

import copy
import pickle

import ember
import numpy as np
import pytest
from ember import bfv, bgv, cggi, ckks
from ember.circuit import GATE_CODES, CircuitBuilder, Port


def round_trips(obj, path, ctx=None):
    """The object through ember.save/load (with and without ctx), pickle and deepcopy."""
    ember.save(obj, path)
    out = [ember.load(path), pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj)]
    if ctx is not None:
        out.append(ember.load(path, ctx=ctx))
    return out


@pytest.fixture(scope="module")
def ckks_keys():
    ctx = ckks.Context("N13_L3", device="cpu")
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    return ctx, sk, ctx.public_key(sk)


def test_ckks_every_object(ckks_keys, tmp_path, rng):
    ctx, sk, pk = ckks_keys
    path = tmp_path / "obj.ember"
    x = rng.uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, pk) * 0.5
    want = ctx.decrypt(ct, sk)
    for p in round_trips(ctx.params, path):
        assert p == ctx.params and p.q_primes == ctx.params.q_primes
    for c in round_trips(ctx, path):
        assert isinstance(c, ckks.Context) and c.params == ctx.params and c.device == ctx.device
    for sk2 in round_trips(sk, path, ctx):
        np.testing.assert_array_equal(ctx.decrypt(ct, sk2), want)
    for key in (pk, ctx._keys()):
        for key2 in round_trips(key, path, ctx):
            assert key2.to_bytes() == key.to_bytes()
    ember.load(_saved(pk, path), ctx=ctx).verify(sk)
    ember.load(_saved(ctx._keys(), path), ctx=ctx).verify(sk)
    for ct2 in round_trips(ct, path, ctx):
        assert (ct2.level, ct2.scale) == (ct.level, ct.scale)
        np.testing.assert_array_equal(ctx.decrypt(ct2, sk), want)
    pt = ctx.encode(x[:8], sparse=True)
    for pt2 in round_trips(pt, path, ctx):
        np.testing.assert_array_equal(pt2._poly.to_numpy(), pt._poly.to_numpy())
        np.testing.assert_array_equal(pt2.values, pt.values)
        np.testing.assert_allclose(ctx.decode(pt2)[:8], x[:8], atol=1e-6)


def test_loaded_ciphertexts_compute_with_the_context(ckks_keys, tmp_path, rng):
    """A copy shares its context (and its evaluation keys); objects pickled together share one
    re-created context."""
    ctx, sk, pk = ckks_keys
    x = rng.uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x, pk)
    y = copy.deepcopy(ct) * ct
    np.testing.assert_allclose(ctx.decrypt(y, sk), x * x, atol=1e-5)
    ctx2, a, b = pickle.loads(pickle.dumps((ctx, ct, ct.rotate(1))))
    assert a._ctx is ctx2 and b._ctx is ctx2
    ek = ember.load(_saved(ctx._keys(), tmp_path / "ek"), ctx=ctx2)
    ctx2.set_eval_keys(ek)
    np.testing.assert_allclose(ctx.decrypt(a * b, sk), x * np.roll(x, -1), atol=1e-5)


def _saved(obj, path):
    ember.save(obj, path)
    return path


@pytest.mark.parametrize("mod", [bfv, bgv], ids=["bfv", "bgv"])
def test_integer_schemes(mod, tmp_path, rng):
    ctx = mod.Context(mod.Params.presets()[0], device="cpu")
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    path = tmp_path / "obj.ember"
    v = rng.integers(-100, 100, ctx.slots)
    ct = ctx.encrypt(v, pk) * ctx.encrypt(v, pk)
    for p in round_trips(ctx.params, path):
        assert p == ctx.params
    for c in round_trips(ctx, path):
        assert type(c) is mod.Context and c.params == ctx.params
    for sk2 in round_trips(sk, path, ctx):
        np.testing.assert_array_equal(ctx.decrypt(ct, sk2), v * v)
    for key in (pk, ctx._keys()):
        for key2 in round_trips(key, path, ctx):
            assert key2.to_bytes() == key.to_bytes()
    ember.load(_saved(ctx._keys(), path), ctx=ctx).verify(sk)
    for ct2 in round_trips(ct, path, ctx):
        np.testing.assert_array_equal(ctx.decrypt(ct2, sk), v * v)
    pt = ctx.encode(v)
    for pt2 in round_trips(pt, path, ctx):
        assert pt2.batched and np.array_equal(ctx.decode(pt2), v)


def test_cggi_every_object(tmp_path):
    ctx = cggi.Context("test_insecure", device="cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    path = tmp_path / "obj.ember"
    bits = np.array([[1, 0, 1], [0, 1, 1]], dtype=bool)
    a = ctx.encrypt(bits, ck)
    q = ctx.encrypt_int(np.array([3, 7]), ck, bits=4)
    for p in round_trips(ctx.params, path):
        assert p == ctx.params and p.fingerprint == ctx.params.fingerprint
    for c in round_trips(ctx, path):
        assert isinstance(c, cggi.Context) and c.params_id == ctx.params_id
    for ck2 in round_trips(ck, path, ctx):
        np.testing.assert_array_equal(ctx.decrypt(a, ck2), bits)
    for a2 in round_trips(a, path, ctx):
        assert isinstance(a2, cggi.Bits) and a2.shape == (2, 3)
        np.testing.assert_array_equal(ctx.decrypt(a2, ck), bits)
    for q2 in round_trips(q, path, ctx):
        assert isinstance(q2, cggi.Ints)
        np.testing.assert_array_equal(ctx.decrypt_int(q2, ck), [3, 7])
    sk2 = ember.load(_saved(sk, path), ctx=ctx)
    np.testing.assert_array_equal(ctx.decrypt(ctx.nand(a, a, sk2), ck), ~bits)


def test_circuits(tmp_path):
    b = CircuitBuilder([Port("a", 2, False), Port("b", 2, False)])
    lits = [b.gate2(GATE_CODES["xor"], x, y) for x, y in zip(b.input_lits(0), b.input_lits(1))]
    circ = b.build([Port("return", 2, False)], lits, "xor2")
    for c in round_trips(circ, tmp_path / "xor.circuit"):
        assert c.evaluate(a=1, b=3)["return"] == 2


def test_context_mismatch_and_mac(ckks_keys, tmp_path):
    ctx, sk, pk = ckks_keys
    path = _saved(sk, tmp_path / "sk")
    other = ckks.Context(ckks.Params(log_n=13, levels=2, first_mod_bits=50), device="cpu")
    with pytest.raises(ember.MismatchError):
        ember.load(path, ctx=other)
    with pytest.raises(ember.MismatchError):
        ember.load(path, ctx=bfv.Context("N12_t65537", device="cpu"))
    key = bytes(range(32))
    ember.save(pk, path, mac_key=key)
    ember.load(path, ctx=ctx, mac_key=key).verify(sk)
    with pytest.raises(ember.SerializationError):
        ember.load(path)  # no key
    with pytest.raises(ember.SerializationError):
        ember.load(path, mac_key=bytes(32))


def test_malformed_files_are_refused(ckks_keys, tmp_path, rng):
    ctx, _, pk = ckks_keys
    blob = _saved(ctx.encrypt(rng.uniform(size=8), pk), tmp_path / "ct").read_bytes()
    path = tmp_path / "bad"
    cases = [
        blob[: len(blob) // 2],  # truncated
        blob[:-1],
        blob[:100] + bytes([blob[100] ^ 1]) + blob[101:],  # corrupted header JSON
        blob[:-40] + bytes([blob[-40] ^ 0x80]) + blob[-39:],  # corrupted words
        b"",
        b"not an ember file at all" * 4,
        b"EMBERCIR" + bytes(60),  # a circuit's magic, then garbage
    ]
    for bad in cases:
        path.write_bytes(bad)
        with pytest.raises(ember.SerializationError):
            ember.load(path)
        with pytest.raises(ember.SerializationError):
            ember.persist.load_bytes(bad)
    with pytest.raises(ember.ParameterError):
        ember.save(object(), path)
