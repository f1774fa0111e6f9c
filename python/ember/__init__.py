"""Ember: fully homomorphic encryption on NVIDIA GPUs, with a bit-exact CPU backend."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from . import _ember
from .errors import (
    CompileError,
    DecryptionError,
    DeviceError,
    DeviceMemoryError,
    Error,
    MismatchError,
    MissingKeyError,
    ParameterError,
    SerializationError,
)

__version__ = "0.1.0"

Stream = _ember.Stream  # a stream of one device: ember.Stream("cuda:0"); ct.on_stream(stream)

__all__ = [
    "CompileError",
    "DecryptionError",
    "Device",
    "DeviceError",
    "DeviceMemoryError",
    "Error",
    "MismatchError",
    "MissingKeyError",
    "ParameterError",
    "SerializationError",
    "Stream",
    "backends",
    "compile_c",
    "default_device",
    "devices",
    "num_threads",
    "set_default_device",
    "set_num_threads",
]


@dataclass(frozen=True)
class Device:
    """A place where Ember computes: the host CPU or one CUDA GPU."""

    kind: str
    index: int = 0
    name: str = ""
    memory: int = 0
    compute_capability: str = ""

    def __str__(self) -> str:
        if self.kind == "cpu":
            return "cpu" if self.index == 0 else f"cpu:{self.index}"
        return f"cuda:{self.index}"


def backends() -> list[str]:
    """Backends compiled into this build."""
    return ["cpu", "cuda"] if _ember.cuda_compiled() else ["cpu"]


def devices() -> list[Device]:
    """The CPU and every visible GPU (empty GPU list in a CPU-only build). Further CPU devices
    ("cpu:1", ...) can be named anywhere a device is taken: they share the host's memory and
    cores but are separate devices, for testing device sets without a GPU."""
    out = [Device(kind="cpu", name=os.uname().machine)]
    for g in _ember.cuda_devices():
        out.append(
            Device(
                kind="cuda",
                index=g.index,
                name=g.name,
                memory=g.memory_bytes,
                compute_capability=f"{g.major}.{g.minor}",
            )
        )
    return out


def compile_c(path, function: str, keep_dir: str | None = None, three_input_gates: bool = True):
    """Compiles `function` of the C file at `path` (a C99 subset, docs/compiler.md) into an
    ember.circuit.Circuit of CGGI gates, through Yosys and ABC under the FHE cost model.
    three_input_gates=False keeps to two-input gates and MUX (no MAJ / XOR3).
    Raises CompileError with the file, line, column and construct for C outside the subset."""
    from .compiler import compile_c as _compile_c

    return _compile_c(path, function, keep_dir=keep_dir, three_input_gates=three_input_gates)


def set_num_threads(n: int) -> None:
    """Host threads for the CPU backend's work: n >= 1, or 0 for OpenMP's default
    (OMP_NUM_THREADS, else one per core). Give each of several processes sharing a machine its
    share of the cores. A process forked (os.fork, multiprocessing's "fork" start method) after
    Ember ran CPU work on several threads computes on one thread: GNU OpenMP's threads do not
    survive a fork; use the "spawn" or "forkserver" start method to keep them."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ParameterError(f"the thread count must be an integer, got {n!r}")
    _ember.set_cpu_threads(int(n))


def num_threads() -> int:
    """The CPU backend's thread count (the set_num_threads setting, or OpenMP's default)."""
    return _ember.cpu_threads()


_default_device = None


def set_default_device(spec: str) -> None:
    """Sets the device used when none is given: "cpu", "cpu:N", "cuda", "cuda:N" or "auto"."""
    global _default_device
    _default_device = _ember.parse_device(spec)


def default_device() -> str:
    """The device used when none is given (EMBER_DEVICE, else "auto")."""
    if _default_device is None:
        return _ember.parse_device(os.environ.get("EMBER_DEVICE", "auto"))
    return _default_device


def resolve_device(spec: str | None) -> str:
    """Canonical device name for a user spec; None means the default device."""
    return default_device() if spec in (None, "") else _ember.parse_device(spec)


# Per-device backend options (ember/options.py); imported last: it uses resolve_device.
from .options import backend_options, set_backend_options, using_backend_options

__all__ += ["backend_options", "set_backend_options", "using_backend_options"]

# ember.save / ember.load (every object; pickle and copy.deepcopy use the same bytes).
from .persist import load, save

__all__ += ["load", "save"]
