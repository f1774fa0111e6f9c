"""Separate synthesis: the functions of one file marked `#pragma ember separate`, each lowered and
synthesized once per compile and copied into its callers' circuits at every call."""

from __future__ import annotations

import os
import time

from pycparser import c_ast

from ..circuit import Port
from ..errors import CompileError


class SeparateUnit:
    """The parsed file and what one compile has lowered and synthesized of it: the interface
    (input and output Ports) and the circuit of each separate function, made on first use."""

    def __init__(self, ast, path: str, keep_dir: str | None, three_input_gates: bool):
        self.ast = ast
        self.path = path
        self.keep_dir = keep_dir
        self.three_input_gates = three_input_gates
        self.lowered: dict = {}  # name -> (Verilog text, input Ports, output Ports)
        self.circuits: dict = {}  # name -> Circuit
        self.info: dict = {}  # name -> {"seconds", "gates", "bootstraps", "depth"}
        self.in_progress: list = []
        self.front = None  # the file scope's declarations, shared by the lowerings (lower.py)

    def lower(self, function: str):
        """(Verilog, input Ports, output Ports) of `function`; separate callees become
        instances of black-box modules."""
        from .lower import Lowering

        try:
            low = Lowering(self.ast, self.path, self)
            if function in self.in_progress:
                raise CompileError(
                    f"{self.path}: recursive call of {function!r} (through separate "
                    f"functions {' -> '.join(self.in_progress)}): recursion is not supported"
                )
            if self.in_progress:  # a callee
                self.check_globals(low, function)
            self.in_progress.append(function)
            try:
                verilog, in_vars, outs = low.lower(function)
            finally:
                self.in_progress.pop()
        except CompileError:
            raise
        except RecursionError:
            raise CompileError(
                f"{self.path}: expression or nesting too deep for the compiler"
            ) from None
        except Exception as e:  # a compiler bug: still a typed error, with the cause chained
            raise CompileError(
                f"{self.path}: internal compiler error ({type(e).__name__}: {e}); "
                "please report it with the program"
            ) from e
        inputs = [Port(v.name, v.t.width, v.t.signed, v.shape or ()) for v in in_vars]
        outputs = [Port(name, t.width, t.signed, shape or ()) for name, t, shape in outs]
        return verilog, inputs, outputs

    def interface(self, name: str):
        """(input Ports, output Ports) of separate function `name`, lowered once."""
        if name not in self.lowered:
            self.lowered[name] = self.lower(name)
        _, ins, outs = self.lowered[name]
        return ins, outs

    def circuit(self, name: str):
        """The circuit of separate function `name`, synthesized once per compile."""
        if name not in self.circuits:
            from .synth import synthesize

            verilog, ins, outs = self.lowered[name]
            keep = os.path.join(self.keep_dir, name) if self.keep_dir else None
            t0 = time.perf_counter()
            circ, _ = synthesize(verilog, name, ins, outs, keep, self.three_input_gates, self)
            stats = circ.stats()
            self.info[name] = {
                "seconds": round(time.perf_counter() - t0, 2),
                "gates": stats["gates"],
                "bootstraps": stats["bootstraps"],
                "depth": stats["depth"],
            }
            self.circuits[name] = circ
        return self.circuits[name]

    def check_globals(self, low, name: str) -> None:
        """A separate function is compiled once, from the globals' initial values: it may read
        const globals only (directly or in the functions it inlines)."""
        todo, seen = [name], set()
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            fd = low.funcs[f]
            local = {n.name for n in _walk(fd) if isinstance(n, c_ast.Decl)}
            for n in _walk(fd.body):
                if isinstance(n, c_ast.ID) and n.name not in local:
                    v = low.globals.get(n.name)
                    if v is not None and not v.const:
                        raise CompileError(
                            f"{n.coord.file}:{n.coord.line}:{n.coord.column}: {f!r} uses the "
                            f"non-const global {n.name!r}, and {name!r} is compiled separately "
                            "(once, without its callers' state): make it const or pass it as "
                            "a parameter"
                        )
                if (
                    isinstance(n, c_ast.FuncCall)
                    and isinstance(n.name, c_ast.ID)
                    and n.name.name in low.funcs
                    and n.name.name not in low.separate
                ):
                    todo.append(n.name.name)


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(child for _, child in n.children())


__all__ = ["SeparateUnit"]
