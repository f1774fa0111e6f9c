"""Helpers of the compiler tests: compiled circuits cached per test session and the native
reference of tests/c programs (ember.compiler.native builds the harness)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ember.compiler import native
from ember.compiler.native import random_inputs  # noqa: F401  (re-exported for the tests)

CORPUS = Path(__file__).resolve().parent.parent / "c"

_circuits: dict = {}


def compile_corpus(name: str):
    """The circuit of tests/c/<name>.c's function <name>, compiled once per session."""
    if name not in _circuits:
        from ember.compiler import compile_c

        _circuits[name] = compile_c(CORPUS / f"{name}.c", name)
    return _circuits[name]


def param_kinds(name: str):
    """([(name, IntType, shape)], return type) of tests/c/<name>.c's function <name>."""
    return native.param_kinds(CORPUS / f"{name}.c", name)


def native_binary(name: str, workdir: str, outputs: set) -> str:
    """Builds the harness of tests/c/<name>.c; returns the executable's path."""
    return native.native_binary(CORPUS / f"{name}.c", name, workdir, outputs)


def run_native(name: str, circ, inputs: dict, n: int, workdir: str) -> dict:
    """The native program's outputs on the input sets, as circ.evaluate returns them."""
    return native.run_native(CORPUS / f"{name}.c", name, circ, inputs, n, workdir)


def workdir() -> str:
    return tempfile.mkdtemp(prefix="ember-cref-")
