"""The GPU's base conversions on the CUDA cores (EMBER_BCONV_TENSOR=0) rather than the tensor
cores: the schemes' CPU-vs-GPU bit-identity tests rerun so, which covers the batched and the
one-job conversion kernels with their maps and subtrahends (BFV's scaled product, ModUp, ModDown)
that the presets' sizes otherwise send to the tensor cores.
"""

from __future__ import annotations

from rerun import rerun_passes


def test_schemes_bit_identical_with_conversions_on_the_cuda_cores(gpu):
    rerun_passes(
        [
            "test_gpu_bfv_bgv.py::test_operations_bit_identical",
            "test_gpu_ckks.py::test_multiply",
            "test_gpu_ckks.py::test_rotate_and_conjugate",
        ],
        EMBER_BCONV_TENSOR="0",
    )
