"""The C++ circuit scheduler on CPU devices: compiled circuits decrypt to circ.evaluate's outputs;
two devices, dataflow mode and a spilling pool give the one-device ciphertexts word for word; the
words equal a gate-by-gate reference through cggi.Context; bad inputs raise clear errors."""

from __future__ import annotations

import io

import ember
import numpy as np
import pytest
from compiler_ref import compile_corpus
from ember import cggi
from ember.circuit import MAJ, MUX, XOR3, RunOptions, _swap_table

CASES = [
    ("sort4", {"a": [3, -1, 7, -128]}),
    ("find_first", {"a": [5, -3, 7, 9, -3, 0, 1, 2], "x": -3}),
    ("lut_sbox", {"x": 0x5A}),
    ("cmp_all", None),
]


@pytest.fixture(scope="module")
def keys():
    ctx = cggi.Context(cggi.Params.preset("test_insecure"), device="cpu")
    ck = ctx.keygen()
    return ctx, ck, ctx.server_key(ck, progress=False)


def words(outs: dict) -> list:
    return [outs[k]._raw.to_host() for k in sorted(outs)]


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def inputs_of(circ, given):
    if given is not None:
        return given
    rng = np.random.default_rng(3)
    out = {}
    for p in circ.inputs:
        lo, hi = (-(1 << (p.width - 1)), 1 << (p.width - 1)) if p.signed else (0, 1 << p.width)
        out[p.name] = rng.integers(lo, hi, size=p.shape) if p.shape else int(rng.integers(lo, hi))
    return out


@pytest.mark.parametrize(("name", "given"), CASES, ids=[c[0] for c in CASES])
def test_devices_modes_and_spill_give_the_same_words(keys, name, given):
    ctx, ck, sk = keys
    circ = compile_corpus(name)
    plain = inputs_of(circ, given)
    ins = circ.encrypt_inputs(ctx, ck, **plain)
    one = circ.run(ctx, sk, ins, progress=False)
    got = circ.decrypt_outputs(ctx, ck, one)
    want = circ.evaluate(**plain)
    assert set(got) == set(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k])), (k, got[k], want[k])
    base = words(one)
    assert circ.last_run_stats["steps"] == circ.stats()["depth"]
    assert circ.last_run_stats["mode"] == "dataflow"  # the default
    two = circ.run(ctx, sk, ins, devices=["cpu:0", "cpu:1"], progress=False)
    assert same(words(two), base)
    stats = circ.last_run_stats
    assert stats["devices"] == 2 and sum(stats["gates_per_device"]) == stats["gates"]
    assert abs(stats["gates_per_device"][0] - stats["gates_per_device"][1]) <= stats["steps"] * 3
    assert all(b.device == "cpu" for b in two.values())
    if name == "sort4":  # the other modes and options, once
        flow = circ.run(ctx, sk, ins, devices=["cpu:0", "cpu:1"], mode="wave", progress=False)
        assert same(words(flow), base)
        assert circ.last_run_stats["mode"] == "wave"
        tight = RunOptions(max_live_ciphertexts=12)
        spilled = circ.run(ctx, sk, ins, devices=["cpu", "cpu:1"], options=tight, progress=False)
        assert same(words(spilled), base)
        assert circ.last_run_stats["spilled"] > 0 and circ.last_run_stats["restored"] > 0
        assert max(circ.last_run_stats["peak_live_per_device"]) <= 12
        away = circ.run(ctx, sk, ins, devices="cpu:1", progress=False)
        assert same(words(away), base)
        # Steps smaller than min_gates_per_device per device stay on fewer devices: here one,
        # the device holding the operands (the inputs' home), so nothing crosses.
        few = RunOptions(min_gates_per_device=10**6)
        kept = circ.run(ctx, sk, ins, devices=["cpu:0", "cpu:1"], options=few, progress=False)
        assert same(words(kept), base)
        st = circ.last_run_stats
        assert st["gates_per_device"] == [st["gates"], 0] and st["cross_device_copies"] == 0


def reference_words(circ, ctx, sk, ins) -> list:
    """The fused schedule gate by gate through cggi.Context (and_, xor, mux, maj, xor3, not_): the words
    the scheduler's gathers and batched bootstraps must reproduce."""
    nodes = [ctx.constant(np.zeros(1, dtype=bool))]
    for p in circ.inputs:
        nodes += [ins[p.name][k] for k in range(p.nbits)]
    negated = [False] * len(nodes)

    def operand(lit, flip=False):
        n = int(lit) >> 1
        c = nodes[n]
        return ctx.not_(c) if (int(lit) & 1) ^ negated[n] ^ flip else c

    for code, (a, b, s) in zip(circ.ops.tolist(), circ.args.tolist()):
        if code == MUX:
            out, neg = ctx.mux(operand(s), operand(a), operand(b), sk), False
        elif code in (MAJ, XOR3):
            gate = ctx.maj if code == MAJ else ctx.xor3
            out, neg = gate(operand(a), operand(b), operand(s), sk), False
        elif code in (6, 9):
            out, neg = ctx.xor(operand(a), operand(b), sk), code == 9
        else:
            na, nb, no = next(
                (x, y, z)
                for x in (0, 1)
                for y in (0, 1)
                for z in (0, 1)
                if (_swap_table(8, bool(x), bool(y)) ^ (15 * z)) == code
            )
            out, neg = ctx.and_(operand(a, na), operand(b, nb), sk), bool(no)
        nodes.append(out)
        negated.append(neg)
    res, at = [], 0
    for p in circ.outputs:
        lits = circ.out_lits[at : at + p.nbits]
        at += p.nbits
        res.append((p.name, ctx.concat([operand(x) for x in lits])._raw.to_host()))
    return [w for _, w in sorted(res)]


