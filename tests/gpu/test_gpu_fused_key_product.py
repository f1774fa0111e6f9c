"""The GPU's fused ModUp transform and key product (relinearization, key switching, rotations): the
schemes' CPU-vs-GPU bit-identity tests rerun with EMBER_FUSED_KEY_PRODUCT=1, which fuses at every
size (by default only rows taking most of the L2 cache are fused, which these small sets never
reach). The switch is read once per process, hence the subprocess.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

_HERE = pathlib.Path(__file__).resolve().parent


def test_schemes_bit_identical_with_the_key_product_fused_everywhere(gpu):
    tests = [
        f"{_HERE / 'test_gpu_bfv_bgv.py'}::test_operations_bit_identical",
        f"{_HERE / 'test_gpu_ckks.py'}::test_multiply",
        f"{_HERE / 'test_gpu_ckks.py'}::test_rotate_and_conjugate",
    ]
    env = dict(os.environ, EMBER_FUSED_KEY_PRODUCT="1")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]
