"""CKKS bootstrapping, CPU vs GPU, and at full size on the GPU.

- N12_boot_insecure with the same fixed sampler key on both devices: identical keys (the
  encapsulation keys included) and bit-identical bootstrapped ciphertexts (real variant,
  complex circuit, a pair of real ciphertexts); the same on 32-bit words (N12_boot32_insecure).
- N16_boot (128-bit secure, N = 2^16, full slots) on the GPU: at least 20 bits of mean precision
  for real values (the real variant), complex values and a pair of real ciphertexts in one
  bootstrap (bootstrap_many), the promised output level (13, with 10 levels for computation before the next bootstrap), a
  product after bootstrapping, sparse slots (4096), and ten bootstraps in a row; N16_boot32
  (32-bit words) with at least 13 levels left and 20 bits.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from ember import bootstrap, ckks, ring

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ckksref import assert_precision

KEY = bytes(32)


def side(name: str, device: str, sparse=()):
    ctx = ckks.Context(ckks.Params.preset(name), device=device)
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ek = ctx.eval_keys(sk, bootstrap=True, bootstrap_slots=sparse, progress=False)
    ctx.set_eval_keys(ek)
    ctx._sampler = ring.Sampler(KEY, 7)
    return ctx, sk, pk, ek


@pytest.mark.parametrize(
    "name,real",
    [("N12_boot_insecure", None), ("N12_boot_insecure", False), ("N12_boot32_insecure", None)],
)
def test_bootstrap_bit_identical_to_cpu(gpu, name, real):
    """Real values, by the real variant (default) and by the complex circuit; and on 32-bit
    words (levels of two primes)."""
    cpu = side(name, "cpu")
    dev = side(name, gpu)
    for k_cpu, k_dev in zip(cpu[3].boot, dev[3].boot):
        for j in range(cpu[0]._raw.dnum):
            np.testing.assert_array_equal(
                dev[0]._raw.switch_key_part(k_dev, j).to_numpy(),
                cpu[0]._raw.switch_key_part(k_cpu, j).to_numpy(),
            )
    v = np.random.default_rng(1).uniform(-1, 1, cpu[0].slots)
    outs = []
    for ctx, sk, pk, _ in (cpu, dev):
        out = ctx.bootstrap(ctx.encrypt(v, pk), real=real)
        outs.append(out)
        assert out.level == ctx.max_level
        assert_precision(ctx.decrypt(out, sk), v, 20)
    for i in range(2):
        np.testing.assert_array_equal(
            outs[1]._raw.poly(i).to_numpy(), outs[0]._raw.poly(i).to_numpy(), err_msg=f"c{i}"
        )


def test_hoisted_transform_in_one_pass_equals_stored_babies(gpu):
    """On the GPU: a transform's baby steps summed per giant in one pass (up to 16 babies)
    equal, bit for bit, storing every baby first (the same transform with unused babies added
    past that limit)."""
    ctx, _, pk, _ = side("N12_boot_insecure", gpu)
    bs = ctx._boot()
    x = ctx.encrypt(np.linspace(-1, 1, ctx.slots), pk, level=ctx.min_bootstrap_level)
    stage, index, planned = bs.stc[0]
    babies, giants, terms = bs._transform_operands(x, planned, 1.0, x.scale, (stage, index, 1.0))
    used = {b for _, _, b in planned[3]} | {g for _, g, _ in planned[3]}
    spare = [s for s in bs.rotations() if s not in used][: 17 - len(babies)]
    assert len(babies) + len(spare) == 17
    more = babies + [ctx._galois_key(bootstrap.galois_element(s, ctx.params.n)) for s in spare]
    one_pass = ctx._raw.linear_transform_hoisted(x._raw, babies, giants, terms)
    stored = ctx._raw.linear_transform_hoisted(x._raw, more, giants, terms)
    for i in range(2):
        np.testing.assert_array_equal(one_pass.poly(i).to_numpy(), stored.poly(i).to_numpy())


def test_bootstrap_pair_bit_identical_to_cpu(gpu):
    """Two real ciphertexts through one complex bootstrap (bootstrap_many)."""
    rng = np.random.default_rng(11)
    vals = [rng.uniform(-1, 1, 2048) for _ in range(2)]
    outs = []
    for ctx, sk, pk, _ in (side("N12_boot_insecure", "cpu"), side("N12_boot_insecure", gpu)):
        pair = ctx.bootstrap_many([ctx.encrypt(v, pk) for v in vals])
        for o, v in zip(pair, vals):
            assert_precision(ctx.decrypt(o, sk), v, 20)
        outs.append(pair)
    for k in range(2):
        for i in range(2):
            np.testing.assert_array_equal(
                outs[1][k]._raw.poly(i).to_numpy(), outs[0][k]._raw.poly(i).to_numpy()
            )


@pytest.fixture(scope="module")
def full(gpu):
    if gpu == "cpu":
        pytest.skip("N = 2^16 bootstrapping runs on the GPU only (too slow for the CPU self-check)")
    return side("N16_boot", gpu, sparse=[4096])


def test_full_size_precision_and_level(full):
    ctx, sk, pk, _ = full
    assert ctx.slots == 2**15 and ctx.max_level - ctx.min_bootstrap_level >= 10
    v = np.random.default_rng(2).uniform(-1, 1, ctx.slots)
    out = ctx.bootstrap(ctx.encrypt(v, pk))
    assert out.level == ctx.max_level
    assert_precision(ctx.decrypt(out, sk), v, 20, 15)
    y = out * out
    assert_precision(ctx.decrypt(y, sk), v * v, 19)


def test_full_size_complex_values(full):
    ctx, sk, pk, _ = full
    rng = np.random.default_rng(5)
    v = rng.uniform(-1, 1, ctx.slots) + 1j * rng.uniform(-1, 1, ctx.slots)
    out = ctx.bootstrap(ctx.encrypt(v, pk))
    assert out.is_complex and out.level == ctx.max_level
    assert_precision(ctx.decrypt(out, sk), v, 20, 15)


def test_full_size_real_pair(full):
    ctx, sk, pk, _ = full
    rng = np.random.default_rng(6)
    vals = [rng.uniform(-1, 1, ctx.slots) for _ in range(2)]
    outs = ctx.bootstrap_many([ctx.encrypt(v, pk) for v in vals])
    for o, v in zip(outs, vals):
        assert not o.is_complex and o.level == ctx.max_level
        assert_precision(ctx.decrypt(o, sk), v, 20, 15)


def test_full_size_sparse_slots(full):
    ctx, sk, pk, _ = full
    rng = np.random.default_rng(4)
    v = rng.uniform(-1, 1, 4096)
    out = ctx.bootstrap(ctx.encrypt(v, pk, sparse=True), slots=4096)
    assert out.level == ctx.max_level
    assert_precision(ctx.decrypt(out, sk), np.tile(v, ctx.slots // 4096), 20)


def test_full_size_ten_bootstraps(full):
    ctx, sk, pk, _ = full
    v = np.random.default_rng(3).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(v, pk)
    for _ in range(10):
        ct = ctx.bootstrap(ctx.drop_level(ct, ctx.min_bootstrap_level))
    assert ct.level == ctx.max_level
    assert_precision(ctx.decrypt(ct, sk), v, 19, what=" after 10 bootstraps")


def test_full_size_on_32_bit_words(gpu):
    """N16_boot32 (32-bit words, message levels alternating pairs and single primes, 128-bit):
    at least 13 levels left after a bootstrap and at least 20 bits of mean precision, real and
    complex values."""
    if gpu == "cpu":
        pytest.skip("N = 2^16 bootstrapping runs on the GPU only (too slow for the CPU self-check)")
    ctx, sk, pk, _ = side("N16_boot32", gpu)
    assert ctx.slots == 2**15 and ctx.max_level - ctx.min_bootstrap_level >= 13
    rng = np.random.default_rng(5)
    v = rng.uniform(-1, 1, ctx.slots)
    out = ctx.bootstrap(ctx.encrypt(v, pk))
    assert out.level == ctx.max_level
    assert_precision(ctx.decrypt(out, sk), v, 20, 15)
    assert_precision(ctx.decrypt(out * out, sk), v * v, 19)
    z = rng.uniform(-1, 1, ctx.slots) + 1j * rng.uniform(-1, 1, ctx.slots)
    assert_precision(ctx.decrypt(ctx.bootstrap(ctx.encrypt(z, pk)), sk), z, 20)
