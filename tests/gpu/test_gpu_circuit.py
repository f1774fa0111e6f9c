"""The circuit scheduler on GPUs: a compiled circuit run on 1, 2 and 4 GPUs, in wave and dataflow
mode, with a pool small enough to spill, and with the inputs on the CPU, gives the CPU's
ciphertexts word for word (gates are deterministic given inputs and keys). Set sizes beyond the
visible GPUs are skipped; the whole module is skipped without a GPU by this directory's conftest."""

from __future__ import annotations

from pathlib import Path

import ember
import numpy as np
import pytest
from ember import cggi
from ember.circuit import Circuit, RunOptions

# tests/c/sort4.c and add_u8.c compiled (the GPU machine has no Yosys; any circuit serves: each
# GPU run is compared with the CPU's run of the same circuit). Between them they hold every
# group form: the two-input gates, MUX, MAJ and XOR3.
DATA = Path(__file__).resolve().parent / "data"
SORT4 = DATA / "sort4.circuit"
GPUS = [f"cuda:{g.index}" for g in ember._ember.cuda_devices()]
CIRCUITS = {
    "sort4": ({"a": [3, -1, 7, -128]}, {"a": [-128, -1, 3, 7]}),
    "add_u8": ({"a": 250, "b": 9}, {"return": 3}),
}


def _words(outs: dict) -> list:
    return [outs[k]._raw.to_host() for k in sorted(outs)]


@pytest.fixture(scope="module", params=list(CIRCUITS))
def kit(request):
    circ = Circuit.load(DATA / f"{request.param}.circuit")
    given, expected = CIRCUITS[request.param]
    ctx = cggi.Context(cggi.Params.preset("test_insecure"), device="cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    ins = circ.encrypt_inputs(ctx, ck, **given)
    want = circ.run(ctx, sk, ins, progress=False)
    got = circ.decrypt_outputs(ctx, ck, want)
    assert {k: np.asarray(v).tolist() for k, v in got.items()} == expected
    return circ, ctx, ck, sk, ins, _words(want)


def _gpus(k: int) -> list:
    if len(GPUS) < k:
        pytest.skip(f"needs {k} GPUs, {len(GPUS)} visible")
    return GPUS[:k]


@pytest.mark.parametrize("mode", ["wave", "dataflow"])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_circuit_on_gpus_gives_the_cpu_words(kit, k, mode):
    circ, ctx, _, sk, ins, want = kit
    gpus = _gpus(k)
    gctx = ctx.to(gpus[0])
    gins = {name: b.to(gpus[0]) for name, b in ins.items()}
    # Every step over every GPU (the default keeps sort4's small steps on fewer GPUs).
    spread = RunOptions(min_gates_per_device=1)
    gsk = sk.to(gpus[0])
    outs = circ.run(gctx, gsk, gins, devices=gpus, mode=mode, options=spread, progress=False)
    assert all(b.device == gpus[0] for b in outs.values())
    got = _words(outs)
    assert all(np.array_equal(x, y) for x, y in zip(got, want))
    stats = circ.last_run_stats
    assert sum(stats["gates_per_device"]) == stats["gates"]
    if k > 1:
        assert min(stats["gates_per_device"]) > 0
        outs = circ.run(gctx, gsk, gins, devices=gpus, mode=mode, progress=False)
        assert all(np.array_equal(x, y) for x, y in zip(_words(outs), want))


def test_circuit_spill_and_cpu_home_on_gpus(kit):
    circ, ctx, _, sk, ins, want = kit
    gpus = GPUS[:2]
    tight = RunOptions(max_live_ciphertexts=16)
    gctx = ctx.to(gpus[0])
    gins = {name: b.to(gpus[0]) for name, b in ins.items()}
    outs = circ.run(gctx, sk.to(gpus[0]), gins, devices=gpus, options=tight, progress=False)
    assert circ.last_run_stats["spilled"] > 0
    assert all(np.array_equal(x, y) for x, y in zip(_words(outs), want))
    # Inputs and outputs on the CPU, the gates on the GPUs.
    outs = circ.run(ctx, sk, ins, devices=gpus, progress=False)
    assert all(np.array_equal(x, y) for x, y in zip(_words(outs), want))


def test_circuit_bool_128_on_all_gpus():
    circ = Circuit.load(SORT4)
    ctx = cggi.Context(cggi.Params.preset("bool_128"), device=GPUS[0])
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    given, expected = CIRCUITS["sort4"]
    outs = circ.run(ctx, sk, circ.encrypt_inputs(ctx, ck, **given), devices="all")
    assert circ.decrypt_outputs(ctx, ck, outs)["a"].tolist() == expected["a"]
