"""The native reference of a compiled C function: the same file built with the system C compiler
into a harness that reads input sets on stdin and prints the outputs, and random inputs of every
C type, so that a circuit can be checked against the program it came from."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

import numpy as np

from ..errors import CompileError

# The compiler's semantics for what C leaves open (docs/compiler.md): wrap-around, signed char.
CFLAGS = ["-std=c99", "-O1", "-fwrapv", "-fsigned-char", "-w"]


def c_compiler() -> str | None:
    """The system C compiler (cc, else gcc), or None."""
    return shutil.which("cc") or shutil.which("gcc")


@functools.lru_cache(maxsize=8)
def _front_end(path: str, mtime_ns: int, size: int):
    """The parsed file (a Lowering, only read here), kept while the file is unchanged: the
    generated MNIST programs take seconds to parse and the harness needs them twice."""
    from . import _parse
    from .lower import Lowering

    with open(path) as f:
        return Lowering(_parse(f.read(), path), path)


def param_kinds(path, function: str):
    """([(name, IntType, shape)], return IntType or None) of the function's parameters; shape
    None for scalars, () for pointers."""
    path = os.path.abspath(os.fspath(path))
    st = os.stat(path)
    low = _front_end(path, st.st_mtime_ns, st.st_size)
    if function not in low.funcs:
        raise CompileError(f"{path}: no function named {function!r}")
    fd = low.funcs[function]
    out = []
    for p in low.param_decls(fd.decl.type):
        t, shape, _ = low.decl_type(p.type, p, param=True)
        out.append((p.name, t, shape))
    return out, low.return_type(fd.decl.type, fd)


def _ctype(t) -> str:
    if t.is_bool:
        return "bool"
    return f"{'' if t.signed else 'u'}int{t.width}_t"


def harness_source(path, function: str, outputs: set) -> str:
    """C source of a main() that reads a count, then that many input sets (every element as an
    unsigned decimal, C order), calls the function and prints its outputs, one set a line."""
    path = os.path.abspath(os.fspath(path))
    params, ret = param_kinds(path, function)
    lines = [
        "#include <stdio.h>",
        "#include <stdint.h>",
        "#include <stdbool.h>",
        f'#include "{path}"',
        "int main(void) {",
        "  long ember_n;",
        '  if (scanf("%ld", &ember_n) != 1) return 1;',
        "  for (long ember_s = 0; ember_s < ember_n; ember_s++) {",
        "    unsigned long long ember_v;",
    ]
    args, prints = [], []
    for pname, t, shape in params:
        ct = _ctype(t)
        if shape is None:
            lines.append(f"    {ct} {pname};")
            lines.append(f'    scanf("%llu", &ember_v); {pname} = ({ct})ember_v;')
            args.append(pname)
        elif shape == ():
            lines.append(f"    {ct} {pname};")
            lines.append(f'    scanf("%llu", &ember_v); {pname} = ({ct})ember_v;')
            args.append(f"&{pname}")
            prints.append((pname, t, 1, pname))
        else:
            dims = "".join(f"[{d}]" for d in shape)
            count = int(np.prod(shape))
            # static: big arrays (a 10x10 matrix, 500-vectors) stay off the stack.
            lines.append(f"    static {ct} {pname}{dims};")
            lines.append(f"    {ct} *{pname}_flat = ({ct} *){pname};")
            lines.append(
                f"    for (int ember_k = 0; ember_k < {count}; ember_k++) "
                f'{{ scanf("%llu", &ember_v); {pname}_flat[ember_k] = ({ct})ember_v; }}'
            )
            args.append(pname)
            prints.append((pname, t, count, f"{pname}_flat[ember_k]"))
    call = f"{function}({', '.join(args)})"
    if ret is not None:
        lines.append(f"    {_ctype(ret)} ember_r = {call};")
        fmt = "%lld" if ret.signed else "%llu"
        cast = "long long" if ret.signed else "unsigned long long"
        lines.append(f'    printf("{fmt} ", ({cast})ember_r);')
    else:
        lines.append(f"    {call};")
    for pname, t, count, expr in prints:
        if pname not in outputs:
            continue
        fmt = "%lld" if t.signed else "%llu"
        cast = "long long" if t.signed else "unsigned long long"
        if count == 1 and expr == pname:
            lines.append(f'    printf("{fmt} ", ({cast}){pname});')
        else:
            lines.append(
                f"    for (int ember_k = 0; ember_k < {count}; ember_k++) "
                f'printf("{fmt} ", ({cast}){expr});'
            )
    lines += ['    printf("\\n");', "  }", "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def native_binary(path, function: str, workdir: str, outputs: set) -> str:
    """Builds the harness of `function` in the C file at `path`; returns the executable."""
    cc = c_compiler()
    if cc is None:
        raise CompileError("no system C compiler (cc or gcc) for the native reference")
    src = os.path.join(workdir, f"{function}_main.c")
    exe = os.path.join(workdir, f"{function}_main")
    with open(src, "w") as f:
        f.write(harness_source(path, function, outputs))
    proc = subprocess.run(
        [cc, *CFLAGS, "-o", exe, src], check=False, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise CompileError(f"{path}: the native build failed:\n{proc.stderr.strip()[-2000:]}")
    return exe


def random_inputs(circ, n: int, rng) -> dict:
    """n sets of inputs: half over each type's full range, half small values (-4..4) so that
    equalities and edge cases occur."""
    out = {}
    for p in circ.inputs:
        shape = (n,) + p.shape
        if p.signed:
            lo, hi = -(1 << (p.width - 1)), (1 << (p.width - 1)) - 1
        else:
            lo, hi = 0, (1 << p.width) - 1
        if p.width == 64 and not p.signed:
            full = rng.integers(0, 1 << 63, size=shape, dtype=np.uint64) * np.uint64(
                2
            ) + rng.integers(0, 2, size=shape, dtype=np.uint64)
            small = np.clip(rng.integers(-4, 5, size=shape), lo, None).astype(np.uint64)
        else:
            full = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
            small = np.clip(rng.integers(-4, 5, size=shape), lo, hi)
        pick = rng.random(size=(n,) + (1,) * len(p.shape)) < 0.5
        out[p.name] = np.where(pick, full, small)
    return out


def run_native(path, function: str, circ, inputs: dict, n: int, workdir: str | None = None):
    """The native program's outputs on n input sets (each input with a leading axis of n), as
    circ.evaluate returns them (object arrays of Python ints)."""
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="ember-native-")
        workdir = tmp.name
    try:
        exe = native_binary(path, function, workdir, {p.name for p in circ.outputs})
        cols = []
        for p in circ.inputs:
            v = inputs.get(p.name)
            v = np.zeros((n,) + p.shape, dtype=np.int64) if v is None else np.asarray(v)
            v = np.broadcast_to(v, (n,) + p.shape).reshape(n, -1)
            cols.append(v.astype(np.int64).view(np.uint64) if v.dtype.kind == "i" else v)
        table = np.concatenate(cols, axis=1) if cols else np.zeros((n, 0), dtype=np.uint64)
        text = f"{n}\n" + "\n".join(" ".join(str(int(x)) for x in row) for row in table) + "\n"
        proc = subprocess.run([exe], input=text, capture_output=True, text=True, check=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    rows = [line.split() for line in proc.stdout.strip().split("\n")]
    if len(rows) != n:
        raise CompileError(f"the native {function} printed {len(rows)} lines for {n} input sets")
    res, col = {}, 0
    for p in circ.outputs:
        vals = np.array([[int(x) for x in r[col : col + p.count]] for r in rows], dtype=object)
        col += p.count
        res[p.name] = vals.reshape((n,) + p.shape)
    return res


def mismatches(got: dict, want: dict, n: int) -> dict:
    """{output: indices of the sets where the circuit's and the native outputs differ}."""
    bad = {}
    for k, w in want.items():
        g = np.asarray(got[k]).astype(object).reshape((n,) + np.shape(w)[1:])
        idx = np.nonzero((g != w).reshape(n, -1).any(axis=1))[0]
        if len(idx):
            bad[k] = idx
    return bad


__all__ = [
    "CFLAGS",
    "c_compiler",
    "harness_source",
    "mismatches",
    "native_binary",
    "param_kinds",
    "random_inputs",
    "run_native",
]
