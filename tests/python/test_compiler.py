"""The C compiler's errors, the circuit IR (stats, waves, save/load), the documented semantics
outside C's defined behaviour, and compiled circuits run encrypted on the CPU."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from compiler_ref import compile_corpus
from ember import cggi
from ember.circuit import MAJ, THREE_INPUT, Circuit, CircuitBuilder, Port
from ember.compiler import compile_source, lower_c

_cache: dict = {}


def compiled(src: str, fn: str) -> Circuit:
    if (src, fn) not in _cache:
        _cache[src, fn] = compile_source(src, fn, "prog.c")
    return _cache[src, fn]


# ---- errors: every construct outside the subset names its line -------------------------------
BAD = [
    ("struct s { int a; };\nint f(int x) { return x; }", "f", 1, "struct"),
    (
        "int f(int x) {\n  switch (x) { case 1: case 1: return 2; }\n  return 0;\n}",
        "f",
        2,
        "duplicate case",
    ),
    (
        "int f(int x) {\n  switch (x) { x++; case 1: return 2; }\n  return 0;\n}",
        "f",
        2,
        "before the first case",
    ),
    ("int f(int a[4]) {\n  int *p = a;\n  return *p;\n}", "f", 2, "pointer"),
    ("int f(int x) {\n  if (x) return f(x - 1);\n  return 0;\n}", "f", 2, "recursi"),
    (
        "int f(int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++) s += i;\n  return s;\n}",
        "f",
        3,
        "loop condition",
    ),
    ("float f(float x) {\n  return x;\n}", "f", 1, "float"),
    ("#include <stdio.h>\nint f(int x) { return x; }", "f", 1, "include"),
    ("#define SQ(x) ((x) * (x))\nint f(int x) { return x; }", "f", 1, "macro"),
    ("int f(int x) {\n  goto end;\nend:\n  return x;\n}", "f", 2, "goto"),
    ("int f(int x) {\n  return abs(x);\n}", "f", 2, "abs"),
    ("int f(int x) {\n  int y;\n  int *p = &y;\n  return x;\n}", "f", 3, "pointer"),
    ("int f(int x) {\n  while (x > 0) x--;\n  return x;\n}", "f", 2, "loop condition"),
    ("int f(int a[4]) {\n  return a[4];\n}", "f", 2, "out of bounds"),
    ("int f(const int a[4]) {\n  a[0] = 1;\n  return 0;\n}", "f", 2, "const"),
    ("int f(int x) {\n  return x +;\n}", "f", 2, "syntax"),
    ("int f(int x) { return x; }", "g", None, "no function"),
    ("void f(int x) {\n  x = 1;\n}", "f", 1, "no outputs"),
    ("#if 1\nint f(int x) { return x; }\n#endif", "f", 1, "#if"),
    ("int f(int x) {\n  double d = x;\n  return 0;\n}", "f", 2, "double"),
    ("int g[2];\nint f(int a[3][3][3]) {\n  return 0;\n}", "f", 2, "dimensions"),
]


@pytest.mark.parametrize(("src", "fn", "line", "what"), BAD)
def test_compile_errors(src, fn, line, what):
    with pytest.raises(ember.CompileError) as err:
        lower_c(src, fn, "bad.c")
    msg = str(err.value)
    assert what.lower() in msg.lower(), msg
    if line is not None:
        assert f"bad.c:{line}:" in msg, msg
        assert msg.split(":")[2].split()[0].isdigit()  # a column


def test_compile_error_is_value_error():
    assert issubclass(ember.CompileError, ValueError)
    assert issubclass(ember.CompileError, ember.Error)
    with pytest.raises(ember.CompileError, match="cannot read"):
        ember.compile_c("/nonexistent/prog.c", function="f")


# ---- semantics outside C's defined behaviour (documented in docs/compiler.md) ----------------
DIV = """
signed char sdiv(signed char a, signed char b) { return a / b; }
short smod(short a, short b) { return a % b; }
unsigned udiv(unsigned short a, unsigned short b) { return (unsigned)a / b; }
unsigned char umod8(unsigned char a, unsigned char b) { return a % b; }
int shl(int a, int s) { return a << s; }
int sar(int a, unsigned s) { return a >> s; }
int rd(const int a[5], int i) { return a[i]; }
void wr(int a[5], int i) { a[i] = 9; }
"""


def test_division_by_zero_and_out_of_range():
    z = np.zeros(4, dtype=np.int64)
    a = np.array([7, -7, 0, -128])
    assert compiled(DIV, "sdiv").evaluate(a=a, b=z)["return"].tolist() == [-1] * 4
    assert compiled(DIV, "smod").evaluate(a=a, b=z)["return"].tolist() == a.tolist()
    assert compiled(DIV, "sdiv").evaluate(a=-128, b=-1)["return"] == -128  # 128 wraps
    assert compiled(DIV, "sdiv").evaluate(a=-7, b=2)["return"] == -3  # truncation
    assert compiled(DIV, "smod").evaluate(a=-7, b=2)["return"] == -1
    assert compiled(DIV, "udiv").evaluate(a=5, b=0)["return"] == 2**32 - 1
    assert compiled(DIV, "umod8").evaluate(a=200, b=0)["return"] == 200
    assert compiled(DIV, "umod8").evaluate(a=200, b=7)["return"] == 4
    # shift amounts read as unsigned; >= the width give 0 (or the sign for >> of a negative)
    assert compiled(DIV, "shl").evaluate(a=3, s=np.array([1, 31, 32, -1]))["return"].tolist() == [
        6,
        -2147483648,
        0,
        0,
    ]
    assert compiled(DIV, "sar").evaluate(a=-8, s=np.array([1, 40]))["return"].tolist() == [-4, -1]
    # encrypted indices out of range: reads give 0, writes are dropped
    rd = compiled(DIV, "rd")
    assert rd.evaluate(a=[1, 2, 3, 4, 5], i=np.array([4, 5, -1, 7]))["return"].tolist() == [
        5,
        0,
        0,
        0,
    ]
    wr = compiled(DIV, "wr")
    assert wr.evaluate(a=[1, 2, 3, 4, 5], i=7)["a"].tolist() == [1, 2, 3, 4, 5]
    assert wr.evaluate(a=[1, 2, 3, 4, 5], i=2)["a"].tolist() == [1, 2, 9, 4, 5]


# ---- the circuit IR --------------------------------------------------------------------------
def test_stats_and_waves():
    circ = compile_corpus("dot8")
    s = circ.stats()
    assert s["gates"] == len(circ.ops) == sum(s["gates_by_type"].values())
    assert s["bootstraps"] == s["gates"] + s["gates_by_type"].get("mux", 0)
    waves = circ.waves()
    assert s["depth"] == len(waves) and s["widest_wave"] == max(len(w) for w in waves)
    assert sorted(np.concatenate(waves).tolist()) == list(range(len(circ.ops)))
    # every gate reads only nodes of earlier waves (or inputs and constants)
    base = 1 + circ.num_inputs_bits
    level = np.zeros(circ.num_nodes, dtype=np.int64)
    for k, w in enumerate(waves, start=1):
        level[base + w] = k
    lv = circ.levels()
    for g in range(len(circ.ops)):
        ins = circ.args[g, : 3 if circ.ops[g] in THREE_INPUT else 2] >> 1
        assert level[ins].max() == lv[g] - 1 or (level[ins].max() < lv[g])
    assert circ.inputs[0].name == "a" and circ.inputs[0].shape == (8,)
    assert circ.outputs[0].name == "return" and circ.outputs[0].width == 32


def test_three_input_gates_fold_and_evaluate():
    """CircuitBuilder.maj / xor3 on every kind of literal (negated, constant, repeated) give
    the gate's function in circ.evaluate; constants and repeats fold to cheaper gates."""
    rng = np.random.default_rng(5)
    b = CircuitBuilder([Port("x", 6, False)])
    pool = [0, 1] + b.input_lits(0)
    want = []  # (kind, literals)
    for _ in range(300):
        lits = [int(rng.choice(pool)) ^ int(rng.integers(0, 2)) for _ in range(3)]
        kind = "maj" if rng.integers(0, 2) else "xor3"
        out = getattr(b, kind)(*lits)
        pool.append(out)
        want.append((kind, lits, out))
    circ = b.build([Port("y", 1, False, (len(want),))], [w[2] for w in want], "gates3")
    xs = np.arange(64)
    got = circ.evaluate(x=xs)["y"]
    value = {0: np.zeros(64, dtype=bool)}
    for k in range(6):
        value[b.input_lits(0)[k] >> 1] = (xs >> k) & 1 == 1

    def val(lit):
        return value[lit >> 1] ^ bool(lit & 1)

    for i, (kind, lits, out) in enumerate(want):
        a, bb, c = (val(x) for x in lits)
        ref = (a & bb) | (a & c) | (bb & c) if kind == "maj" else a ^ bb ^ c
        np.testing.assert_array_equal(got[:, i].astype(bool), ref, err_msg=f"{kind}{lits}")
        value.setdefault(out >> 1, ref ^ bool(out & 1))
    # MAJ keeps at most one negated input; XOR3 none.
    for code, args in zip(circ.ops, circ.args):
        assert (args & 1).sum() <= (1 if code == MAJ else 0)


