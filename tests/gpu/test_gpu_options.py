"""Backend options on the GPU: each device's backend holds its own, the CUDA schedules are the
valid NTT variants, and a measured NTT table (ember tune's file) applies in-process and keeps
the transforms bit-identical to the CPU. switches.py's settings run the schemes' comparisons."""

from __future__ import annotations

import json

import ember
import numpy as np
import pytest
from ember import _ember, _ember_bench, ring
from ember.cli import main as cli_main


@pytest.fixture
def restore(gpu):
    """Puts back the options of the GPU and the CPU after the test."""
    saved = {d: _ember.backend_options(d) for d in {gpu, "cpu"}}
    yield
    for d, o in saved.items():
        _ember.set_backend_options(d, o)


def test_devices_hold_their_own_options(gpu, restore):
    if gpu == "cpu":
        pytest.skip("needs a device besides the CPU")
    cpu_before = ember.backend_options("cpu")
    with ember.using_backend_options(gpu, fused_tensor="off", bconv_tensor=False):
        assert ember.backend_options("cpu") == cpu_before
        with ember.using_backend_options("cpu", fused_key_product="always"):
            assert ember.backend_options(gpu)["fused_key_product"] == "auto"
            assert ember.backend_options(gpu)["fused_tensor"] == "off"


def test_unknown_variant_names_the_schedules(gpu, restore):
    with pytest.raises(ember.ParameterError, match=r"unknown NTT variant 'x'.*'auto'") as e:
        ember.set_backend_options(gpu, ntt_variant="x")
    for v in _ember.ntt_variants(gpu):
        assert f"'{v}'" in str(e.value)


def auto_variant(gpu, log_n, limbs, prime_bits=50):
    """The schedule "auto" reports for one size (bench_ntt's "auto:<schedule>")."""
    r = _ember_bench.bench_ntt(log_n, limbs, gpu, ["auto"], prime_bits, 1, 2)[0]
    assert r["roundtrip_ok"]
    return r["variant"].removeprefix("auto:")


def table(rows_fp64, rows_int, gpu_name="test"):
    def rows(rs):
        return [
            {
                "log_n": n,
                "limbs": l,
                "forward": f,
                "inverse": i,
                "forward_us": 1.0,
                "inverse_us": 1.0,
            }
            for n, l, f, i in rs
        ]

    return {
        "format": "ember-ntt-table",
        "version": 1,
        "gpu": gpu_name,
        "fp64": {"prime_bits": 50, "rows": rows(rows_fp64)},
        "integer": {"prime_bits": 60, "rows": rows(rows_int)},
    }


def test_measured_table_applies_in_process(gpu, restore, tmp_path):
    if gpu == "cpu":
        pytest.skip("the CPU has one schedule")
    builtin = auto_variant(gpu, 13, 8)
    other = "per_stage" if builtin != "per_stage" else "hybrid"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table([(13, 8, other, other)], [(13, 8, "hybrid", "two_kernel")])))
    n = 1 << 13
    primes = [int(p) for p in ring.generate_ntt_primes(50, n, 8)]
    _, basis = ring.make_ring(n, primes)
    rng = np.random.default_rng(2)
    a = np.stack([rng.integers(0, q, n, dtype=np.uint64) for q in primes])
    ref = ring.poly(basis, a, "coeff", "cpu").ntt().to_numpy()
    with ember.using_backend_options(gpu, ntt_table=str(path)):
        assert auto_variant(gpu, 13, 8) == other
        assert auto_variant(gpu, 13, 8, 60) == "hybrid/two_kernel"
        np.testing.assert_array_equal(ring.poly(basis, a, "coeff", gpu).ntt().to_numpy(), ref)
    assert auto_variant(gpu, 13, 8) == builtin


def test_tune_writes_a_table_that_applies(gpu, restore, tmp_path):
    if gpu == "cpu":
        pytest.skip("ember tune is for GPUs")
    out = tmp_path / "tuned.json"
    assert cli_main(["tune", "--device", gpu, "--quick", "--out", str(out)]) == 0
    t = json.loads(out.read_text())
    assert t["gpu"] and t["multiprocessors"] > 0 and t["bandwidth_gbs"] > 0
    assert {(r["log_n"], r["limbs"]) for r in t["fp64"]["rows"]} == {
        (12, 1),
        (12, 8),
        (13, 1),
        (13, 8),
    }
    ember.set_backend_options(gpu, ntt_table=str(out))
    row = next(r for r in t["fp64"]["rows"] if (r["log_n"], r["limbs"]) == (12, 8))
    want = (
        row["forward"] if row["forward"] == row["inverse"] else f"{row['forward']}/{row['inverse']}"
    )
    assert auto_variant(gpu, 12, 8) == want
