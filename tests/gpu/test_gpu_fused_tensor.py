"""The GPU's forward NTT fused with BFV's tensor product: the BFV/BGV CPU-vs-GPU bit-identity tests
rerun with EMBER_FUSED_TENSOR=1, which fuses from N = 2^11 on whatever the NTT schedule (by default
only where the tuned schedule is the warp-shuffle one), and with EMBER_FUSED_TENSOR=0, which never
fuses.
"""

from __future__ import annotations

import pytest
from rerun import rerun_passes


@pytest.mark.parametrize("switch", ["1", "0"], ids=["fused", "apart"])
def test_bfv_products_bit_identical_fused_or_apart(gpu, switch):
    rerun_passes(["test_gpu_bfv_bgv.py::test_operations_bit_identical"], EMBER_FUSED_TENSOR=switch)
