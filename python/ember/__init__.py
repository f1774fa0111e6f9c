"""Ember: fully homomorphic encryption on NVIDIA GPUs, with a bit-exact CPU backend."""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import _ember
from .errors import (
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

__all__ = [
    "DecryptionError",
    "Device",
    "DeviceError",
    "DeviceMemoryError",
    "Error",
    "MismatchError",
    "MissingKeyError",
    "ParameterError",
    "SerializationError",
    "backends",
    "default_device",
    "devices",
    "set_default_device",
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
        return "cpu" if self.kind == "cpu" else f"cuda:{self.index}"


def backends() -> list[str]:
    """Backends compiled into this build."""
    return ["cpu", "cuda"] if _ember.cuda_compiled() else ["cpu"]


def devices() -> list[Device]:
    """The CPU and every visible GPU (empty GPU list in a CPU-only build)."""
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


_default_device = None


def set_default_device(spec: str) -> None:
    """Sets the device used when none is given: "cpu", "cuda", "cuda:N" or "auto"."""
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
