"""Separate synthesis (`#pragma ember separate`): a marked C function compiled once and copied at
each call gives the native build's outputs and the inlined program's, nested and with array,
row, pointer and return values; misuse is a CompileError naming the line."""

from __future__ import annotations

from pathlib import Path

import ember
import numpy as np
import pytest
from ember.compiler import compile_source, lower_c
from ember.compiler.native import c_compiler, mismatches, random_inputs, run_native

needs_cc = pytest.mark.skipif(c_compiler() is None, reason="no system C compiler")
CIRCUITS = Path(__file__).resolve().parents[2] / "examples" / "circuits"

# mac3 is called with rows of a 2-D array and a whole array, and from scale (nested separate
# functions); scale writes an array parameter and a pointer; sumsq returns through a pointer.
PROGRAM = """#include <stdint.h>

#pragma ember separate
static int16_t mac3(const int8_t a[3], const int8_t b[3], int16_t bias) {
  int16_t s = bias;
  for (int i = 0; i < 3; i++) s += a[i] * b[i];
  return s;
}

#pragma ember separate
void scale(int8_t v[3], int8_t k, int16_t *sum);

static int8_t twice(int8_t x) { return x + x; }

void scale(int8_t v[3], int8_t k, int16_t *sum) {
  for (int i = 0; i < 3; i++) v[i] = v[i] * k;
  *sum = mac3(v, v, twice(k));
}

void top(int8_t m[2][3], int8_t w[3], int8_t k, int16_t out[3], int16_t *sq) {
  for (int r = 0; r < 2; r++) out[r] = mac3(m[r], w, r);
  out[2] = k > 0 ? mac3(w, w, 7) : -1;
  scale(m[1], k, sq);
  int16_t first = *sq;
  scale(w, 3, sq);
  *sq ^= first;
}
"""


def _inlined(src: str) -> str:
    return src.replace("#pragma ember separate\n", "")


@pytest.fixture(scope="module")
def separate_and_inlined():
    return compile_source(PROGRAM, "top", "sep.c"), compile_source(
        _inlined(PROGRAM), "top", "inl.c"
    )


def test_separate_functions_compiled_once_each(separate_and_inlined):
    circ, inlined = separate_and_inlined
    info = circ.compile_info["separate"]
    assert set(info) == {"mac3", "scale"}
    assert inlined.compile_info["separate"] == {}
    # Three instances of mac3 in top and one inside scale's circuit: at least that many gates.
    assert circ.stats()["gates"] >= 3 * info["mac3"]["gates"] // 2 + info["scale"]["gates"] // 2
    assert [p.name for p in circ.outputs] == [p.name for p in inlined.outputs]


@needs_cc
def test_separate_equals_native_and_inlined(separate_and_inlined, tmp_path, rng):
    circ, inlined = separate_and_inlined
    path = tmp_path / "sep.c"
    path.write_text(PROGRAM)
    n = 400
    sets = random_inputs(circ, n, rng)
    got = circ.evaluate(**sets)
    want = run_native(path, "top", circ, sets, n, str(tmp_path))
    assert not mismatches(got, want, n)
    assert not mismatches(inlined.evaluate(**sets), want, n)


def test_inlined_row_arguments_write_back():
    """Unmarked functions take rows a[i] too (inlined, the row written back)."""
    src = """#include <stdint.h>
static void bump(int8_t r[2]) { r[0] += 1; r[1] += r[0]; }
void f(int8_t m[3][2]) { bump(m[2]); bump(m[0]); }
"""
    circ = compile_source(src, "f", "rows.c")
    m = np.array([[1, 2], [3, 4], [5, 6]])
    assert circ.evaluate(m=m)["m"].tolist() == [[2, 4], [3, 4], [6, 12]]


def test_other_pragmas_are_ignored():
    src = '#pragma once\n#pragma GCC optimize("O3")\nint f(int x) { return x + 1; }\n'
    assert compile_source(src, "f", "p.c").evaluate(x=41)["return"] == 42


BAD = [
    ("#pragma ember separate\nint g;\nint f(int x) { return x; }", 1, "followed by a function"),
    ("int f(int x) { return x; }\n#pragma ember separate\n", 2, "followed by a function"),
    ("#pragma ember separate\n#pragma ember separate\nint f(int x) { return x; }", 1, "followed"),
    ("#pragma ember inline\nint f(int x) { return x; }", 1, "unknown pragma"),
    ("int f(int x) {\n#pragma ember separate\n  return x;\n}", 2, "file scope"),
    (
        "#pragma ember separate\nint g(int x);\nint f(int x) { return g(x); }",
        None,
        "not defined",
    ),
    (
        (
            "int s = 1;\n#pragma ember separate\nint g(int x) {\n  return x + s;\n}\n"
            "int f(int x) { s = 2; return g(x); }"
        ),
        4,
        "non-const global",
    ),
    (
        (
            "int h(int x);\n#pragma ember separate\nint g(int x) { return h(x); }\n"
            "#pragma ember separate\nint h(int x) {\n  return x ? g(x - 1) : 0;\n}\n"
            "int f(int x) { return g(x); }"
        ),
        None,
        "recursi",
    ),
    (
        (
            "#pragma ember separate\nvoid g(int a[2], int b[2]) { a[0] = b[1]; }\n"
            "int f(int a[2]) {\n  g(a, a);\n  return a[0];\n}"
        ),
        4,
        "different arrays",
    ),
    (
        (
            "#pragma ember separate\nint g(const int a[2]) { return a[0]; }\n"
            "int f(int m[2][2], int i) {\n  return g(m[i]);\n}"
        ),
        4,
        "constant",
    ),
]


@pytest.mark.parametrize(("src", "line", "what"), BAD)
def test_separate_misuse_errors(src, line, what):
    with pytest.raises(ember.CompileError) as err:
        lower_c(src, "f", "bad.c")
    msg = str(err.value)
    assert what.lower() in msg.lower(), msg
    if line is not None:
        assert f"bad.c:{line}:" in msg, msg


@needs_cc
def test_matmul10_equals_native(rng, tmp_path):
    """The 10x10 matrix product (dot10 compiled once, 100 instances) end to end."""
    circ = ember.compile_c(CIRCUITS / "matmul10.c", "matmul10")
    assert set(circ.compile_info["separate"]) == {"dot10"}
    n = 100
    sets = random_inputs(circ, n, rng)
    want = run_native(CIRCUITS / "matmul10.c", "matmul10", circ, sets, n, str(tmp_path))
    assert not mismatches(circ.evaluate(**sets), want, n)
    a, b = sets["a"].astype(np.int64), sets["b"].astype(np.int64)
    assert np.array_equal(want["c"].astype(np.int64), ((a @ b + 2**31) % 2**32) - 2**31)
