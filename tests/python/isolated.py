"""Runs a scenario in a fresh interpreter under a timeout: for tests that fork, so that a
deadlock fails the test instead of hanging the suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def run_python(code: str, timeout: float = 180, hang: str = "the scenario hung") -> str:
    """The stdout of `code` (dedented) run by this interpreter; fails the test on a non-zero
    exit (with the child's stderr) or with `hang` when it outlasts `timeout` seconds."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(hang)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout
