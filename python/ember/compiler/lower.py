"""Lowering of a C function to a combinational Verilog module by symbolic execution.

Statements run once each, in order, on an environment of values (compile-time constants or
wires): loops are unrolled (their conditions must fold to constants), calls are inlined, and
control flow that depends on encrypted data runs both ways and merges the environments with
muxes. An environment is valid on the *active* paths (a bool predicate); paths that leave by
break, continue or return are kept aside as (predicate, environment) snapshots and merged back
where they rejoin, so a loop counter stays a constant after `if (x) break;`. Arrays are tuples of
element values; reads and writes at encrypted indices are mux trees and per-element muxes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from ..errors import CompileError
from . import ctype
from .ctype import BOOL, INT, SIZE_T, IntType, common, promote
from .verilog import Module, Val, const

MAX_UNROLL = 1 << 16
ARITH = {"+", "-", "*", "/", "%", "&", "|", "^"}
COMPARE = {"<", "<=", ">", ">=", "==", "!="}


@dataclass(eq=False)
class Var:
    name: str
    t: IntType
    shape: tuple | None = None  # None: a scalar; () for a pointer parameter (one element)
    const: bool = False
    param: bool = False
    written: bool = False

    @property
    def is_array(self) -> bool:
        return self.shape is not None

    @property
    def count(self) -> int:
        n = 1
        for s in self.shape or ():
            n *= s
        return n


@dataclass
class State:
    env: dict
    active: Val
    dead: bool = False


@dataclass
class LoopCtx:
    breaks: list = field(default_factory=list)
    conts: list = field(default_factory=list)
    is_switch: bool = False


@dataclass
class FuncCtx:
    ret: IntType | None
    returns: list = field(default_factory=list)


def where(node) -> str:
    c = getattr(node, "coord", None)
    if c is None:
        return "?"
    return f"{c.file}:{c.line}:{c.column}"


def fail(node, msg: str):
    raise CompileError(f"{where(node)}: {msg}")


SEPARATE_PRAGMA = "ember separate"


class Lowering:
    """One function of a parsed file lowered to Verilog. `unit` (compiler/separate.py) lowers
    and synthesizes the functions marked `#pragma ember separate`, which calls here become
    instances of; without one (the native harness only reads signatures) calls are inlined."""

    def __init__(self, ast: c_ast.FileAST, path: str, unit=None):
        self.path = path
        self.unit = unit
        self.m = Module()
        self.typedefs: dict = {}
        self.funcs: dict = {}
        self.separate: set = set()  # names of the functions marked #pragma ember separate
        self.instanced: dict = {}  # separate callee name -> (input Ports, output Ports)
        self.globals: dict = {}
        self.genv: dict = {}
        self.stack: list = []
        self.loops: list = []
        self.fctx: list = []
        self.scopes: list = [{}]
        front = getattr(unit, "front", None)
        if front is not None:  # the file's declarations, read once a compile (large tables)
            self.typedefs, self.funcs, self.separate, self.globals, self.genv = front
            return
        self.read_file_scope(ast)
        if unit is not None:
            unit.front = (self.typedefs, self.funcs, self.separate, self.globals, self.genv)

    def read_file_scope(self, ast):
        marker = None  # a #pragma ember separate waiting for its function
        for ext in ast.ext:
            if isinstance(ext, c_ast.Pragma):
                if marker is not None:
                    fail(marker, f"'#pragma {SEPARATE_PRAGMA}' must be followed by a function")
                marker = self.read_pragma(ext)
                continue
            is_function = isinstance(ext, c_ast.FuncDef) or (
                isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl)
            )
            if marker is not None:
                if not is_function:
                    fail(
                        marker,
                        f"'#pragma {SEPARATE_PRAGMA}' must be followed by a function "
                        "definition or prototype",
                    )
                self.separate.add(ext.decl.name if isinstance(ext, c_ast.FuncDef) else ext.name)
                marker = None
            if isinstance(ext, c_ast.Typedef):
                self.typedefs[ext.name] = self.base_type(ext.type, ext)
            elif isinstance(ext, c_ast.FuncDef):
                self.funcs[ext.decl.name] = ext
            elif isinstance(ext, c_ast.Decl):
                if isinstance(ext.type, c_ast.FuncDecl):
                    continue  # a prototype
                self.declare_global(ext)
            else:
                fail(ext, f"{type(ext).__name__} at file scope is not supported")
        if marker is not None:
            fail(marker, f"'#pragma {SEPARATE_PRAGMA}' must be followed by a function")
        for name in sorted(self.separate - set(self.funcs)):
            raise CompileError(
                f"{self.path}: function {name!r} is marked '#pragma {SEPARATE_PRAGMA}' "
                "but not defined in this file"
            )

    @staticmethod
    def read_pragma(node):
        text = " ".join((node.string or "").split())
        if text != SEPARATE_PRAGMA:
            fail(
                node,
                f"unknown pragma '#pragma {text}' (the compiler knows '#pragma "
                f"{SEPARATE_PRAGMA}', before a function that is compiled once and "
                "instantiated at each call)",
            )
        return node

    # ---- types -----------------------------------------------------------------------------
    def base_type(self, node, ctx) -> IntType:
        if isinstance(node, c_ast.TypeDecl):
            node = node.type
        if isinstance(node, c_ast.IdentifierType):
            names = node.names
            if len(names) == 1 and names[0] in self.typedefs:
                return self.typedefs[names[0]]
            t = ctype.from_names(names)
            if t is not None:
                return t
            fail(ctx, f"type {' '.join(names)!r} is not supported (integer types only)")
        if isinstance(node, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
            fail(ctx, f"{type(node).__name__.lower()} types are not supported")
        fail(ctx, f"type {type(node).__name__} is not supported here")

    def decl_type(self, node, ctx, param: bool = False):
        """(element type, shape or None, is const) of a declarator."""
        dims = []
        is_const = False
        while isinstance(node, (c_ast.ArrayDecl, c_ast.PtrDecl)):
            if isinstance(node, c_ast.PtrDecl):
                if not param or dims:
                    fail(ctx, "pointers are supported only as parameters (T *p, one element)")
                node = node.type
                if isinstance(node, (c_ast.ArrayDecl, c_ast.PtrDecl)):
                    fail(ctx, "pointers to pointers or arrays are not supported")
                dims = None
                break
            if node.dim is None:
                fail(ctx, "arrays need a constant size (int a[8])")
            n = self.const_expr(node.dim)
            if n <= 0:
                fail(node.dim, "array sizes must be positive")
            dims.append(n)
            node = node.type
        if isinstance(node, c_ast.TypeDecl):
            is_const = "const" in (node.quals or [])
        if isinstance(node, c_ast.FuncDecl):
            fail(ctx, "function pointers are not supported")
        t = self.base_type(node, ctx)
        if dims is None:
            return t, (), is_const
        if len(dims) > 2:
            fail(ctx, "arrays of more than two dimensions are not supported")
        return t, (tuple(dims) if dims else None), is_const

    def const_expr(self, node) -> int:
        st = State(dict(self.genv), const(BOOL, 1))
        saved = getattr(self, "st", None)
        self.st = st
        try:
            v = self.expr(node)
        finally:
            self.st = saved
        if not v.is_const:
            fail(node, "expected a compile-time constant")
        return v.const

    # ---- declarations ----------------------------------------------------------------------
    def declare_global(self, d: c_ast.Decl):
        if d.storage and any(s not in ("static",) for s in d.storage):
            fail(d, f"storage class {' '.join(d.storage)} is not supported")
        t, shape, is_const = self.decl_type(d.type, d)
        v = Var(d.name, t, shape, const=is_const)
        self.globals[d.name] = v
        self.genv[v] = self.initial_value(v, d.init, d, in_global=True)

    def initial_value(self, v: Var, init, node, in_global=False):
        if v.shape is None:
            if init is None:
                return const(v.t, 0)
            if isinstance(init, c_ast.InitList):
                fail(init, "a scalar initialized with a brace list")
            val = self.expr(init) if not in_global else const(v.t, self.const_expr(init))
            return self.m.cast(val, v.t)
        flat = [const(v.t, 0)] * v.count
        if init is None:
            return tuple(flat)
        if not isinstance(init, c_ast.InitList):
            fail(init, "arrays are initialized with a brace list {...}")
        items = self.flatten_init(init, v.shape, init)
        if len(items) > v.count:
            fail(init, f"too many initializers for {v.name}")
        for k, e in enumerate(items):
            if e is None:
                continue
            val = const(v.t, self.const_expr(e)) if in_global else self.expr(e)
            flat[k] = self.m.cast(val, v.t)
        return tuple(flat)

    def flatten_init(self, init, shape, node) -> list:
        if len(shape) == 1:
            if any(isinstance(e, c_ast.InitList) for e in init.exprs):
                fail(node, "nested braces in a one-dimensional array initializer")
            if any(isinstance(e, c_ast.NamedInitializer) for e in init.exprs):
                fail(node, "designated initializers are not supported")
            return list(init.exprs)
        out = []
        if all(isinstance(e, c_ast.InitList) for e in init.exprs):
            for e in init.exprs:
                row = self.flatten_init(e, shape[1:], e)
                if len(row) > shape[1]:
                    fail(e, "too many initializers in a row")
                out += row + [None] * (shape[1] - len(row))
            return out
        if any(isinstance(e, c_ast.InitList) for e in init.exprs):
            fail(node, "mixed braced and unbraced rows in an initializer")
        return list(init.exprs)

    # ---- scopes ----------------------------------------------------------------------------
    def lookup(self, name: str, node) -> Var:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.globals:
            return self.globals[name]
        fail(node, f"undeclared identifier {name!r}")

    def pop_scope(self):
        """Leaves a block: its locals leave the environment (unrolled loops would otherwise
        carry every iteration's locals into every merge)."""
        for v in self.scopes.pop().values():
            if not v.param:
                self.st.env.pop(v, None)

    def get(self, var: Var):
        return self.st.env[var]

    # ---- entry -----------------------------------------------------------------------------
    def lower(self, function: str):
        if function not in self.funcs:
            raise CompileError(
                f"{self.path}: no function {function!r} defined (functions: "
                f"{', '.join(self.funcs) or 'none'})"
            )
        fd = self.funcs[function]
        ftype = fd.decl.type
        ret = self.return_type(ftype, fd)
        self.st = State(dict(self.genv), const(BOOL, 1))
        self.scopes = [{}]
        ports, inputs = [], []
        params = self.param_decls(ftype)
        for p in params:
            t, shape, is_const = self.decl_type(p.type, p, param=True)
            v = Var(p.name, t, shape, const=is_const, param=True)
            self.scopes[0][p.name] = v
            n = v.count if v.is_array else 1
            port = f"in_{p.name}"
            ports.append(f"input [{n * t.width - 1}:0] {port}")
            elems = tuple(
                self.m.emit(t, f"{port}[{(k + 1) * t.width - 1}:{k * t.width}]") for k in range(n)
            )
            self.st.env[v] = elems if v.is_array else elems[0]
            inputs.append(v)
        self.stack = [function]
        result = self.run_function(fd, ret)
        outputs = []
        if ret is not None:
            ports.append(f"output [{ret.width - 1}:0] out_return")
            self.m.lines.append(f"  assign out_return = {self.m.ref(result)};")
            outputs.append(("return", ret, None))
        for v in inputs:
            if v.is_array and v.written:
                elems = self.st.env[v]
                ports.append(f"output [{len(elems) * v.t.width - 1}:0] out_{v.name}")
                cat = ", ".join(self.m.ref(e) for e in reversed(elems))
                self.m.lines.append(f"  assign out_{v.name} = {{{cat}}};")
                outputs.append((v.name, v.t, v.shape))
        if not outputs:
            fail(
                fd,
                f"function {function!r} has no outputs (it returns nothing and writes "
                "no array or pointer parameter)",
            )
        return self.m.text(function, ports) + self.blackbox_stubs(), inputs, outputs

    def blackbox_stubs(self) -> str:
        """Empty modules of the separate callees: Yosys keeps their instances as cells, which
        the netlist reader replaces by the callees' circuits."""
        out = []
        for name, (ins, outs) in self.instanced.items():
            ports = [f"input [{p.nbits - 1}:0] in_{p.name}" for p in ins]
            ports += [f"output [{p.nbits - 1}:0] out_{p.name}" for p in outs]
            out.append(f"(* blackbox *)\nmodule {name}(\n  " + ",\n  ".join(ports))
            out.append("\n);\nendmodule\n")
        return "".join(out)

    def return_type(self, ftype, fd):
        node = ftype.type
        if isinstance(node, c_ast.PtrDecl):
            fail(fd, "functions returning pointers are not supported")
        if (
            isinstance(node, c_ast.TypeDecl)
            and isinstance(node.type, c_ast.IdentifierType)
            and node.type.names == ["void"]
        ):
            return None
        return self.base_type(node, fd)

    def param_decls(self, ftype) -> list:
        if ftype.args is None:
            return []
        out = []
        for p in ftype.args.params:
            if isinstance(p, c_ast.EllipsisParam):
                fail(p, "variadic functions are not supported")
            if isinstance(p, c_ast.Typename):
                if isinstance(p.type, c_ast.TypeDecl) and getattr(p.type.type, "names", None) == [
                    "void"
                ]:
                    continue
                fail(p, "parameters need names")
            out.append(p)
        return out

    def run_function(self, fd, ret):
        self.fctx.append(FuncCtx(ret))
        active0 = self.st.active
        known = set(self.st.env)
        self.scopes.append({})
        self.block(fd.body.block_items or [])
        self.pop_scope()
        f = self.fctx.pop()
        pairs = list(f.returns)
        if not self.st.dead:
            zero = const(ret, 0) if ret is not None else None
            pairs.append((self.st.active, zero, self.st.env))
        if not pairs:
            fail(fd, "function never returns")
        env, value = self.merge_returns(pairs, ret)
        self.st = State({k: v for k, v in env.items() if k in known}, active0)
        return value

    def merge_returns(self, pairs, ret):
        _, value, env = pairs[-1]
        env = dict(env)
        for p, v, e in reversed(pairs[:-1]):
            env = self.merge_env(p, e, env)
            if ret is not None:
                value = self.m.mux(p, v, value)
        return env, value

    # ---- environments ----------------------------------------------------------------------
    def merge_env(self, c: Val, a: dict, b: dict) -> dict:
        """c ? a : b, over the variables both know."""
        out = {}
        for k, va in a.items():
            if k not in b:
                continue
            vb = b[k]
            if va is vb:
                out[k] = va
            elif isinstance(va, tuple):
                out[k] = tuple(self.m.mux(c, x, y) for x, y in zip(va, vb))
            else:
                out[k] = self.m.mux(c, va, vb)
        return out

    def merge_states(self, pairs: list):
        """Joins (predicate, env) pairs of disjoint paths into the current state."""
        if not pairs:
            self.st = State({}, const(BOOL, 0), dead=True)
            return
        p0, env = pairs[-1]
        active = p0
        for p, e in reversed(pairs[:-1]):
            env = self.merge_env(p, e, env)
            active = self.m.lor(p, active)
        self.st = State(dict(env), active)

    def branch(self, c: Val, then_fn, else_fn):
        """Runs both ways of an encrypted condition c and merges them."""
        st0 = self.st
        at = self.m.land(st0.active, c)
        self.st = State(dict(st0.env), at)
        then_fn()
        st_t = self.st
        ae = self.m.land(st0.active, self.m.lnot(c))
        self.st = State(dict(st0.env), ae)
        if else_fn is not None:
            else_fn()
        st_e = self.st
        if st_t.dead and st_e.dead:
            self.st = State(st0.env, st0.active, dead=True)
        elif st_t.dead:
            self.st = st_e
        elif st_e.dead:
            self.st = st_t
        else:
            env = self.merge_env(c, st_t.env, st_e.env)
            if st_t.active is at and st_e.active is ae:
                active = st0.active
            else:
                active = self.m.lor(st_t.active, st_e.active)
            self.st = State(env, active)

    # ---- statements ------------------------------------------------------------------------
    def block(self, items):
        for s in items:
            if self.st.dead:
                return  # unreachable on every path
            self.stmt(s)

    def stmt(self, s):
        if isinstance(s, c_ast.Pragma):
            self.read_pragma(s)
            fail(s, f"'#pragma {SEPARATE_PRAGMA}' belongs before a function, at file scope")
        if isinstance(s, c_ast.Compound):
            self.scopes.append({})
            self.block(s.block_items or [])
            self.pop_scope()
        elif isinstance(s, c_ast.Decl):
            self.local_decl(s)
        elif isinstance(s, c_ast.DeclList):
            for d in s.decls:
                self.local_decl(d)
        elif isinstance(s, c_ast.If):
            self.if_stmt(s)
        elif isinstance(s, c_ast.For):
            self.scopes.append({})
            if s.init is not None:
                self.stmt(s.init) if isinstance(
                    s.init, (c_ast.DeclList, c_ast.Decl)
                ) else self.expr(s.init)
            self.loop(s, s.cond, s.stmt, s.next, do=False)
            self.pop_scope()
        elif isinstance(s, c_ast.While):
            self.loop(s, s.cond, s.stmt, None, do=False)
        elif isinstance(s, c_ast.DoWhile):
            self.loop(s, s.cond, s.stmt, None, do=True)
        elif isinstance(s, c_ast.Break):
            if not self.loops:
                fail(s, "break outside a loop")
            self.loops[-1].breaks.append((self.st.active, self.st.env))
            self.st = State(self.st.env, self.st.active, dead=True)
        elif isinstance(s, c_ast.Continue):
            loops = [x for x in self.loops if not x.is_switch]
            if not loops:
                fail(s, "continue outside a loop")
            loops[-1].conts.append((self.st.active, self.st.env))
            self.st = State(self.st.env, self.st.active, dead=True)
        elif isinstance(s, c_ast.Return):
            f = self.fctx[-1]
            v = None
            if s.expr is not None:
                if f.ret is None:
                    fail(s, "return with a value in a void function")
                v = self.m.cast(self.expr(s.expr), f.ret)
            elif f.ret is not None:
                fail(s, "return without a value in a non-void function")
            f.returns.append((self.st.active, v, self.st.env))
            self.st = State(self.st.env, self.st.active, dead=True)
        elif isinstance(s, c_ast.EmptyStatement):
            pass
        elif isinstance(s, c_ast.Switch):
            self.switch(s)
        elif isinstance(s, (c_ast.Case, c_ast.Default)):
            fail(s, "case label outside the top level of a switch body")
        elif isinstance(s, (c_ast.Goto, c_ast.Label)):
            fail(s, "goto and labels are not supported")
        elif isinstance(s, c_ast.Node) and type(s).__name__ in (
            "Assignment",
            "UnaryOp",
            "FuncCall",
            "BinaryOp",
            "ID",
            "Constant",
            "TernaryOp",
            "ExprList",
            "Cast",
            "ArrayRef",
        ):
            self.expr(s)
        else:
            fail(s, f"statement {type(s).__name__} is not supported")

    def local_decl(self, d: c_ast.Decl):
        if isinstance(d.type, c_ast.FuncDecl):
            fail(d, "nested function declarations are not supported")
        if d.storage:
            fail(d, f"storage class {' '.join(d.storage)} on a local is not supported")
        t, shape, is_const = self.decl_type(d.type, d)
        v = Var(d.name, t, shape, const=is_const)
        val = self.initial_value(v, d.init, d)
        self.scopes[-1][d.name] = v
        self.st.env[v] = val

    def if_stmt(self, s):
        c = self.m.truth(self.expr(s.cond))
        if c.is_const:
            if c.const:
                self.stmt(s.iftrue)
            elif s.iffalse is not None:
                self.stmt(s.iffalse)
            return
        self.branch(
            c,
            lambda: self.stmt(s.iftrue),
            (lambda: self.stmt(s.iffalse)) if s.iffalse is not None else None,
        )

    def switch(self, s):
        """switch: each case's statements run where control has entered (a matching label, or
        fall-through from the case before); break leaves the switch."""
        v = self.expr(s.cond)
        t = promote(v.t)
        v = self.m.cast(v, t)
        items = s.stmt.block_items if isinstance(s.stmt, c_ast.Compound) else [s.stmt]
        items = items or []
        if any(not isinstance(x, (c_ast.Case, c_ast.Default)) for x in items):
            fail(s, "statements before the first case label of a switch")
        labels = [x for x in items if isinstance(x, c_ast.Case)]
        values = [t.wrap(self.const_expr(x.expr)) for x in labels]
        if len(set(values)) != len(values):
            fail(s, "duplicate case labels")
        if sum(isinstance(x, c_ast.Default) for x in items) > 1:
            fail(s, "more than one default label")
        matches = {
            id(x): self.m.compare("==", v, const(t, val), t) for x, val in zip(labels, values)
        }
        none = const(BOOL, 1)
        for c in matches.values():
            none = self.m.land(none, self.m.lnot(c))
        ctx = LoopCtx(is_switch=True)
        self.loops.append(ctx)
        self.scopes.append({})
        entered = const(BOOL, 0)
        for x in items:
            if self.st.dead:
                break  # every path left: the rest is unreachable
            here = matches[id(x)] if isinstance(x, c_ast.Case) else none
            entered = self.m.lor(entered, here)
            body = list(x.stmts or [])

            def run(body=body):
                self.block(body)

            if entered.is_const:
                if entered.const:
                    run()
            else:
                self.branch(entered, run, None)
        self.pop_scope()
        self.loops.pop()
        pairs = ctx.breaks + ([] if self.st.dead else [(self.st.active, self.st.env)])
        self.merge_states(pairs)

    def loop(self, s, cond, body, step, do: bool):
        ctx = LoopCtx()
        self.loops.append(ctx)
        n = 0
        while True:
            if not (do and n == 0) and cond is not None:
                c = self.m.truth(self.expr(cond))
                if not c.is_const:
                    fail(
                        cond,
                        "loop condition depends on encrypted data: loops need trip "
                        "counts known at compile time (exit early with break)",
                    )
                if not c.const:
                    break
            self.stmt(body)
            pairs = ctx.conts + ([] if self.st.dead else [(self.st.active, self.st.env)])
            ctx.conts = []
            self.merge_states(pairs)
            if self.st.dead:
                break
            if step is not None:
                self.expr(step)
            n += 1
            if n > MAX_UNROLL:
                fail(s, f"loop runs more than {MAX_UNROLL} iterations")
        self.loops.pop()
        pairs = ctx.breaks + ([] if self.st.dead else [(self.st.active, self.st.env)])
        self.merge_states(pairs)

    # ---- lvalues ---------------------------------------------------------------------------
    def lvalue(self, node):
        """(var, index values) of an assignable expression."""
        if isinstance(node, c_ast.ID):
            v = self.lookup(node.name, node)
            if v.is_array:
                fail(node, f"assignment to the whole array or pointer {v.name!r}")
            return v, []
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            if not isinstance(node.expr, c_ast.ID):
                fail(node, "pointer arithmetic is not supported")
            v = self.lookup(node.expr.name, node)
            if v.shape != ():
                fail(node, f"{v.name!r} is not a pointer parameter")
            return v, [const(INT, 0)]
        if isinstance(node, c_ast.ArrayRef):
            idx = []
            base = node
            while isinstance(base, c_ast.ArrayRef):
                idx.append(base.subscript)
                base = base.name
            if not isinstance(base, c_ast.ID):
                fail(node, "only named arrays can be indexed")
            v = self.lookup(base.name, base)
            if not v.is_array:
                fail(node, f"{v.name!r} is not an array")
            idx = [self.expr(i) for i in reversed(idx)]
            dims = v.shape if v.shape != () else (1,)
            if len(idx) != len(dims):
                fail(
                    node,
                    f"{v.name!r} has {len(dims)} dimension(s), indexed with {len(idx)} "
                    "(array values and pointer arithmetic are not supported)",
                )
            return v, idx
        fail(node, f"{type(node).__name__} is not assignable")

    def load(self, var: Var, idx: list, node):
        val = self.get(var)
        if not var.is_array:
            return val
        dims = var.shape if var.shape != () else (1,)
        if all(i.is_const for i in idx):  # the element itself (no copy of a large table)
            flat = 0
            for i, d in zip(idx, dims):
                if not 0 <= i.const < d:
                    fail(node, f"index {i.const} out of bounds [0, {d})")
                flat = flat * d + i.const
            return val[flat]
        return self.select(list(val), dims, idx, var.t, node)

    def select(self, vals, dims, idx, t, node):
        i = idx[0]
        row = len(vals) // dims[0]
        if i.is_const:
            if not 0 <= i.const < dims[0]:
                fail(node, f"index {i.const} out of bounds [0, {dims[0]})")
            sub = vals[i.const * row : (i.const + 1) * row]
            return sub[0] if len(idx) == 1 else self.select(sub, dims[1:], idx[1:], t, node)
        leaves = [vals[r * row : (r + 1) * row] for r in range(dims[0])]
        leaves = [
            x[0] if len(idx) == 1 else self.select(x, dims[1:], idx[1:], t, node) for x in leaves
        ]
        k = max(1, (dims[0] - 1).bit_length())
        leaves += [const(t, 0)] * ((1 << k) - len(leaves))
        for b in range(k):
            s = self.m.bit(i, b)
            leaves = [self.m.mux(s, leaves[j + 1], leaves[j]) for j in range(0, len(leaves), 2)]
        out = leaves[0]
        if i.t.width > k or dims[0] != (1 << k):  # out of range reads 0
            inside = self.m.emit(BOOL, f"{self.m.ref(i)} < {i.t.width}'d{dims[0]}")
            out = self.m.mux(inside, out, const(t, 0))
        return out

    def store(self, var: Var, idx: list, value: Val, node):
        if var.const:
            fail(node, f"assignment to const {var.name!r}")
        value = self.m.cast(value, var.t)
        if not var.is_array:
            self.st.env[var] = value
            return value
        var.written = True
        vals = list(self.get(var))
        dims = var.shape if var.shape != () else (1,)
        if all(i.is_const for i in idx):
            flat = 0
            for i, d in zip(idx, dims):
                if not 0 <= i.const < d:
                    fail(node, f"index {i.const} out of bounds [0, {d})")
                flat = flat * d + i.const
            vals[flat] = value
        else:
            eqs = []
            for i, d in zip(idx, dims):
                eqs.append(
                    [
                        self.m.compare("==", i, const(i.t, r), i.t)
                        if not i.is_const
                        else const(BOOL, int(i.const == r))
                        for r in range(d)
                    ]
                )
            for flat in range(len(vals)):
                coords, rest = [], flat
                for d in reversed(dims):
                    coords.append(rest % d)
                    rest //= d
                coords.reverse()
                c = const(BOOL, 1)
                for e, r in zip(eqs, coords):
                    c = self.m.land(c, e[r])
                vals[flat] = self.m.mux(c, value, vals[flat])
        self.st.env[var] = tuple(vals)
        return value

    # ---- expressions -----------------------------------------------------------------------
    def expr(self, e) -> Val:
        if isinstance(e, c_ast.Constant):
            return self.constant(e)
        if isinstance(e, c_ast.ID):
            v = self.lookup(e.name, e)
            if v.is_array:
                fail(
                    e,
                    f"array or pointer {v.name!r} used as a value (index it, dereference "
                    "it, or pass it to a function)",
                )
            return self.load(v, [], e)
        if isinstance(e, c_ast.ArrayRef):
            var, idx = self.lvalue(e)
            return self.load(var, idx, e)
        if isinstance(e, c_ast.BinaryOp):
            return self.binary(e)
        if isinstance(e, c_ast.UnaryOp):
            return self.unary(e)
        if isinstance(e, c_ast.Assignment):
            return self.assign(e)
        if isinstance(e, c_ast.TernaryOp):
            return self.ternary(e)
        if isinstance(e, c_ast.Cast):
            t, shape, _ = self.decl_type(e.to_type.type, e)
            if shape is not None:
                fail(e, "casts to pointer or array types are not supported")
            return self.m.cast(self.expr(e.expr), t)
        if isinstance(e, c_ast.FuncCall):
            return self.call(e)
        if isinstance(e, c_ast.ExprList):
            v = None
            for x in e.exprs:
                v = self.expr(x)
            return v
        fail(e, f"expression {type(e).__name__} is not supported")

    def constant(self, e) -> Val:
        if e.type == "char":
            s = e.value[1:-1]
            if s.startswith("\\"):
                esc = {
                    "n": 10,
                    "t": 9,
                    "r": 13,
                    "0": 0,
                    "\\": 92,
                    "'": 39,
                    '"': 34,
                    "a": 7,
                    "b": 8,
                    "f": 12,
                    "v": 11,
                }
                if s[1] == "x":
                    v = int(s[2:], base=16)  # noqa: FURB166
                elif s[1].isdigit():
                    v = int(s[1:], 8)
                elif s[1] in esc:
                    v = esc[s[1]]
                else:
                    fail(e, f"unknown escape {s!r}")
            elif len(s) == 1:
                v = ord(s)
            else:
                fail(e, f"character constant {e.value} is not supported")
            return const(INT, ctype.CHAR.wrap(v))
        if e.type not in (
            "int",
            "unsigned int",
            "long int",
            "unsigned long int",
            "long long int",
            "unsigned long long int",
        ):
            fail(e, f"{e.type} constants are not supported (integers only)")
        text = e.value.lower()
        suffix = ""
        while text and text[-1] in "ul":
            suffix = text[-1] + suffix
            text = text[:-1]
        if text.startswith("0x"):
            v, decimal = int(text, 16), False
        elif text.startswith("0b"):
            v, decimal = int(text[2:], base=2), False  # noqa: FURB166
        elif len(text) > 1 and text.startswith("0"):
            v, decimal = int(text, 8), False
        else:
            v, decimal = int(text), True
        unsigned = "u" in suffix
        long_ = "l" in suffix
        cands = []
        if not long_:
            cands += [ctype.INT] if not unsigned else [ctype.UINT]
            if not decimal and not unsigned:
                cands.append(ctype.UINT)
        cands += [ctype.LONG] if not unsigned else [ctype.ULONG]
        if not decimal or unsigned:
            cands.append(ctype.ULONG)
        for t in cands:
            lo, hi = (-(1 << (t.width - 1)), (1 << (t.width - 1)) - 1) if t.signed else (0, t.mask)
            if lo <= v <= hi:
                return const(t, v)
        fail(e, f"integer constant {e.value} is too large")

    def binary(self, e) -> Val:
        op = e.op
        if op in ("&&", "||"):
            return self.logical(e)
        a = self.expr(e.left)
        b = self.expr(e.right)
        return self.apply_binary(op, a, b, e)

    def apply_binary(self, op, a: Val, b: Val, node) -> Val:
        if op in ("<<", ">>"):
            return self.m.shift(op, a, self.m.cast(b, promote(b.t)))
        t = common(a.t, b.t)
        a, b = self.m.cast(a, t), self.m.cast(b, t)
        if op in ARITH:
            return self.m.arith(op, a, b, t)
        if op in COMPARE:
            return self.m.compare(op, a, b, t)
        fail(node, f"operator {op!r} is not supported")

    def logical(self, e) -> Val:
        a = self.m.truth(self.expr(e.left))
        is_and = e.op == "&&"
        if a.is_const:
            if a.const == (0 if is_and else 1):
                return a
            return self.m.truth(self.expr(e.right))
        # The right operand runs only where it is evaluated (it may have side effects).
        result = {}

        def right():
            result["b"] = self.m.truth(self.expr(e.right))

        if is_and:
            self.branch(a, right, None)
        else:
            self.branch(self.m.lnot(a), right, None)
        b = result["b"]
        return self.m.land(a, b) if is_and else self.m.lor(a, b)

    def ternary(self, e) -> Val:
        c = self.m.truth(self.expr(e.cond))
        if c.is_const:
            return self.expr(e.iftrue if c.const else e.iffalse)
        res = {}
        self.branch(
            c,
            lambda: res.__setitem__("a", self.expr(e.iftrue)),
            lambda: res.__setitem__("b", self.expr(e.iffalse)),
        )
        a, b = res["a"], res["b"]
        t = common(a.t, b.t) if not (a.t.is_bool and b.t.is_bool) else BOOL
        return self.m.mux(c, self.m.cast(a, t), self.m.cast(b, t))

    def unary(self, e) -> Val:
        op = e.op
        if op == "sizeof":
            return const(SIZE_T, self.sizeof(e.expr))
        if op in ("++", "--", "p++", "p--"):
            var, idx = self.lvalue(e.expr)
            old = self.load(var, idx, e)
            new = self.apply_binary("+" if "+" in op else "-", old, const(INT, 1), e)
            stored = self.store(var, idx, new, e)
            return old if op.startswith("p") else stored
        if op == "*":
            var, idx = self.lvalue(e)
            return self.load(var, idx, e)
        if op == "&":
            fail(e, "the address-of operator & is not supported (pass arrays by name)")
        a = self.expr(e.expr)
        if op == "!":
            return self.m.lnot(self.m.truth(a))
        if op in ("-", "~", "+"):
            return self.m.unary(op, a)
        fail(e, f"unary operator {op!r} is not supported")

    def sizeof(self, node) -> int:
        if isinstance(node, c_ast.Typename):
            t, shape, _ = self.decl_type(node.type, node)
            n = 1
            for s in shape or ():
                n *= s
            return n * (1 if t.is_bool else t.width // 8)
        if isinstance(node, c_ast.ID):
            v = self.lookup(node.name, node)
            return v.count * (1 if v.t.is_bool else v.t.width // 8) if v.shape != () else 8
        if isinstance(node, c_ast.ArrayRef):
            base, depth = node, 0
            while isinstance(base, c_ast.ArrayRef):
                base, depth = base.name, depth + 1
            if isinstance(base, c_ast.ID):
                v = self.lookup(base.name, base)
                if v.is_array and v.shape and depth <= len(v.shape):
                    n = 1
                    for s in v.shape[depth:]:
                        n *= s
                    return n * (1 if v.t.is_bool else v.t.width // 8)
        fail(node, "sizeof of this expression is not supported (sizeof(type), sizeof(array))")

    def assign(self, e) -> Val:
        var, idx = self.lvalue(e.lvalue)
        if e.op == "=":
            return self.store(var, idx, self.expr(e.rvalue), e)
        op = e.op[:-1]
        if op not in ARITH | {"<<", ">>"}:
            fail(e, f"assignment operator {e.op!r} is not supported")
        old = self.load(var, idx, e)
        new = self.apply_binary(op, old, self.expr(e.rvalue), e)
        return self.store(var, idx, new, e)

    def call(self, e) -> Val:
        if not isinstance(e.name, c_ast.ID):
            fail(e, "calls through pointers are not supported")
        name = e.name.name
        if name not in self.funcs:
            fail(
                e,
                f"call of {name!r}: only functions defined in this file can be called "
                "(no library functions)",
            )
        if name in self.stack:
            fail(e, f"recursive call of {name!r}: recursion is not supported")
        fd = self.funcs[name]
        params = self.param_decls(fd.decl.type)
        args = e.args.exprs if e.args is not None else []
        if len(args) != len(params):
            fail(e, f"{name} takes {len(params)} arguments, {len(args)} given")
        if name in self.separate and self.unit is not None:
            return self.call_separate(e, name, fd, params, args)
        scope, rows = {}, []
        for p, a in zip(params, args):
            t, shape, _ = self.decl_type(p.type, p, param=True)
            if shape is not None:
                v, lo = self.array_argument(a, p, t, shape, name)
                if lo is not None:  # a row of a 2-D array: a local copy, written back below
                    row = Var(p.name, t, shape)
                    self.st.env[row] = self.get(v)[lo : lo + row.count]
                    rows.append((row, v, lo))
                    v = row
                scope[p.name] = v
            else:
                v = Var(p.name, t)
                self.st.env[v] = self.m.cast(self.expr(a), t)
                scope[p.name] = v
        ret = self.return_type(fd.decl.type, fd)
        saved_scopes, saved_loops = self.scopes, self.loops
        self.scopes, self.loops = [scope], []
        self.stack.append(name)
        try:
            value = self.run_function(fd, ret)
        finally:
            self.stack.pop()
            self.scopes, self.loops = saved_scopes, saved_loops
        for row, v, lo in rows:
            if row.written:
                self.write_elements(v, lo, self.st.env[row], e)
        for p in params:  # the callee's scalar parameters (and row copies) leave the environment
            v = scope[p.name]
            if not v.is_array or any(v is row for row, _, _ in rows):
                self.st.env.pop(v, None)
        if value is None:
            return const(INT, 0)
        return value

    def array_argument(self, a, p, t: IntType, shape, name: str):
        """(Var, None) for an array or pointer passed by name, (Var, first element) for a row
        a[i] (constant i) of a 2-D array passed to a one-dimensional parameter."""
        want = f"{t}{''.join(f'[{d}]' for d in shape) if shape else ' *'}"
        if (
            isinstance(a, c_ast.ArrayRef)
            and isinstance(a.name, c_ast.ID)
            and shape is not None
            and len(shape) == 1
        ):
            v = self.lookup(a.name.name, a)
            if not v.is_array or v.shape is None or len(v.shape) != 2:
                fail(a, f"argument {p.name!r} of {name}: expected {want}")
            if v.t != t or v.shape[1] != shape[0]:
                fail(
                    a,
                    f"argument {p.name!r} of {name}: expected {want}, given a row of {v.t}"
                    f"[{v.shape[0]}][{v.shape[1]}]",
                )
            i = self.expr(a.subscript)
            if not i.is_const:
                fail(
                    a,
                    f"argument {p.name!r} of {name}: a row's index must be a compile-time constant",
                )
            if not 0 <= i.const < v.shape[0]:
                fail(a, f"index {i.const} out of bounds [0, {v.shape[0]})")
            return v, i.const * v.shape[1]
        if not isinstance(a, c_ast.ID):
            fail(a, f"argument {p.name!r} of {name}: pass an array by its name (or a row a[i])")
        v = self.lookup(a.name, a)
        if (
            not v.is_array
            or v.t != t
            or (shape != () and v.shape != shape)
            or (shape == () and v.shape not in ((), (1,)))
        ):
            fail(a, f"argument {p.name!r} of {name}: expected {want}")
        if v.shape == (1,) and shape == ():
            fail(a, "pass a one-element array to a pointer parameter is not supported")
        return v, None

    def write_elements(self, v: Var, lo: int, elems, node):
        """Elements lo.. of array v replaced by elems (a callee wrote them)."""
        if v.const:
            fail(node, f"assignment to const {v.name!r} (a called function writes it)")
        v.written = True
        vals = list(self.get(v))
        vals[lo : lo + len(elems)] = elems
        self.st.env[v] = tuple(vals)

    def call_separate(self, e, name: str, fd, params, args) -> Val:
        """A call of a `#pragma ember separate` function: an instance of its module, whose
        circuit the unit synthesizes once; written arrays take the instance's outputs."""
        ins, outs = self.unit.interface(name)
        self.instanced[name] = (ins, outs)
        k = self.m.count
        self.m.count += 1
        conns, targets = [], {}
        types = {"return": self.return_type(fd.decl.type, fd)}
        for p, a, port in zip(params, args, ins):
            t, shape, _ = self.decl_type(p.type, p, param=True)
            if shape is None:
                elems = [self.m.cast(self.expr(a), t)]
            else:
                v, lo = self.array_argument(a, p, t, shape, name)
                vals = self.get(v)
                elems = list(vals[lo : lo + port.count] if lo is not None else vals)
                targets[p.name] = (v, lo or 0)
            types[p.name] = t
            conns.append(
                f".in_{port.name}({{{', '.join(self.m.ref(x) for x in reversed(elems))}}})"
            )
        for o in outs:
            if o.name != "return" and any(
                other != o.name and w is targets[o.name][0] for other, (w, _) in targets.items()
            ):
                fail(
                    e,
                    f"{name} writes {o.name!r}, and the same array is passed to another "
                    "parameter too: pass different arrays",
                )
        for o in outs:
            self.m.lines.append(f"  wire [{o.nbits - 1}:0] c{k}_{o.name};")
            conns.append(f".out_{o.name}(c{k}_{o.name})")
        self.m.lines.append(f"  {name} u{k} ({', '.join(conns)});")
        value = None
        for o in outs:
            t = types[o.name]
            elems = tuple(
                self.m.emit(t, f"c{k}_{o.name}[{(j + 1) * o.width - 1}:{j * o.width}]")
                for j in range(o.count)
            )
            if o.name == "return":
                value = elems[0]
            else:
                v, lo = targets[o.name]
                self.write_elements(v, lo, elems, e)
        return value if value is not None else const(INT, 0)