def test_two_input_gates_only_gives_the_same_function():
    src = "#include <stdint.h>\nuint16_t f(uint16_t a, uint16_t b, uint16_t c) { return a * b + c; }\n"
    three = compile_source(src, "f")
    two = compile_source(src, "f", three_input_gates=False)
    assert {"maj", "xor3"} & set(three.stats()["gates_by_type"])
    assert not {"maj", "xor3"} & set(two.stats()["gates_by_type"])
    assert three.stats()["bootstraps"] < two.stats()["bootstraps"]
    rng = np.random.default_rng(2)
    ins = {k: rng.integers(0, 1 << 16, 1000) for k in "abc"}
    want = (ins["a"] * ins["b"] + ins["c"]) % (1 << 16)
    for circ in (three, two):
        assert np.array_equal(circ.evaluate(**ins)["return"], want)


def test_save_load_round_trip(tmp_path):
    circ = compile_corpus("sort4")
    path = tmp_path / "sort4.circuit"
    circ.save(path)
    back = Circuit.load(path)
    assert back.inputs == circ.inputs and back.outputs == circ.outputs
    assert np.array_equal(back.ops, circ.ops) and np.array_equal(back.args, circ.args)
    x = np.random.default_rng(3).integers(-128, 128, size=(300, 4))
    assert np.array_equal(back.evaluate(a=x)["a"], circ.evaluate(a=x)["a"])
    assert np.array_equal(back.evaluate(a=x)["a"], np.sort(x, axis=1))


