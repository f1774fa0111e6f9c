"""The GPU's fused ModUp transform and key product (relinearization, key switching, rotations): the
schemes' CPU-vs-GPU bit-identity tests rerun with EMBER_FUSED_KEY_PRODUCT=1, which fuses at every
size (by default only rows taking most of the L2 cache are fused, which these small sets never
reach).
"""

from __future__ import annotations

from rerun import rerun_passes


def test_schemes_bit_identical_with_the_key_product_fused_everywhere(gpu):
    rerun_passes(
        [
            "test_gpu_bfv_bgv.py::test_operations_bit_identical",
            "test_gpu_ckks.py::test_multiply",
            "test_gpu_ckks.py::test_rotate_and_conjugate",
        ],
        EMBER_FUSED_KEY_PRODUCT="1",
    )
