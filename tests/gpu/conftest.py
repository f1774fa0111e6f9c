"""The CPU-vs-GPU equivalence suite: run by `make gpu-check` (bench/gpu_check.sh) on a GPU machine.

Every test feeds the same inputs to device "cpu" (the reference backend) and to the GPU and
requires bit-identical results. Without a CUDA build or without a visible GPU, every test in this
directory is skipped with the reason; the modules still import and collect everywhere.

EMBER_EQUIV_DEVICE selects the device compared against the CPU (default "cuda"; "cuda:1" picks
another GPU). EMBER_EQUIV_DEVICE=cpu runs the suite CPU-against-CPU, a self-check of the test
code that needs no GPU.
"""

from __future__ import annotations

import os
import pathlib

import ember
import pytest

_HERE = pathlib.Path(__file__).resolve().parent
DEVICE_SPEC = os.environ.get("EMBER_EQUIV_DEVICE", "cuda")


def unavailable_reason() -> str | None:
    """Why the suite cannot run here, or None when it can."""
    if DEVICE_SPEC == "cpu":
        return None
    if "cuda" not in ember.backends():
        return (
            "this build of Ember has no CUDA backend (ember.backends() == "
            f"{ember.backends()}); build with EMBER_CUDA=ON on a machine with nvcc"
        )
    if not ember._ember.cuda_devices():
        return "no CUDA GPU is visible (ember._ember.cuda_devices() is empty)"
    return None


def pytest_collection_modifyitems(config, items):
    reason = unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"GPU equivalence suite: {reason}")
    for item in items:
        if _HERE in pathlib.Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)


def pytest_report_header(config):
    reason = unavailable_reason()
    if reason is not None:
        return f"ember GPU equivalence: skipped ({reason})"
    gpus = ", ".join(
        f"cuda:{g.index} {g.name} sm_{g.major}{g.minor}" for g in ember._ember.cuda_devices()
    )
    return f"ember GPU equivalence: cpu vs {DEVICE_SPEC} ({gpus or 'no GPU'})"


@pytest.fixture(scope="session")
def gpu() -> str:
    """Canonical name of the device compared against the CPU."""
    return ember.resolve_device(DEVICE_SPEC)
