"""C integer types of the subset (LP64) and C's conversion rules on them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IntType:
    """An integer type: width in bits, signedness; bool is the 1-bit unsigned _Bool."""

    width: int
    signed: bool
    is_bool: bool = False

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def wrap(self, v: int) -> int:
        """v converted to this type (C's conversion: modulo 2^width, != 0 for bool)."""
        if self.is_bool:
            return int(v != 0)
        v &= self.mask
        if self.signed and v >> (self.width - 1):
            v -= 1 << self.width
        return v

    def __str__(self) -> str:
        if self.is_bool:
            return "bool"
        return f"{'' if self.signed else 'u'}int{self.width}_t"


BOOL = IntType(1, False, True)
CHAR = IntType(8, True)  # char is signed (x86-64 and AArch64 Linux with -fsigned-char)
INT = IntType(32, True)
UINT = IntType(32, False)
LONG = IntType(64, True)
ULONG = IntType(64, False)
SIZE_T = ULONG


def from_names(names: list) -> IntType | None:
    """The type of a list of specifiers (['unsigned', 'short', 'int']); None if not integer."""
    names = [n for n in names if n not in ("const", "volatile")]
    if names == ["_Bool"]:
        return BOOL
    signed = "unsigned" not in names
    rest = [n for n in names if n not in ("signed", "unsigned")]
    if not rest or rest == ["int"]:
        return IntType(32, signed)
    if rest == ["char"]:
        return IntType(8, signed)
    if rest in (["short"], ["short", "int"]):
        return IntType(16, signed)
    if rest in (["long"], ["long", "int"], ["long", "long"], ["long", "long", "int"]):
        return IntType(64, signed)
    return None


def promote(t: IntType) -> IntType:
    """Integer promotion: every type narrower than int becomes int."""
    return INT if t.width < 32 else t


def common(a: IntType, b: IntType) -> IntType:
    """The usual arithmetic conversions of two (promoted) operands."""
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.width >= b.width else b
    u, s = (a, b) if not a.signed else (b, a)
    if u.width >= s.width:
        return u
    return s  # the signed type is wider: it holds every value of the unsigned one
