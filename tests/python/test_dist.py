"""Collectives of RNS polynomials over CPU devices (cpu:0..cpu:8, the copy exchange): broadcast,
all-gather, reduce-scatter and all-reduce against sums modulo each row's prime computed with
Python integers, for even, uneven and balanced row partitions and one to eight devices; row
partitions; operand checks; ordering with RnsPoly operations on each device."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import _ember, dist, ring
from rowsref import bounds, mod_sum

N = 32


def make_basis(rows: int):
    """``rows`` primes of 61 bits (the largest residues a sum must carry in 64 bits)."""
    _, basis = ring.make_ring(N, bits=61, count=rows)
    return basis


def random_words(basis, rng) -> np.ndarray:
    """Reduced residues, with q - 1 in the first two columns of each row (the largest sums)."""
    q = np.array(basis.primes, dtype=np.uint64)[:, None]
    w = (rng.integers(0, 2**63, size=(len(basis), N), dtype=np.uint64) % q).astype(np.uint64)
    w[:, :2] = q - 1
    return w


def cpus(k: int) -> list[str]:
    return [f"cpu:{i}" for i in range(k)]


CASES = [
    (1, [5]),
    (2, [3, 3]),
    (2, [5, 1]),
    (3, [3, 2, 2]),
    (3, [1, 1, 5]),
    (4, [2, 2, 2, 2]),
    (4, [1, 3, 1, 2]),
    (8, [1] * 8),
    (8, [2, 1, 1, 1, 1, 1, 1, 3]),
]


@pytest.mark.parametrize(
    "k,sizes", CASES, ids=[f"{k}dev-{'-'.join(map(str, s))}" for k, s in CASES]
)
@pytest.mark.parametrize("form", ["coeff", "eval"])
def test_collectives_match_python_sums(k, sizes, form):
    rows = sum(sizes)
    basis = make_basis(rows)
    rng = np.random.default_rng(k * 100 + rows)
    comm = dist.Communicator(cpus(k))
    assert comm.exchange == "copy" and len(comm) == k
    words = [random_words(basis, rng) for _ in range(k)]
    wholes = [ring.poly(basis, w, form, d) for w, d in zip(words, comm.devices)]
    expected = mod_sum(basis, words)
    ranges = bounds(sizes)

    parts = comm.reduce_scatter(wholes, ranges)
    for d, (p, (b, e)) in enumerate(zip(parts, ranges)):
        assert p.device == comm.devices[d] and p.form == form
        assert list(p.basis.primes) == list(basis.primes)[b:e]
        np.testing.assert_array_equal(p.to_numpy(), expected[b:e])
    # The same split given as row counts.
    again = comm.reduce_scatter(wholes, sizes)
    assert all(np.array_equal(a.to_numpy(), p.to_numpy()) for a, p in zip(again, parts))

    gathered = comm.all_gather(parts)
    for d, g in enumerate(gathered):
        assert g.device == comm.devices[d] and g.form == form and g.basis == basis
        np.testing.assert_array_equal(g.to_numpy(), expected)

    copies = comm.all_reduce([w.copy() for w in wholes])
    for c in copies:
        np.testing.assert_array_equal(c.to_numpy(), expected)

    for root in {0, k - 1}:
        polys = comm.broadcast([w.copy() for w in wholes], root)
        for p in polys:
            np.testing.assert_array_equal(p.to_numpy(), words[root])


@pytest.mark.parametrize("rows,k", [(7, 3), (5, 5), (40, 4), (9, 2)])
def test_balanced_partition_by_default(rows, k):
    basis = make_basis(rows)
    rng = np.random.default_rng(rows)
    comm = dist.Communicator(cpus(k))
    words = [random_words(basis, rng) for _ in range(k)]
    parts = comm.reduce_scatter([ring.poly(basis, w, "eval", d) for w, d in zip(words, cpus(k))])
    expected = mod_sum(basis, words)
    assert [p.limbs for p in parts] == [e - b for b, e in dist.partition_rows(rows, k)]
    np.testing.assert_array_equal(np.concatenate([p.to_numpy() for p in parts]), expected)


def test_partition_rows():
    assert dist.partition_rows(10, 4) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert dist.partition_rows(40, 3) == [(0, 14), (14, 27), (27, 40)]
    assert dist.partition_rows(3, 1) == [(0, 3)]
    for rows in range(1, 12):
        for parts in range(1, rows + 1):
            r = dist.partition_rows(rows, parts)
            sizes = [e - b for b, e in r]
            assert r[0][0] == 0 and r[-1][1] == rows and max(sizes) - min(sizes) <= 1
            assert all(r[i][1] == r[i + 1][0] for i in range(parts - 1))
    with pytest.raises(ember.ParameterError, match="non-empty"):
        dist.partition_rows(3, 4)


def test_scatter_then_gather_and_into_forms():
    basis = make_basis(6)
    w = random_words(basis, np.random.default_rng(5))
    whole = ring.poly(basis, w, "eval", "cpu:2")
    comm = dist.Communicator(cpus(4))
    parts = comm.scatter_rows(whole, [1, 2, 2, 1])
    assert [p.device for p in parts] == comm.devices
    np.testing.assert_array_equal(parts[1].to_numpy(), w[1:3])
    outs = [ring.RnsPoly.zeros(basis, "eval", d) for d in comm.devices]
    comm.all_gather_into(parts, outs, sync=False)
    comm.synchronize()
    for o in outs:
        np.testing.assert_array_equal(o.to_numpy(), w)
    # reduce_scatter into the parts of the split: four copies of w summed.
    comm.reduce_scatter_into(outs, parts)
    expected = mod_sum(basis, [w] * 4)
    np.testing.assert_array_equal(np.concatenate([p.to_numpy() for p in parts]), expected)


def test_ordered_with_polynomial_operations():
    """A key-switching-like pattern: each device multiplies its own pair, the products are
    summed with reduce_scatter and gathered back; equal to the sum computed on one device."""
    basis = make_basis(5)
    rng = np.random.default_rng(9)
    k = 4
    comm = dist.Communicator(cpus(k))
    a = [random_words(basis, rng) for _ in range(k)]
    b = [random_words(basis, rng) for _ in range(k)]
    products = [
        ring.poly(basis, x, "eval", d) * ring.poly(basis, y, "eval", d)
        for x, y, d in zip(a, b, comm.devices)
    ]
    parts = comm.reduce_scatter(products, sync=False)
    wholes = comm.all_gather(parts, sync=False)
    ref = ring.poly(basis, a[0], "eval") * ring.poly(basis, b[0], "eval")
    for x, y in zip(a[1:], b[1:]):
        ref = ref + ring.poly(basis, x, "eval") * ring.poly(basis, y, "eval")
    for w in wholes:
        np.testing.assert_array_equal(w.to_numpy(), ref.to_numpy())


def test_operand_checks():
    basis = make_basis(4)
    other = make_basis(4)
    comm = dist.Communicator(["cpu:1", "cpu:3"])
    assert comm.devices == ["cpu:1", "cpu:3"]
    polys = [ring.RnsPoly.zeros(basis, "eval", d) for d in comm.devices]
    with pytest.raises(ember.ParameterError, match="one per device"):
        comm.all_reduce(polys[:1])
    with pytest.raises(ember.MismatchError, match=r"is on cpu:3 but rank 0 is cpu:1"):
        comm.all_reduce(polys[::-1])
    with pytest.raises(ember.MismatchError, match="forms"):
        comm.broadcast([polys[0], ring.RnsPoly.zeros(basis, "coeff", "cpu:3")])
    with pytest.raises(ember.MismatchError, match="rings"):
        comm.reduce_scatter([polys[0], ring.RnsPoly.zeros(other, "eval", "cpu:3")])
    with pytest.raises(ember.ParameterError, match="root"):
        comm.broadcast(polys, 2)
    with pytest.raises(ember.ParameterError, match="cover"):
        comm.reduce_scatter(polys, [(0, 2), (2, 3)])
    with pytest.raises(ember.ParameterError, match="start"):
        comm.reduce_scatter(polys, [(0, 2), (1, 4)])
    with pytest.raises(ember.ParameterError, match="row ranges"):
        comm.reduce_scatter(polys, ["a", "b"])
    overlapping = [
        _ember.take_rows(polys[0], 0, 2, "cpu:1"),
        _ember.take_rows(polys[0], 1, 3, "cpu:3"),
    ]
    with pytest.raises(ember.ParameterError, match="twice"):
        comm.all_gather(overlapping)
    with pytest.raises(TypeError):
        comm.all_reduce([polys[0], "not a polynomial"])


def test_device_sets_and_exchanges():
    assert isinstance(dist.nccl_available(), bool)
    assert dist.nccl_available() == _ember.nccl_compiled()
    with pytest.raises(ember.ParameterError, match="twice"):
        dist.Communicator(["cpu:1", "cpu:1"])
    with pytest.raises(ember.ParameterError, match="empty"):
        dist.Communicator([])
    with pytest.raises(ember.ParameterError, match="exchange"):
        dist.Communicator(cpus(2), exchange="mpi")
    with pytest.raises(ember.DeviceError, match="NCCL"):
        dist.Communicator(cpus(2), exchange="nccl")
    assert dist.Communicator(cpus(2), exchange="copy").exchange == "copy"
    assert "cpu:1" in repr(dist.Communicator(cpus(2)))
    if not _ember.cuda_compiled():
        with pytest.raises(ember.DeviceError, match="CUDA"):
            dist.Communicator(["cuda:0", "cuda:1"])
    # Sums over more than eight devices could overflow 64-bit words.
    nine = dist.Communicator(cpus(9))
    basis = make_basis(9)
    polys = [ring.RnsPoly.zeros(basis, "eval", d) for d in cpus(9)]
    with pytest.raises(ember.ParameterError, match="at most 8"):
        nine.all_reduce(polys)
    nine.broadcast(polys, 4)  # no sum: any number of devices


def test_scaling_counts_reach_every_device_count():
    # Scaling benchmarks measure the powers of two and the whole set, power of two or not.
    assert dist.scaling_counts(1) == [1]
    assert dist.scaling_counts(3) == [1, 2, 3]
    assert dist.scaling_counts(6) == [1, 2, 4, 6]
    assert dist.scaling_counts(8) == [1, 2, 4, 8]
    assert dist.scaling_counts(12) == [1, 2, 4, 8, 12]
    with pytest.raises(ember.ParameterError, match="at least one"):
        dist.scaling_counts(0)


def test_bench_dist_smoke():
    from ember.bench import bench_dist

    out = bench_dist(cpus(2), quick=True)
    assert out["devices"] == ["cpu", "cpu:1"] and out["limbs"] == 8
    assert {(r["op"], r["devices"]) for r in out["results"]} == {
        ("all_gather", 2),
        ("reduce_scatter", 2),
    }
    assert all(r["exchange"] == "copy" and r["busbw_gb_s"] > 0 for r in out["results"])
