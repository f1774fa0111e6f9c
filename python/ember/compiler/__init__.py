"""The C-subset compiler: C -> (pycparser) -> Verilog -> (Yosys + ABC, FHE cost model) ->
ember.circuit.Circuit. See docs/compiler.md for the subset and its semantics."""

from __future__ import annotations

import os
import re
import time

from ..circuit import Circuit
from ..errors import CompileError
from .preprocess import preprocess


def _parse(text: str, path: str):
    from pycparser import c_parser

    try:
        from pycparser.c_parser import ParseError
    except ImportError:  # pycparser < 3
        from pycparser.plyparser import ParseError

    parser = c_parser.CParser()
    try:
        return parser.parse(preprocess(text, path), filename=path)
    except ParseError as e:
        msg = str(e)
        if not re.match(r".*:\d+:\d+", msg.split(" ")[0]):
            try:  # pycparser 3 leaves some messages without the position: the next token's
                tok = parser._peek()
                c = parser._tok_coord(tok)
                msg = f"{c.file}:{c.line}:{c.column}: {msg.split(': ', 1)[-1]} near {tok.value!r}"
            except Exception:  # noqa: BLE001, S110 (the parser's private API: best effort)
                pass
        raise CompileError(f"{msg} (C syntax, or a construct outside the subset)") from None


def lower_c(source: str, function: str, path: str = "<string>"):
    """(Verilog text, input Ports, output Ports) of `function` in the C source; calls of
    `#pragma ember separate` functions are instances of black-box modules."""
    from .separate import SeparateUnit

    return SeparateUnit(_parse(source, path), path, None, True).lower(function)


def compile_source(
    source: str,
    function: str,
    path: str = "<string>",
    keep_dir: str | None = None,
    three_input_gates: bool = True,
) -> Circuit:
    """Compiles C source text; see compile_c."""
    from .separate import SeparateUnit
    from .synth import synthesize

    t0 = time.perf_counter()
    unit = SeparateUnit(_parse(source, path), path, keep_dir, three_input_gates)
    verilog, inputs, outputs = unit.lower(function)
    t1 = time.perf_counter()
    circ, yosys_s = synthesize(
        verilog, function, inputs, outputs, keep_dir, three_input_gates, unit
    )
    circ.compile_info = {
        "lower_seconds": t1 - t0,
        "yosys_seconds": yosys_s,
        "verilog_lines": verilog.count("\n"),
        # Each separate function: synthesized once (seconds include its own callees).
        "separate": unit.info,
    }
    return circ


def compile_c(
    path, function: str, keep_dir: str | None = None, three_input_gates: bool = True
) -> Circuit:
    """Compiles `function` of the C file at `path` into a Circuit of CGGI gates.
    Raises CompileError (file, line, column, construct) for C outside the subset.
    keep_dir: a folder to keep the generated Verilog, Yosys script and netlist in.
    three_input_gates: map to MAJ and XOR3 (one bootstrap each) besides the two-input gates and
    MUX; False for two-input gates only (as ARCTYREX and the TFHE gate libraries)."""
    path = os.fspath(path)
    try:
        with open(path) as f:
            source = f.read()
    except OSError as e:
        raise CompileError(f"{path}: cannot read the file ({e.strerror})") from None
    return compile_source(source, function, path, keep_dir, three_input_gates)


__all__ = ["CompileError", "compile_c", "compile_source", "lower_c"]
