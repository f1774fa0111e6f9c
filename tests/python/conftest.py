"""Shared fixtures of the Python suite (CPU backend; the GPU comparison lives in tests/gpu).

The reference helpers (schoolbook negacyclic multiplication with Python integers, random residues
from seeded numpy Generators, CRT, ChaCha20) are defined in ringref.py and re-exported here;
test modules import them from ``ringref`` so that the import works whichever conftest.py pytest
loaded last.
"""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ringref import (  # noqa: F401  (re-exported helpers)
    Crt,
    automorphism_coeff,
    bitrev,
    centered,
    distinct_primes,
    make_rng,
    negacyclic_mul,
    negacyclic_mul_rns,
    random_residues,
    random_signed,
    schoolbook_negacyclic,
)


@pytest.fixture
def device() -> str:
    """The device under test: the Python suite runs on the CPU backend (the reference)."""
    return "cpu"


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A numpy Generator seeded from the test's name: fixed, but different per test."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(request.node.nodeid)) % (2**32)
    return np.random.default_rng(seed)


def pytest_report_header(config):
    return f"ember backends: {ember.backends()}"
