"""Values of the lowering (compile-time constants or Verilog wires) and the module they are
written to: one `wire [w-1:0] tN = expr;` per operation, bit vectors of explicit width,
$signed only where C's semantics need it (comparisons, division, right shifts)."""

from __future__ import annotations

from dataclasses import dataclass

from .ctype import BOOL, IntType, promote


@dataclass(frozen=True, eq=False)
class Val:
    """A C value: its type and either its (wrapped) constant or the wire that holds it."""

    t: IntType
    const: int | None = None
    wire: str | None = None
    narrow: tuple | None = None  # (k, s): the value is the sign (s) or zero extension of k bits

    @property
    def sig(self) -> tuple:
        """(k, s): the value equals the sign- (s) or zero-extension of its low k bits."""
        if self.is_const:
            c = self.const
            return (max(1, c.bit_length()), False) if c >= 0 else ((~c).bit_length() + 1, True)
        return self.narrow or (self.t.width, self.t.signed)

    @property
    def is_const(self) -> bool:
        return self.const is not None


def const(t: IntType, v: int) -> Val:
    return Val(t, const=t.wrap(v))


class Module:
    """The Verilog module under construction."""

    def __init__(self):
        self.lines: list = []
        self.count = 0

    def ref(self, v: Val) -> str:
        """A Verilog expression of v's bits (width v.t.width, unsigned)."""
        if v.is_const:
            return f"{v.t.width}'d{v.const & v.t.mask}"
        return v.wire

    def sref(self, v: Val) -> str:
        return f"$signed({self.ref(v)})"

    def emit(self, t: IntType, expr: str) -> Val:
        name = f"t{self.count}"
        self.count += 1
        self.lines.append(f"  wire [{t.width - 1}:0] {name} = {expr};")
        return Val(t, wire=name)

    # ---- conversions -----------------------------------------------------------------------
    def cast(self, v: Val, t: IntType) -> Val:
        if v.is_const:
            return const(t, v.const)
        if t == v.t:
            return v
        if t.is_bool:
            return self.truth(v)
        k, s = v.sig
        keep = (k, s) if k < t.width and (not s or t.signed) else None
        if t.width == v.t.width:
            return Val(t, wire=v.wire, narrow=keep)
        if t.width < v.t.width:
            out = self.emit(t, f"{v.wire}[{t.width - 1}:0]")
        else:
            d = t.width - v.t.width
            fill = f"{{{d}{{{v.wire}[{v.t.width - 1}]}}}}" if v.t.signed else f"{d}'d0"
            out = self.emit(t, f"{{{fill}, {v.wire}}}")
        return Val(t, wire=out.wire, narrow=keep)

    def low_bits(self, v: Val, t: IntType) -> Val:
        """v's low t.width bits as a value of type t."""
        if v.is_const:
            return const(t, v.const)
        return self.emit(t, f"{v.wire}[{t.width - 1}:0]")

    def truth(self, v: Val) -> Val:
        """v != 0 as a bool."""
        if v.is_const:
            return const(BOOL, int(v.const != 0))
        if v.t.is_bool:
            return v
        return self.emit(BOOL, f"|{v.wire}")

    def mux(self, c: Val, a: Val, b: Val) -> Val:
        """c ? a : b for a bool c and a, b of one type."""
        if c.is_const:
            return a if c.const else b
        if (
            a is b
            or (a.is_const and b.is_const and a.const == b.const)
            or (a.wire is not None and a.wire == b.wire)
        ):
            return a
        if a.t.is_bool and a.is_const and b.is_const:
            return c if a.const else self.lnot(c)
        return self.emit(a.t, f"{c.wire} ? {self.ref(a)} : {self.ref(b)}")

    def land(self, a: Val, b: Val) -> Val:
        if a.is_const:
            return b if a.const else a
        if b.is_const:
            return a if b.const else b
        if a is b:
            return a
        return self.emit(BOOL, f"{a.wire} & {b.wire}")

    def lor(self, a: Val, b: Val) -> Val:
        if a.is_const:
            return a if a.const else b
        if b.is_const:
            return b if b.const else a
        if a is b:
            return a
        return self.emit(BOOL, f"{a.wire} | {b.wire}")

    def lnot(self, a: Val) -> Val:
        if a.is_const:
            return const(BOOL, int(not a.const))
        if a.t.is_bool:
            return self.emit(BOOL, f"~{a.wire}")
        return self.emit(BOOL, f"~|{a.wire}")

    # ---- arithmetic on operands already converted to one type t ----------------------------
    def arith(self, op: str, a: Val, b: Val, t: IntType) -> Val:
        if a.is_const and b.is_const:
            return const(t, fold(op, a.const, b.const, t))
        ra, rb = self.ref(a), self.ref(b)
        if op in ("+", "-", "*", "&", "|", "^"):
            return self.emit(t, f"{ra} {op} {rb}")
        if op in ("/", "%"):
            # Divide in the narrowest width that holds both operands (C's promotions make an
            # 8-bit division a 32-bit one).
            (ka, sa), (kb, sb) = a.sig, b.sig
            if t.signed:
                n = max(ka + (not sa), kb + (not sb)) + 1  # + 1: -2^(n-1) / -1 fits
            else:
                n = max(ka, kb)
            n = min(n, t.width)
            nt = IntType(n, t.signed)
            an, bn = (
                self.low_bits(a, nt) if n < t.width else a,
                (self.low_bits(b, nt) if n < t.width else b),
            )
            q, r = self.divmod(an, bn, nt)
            qv = self.cast(q if op == "/" else r, t)
            if b.is_const and b.const != 0:
                return qv
            # Division by zero (RISC-V's rule): x / 0 = all ones (-1), x % 0 = x.
            by_zero = f"{t.width}'d{t.mask}" if op == "/" else ra
            return self.emit(t, f"({rb} == {t.width}'d0) ? {by_zero} : {self.ref(qv)}")
        raise AssertionError(op)

    def udivmod(self, a: Val, b: Val, n: int):
        """(quotient, remainder) of n-bit unsigned a, b by restoring long division: n stages
        of an (n+1)-bit subtraction and a mux (Yosys's own $div would build a 2n-bit chain
        first and take far longer to optimize)."""
        u = IntType(n, False)
        rb = self.ref(Val(u, const=b.const, wire=b.wire))
        r = f"{n}'d0"
        qbits = []
        for i in range(n - 1, -1, -1):
            abit = f"1'b{(a.const >> i) & 1}" if a.is_const else f"{a.wire}[{i}]"
            sh = self.emit(IntType(n + 1, False), f"{{{r}, {abit}}}")
            d = self.emit(IntType(n + 2, False), f"{{1'b0, {sh.wire}}} - {{2'b0, {rb}}}")
            qi = self.emit(BOOL, f"~{d.wire}[{n + 1}]")
            r = self.emit(u, f"{qi.wire} ? {d.wire}[{n - 1}:0] : {sh.wire}[{n - 1}:0]").wire
            qbits.append(qi.wire)
        q = self.emit(u, "{" + ", ".join(qbits) + "}")
        return q, Val(u, wire=r)

    def divmod(self, a: Val, b: Val, t: IntType):
        """C's a / b and a % b (truncating; the remainder takes a's sign) of type t; b != 0."""
        n = t.width
        if not t.signed:
            q, r = self.udivmod(a, b, n)
            return Val(t, wire=q.wire), Val(t, wire=r.wire)
        u = IntType(n, False)

        def absval(v):
            if v.is_const:
                return const(u, abs(v.const)), const(BOOL, int(v.const < 0))
            s = self.bit(v, n - 1)
            return self.emit(u, f"{s.wire} ? -{v.wire} : {v.wire}"), s

        ua, sa = absval(a)
        ub, sb = absval(b)
        uq, ur = self.udivmod(ua, ub, n)
        neg_q = self.emit(BOOL, f"{self.ref(sa)} ^ {self.ref(sb)}")
        q = self.emit(t, f"{neg_q.wire} ? -{uq.wire} : {uq.wire}")
        r = self.emit(t, f"{self.ref(sa)} ? -{ur.wire} : {ur.wire}")
        return q, r

    def shift(self, op: str, a: Val, b: Val) -> Val:
        """a << b, a >> b: a promoted; b's bits read as unsigned (amounts >= width give 0, or
        the sign for a signed right shift)."""
        t = promote(a.t)
        a = self.cast(a, t)
        if a.is_const and b.is_const:
            return const(t, fold_shift(op, a.const, b.const & b.t.mask, t))
        rb = self.ref(b)
        if op == "<<":
            return self.emit(t, f"{self.ref(a)} << {rb}")
        if t.signed:
            return self.emit(t, f"{self.sref(a)} >>> {rb}")
        return self.emit(t, f"{self.ref(a)} >> {rb}")

    def compare(self, op: str, a: Val, b: Val, t: IntType) -> Val:
        if a.is_const and b.is_const:
            return const(BOOL, int(eval_compare(op, a.const, b.const)))
        if t.signed and op not in ("==", "!="):
            return self.emit(BOOL, f"{self.sref(a)} {op} {self.sref(b)}")
        return self.emit(BOOL, f"{self.ref(a)} {op} {self.ref(b)}")

    def unary(self, op: str, a: Val) -> Val:
        t = promote(a.t)
        a = self.cast(a, t)
        if a.is_const:
            return const(t, -a.const if op == "-" else ~a.const if op == "~" else a.const)
        if op == "-":
            return self.emit(t, f"-{a.wire}")
        if op == "~":
            return self.emit(t, f"~{a.wire}")
        return a

    def bit(self, v: Val, k: int) -> Val:
        if v.is_const:
            return const(BOOL, (v.const >> k) & 1)
        return self.emit(BOOL, f"{v.wire}[{k}]")

    def text(self, name: str, ports: list) -> str:
        return (
            f"module {name}(\n  "
            + ",\n  ".join(ports)
            + "\n);\n"
            + "\n".join(self.lines)
            + "\nendmodule\n"
        )


def fold(op: str, a: int, b: int, t: IntType) -> int:
    """a op b on constants of type t, with C's semantics (and the division-by-zero rule)."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op in ("/", "%"):
        if b == 0:
            return -1 if op == "/" else a
        q = abs(a) // abs(b)
        if (a < 0) != (b < 0):
            q = -q
        return q if op == "/" else a - q * b
    raise AssertionError(op)


def fold_shift(op: str, a: int, amount: int, t: IntType) -> int:
    if op == "<<":
        return a << amount if amount < t.width else 0
    if amount >= t.width:
        return -1 if a < 0 else 0
    return a >> amount


def eval_compare(op: str, a: int, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