def test_load_rejects_malformed():
    blob = compile_corpus("add_u8").to_bytes()
    bad = [
        b"",
        blob[:20],
        b"NOTEMBER" + blob[8:],
        blob[:8] + (99).to_bytes(4, "little") + blob[12:],
        blob[:-1],
        blob + b"\0",
        blob[:-3] + bytes([blob[-3] ^ 1]) + blob[-2:],
    ]
    for b in bad:
        with pytest.raises(ember.SerializationError):
            Circuit.from_bytes(b)
    # a consistent file whose gates read a later gate: not topological
    c = compile_corpus("add_u8")
    args = c.args.copy()
    args[0, 0] = 2 * (c.num_nodes - 1)
    evil = Circuit(c.inputs, c.outputs, c.ops, args, c.out_lits, c.name)
    with pytest.raises(ember.SerializationError, match="topological"):
        Circuit.from_bytes(evil.to_bytes())


def test_evaluate_inputs_checked():
    circ = compile_corpus("add_u8")
    assert circ.evaluate(a=200, b=100) == {"return": 44}
    with pytest.raises(ember.ParameterError, match="range"):
        circ.evaluate(a=256, b=0)
    with pytest.raises(ember.ParameterError, match="missing"):
        circ.evaluate(a=1)
    with pytest.raises(ember.ParameterError, match="unknown"):
        circ.evaluate(a=1, b=2, c=3)
    # a write-only array parameter need not be given
    assert (
        compile_corpus("matmul2d")
        .evaluate(a=np.eye(3, dtype=int), b=np.eye(3, dtype=int))["c"]
        .tolist()
        == np.eye(3, dtype=int).tolist()
    )


def test_evaluate_is_bit_sliced():
    circ = compile_corpus("dot8")
    rng = np.random.default_rng(7)
    a = rng.integers(-(2**15), 2**15, size=(4096, 8))
    b = rng.integers(-(2**15), 2**15, size=(4096, 8))
    got = circ.evaluate(a=a, b=b)["return"]
    want = (a * b).sum(axis=1)
    want = (want + 2**31) % 2**32 - 2**31
    assert np.array_equal(got, want)


# ---- encrypted execution on the CPU (test preset) --------------------------------------------
@pytest.fixture(scope="module")
def keys():
    ctx = cggi.Context(cggi.Params.preset("test_insecure", insecure=True), device="cpu")
    ck = ctx.keygen()
    return ctx, ck, ctx.server_key(ck, progress=False)


