"""Helpers of the compiler tests: compiled circuits cached per test session, a native reference
(the same C program compiled with the system C compiler into a harness that reads input sets on
stdin and prints the outputs), and random inputs of every C type."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

CORPUS = Path(__file__).resolve().parent.parent / "c"

_circuits: dict = {}


def compile_corpus(name: str):
    """The circuit of tests/c/<name>.c's function <name>, compiled once per session."""
    if name not in _circuits:
        from ember.compiler import compile_c

        _circuits[name] = compile_c(CORPUS / f"{name}.c", name)
    return _circuits[name]


def param_kinds(name: str) -> list:
    """[(name, IntType, shape)] of the function's parameters; shape None for scalars, () for
    pointers."""
    from ember.compiler import _parse
    from ember.compiler.lower import Lowering

    path = CORPUS / f"{name}.c"
    low = Lowering(_parse(path.read_text(), str(path)), str(path))
    fd = low.funcs[name]
    out = []
    for p in low.param_decls(fd.decl.type):
        t, shape, _ = low.decl_type(p.type, p, param=True)
        out.append((p.name, t, shape))
    return out, low.return_type(fd.decl.type, fd)


def _ctype(t) -> str:
    if t.is_bool:
        return "bool"
    return f"{'' if t.signed else 'u'}int{t.width}_t"


def native_binary(name: str, workdir: str, outputs: set) -> str:
    """Builds the harness of tests/c/<name>.c; returns the executable's path."""
    params, ret = param_kinds(name)
    lines = [
        "#include <stdio.h>",
        "#include <stdint.h>",
        "#include <stdbool.h>",
        f'#include "{CORPUS / (name + ".c")}"',
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
            lines.append(f"    {ct} {pname}{dims};")
            lines.append(f"    {ct} *{pname}_flat = ({ct} *){pname};")
            lines.append(
                f'    for (int ember_k = 0; ember_k < {count}; ember_k++) {{ scanf("%llu", &ember_v); '
                f"{pname}_flat[ember_k] = ({ct})ember_v; }}"
            )
            args.append(pname)
            prints.append((pname, t, count, f"{pname}_flat[ember_k]"))
    call = f"{name}({', '.join(args)})"
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
                f'    for (int ember_k = 0; ember_k < {count}; ember_k++) printf("{fmt} ", '
                f"({cast}){expr});"
            )
    lines += ['    printf("\\n");', "  }", "  return 0;", "}"]
    src = os.path.join(workdir, f"{name}_main.c")
    exe = os.path.join(workdir, f"{name}_main")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run(
        [cc, "-std=c99", "-O1", "-fwrapv", "-fsigned-char", "-w", "-o", exe, src], check=True
    )
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


def run_native(name: str, circ, inputs: dict, n: int, workdir: str) -> dict:
    """The native program's outputs on the input sets, as circ.evaluate returns them."""
    exe = native_binary(name, workdir, {p.name for p in circ.outputs})
    cols = []
    for p in circ.inputs:
        v = np.asarray(inputs[p.name]).reshape(n, -1)
        cols.append(v.astype(np.int64).view(np.uint64) if v.dtype.kind == "i" else v)
    table = np.concatenate(cols, axis=1) if cols else np.zeros((n, 0), dtype=np.uint64)
    text = f"{n}\n" + "\n".join(" ".join(str(int(x)) for x in row) for row in table) + "\n"
    proc = subprocess.run([exe], input=text, capture_output=True, text=True, check=True)
    rows = [line.split() for line in proc.stdout.strip().split("\n")]
    assert len(rows) == n
    res, col = {}, 0
    for p in circ.outputs:
        vals = np.array([[int(x) for x in r[col : col + p.count]] for r in rows], dtype=object)
        col += p.count
        res[p.name] = vals.reshape((n,) + p.shape)
    return res


def workdir() -> str:
    return tempfile.mkdtemp(prefix="ember-cref-")
