"""The extension modules: the product's (_ember) and the benchmarks' (_ember_bench) are apart and
load one shared copy of the library (one device registry, one fork generation per process)."""

from __future__ import annotations

import ember
import pytest
from ember import _ember, _ember_bench


def test_benchmark_bindings_live_in_their_own_module():
    for name in ("bench_ntt", "bench_ckks", "bench_integer", "bench_split", "copy_bandwidth"):
        assert hasattr(_ember_bench, name) and not hasattr(_ember, name), name
    # What the product needs at run time (ember tune's variants, timing) stays in the product.
    assert isinstance(list(_ember.ntt_variants("cpu")), list)
    _ember.synchronize("cpu")


def test_both_modules_load_one_copy_of_the_library():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libember" in line}
    assert len(paths) == 1, paths
    assert "libember" in next(iter(paths))
    rows = _ember_bench.bench_ntt(10, 2, "cpu", ["auto"], 50, 0, 1)
    assert len(rows) == 1


def test_bench_errors_are_ember_errors():
    with pytest.raises(ember.ParameterError):
        _ember_bench.bench_ntt(10, 2, "no-such-device", ["auto"], 50, 0, 1)