@pytest.mark.parametrize(
    ("name", "inputs"),
    [
        ("find_first", {"a": [5, -3, 7, 9, -3, 0, 1, 2], "x": -3}),
        ("enc_write", {"a": [1, 2, 3, 4, 5, 6, 7, 8], "i": 6, "v": 200}),
        ("sort4", {"a": [3, -1, 7, -128]}),
        ("lut_sbox", {"x": 0x5A}),
        ("add_u8", {"a": 250, "b": 9}),
    ],
)
def test_encrypted_run(keys, name, inputs):
    ctx, ck, sk = keys
    circ = compile_corpus(name)
    ins = circ.encrypt_inputs(ctx, ck, **inputs)
    outs = circ.run(ctx, sk, ins, devices="all", progress=False)
    got = circ.decrypt_outputs(ctx, ck, outs)
    want = circ.evaluate(**inputs)
    assert set(got) == set(want)
    for k in want:
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k])), (k, got[k], want[k])


def test_encrypted_run_checks_inputs(keys):
    ctx, ck, sk = keys
    circ = compile_corpus("add_u8")
    ins = circ.encrypt_inputs(ctx, ck, a=1, b=2)
    ins["a"] = ins["a"][0:3]
    with pytest.raises(ember.ParameterError, match="Bits of 8"):
        circ.run(ctx, sk, ins)
    with pytest.raises(ember.ParameterError, match="device"):
        circ.run(ctx, sk, circ.encrypt_inputs(ctx, ck, a=1, b=2), devices=["cpu", "gpu0"])


def test_concat(keys):
    ctx, ck, _ = keys
    a = ctx.encrypt(np.array([1, 0, 1], dtype=bool), ck)
    b = ctx.encrypt(np.array([0, 1], dtype=bool), ck)
    c = ctx.concat([a, b[1], a[0:1]])
    assert ctx.decrypt(c, ck).tolist() == [True, False, True, True, True]
    with pytest.raises(ember.ParameterError):
        ctx.concat([])


def test_cli_compile_and_run(tmp_path, capsys):
    import json

    from compiler_ref import CORPUS
    from ember.cli import main

    out = tmp_path / "ff.circuit"
    assert (
        main(["compile", str(CORPUS / "find_first.c"), "--function", "find_first", "-o", str(out)])
        == 0
    )
    stats = json.loads(capsys.readouterr().out)
    assert stats["gates"] > 0 and stats["inputs"] == {"a": "int8[8]", "x": "int8"}
    assert (
        main(
            [
                "run",
                str(out),
                "--device",
                "cpu",
                "--no-progress",
                "--inputs",
                '{"a": [1, 2, 3, 4, 5, 6, 7, 8], "x": 6}',
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["outputs"] == {"return": 5} and report["matches_plaintext_evaluation"]
    assert main(["compile", str(CORPUS / "find_first.c"), "--function", "nope"]) == 2
    assert "CompileError" in capsys.readouterr().err


EDGE = """
const int K = 3;
const unsigned char T[K + 1] = {1, 2, 3, K};
int g_count = 2;
int ident(int x) { return x; }
int five(int x) { return 5; }
int useg(unsigned char i) { g_count += T[i & 3]; return g_count; }
unsigned long long big(unsigned long long a) { return a; }
"""


def test_gateless_circuits_and_globals(keys):
    ctx, ck, sk = keys
    assert compiled(EDGE, "ident").stats()["gates"] == 0
    assert compiled(EDGE, "useg").evaluate(i=np.arange(4))["return"].tolist() == [3, 4, 5, 5]
    assert compiled(EDGE, "big").evaluate(a=2**64 - 1) == {"return": 2**64 - 1}
    for fn, ins, want in [("ident", {"x": -7}, -7), ("five", {}, 5)]:
        c = compiled(EDGE, fn)
        outs = c.run(ctx, sk, c.encrypt_inputs(ctx, ck, **ins), progress=False)
        assert c.decrypt_outputs(ctx, ck, outs) == {"return": want}


def test_encrypted_run_unfused(keys):
    """One call per gate type and wave gives the same outputs as the fused schedule (AND- and
    XOR-type gates of a wave in one call each)."""
    ctx, ck, sk = keys
    circ = compile_corpus("enc_write")
    ins = {"a": [9, 8, 7, 6, 5, 4, 3, 2], "i": 3, "v": 77}
    fused = circ.run(ctx, sk, circ.encrypt_inputs(ctx, ck, **ins), progress=False)
    fused_calls = circ.calls
    plain = circ.run(ctx, sk, circ.encrypt_inputs(ctx, ck, **ins), progress=False, fuse=False)
    assert circ.calls > fused_calls
    want = circ.evaluate(**ins)["a"].tolist()
    assert circ.decrypt_outputs(ctx, ck, fused)["a"].tolist() == want
    assert circ.decrypt_outputs(ctx, ck, plain)["a"].tolist() == want
