"""CGGI on the CPU backend: gate truth tables, MUX/NOT/constants, a chain of dependent gates,
programmable bootstrapping of every LUT entry for 1..4-bit integers, linear operations between
bootstraps, parameter validation and mismatch errors. Serialization and noise have their own
files (test_cggi_serialize.py, test_cggi_noise.py)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import cggi

GATES = {
    "and_": lambda a, b: a & b,
    "nand": lambda a, b: ~(a & b),
    "or_": lambda a, b: a | b,
    "nor": lambda a, b: ~(a | b),
    "xor": lambda a, b: a ^ b,
    "xnor": lambda a, b: ~(a ^ b),
    "andny": lambda a, b: ~a & b,
    "andyn": lambda a, b: a & ~b,
    "orny": lambda a, b: ~a | b,
    "oryn": lambda a, b: a | ~b,
}


@pytest.fixture(scope="module", params=["test_insecure", "test_int_insecure"])
def keys(request):
    ctx = cggi.Context(cggi.Params.preset(request.param), device="cpu")
    ck = ctx.keygen()
    return ctx, ck, ctx.server_key(ck, progress=False)


def test_every_gate_on_every_input_pair(keys):
    ctx, ck, sk = keys
    x = np.array([0, 0, 1, 1], dtype=bool)
    y = np.array([0, 1, 0, 1], dtype=bool)
    a, b = ctx.encrypt(x, ck), ctx.encrypt(y, ck)
    for name, f in GATES.items():
        got = ctx.decrypt(getattr(ctx, name)(a, b, sk), ck)
        np.testing.assert_array_equal(got, f(x, y), err_msg=name)


def test_three_input_gates_on_every_input_triple(keys):
    ctx, ck, sk = keys
    bits = np.array([[(i >> k) & 1 for k in range(3)] for i in range(8)], dtype=bool).T
    a, b, c = (ctx.encrypt(v, ck) for v in bits)
    x, y, z = bits
    np.testing.assert_array_equal(
        ctx.decrypt(ctx.maj(a, b, c, sk), ck), (x & y) | (x & z) | (y & z)
    )
    np.testing.assert_array_equal(ctx.decrypt(ctx.xor3(a, b, c, sk), ck), x ^ y ^ z)
    # Negated inputs (free NOTs) and a full adder's carry chain: still one bootstrap each.
    np.testing.assert_array_equal(
        ctx.decrypt(ctx.maj(~a, b, c, sk), ck), (~x & y) | (~x & z) | (y & z)
    )
    np.testing.assert_array_equal(ctx.decrypt(ctx.xor3(a, ~b, c, sk), ck), ~(x ^ y ^ z))
    carry = ctx.maj(a, b, c, sk)
    np.testing.assert_array_equal(
        ctx.decrypt(ctx.xor3(carry, b, c, sk), ck), ((x & y) | (x & z) | (y & z)) ^ y ^ z
    )
    with pytest.raises(ember.ParameterError):
        ctx.maj(a, b, ctx.encrypt(x[:3], ck), sk)


def test_mux_not_constant_copy_bootstrap(keys):
    ctx, ck, sk = keys
    s = np.array([0, 1, 0, 1, 0, 1, 0, 1], dtype=bool)
    x = np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=bool)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=bool)
    es, ex, ey = (ctx.encrypt(v, ck) for v in (s, x, y))
    np.testing.assert_array_equal(ctx.decrypt(ctx.mux(es, ex, ey, sk), ck), np.where(s, x, y))
    np.testing.assert_array_equal(ctx.decrypt(ctx.not_(ex), ck), ~x)
    np.testing.assert_array_equal(ctx.decrypt(~ex, ck), ~x)
    np.testing.assert_array_equal(ctx.decrypt(ctx.copy(ex), ck), x)
    np.testing.assert_array_equal(ctx.decrypt(ctx.bootstrap(ex, sk), ck), x)
    c = ctx.constant(y)
    np.testing.assert_array_equal(ctx.decrypt(c, ck), y)
    # A constant mixes with any key's ciphertexts.
    np.testing.assert_array_equal(ctx.decrypt(ctx.and_(c, ex, sk), ck), x & y)
    # Shapes survive, and slicing picks ciphertexts.
    m = ctx.encrypt(np.array([[1, 0], [0, 1]], dtype=bool), ck)
    assert ctx.decrypt(m, ck).shape == (2, 2)
    assert ctx.decrypt(ex[2:5], ck).tolist() == x[2:5].tolist()
    assert bool(ctx.decrypt(ex[-1], ck)[0]) == x[-1]


def test_take_gathers_by_index(keys):
    """ctx.take: np.take on the ciphertexts (repeats, any order, a 2-D index keeps its shape),
    for bits and integers; indices out of range or not integers are refused."""
    ctx, ck, _ = keys
    x = np.array([1, 0, 0, 1, 1, 0, 1], dtype=bool)
    ex = ctx.encrypt(x, ck)
    idx = np.array([[6, 0, 0], [3, 1, 5]])
    got = ctx.take(ex, idx)
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(ctx.decrypt(got, ck), x[idx])
    q = ctx.encrypt_int(np.arange(7) % 5, ck, bits=3)
    np.testing.assert_array_equal(ctx.decrypt_int(ctx.take(q, [4, 4, 2]), ck), [4, 4, 2])
    assert len(ctx.take(q, np.array([], dtype=np.int64))) == 0
    for bad in ([7], [-1], [0.5]):
        with pytest.raises(ember.ParameterError):
            ctx.take(ex, np.array(bad))


def test_chain_of_dependent_gates(keys, rng):
    # 1000 dependent gates here (the C++ suite runs 10^4); each result feeds the next gate.
    ctx, ck, sk = keys
    steps = 1000
    ys = rng.integers(0, 2, steps).astype(bool)
    ey = ctx.encrypt(ys, ck)
    names = list(GATES)
    clear = np.array([True])
    x = ctx.encrypt(clear, ck)
    for i in range(steps):
        name = names[int(rng.integers(len(names)))]
        clear = GATES[name](clear, ys[i : i + 1])
        x = getattr(ctx, name)(x, ey[i], sk)
    np.testing.assert_array_equal(ctx.decrypt(x, ck), clear)


@pytest.mark.parametrize("bits", [1, 2, 3, 4])
def test_lut_every_entry(keys, rng, bits):
    ctx, ck, sk = keys
    size = 1 << bits
    values = np.arange(size)
    q = ctx.encrypt_int(values, ck, bits=bits)
    np.testing.assert_array_equal(ctx.decrypt(q, ck), values)
    for _ in range(2):
        table = rng.integers(0, size, size)
        np.testing.assert_array_equal(ctx.decrypt(ctx.apply_lut(q, table, sk), ck), table)
    sq = ctx.apply_lut(q, lambda v: (v * v) % size, sk)
    np.testing.assert_array_equal(ctx.decrypt(sq, ck), (values * values) % size)


def test_linear_operations_between_bootstraps(keys):
    ctx, ck, sk = keys
    a = ctx.encrypt_int(np.array([0, 1, 2, 3, 4]), ck, bits=4)
    b = ctx.encrypt_int(np.array([5, 4, 3, 2, 1]), ck, bits=4)
    np.testing.assert_array_equal(ctx.decrypt(a + b, ck), [5, 5, 5, 5, 5])
    np.testing.assert_array_equal(ctx.decrypt(a * 3, ck), [0, 3, 6, 9, 12])
    np.testing.assert_array_equal(ctx.decrypt(a + 2, ck), [2, 3, 4, 5, 6])
    # A LUT after a linear step, then another linear step.
    s = ctx.apply_lut(ctx.add(a, b), lambda v: (v - 4) % 16, sk)
    np.testing.assert_array_equal(ctx.decrypt(ctx.mul_scalar(s, 2), ck), [2, 2, 2, 2, 2])


def test_bool_128_end_to_end():
    ctx = cggi.Context(cggi.Params.preset("bool_128"), device="auto")
    assert ctx.device == ("cpu" if not ember._ember.cuda_devices() else ctx.device)
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    x = np.array([0, 0, 1, 1], dtype=bool)
    y = np.array([0, 1, 0, 1], dtype=bool)
    a, b = ctx.encrypt(x, ck), ctx.encrypt(y, ck)
    np.testing.assert_array_equal(ctx.decrypt(ctx.nand(a, b, sk), ck), ~(x & y))
    np.testing.assert_array_equal(ctx.decrypt(ctx.xor(a, b, sk), ck), x ^ y)
    # 2-bit lookups fit N = 512; 4-bit ones would fail too often: refused.
    q = ctx.encrypt_int(np.array([0, 1, 2, 3]), ck, bits=2)
    np.testing.assert_array_equal(ctx.decrypt(ctx.apply_lut(q, [3, 2, 1, 0], sk), ck), [3, 2, 1, 0])
    with pytest.raises(ember.ParameterError, match="fail with probability"):
        ctx.encrypt_int(np.array([1]), ck, bits=4)


def test_parameter_validation():
    p = cggi.Params.preset("bool_128")
    assert p.meets_security_floor
    fields = {
        "n": p.n,
        "k": p.k,
        "N": p.N,
        "lwe_noise": p.lwe_noise,
        "glwe_noise": p.glwe_noise,
        "bk_base_log": p.bk_base_log,
        "bk_levels": p.bk_levels,
        "ks_base_log": p.ks_base_log,
        "ks_levels": p.ks_levels,
    }
    assert cggi.Params(**fields).fingerprint == p.fingerprint
    with pytest.raises(ember.ParameterError, match="security floor"):
        cggi.Params(**{**fields, "n": 600})
    with pytest.raises(ember.ParameterError, match="security floor"):
        cggi.Params(**{**fields, "lwe_noise": cggi.gaussian(1e-7)})
    assert not cggi.Params(**{**fields, "n": 600}, insecure=True).meets_security_floor
    with pytest.raises(ember.ParameterError, match="power of two"):
        cggi.Params(**{**fields, "N": 500}, insecure=True)
    with pytest.raises(ember.ParameterError, match="exact"):
        cggi.Params(
            **{**fields, "k": 8, "N": 65536, "bk_base_log": 60, "bk_levels": 1},
            torus_bits=64,
            insecure=True,
        )
    with pytest.raises(ember.ParameterError, match="insecure=True"):
        cggi.Params.preset("tfhe_lib_insecure")
    lib = cggi.Params.preset("tfhe_lib_insecure", insecure=True)
    assert (lib.n, lib.N, lib.k) == (630, 1024, 1) and not lib.meets_security_floor
    for name in ("int2_128", "int4_128"):
        assert cggi.Params.preset(name).meets_security_floor
    with pytest.raises(ember.ParameterError, match="no CGGI preset"):
        cggi.Params.preset("bool_256")


def test_mismatch_errors(keys):
    ctx, ck, sk = keys
    other = cggi.Context(ctx.params, device="cpu")
    ck2 = other.keygen()
    a = ctx.encrypt(np.array([1, 0]), ck)
    b = other.encrypt(np.array([1, 1]), ck2)
    with pytest.raises(ember.MismatchError):
        ctx.and_(a, b, sk)  # same parameters, another key
    with pytest.raises(ember.MismatchError):
        ctx.decrypt(a, ck2)
    with pytest.raises(ember.MismatchError):
        ctx.decrypt(b, ck)
    third = cggi.Context(
        "test_insecure" if ctx.params.name != "test_insecure" else "test_int_insecure", device="cpu"
    )
    with pytest.raises(ember.MismatchError):
        third.decrypt(a, third.keygen())
    with pytest.raises(ember.MismatchError):
        ctx.apply_lut(a, [0, 1], sk)  # bits are not integers
    with pytest.raises(ember.ParameterError):
        ctx.and_(a, ctx.encrypt(np.array([1]), ck), sk)  # sizes
    with pytest.raises(ember.ParameterError):
        ctx.encrypt_int(np.array([16]), ck, bits=4)
    q = ctx.encrypt_int(np.array([1]), ck, bits=2)
    with pytest.raises(ember.ParameterError):
        ctx.apply_lut(q, [0, 1, 2, 4], sk)
    with pytest.raises(ember.ParameterError):
        ctx.encrypt(np.array([0, 2]), ck)


def test_streams(keys):
    # Operations run on their first operand's stream; results keep it and equal the default
    # stream's (the CPU's streams are null handles: this checks the plumbing and the checks).
    ctx, ck, sk = keys
    stream = ember.Stream("cpu")
    x = np.array([0, 0, 1, 1], dtype=bool)
    y = np.array([0, 1, 0, 1], dtype=bool)
    a, b = ctx.encrypt(x, ck).on_stream(stream), ctx.encrypt(y, ck)
    c = ctx.xor(a, b, sk)
    np.testing.assert_array_equal(ctx.decrypt(c, ck), x ^ y)
    np.testing.assert_array_equal(ctx.decrypt(ctx.mux(a, b, c, sk), ck), np.where(x, y, x ^ y))
    np.testing.assert_array_equal(ctx.decrypt(c[1:3], ck), (x ^ y)[1:3])
    with pytest.raises(ember.ParameterError):
        a.on_stream("cuda:0")
    with pytest.raises(ember.MismatchError):
        a.on_stream(ember.Stream("cpu:1"))