def test_words_equal_the_gate_by_gate_reference(keys):
    ctx, ck, sk = keys
    circ = compile_corpus("add_u8")
    assert {"maj", "xor3"} <= set(circ.stats()["gates_by_type"])  # the three-input gates too
    ins = circ.encrypt_inputs(ctx, ck, a=250, b=9)
    outs = circ.run(ctx, sk, ins, progress=False)
    assert same(words(outs), reference_words(circ, ctx, sk, ins))
    assert circ.decrypt_outputs(ctx, ck, outs) == {"return": 3}


def test_progress_bar_shows_waves_and_rate(keys, monkeypatch):
    import ember._progress as progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    monkeypatch.setattr(progress.sys, "stderr", err)
    ctx, ck, sk = keys
    circ = compile_corpus("add_u8")
    circ.run(ctx, sk, circ.encrypt_inputs(ctx, ck, a=1, b=2))
    depth = circ.stats()["depth"]
    assert f"circuit waves [{'#' * 30}] {depth}/{depth}" in err.getvalue()
    assert "gates/s" in err.getvalue()


def test_bad_inputs_raise_clear_errors(keys):
    ctx, ck, sk = keys
    circ = compile_corpus("add_u8")
    ins = circ.encrypt_inputs(ctx, ck, a=1, b=2)
    with pytest.raises(ember.ParameterError, match="Bits of 8"):
        circ.run(ctx, sk, {"a": ins["a"][0:3], "b": ins["b"]}, progress=False)
    with pytest.raises(ember.ParameterError, match="unknown circuit inputs"):
        circ.run(ctx, sk, {**ins, "c": ins["a"]}, progress=False)
    other = cggi.Context(cggi.Params.preset("test_int_insecure"), device="cpu")
    oins = circ.encrypt_inputs(other, other.keygen(), a=1, b=2)
    with pytest.raises(ember.MismatchError, match="other parameters"):
        circ.run(ctx, sk, {"a": oins["a"], "b": ins["b"]}, progress=False)
    with pytest.raises(ember.MismatchError, match="cpu:1"):
        circ.run(ctx, sk, {"a": ins["a"].to("cpu:1"), "b": ins["b"]}, progress=False)
    with pytest.raises(ember.ParameterError, match="unknown device"):
        circ.run(ctx, sk, ins, devices=["cpu", "tpu:0"], progress=False)
    with pytest.raises(ember.ParameterError, match="twice"):
        circ.run(ctx, sk, ins, devices=["cpu:1", "cpu:1"], progress=False)
    with pytest.raises(ember.ParameterError, match="mode"):
        circ.run(ctx, sk, ins, mode="waves", progress=False)
    with pytest.raises(ember.ParameterError, match="min_gates_per_device"):
        circ.run(ctx, sk, ins, options=RunOptions(min_gates_per_device=0), progress=False)
    with pytest.raises(ember.ParameterError, match="max_live_ciphertexts"):
        circ.run(ctx, sk, ins, options=RunOptions(max_live_ciphertexts=2), progress=False)
    # An input left out reads as zeros.
    outs = circ.run(ctx, sk, {"a": ins["a"]}, progress=False)
    assert circ.decrypt_outputs(ctx, ck, outs) == {"return": 1}


def test_replicated_circuit_runs_many_input_sets(keys):
    """circ.replicate(n): n instances in one circuit (waves n times wider, the same depth); a
    shared input is read by every instance; plaintext and encrypted runs give each instance's
    own outputs."""
    ctx, ck, sk = keys
    circ = compile_corpus("add_u8")
    rep = circ.replicate(3)
    st, st1 = rep.stats(), circ.stats()
    assert st["gates"] == 3 * st1["gates"] and st["depth"] == st1["depth"]
    a, b = np.array([1, 200, 77]), np.array([2, 100, 255])
    want = [circ.evaluate(a=int(x), b=int(y))["return"] for x, y in zip(a, b)]
    assert rep.evaluate(a=a, b=b)["return"].tolist() == want
    ins = rep.encrypt_inputs(ctx, ck, a=a, b=b)
    outs = rep.run(ctx, sk, ins, progress=False)
    assert rep.decrypt_outputs(ctx, ck, outs)["return"].tolist() == want
    shared = circ.replicate(4, shared=("b",))
    assert [p.shape for p in shared.inputs] == [(4,), ()]
    got = shared.evaluate(a=np.array([1, 2, 3, 250]), b=9)["return"].tolist()
    assert got == [circ.evaluate(a=x, b=9)["return"] for x in (1, 2, 3, 250)]
    with pytest.raises(ember.ParameterError, match="copies"):
        circ.replicate(0)
    with pytest.raises(ember.ParameterError, match="not inputs"):
        circ.replicate(2, shared=("c",))
