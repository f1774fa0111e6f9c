"""Arrays in and out: n-dimensional numpy input, any DLPack producer, torch/DLPack output.

Input: wherever values are taken (CKKS/BFV/BGV encode and encrypt, CGGI encrypt, the operands of
+ - *), an n-dimensional array is flattened in C order into the slots and its shape is kept on
the plaintext or ciphertext (``.shape``; results of operations keep their first operand's), so
decryption returns that shape. Any object with ``__dlpack__`` is accepted where numpy arrays are:
numpy arrays, torch tensors, CuPy arrays, JAX arrays; those on a GPU are copied to the host
first (the encoders run there).

Output: the decrypt functions take ``out="numpy"`` (default), ``out="torch"`` (a CPU torch
tensor), ``out="dlpack"`` (a numpy array, which any DLPack consumer such as torch.from_dlpack or
cupy.from_dlpack takes without a copy), or ``like=x``: an array of x's library (numpy, torch,
CuPy) and, for torch, on x's device.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterError

__all__ = ["as_array", "flatten_input", "to_numpy", "to_output"]

_CPU = 1  # DLPack's kDLCPU
_OUTPUTS = ("numpy", "torch", "dlpack")


def _is_dlpack(values) -> bool:
    return hasattr(values, "__dlpack__") and not isinstance(values, np.ndarray)


def as_array(values) -> np.ndarray:
    """Any array-like (lists, numbers, numpy, a DLPack producer on any device) as numpy."""
    return to_numpy(values) if _is_dlpack(values) else np.asarray(values)


def to_numpy(values) -> np.ndarray:
    """A DLPack producer's data as a numpy array (zero-copy for host memory)."""
    if isinstance(values, np.ndarray):
        return values
    device = getattr(values, "__dlpack_device__", None)
    on_host = device is None or device()[0] == _CPU
    if not on_host:
        # A GPU array: its library's copy to the host (torch .cpu(), CuPy .get()).
        for move in ("cpu", "get"):
            if callable(getattr(values, move, None)):
                values = getattr(values, move)()
                break
        else:
            raise ParameterError(
                f"a {type(values).__name__} on device {device()}: copy it to the host first"
            )
        if isinstance(values, np.ndarray):
            return values
    detach = getattr(values, "detach", None)
    if callable(detach):  # a torch tensor that requires grad refuses DLPack export
        values = detach()
    try:
        return np.from_dlpack(values)
    except (TypeError, BufferError, RuntimeError) as e:
        raise ParameterError(
            f"could not read the {type(values).__name__} through DLPack: {e}"
        ) from None


def flatten_input(values):
    """(values for the 1-D encoders, the original shape or None). n-dimensional arrays and
    DLPack producers become flat numpy arrays with their shape; 1-D input, scalars, Ember
    objects and whatever numpy cannot read pass through (the encoders report those)."""
    if _is_dlpack(values):
        values = to_numpy(values)
    if not isinstance(values, (np.ndarray, list, tuple)):
        return values, None
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError):
        return values, None
    if arr.ndim <= 1:
        return (arr if isinstance(values, np.ndarray) else values), None
    return arr.reshape(-1), tuple(int(d) for d in arr.shape)


def reshape_output(flat: np.ndarray, shape) -> np.ndarray:
    """The first prod(shape) values of a decryption, in the encrypted array's shape."""
    if shape is None:
        return flat
    count = int(np.prod(shape, dtype=np.int64))
    return flat[:count].reshape(shape)


def to_output(result: np.ndarray, out: str | None = None, like=None):
    """The decrypted numpy array as asked: see the module docstring."""
    if like is not None:
        if out is not None:
            raise ParameterError("give out= or like=, not both")
        return _like(result, like)
    if out in (None, "numpy", "dlpack"):
        return result
    if out == "torch":
        return _torch().from_numpy(np.ascontiguousarray(result))
    raise ParameterError(f"out must be one of {', '.join(_OUTPUTS)}, got {out!r}")


def _torch():
    try:
        import torch
    except ImportError:
        raise ParameterError("out='torch' needs PyTorch (pip install torch)") from None
    return torch


def _like(result: np.ndarray, like):
    module = type(like).__module__.split(".")[0]
    if isinstance(like, np.ndarray) or module == "numpy":
        return result
    if module == "torch":
        torch = _torch()
        return torch.from_numpy(np.ascontiguousarray(result)).to(like.device)
    if module == "cupy":
        import cupy

        return cupy.asarray(result)
    if hasattr(like, "__dlpack__"):
        return result  # another DLPack library: a numpy array it can import without a copy
    raise ParameterError(
        f"like= takes a numpy array, a torch tensor, a CuPy array or another DLPack array, got "
        f"{type(like).__name__}"
    )
