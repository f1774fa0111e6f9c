"""Arrays in and out: n-dimensional numpy input, any DLPack producer, torch/DLPack output.

Input: wherever values are taken (CKKS/BFV/BGV encode and encrypt, CGGI encrypt, the operands of
+ - *), an n-dimensional array is flattened in C order into the slots and its shape is kept on
the plaintext or ciphertext (``.shape``; results of operations keep their first operand's), so
decryption returns that shape. Any object with ``__dlpack__`` is accepted where numpy arrays are:
numpy arrays, torch tensors, CuPy arrays, JAX arrays. A CKKS, BFV or BGV context on a GPU reads a
CUDA array on its own GPU in place (``device_values``, ``device_integers``: no copy to the host;
the producer's current stream is synchronized first); every other GPU array is copied to the host
first (CGGI encodes there, and BFV/BGV read arrays of a non-integer dtype there).

Output: the decrypt functions take ``out="numpy"`` (default), ``out="torch"`` (a CPU torch
tensor), ``out="dlpack"`` (a DLPack array that torch.from_dlpack or cupy.from_dlpack takes
without a copy: a numpy array, or for a CKKS context on a GPU an array in that GPU's memory), or
``like=x``: an array of x's library (numpy, torch, CuPy) and, for torch and CuPy, on x's device
(a CKKS, BFV or BGV context on a GPU decodes there and hands the memory over without a host round
trip).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ParameterError

__all__ = [
    "as_array",
    "cuda_index",
    "device_integers",
    "device_values",
    "flatten_input",
    "to_numpy",
    "to_output",
]

_CPU = 1  # DLPack's kDLCPU
_CUDA = 2  # DLPack's kDLCUDA
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


# ---------------------------------------------------------------- GPU arrays read in place


def cuda_index(values) -> int | None:
    """The CUDA device index of a DLPack producer in GPU memory, else None."""
    if not _is_dlpack(values):
        return None
    device = getattr(values, "__dlpack_device__", None)
    if device is None:
        return None
    kind, index = device()
    return int(index) if int(kind) == _CUDA else None


def _library(values) -> str:
    return type(values).__module__.split(".")[0]


def synchronize_producer(values) -> None:
    """Waits for the work the producer's library has queued on its current stream, so that the
    values are complete before another stream reads them (ember's streams are not the
    producer's: the DLPack stream argument is not used, the synchronization is explicit)."""
    library = _library(values)
    if library == "torch":
        import torch

        torch.cuda.current_stream(values.device).synchronize()
    elif library == "cupy":
        import cupy

        with cupy.cuda.Device(cuda_index(values)):
            cupy.cuda.get_current_stream().synchronize()


_DEVICE_DTYPES = ("float32", "float64", "complex64", "complex128")


def _one_dimensional(values, shape: tuple):
    """values itself: a GPU array of another library than torch or CuPy, which must be 1-D
    already to be read in place."""
    if len(shape) != 1:
        raise ParameterError(
            f"a {type(values).__name__} on the GPU must be 1-D to be encoded in place "
            "(or a torch tensor / CuPy array, which are flattened on the GPU)"
        )
    return values


def on_context_gpu(values, context_index: int | None, device: str) -> bool:
    """Whether a context on `device` (GPU index context_index, None for a CPU context) reads
    `values` in its own GPU memory: False for host values and for GPU values given to a CPU
    context (those go through the host); ParameterError for values on another GPU."""
    index = cuda_index(values)
    if index is None or context_index is None:
        return False
    if index != context_index:
        raise ParameterError(
            f"the values are on cuda:{index} but the context is on {device}: move them "
            f"(tensor.to('{device}')) or use ctx.to('cuda:{index}')"
        )
    return True


def device_values(values):
    """(a flat, contiguous array of float32/float64/complex64/complex128 values on the same GPU,
    the original shape or None) for a CUDA torch tensor or CuPy array; the conversions (flatten,
    contiguous copy, dtype) run on the GPU. Other producers must be 1-D, contiguous and of one of
    those dtypes already."""
    shape = tuple(int(d) for d in values.shape)
    library = _library(values)
    if library == "torch":
        import torch

        flat = values.detach().reshape(-1)
        if str(flat.dtype).split(".")[-1] not in _DEVICE_DTYPES:
            flat = flat.to(torch.complex128 if flat.is_complex() else torch.float64)
        flat = flat.contiguous()
    elif library == "cupy":
        import cupy

        flat = cupy.ascontiguousarray(values).reshape(-1)
        if flat.dtype.name not in _DEVICE_DTYPES:
            flat = flat.astype(cupy.complex128 if flat.dtype.kind == "c" else cupy.float64)
    else:
        flat = _one_dimensional(values, shape)
    return flat, (shape if len(shape) > 1 else None)


def device_bits(values):
    """(a flat, contiguous uint8 array of 0s and 1s on the same GPU, the original shape) for a CUDA
    torch tensor or CuPy array of bools or integers, or None for other producers and dtypes (the
    host path reads and checks those); see device_small_integers."""
    return device_small_integers(values, 2, "encrypt takes bits: values must be 0 or 1")


def device_small_integers(values, limit: int, message: str | None = None):
    """(a flat, contiguous uint8 array of values in [0, limit) on the same GPU, the original
    shape) for a CUDA torch tensor or CuPy array of bools or integers (flattened and converted on
    the GPU; the range check reads one flag back: ParameterError with `message` outside it), or
    None for other producers and dtypes (the host path reads and checks those)."""
    message = message or f"values must be in [0, {limit})"
    shape = tuple(int(d) for d in values.shape)
    library = _library(values)
    if library == "torch":
        import torch

        if values.dtype.is_floating_point or values.dtype.is_complex:
            return None
        flat = values.detach().reshape(-1)
        if flat.dtype != torch.bool and bool(((flat < 0) | (flat >= limit)).any()):
            raise ParameterError(message)
        return flat.to(torch.uint8).contiguous(), shape
    if library == "cupy":
        import cupy

        if values.dtype.kind not in "biu":
            return None
        flat = cupy.ascontiguousarray(values).reshape(-1)
        if flat.dtype.kind != "b" and bool(((flat < 0) | (flat >= limit)).any()):
            raise ParameterError(message)
        return cupy.ascontiguousarray(flat.astype(cupy.uint8)), shape
    return None


def device_integers(values):
    """(a flat, contiguous array of an integer dtype on the same GPU, the original shape or None)
    for a CUDA torch tensor or CuPy array of integers (flattened on the GPU), or None for other
    dtypes (bools and floats: the host path reads and checks those). Other producers must be 1-D
    and contiguous already (the encoder checks their dtype)."""
    shape = tuple(int(d) for d in values.shape)
    library = _library(values)
    if library == "torch":
        if (
            values.dtype.is_floating_point
            or values.dtype.is_complex
            or str(values.dtype) == ("torch.bool")
        ):
            return None
        flat = values.detach().reshape(-1).contiguous()
    elif library == "cupy":
        import cupy

        if values.dtype.kind not in "iu":
            return None
        flat = cupy.ascontiguousarray(values).reshape(-1)
    else:
        flat = _one_dimensional(values, shape)
    return flat, (shape if len(shape) > 1 else None)


def is_complex_dtype(values) -> bool:
    """Whether an array's dtype is complex (numpy, torch, CuPy, anything with .dtype)."""
    if isinstance(values, np.ndarray):
        return np.iscomplexobj(values)
    dtype = getattr(values, "dtype", None)
    if dtype is not None and not isinstance(dtype, np.dtype):
        return "complex" in str(dtype)
    return np.iscomplexobj(values)


def magnitude_on_device(values) -> float:
    """max |value| of a GPU array, computed by its library (only the result comes back)."""
    if not math.prod(values.shape):
        return 0.0
    return float(abs(values).max())


def from_device(array, like):
    """A decryption in the context's GPU memory (a DLPack array in its shape) as asked: the
    DLPack array itself (like None: out="dlpack"), or like's library (torch.from_dlpack /
    cupy.from_dlpack: no copy; a copy between GPUs when like is on another one)."""
    if like is None:
        return array
    library = _library(like)
    if library == "torch":
        import torch

        t = torch.from_dlpack(array)
        return t if t.device == like.device else t.to(like.device)
    import cupy

    with cupy.cuda.Device(cuda_index(like)):
        return cupy.asarray(cupy.from_dlpack(array))


def device_output_wanted(out: str | None, like, device_index: int | None) -> bool:
    """Whether a decryption on the GPU `device_index` (None: a CPU context) should stay there:
    out="dlpack", or like= a torch tensor / CuPy array on a GPU."""
    if device_index is None:
        return False
    if like is not None:
        return out is None and cuda_index(like) is not None and _library(like) in ("torch", "cupy")
    return out == "dlpack"
