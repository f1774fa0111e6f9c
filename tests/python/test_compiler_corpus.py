"""Every program of tests/c compiled to a circuit and checked against the same program compiled
natively, on 1,000 random input sets evaluated in one bit-sliced pass."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from compiler_ref import CORPUS, compile_corpus, random_inputs, run_native, workdir

PROGRAMS = sorted(p.stem for p in CORPUS.glob("*.c"))
N = 1000

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="no system C compiler"
)


def test_corpus_size():
    assert len(PROGRAMS) >= 30


@pytest.mark.parametrize("name", PROGRAMS)
def test_matches_native(name):
    circ = compile_corpus(name)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    inputs = random_inputs(circ, N, rng)
    got = circ.evaluate(**inputs)
    want = run_native(name, circ, inputs, N, workdir())
    assert set(got) == set(want)
    for k in want:
        g = np.asarray(got[k]).astype(object)
        w = want[k]
        bad = np.nonzero((g != w).reshape(N, -1).any(axis=1))[0]
        if len(bad):
            i = bad[0]
            ins = {p: np.asarray(v)[i].tolist() for p, v in inputs.items()}
            pytest.fail(
                f"{name}: output {k} differs on {len(bad)} of {N} sets; first: inputs "
                f"{ins}: circuit {g[i]!r}, native {w[i]!r}"
            )
