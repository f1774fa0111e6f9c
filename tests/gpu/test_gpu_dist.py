"""Collectives over several GPUs: NCCL (and the copy exchange) on cuda:0..cuda:k-1 give exactly the
words of the CPU-device reference (cpu:0..cpu:k-1) and of sums modulo each prime in Python
integers, for even and uneven row partitions; RnsPoly.to between GPUs; a ciphertext moved
cuda:0 -> cuda:1 -> cpu decrypts the same; async collectives interleaved with polynomial work.

Skipped unless at least two GPUs are visible (and by this directory's conftest without a CUDA
build). EMBER_EQUIV_DEVICE=cpu runs it on CPU devices cpu:1..cpu:4 instead (a self-check of the
test code). Run: cd tests && python -m pytest -q gpu/test_gpu_dist.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import ember
import numpy as np
import pytest
from ember import _ember, ckks, dist, ring

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from rowsref import bounds, mod_sum

SELF_CHECK = os.environ.get("EMBER_EQUIV_DEVICE", "cuda") == "cpu"


def _devices() -> list[str]:
    if SELF_CHECK:
        return [f"cpu:{i}" for i in range(1, 5)]
    if "cuda" not in ember.backends():
        return []
    return [f"cuda:{g.index}" for g in _ember.cuda_devices()]


DEVICES = _devices()
pytestmark = pytest.mark.skipif(
    len(DEVICES) < 2, reason=f"needs at least two GPUs, found {len(DEVICES)}"
)
EXCHANGES = ["copy"] + (["nccl"] if dist.nccl_available() and not SELF_CHECK else [])


def make_basis(n: int, rows: int, bits: int = 61):
    _, basis = ring.make_ring(n, bits=bits, count=rows)
    return basis


def random_words(basis, rng) -> np.ndarray:
    q = np.array(basis.primes, dtype=np.uint64)[:, None]
    w = (rng.integers(0, 2**63, size=(len(basis), basis.n), dtype=np.uint64) % q).astype(np.uint64)
    w[:, :2] = q - 1  # the largest sums
    return w


def run_all(comm, basis, words, ranges, form):
    """Every collective's output words (host arrays) on comm's devices."""
    wholes = [ring.poly(basis, w, form, d) for w, d in zip(words, comm.devices)]
    parts = comm.reduce_scatter(wholes, ranges)
    gathered = comm.all_gather(parts)
    reduced = comm.all_reduce([w.copy() for w in wholes])
    cast = comm.broadcast([w.copy() for w in wholes], len(words) - 1)
    assert all(p.device == d for p, d in zip(parts + gathered, comm.devices * 2))
    return {
        "reduce_scatter": [p.to_numpy() for p in parts],
        "all_gather": [g.to_numpy() for g in gathered],
        "all_reduce": [r.to_numpy() for r in reduced],
        "broadcast": [c.to_numpy() for c in cast],
    }


def _cases():
    cases = []
    for k in range(2, len(DEVICES) + 1):
        cases.append((k, [5] * k))  # even: ncclAllGather / ncclReduceScatter
        cases.append((k, [1] * (k - 1) + [k + 2]))  # uneven: grouped broadcasts / reduces
    cases.append((len(DEVICES), None))  # balanced split of 40 rows
    return cases


@pytest.mark.parametrize("exchange", EXCHANGES)
@pytest.mark.parametrize("k,sizes", _cases(), ids=lambda v: str(v))
def test_collectives_match_cpu_reference(exchange, k, sizes):
    rows = sum(sizes) if sizes else 40
    ranges = bounds(sizes) if sizes else dist.partition_rows(rows, k)
    basis = make_basis(1 << 12, rows)
    rng = np.random.default_rng(k * 1000 + rows)
    words = [random_words(basis, rng) for _ in range(k)]
    comm = dist.Communicator(DEVICES[:k], exchange=exchange)
    assert comm.exchange == exchange
    got = run_all(comm, basis, words, ranges, "eval")
    ref = run_all(dist.Communicator([f"cpu:{i}" for i in range(k)]), basis, words, ranges, "eval")
    for name in got:
        for d, (g, r) in enumerate(zip(got[name], ref[name])):
            assert np.array_equal(g, r), f"{name} rank {d} ({exchange})"
    expected = mod_sum(basis, words)
    assert np.array_equal(np.concatenate(got["reduce_scatter"]), expected)
    assert all(np.array_equal(g, expected) for g in got["all_gather"])


def test_auto_exchange_uses_nccl_when_compiled():
    comm = dist.Communicator(DEVICES[:2])
    assert comm.exchange == ("nccl" if dist.nccl_available() and not SELF_CHECK else "copy")


@pytest.mark.parametrize("exchange", EXCHANGES)
def test_async_collectives_interleaved_with_polynomial_work(exchange):
    """Products on each GPU, reduce-scatter, NTT round trips and all-gather, all queued without
    waiting: the result equals the same sum computed on the CPU."""
    k = len(DEVICES)
    basis = make_basis(1 << 13, 2 * k + 1, bits=50)
    rng = np.random.default_rng(7)
    a = [random_words(basis, rng) for _ in range(k)]
    b = [random_words(basis, rng) for _ in range(k)]
    comm = dist.Communicator(DEVICES, exchange=exchange)
    for _ in range(3):
        products = [
            ring.poly(basis, x, "eval", d) * ring.poly(basis, y, "eval", d)
            for x, y, d in zip(a, b, DEVICES)
        ]
        parts = comm.reduce_scatter(products, sync=False)
        parts = [p.intt().ntt() for p in parts]  # work on the default streams in between
        wholes = comm.all_gather(parts, sync=False)
        ref = ring.poly(basis, a[0], "eval") * ring.poly(basis, b[0], "eval")
        for x, y in zip(a[1:], b[1:]):
            ref = ref + ring.poly(basis, x, "eval") * ring.poly(basis, y, "eval")
        for w in wholes:
            assert np.array_equal(w.to_numpy(), ref.to_numpy())


def test_rns_poly_moves_between_gpus():
    basis = make_basis(1 << 12, 6)
    w = random_words(basis, np.random.default_rng(1))
    p = ring.poly(basis, w, "eval", DEVICES[0])
    q = p.to(DEVICES[1])
    assert q.device == DEVICES[1]
    assert np.array_equal(q.to_numpy(), w)
    assert np.array_equal(q.to(DEVICES[0]).to_numpy(), w)
    back = q.intt().to(DEVICES[0]).ntt()  # coefficient form on the way
    assert np.array_equal(back.to_numpy(), w)
    assert np.array_equal(q.to("cpu").to_numpy(), w)


def test_ciphertext_moves_gpu_to_gpu_to_cpu():
    params = ckks.Params(
        log_n=12,
        scale_bits=40,
        levels=3,
        first_mod_bits=60,
        special_mods=1,
        special_mod_bits=60,
        insecure=True,
    )
    ctx0 = ckks.Context(params, device=DEVICES[0])
    sk = ctx0.keygen()
    ctx0.set_eval_keys(ctx0.eval_keys(sk, rotations=[3]))
    rng = np.random.default_rng(2)
    x, y = rng.uniform(-1, 1, ctx0.slots), rng.uniform(-1, 1, ctx0.slots)
    a, b = ctx0.encrypt(x, sk), ctx0.encrypt(y, sk)
    ref = (a * b).rotate(3) + a  # on cuda:0
    a1, b1 = a.to(DEVICES[1]), b.to(DEVICES[1])
    got = (a1 * b1).rotate(3) + a1  # on cuda:1, keys copied there
    assert got.device == DEVICES[1]
    on_cpu = got.to("cpu")
    ctx_cpu = ctx0.to("cpu")
    sk_cpu = sk.to("cpu")
    out = ctx_cpu.decrypt(on_cpu, sk_cpu)
    assert np.array_equal(out, ctx_cpu.decrypt(ref.to("cpu"), sk_cpu))  # the same words
    assert np.abs(out - ctx0.decrypt(ref, sk)).max() < 1e-9
    assert np.abs(out - (np.roll(x * y, -3) + x)).max() < 1e-4
