"""Reruns GPU tests in a subprocess with environment switches set: the backend reads its switches
(EMBER_FUSED_KEY_PRODUCT, EMBER_FUSED_TENSOR, EMBER_BCONV_TENSOR) once per process."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def rerun_passes(tests: list[str], **switches: str) -> None:
    """Runs `tests` (node ids relative to tests/gpu) with `switches` in the environment and
    asserts that every one of them ran and passed."""
    env = dict(os.environ, **switches)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *(str(HERE / t) for t in tests),
        ],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]
