"""A small preprocessor that needs no system headers: comments out, <stdint.h> and <stdbool.h>
built in, object-like #define substituted, `#pragma ember ...` passed to the parser (other
pragmas dropped); everything else a CompileError."""

from __future__ import annotations

import re

from ..errors import CompileError

# Typedefs of <stdint.h> and <stdbool.h> (LP64: long is 64 bits), parsed before the file.
PRELUDE = """typedef signed char int8_t; typedef unsigned char uint8_t;
typedef short int16_t; typedef unsigned short uint16_t;
typedef int int32_t; typedef unsigned int uint32_t;
typedef long long int64_t; typedef unsigned long long uint64_t;
typedef unsigned long size_t; typedef _Bool bool;
"""
BUILTIN_HEADERS = {"stdint.h", "stdbool.h", "stddef.h"}
BUILTIN_MACROS = {"true": "1", "false": "0", "NULL": "0"}

_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(\(?)\s*(.*)$")
_INCLUDE = re.compile(r"#\s*include\s*[<\"]([^>\"]+)[>\"]\s*$")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _strip_comments(text: str, path: str) -> str:
    """Comments become spaces (newlines kept, so lines and columns stay where they were)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                raise CompileError(f"{path}:{line}: unterminated comment")
            out.append("".join(ch if ch == "\n" else " " for ch in text[i : j + 2]))
            i = j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def preprocess(text: str, path: str) -> str:
    """The translation unit pycparser reads: the prelude, then the file under #line 1."""
    text = _strip_comments(text, path)
    macros = dict(BUILTIN_MACROS)
    lines = text.split("\n")
    for k, line in enumerate(lines):
        s = line.strip()
        if not s.startswith("#"):
            continue
        lineno = k + 1
        col = line.index("#") + 1
        if s.endswith("\\"):
            raise CompileError(
                f"{path}:{lineno}:{col}: line continuations in directives are not supported"
            )
        m = _INCLUDE.match(s)
        if m:
            if m.group(1) not in BUILTIN_HEADERS:
                raise CompileError(
                    f"{path}:{lineno}:{col}: #include <{m.group(1)}> is not supported (only "
                    f"{', '.join(sorted(BUILTIN_HEADERS))}, which are built in)"
                )
            lines[k] = ""
            continue
        m = _DEFINE.match(s)
        if m:
            if m.group(2):
                raise CompileError(
                    f"{path}:{lineno}:{col}: function-like macro "
                    f"{m.group(1)!r} is not supported: use a function"
                )
            macros[m.group(1)] = m.group(3).strip()
            lines[k] = ""
            continue
        if re.match(r"#\s*pragma\b", s):
            # The compiler's own pragmas reach pycparser (a c_ast.Pragma where they stand);
            # other compilers' pragmas mean nothing here.
            if not re.match(r"#\s*pragma\s+ember\b", s):
                lines[k] = ""
            continue
        word = s[1:].strip().split()[0] if s[1:].strip() else ""
        raise CompileError(
            f"{path}:{lineno}:{col}: preprocessor directive #{word} is not "
            "supported (only #include of the built-in headers and #define of "
            "constants)"
        )

    def expand(line: str, depth: int = 0) -> str:
        if depth > 32:
            raise CompileError(f"{path}: macro expansion too deep (a recursive #define?)")
        new = _IDENT.sub(lambda m: macros.get(m.group(0), m.group(0)), line)
        return new if new == line else expand(new, depth + 1)

    body = "\n".join(expand(line) if line else line for line in lines)
    return PRELUDE + f'#line 1 "{path}"\n' + body
