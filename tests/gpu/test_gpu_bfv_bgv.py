"""BFV and BGV, CPU vs GPU: with the same fixed sampler key, contexts on "cpu" and on the GPU
produce bit-identical keys and ciphertext polynomials (and BGV factors) after encryption,
plaintext/scalar operations, products (BFV's Q u R multiplication, BGV's with modulus switching),
rotations, the row swap, hoisted rotations and modulus switching; decryptions and noise budgets
are identical and equal the numpy reference. Plus the paper sets at full size on the GPU.

Skipped without a GPU by this directory's conftest; EMBER_EQUIV_DEVICE=cpu runs it CPU against CPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from ember import bfv, bgv, ring

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from intref import centered, rot_rows
from switches import SETTINGS, on_gpu

KEY = bytes(32)
SCHEMES = {"bfv": bfv, "bgv": bgv}
PARAMS = {
    # one prime per digit, one special prime (the presets' layout)
    "bfv_N12": ("bfv", {"log_n": 12, "q_bits": (40, 40, 40), "special_bits": (45,)}),
    # two primes per digit, two special primes: fast conversions in ModUp / ModDown
    "bfv_N13_k2": (
        "bfv",
        {"log_n": 13, "q_bits": (45,) * 4, "special_bits": (50, 50), "dnum": 2},
    ),
    "bgv_N12": ("bgv", {"log_n": 12, "q_bits": (50, 36, 36, 36), "special_bits": (50,)}),
    "bgv_N13_k2": (
        "bgv",
        {"log_n": 13, "q_bits": (50,) + (36,) * 4, "special_bits": (50, 50), "dnum": 3},
    ),
}


class Side:
    def __init__(self, scheme, params, device):
        self.ctx = SCHEMES[scheme].Context(params, device=device)
        self.ctx._sampler = ring.Sampler(KEY)
        self.sk = self.ctx.keygen()
        self.pk = self.ctx.public_key(self.sk)
        self.ek = self.ctx.eval_keys(self.sk, rotations=[1, 2, 4, -7], row_swap=True)
        self.ctx.set_eval_keys(self.ek)

    def reseed(self, nonce):
        self.ctx._sampler = ring.Sampler(KEY, nonce)


@pytest.fixture(scope="module", params=list(PARAMS))
def pair(request, gpu):
    scheme, kw = PARAMS[request.param]
    p = SCHEMES[scheme].Params(**kw, insecure=True)
    return scheme, Side(scheme, p, "cpu"), Side(scheme, p, gpu)


def in_form(ct, form):
    """The same ciphertext in `form` (BFV keeps its ciphertexts in coefficient form)."""
    return type(ct)(ct._ctx, ct._ctx._raw.to_form(ct._raw, form), ct.batched)


def same_ct(c, g, what):
    assert g.level == c.level and g._raw.size == c._raw.size and g.form == c.form, what
    assert g._raw.factor == c._raw.factor, what
    for i in range(c._raw.size):
        np.testing.assert_array_equal(
            g._raw.poly(i).to_numpy(), c._raw.poly(i).to_numpy(), err_msg=f"{what}: poly {i}"
        )


def test_keys_identical(pair):
    _, cpu, gpu = pair
    np.testing.assert_array_equal(gpu.sk._raw.s.to_numpy(), cpu.sk._raw.s.to_numpy())
    np.testing.assert_array_equal(gpu.pk._raw.b.to_numpy(), cpu.pk._raw.b.to_numpy())
    for g in [0, *sorted(cpu.ek.galois)]:
        kc = cpu.ek.relin if g == 0 else cpu.ek.galois[g]
        kg = gpu.ek.relin if g == 0 else gpu.ek.galois[g]
        for j in range(kc.dnum):
            np.testing.assert_array_equal(
                gpu.ctx._raw.switch_key_part(kg, j).to_numpy(),
                cpu.ctx._raw.switch_key_part(kc, j).to_numpy(),
            )


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_operations_bit_identical(pair, setting):
    """Under every backend option setting of switches.py on the GPU (in-process)."""
    _, cpu, gpu = pair
    t = cpu.ctx.plain_modulus
    rng = np.random.default_rng(5)
    a = rng.integers(-(t // 2), t // 2, cpu.ctx.slots)
    b = rng.integers(-(t // 2), t // 2, cpu.ctx.slots)
    with on_gpu(gpu.ctx.device, setting):
        outs = [operations(side, a, b) for side in (cpu, gpu)]
    c, g = outs
    for k in c:
        same_ct(c[k], g[k], f"{setting}: {k}")
        dc = cpu.ctx.decrypt(c[k], cpu.sk)
        np.testing.assert_array_equal(gpu.ctx.decrypt(g[k], gpu.sk), dc, err_msg=k)
        assert gpu.ctx.noise_budget(g[k], gpu.sk) == cpu.ctx.noise_budget(c[k], cpu.sk), k
    dec = {k: cpu.ctx.decrypt(c[k], cpu.sk) for k in c}
    np.testing.assert_array_equal(dec["mul2"], centered(a * b * a, t))
    np.testing.assert_array_equal(dec["plain"], centered((a + b) * b - 5, t))
    np.testing.assert_array_equal(dec["rot_neg"], rot_rows(a, -7))
    np.testing.assert_array_equal(dec["mixed"], centered(a + a * b, t))


def operations(side, a, b) -> dict:
    """Every operation of the comparison on one side, from fixed seeds."""
    side.reseed(77)
    ctx = side.ctx
    x, y = ctx.encrypt(a, side.pk), ctx.encrypt(b, side.sk)
    pt = ctx.encode(b)
    r = {
        "x": x,
        "y": y,
        "add": x + y,
        "sub": x - y,
        "plain": (x + pt) * pt - 5,
        "scalar": 3 * x + 11,
        "mul": x * y,
        "mul2": (x * y) * x,
        "rot": x.rotate(1),
        "rot_fallback": x.rotate(3),
        "rot_neg": x.rotate(-7),
        "swap": x.swap_rows(),
        "mod_switch": x.mod_switch(0),
        "mixed": x.mod_switch() + x * y,
        # eval-form operands: BGV's only form, BFV's path before its ciphertexts stayed in
        # coefficient form (mixed forms meet in eval form)
        "mul_eval": in_form(x, "eval") * in_form(y, "eval"),
        "rot_eval": in_form(x, "eval").rotate(1),
        "mul_mixed": in_form(x, "eval") * y,
    }
    for k, o in zip([1, 2, 0], ctx.rotate_many(x, [1, 2, 0])):
        r[f"hoisted{k}"] = o
    return r


@pytest.mark.parametrize(
    "scheme,name", [(s, n) for s in SCHEMES for n in SCHEMES[s].Params.presets()]
)
def test_paper_sets_on_gpu(gpu, scheme, name):
    """Every preset at full size on the GPU: x*y + 5x - rot(x, 1) exactly, and a product chain
    to the BGV depth (all levels)."""
    mod = SCHEMES[scheme]
    ctx = mod.Context(name, device=gpu)
    sk = ctx.keygen()
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1]))
    t = ctx.plain_modulus
    rng = np.random.default_rng(9)
    a = rng.integers(-(t // 2), t // 2, ctx.slots)
    b = rng.integers(-(t // 2), t // 2, ctx.slots)
    x, y = ctx.encrypt(a, ctx.public_key(sk)), ctx.encrypt(b, sk)
    np.testing.assert_array_equal(
        ctx.decrypt(x * y + 5 * x - x.rotate(1), sk), centered(a * b + 5 * a - rot_rows(a, 1), t)
    )
    if scheme == "bgv":
        z, ref = x, a.astype(object)
        for _ in range(ctx.max_level):
            z, ref = z * x, ref * a % t
        assert z.level == 0
        np.testing.assert_array_equal(ctx.decrypt(z, sk), centered(ref, t))


@pytest.mark.parametrize("q_bits", [(50, 45), (50, 45, 45)], ids=["Q2", "Q3"])
@pytest.mark.parametrize("scheme", ["bgv", "bfv"])
@pytest.mark.parametrize("log_n", [10, 11, 12, 13, 14])
def test_key_switching_under_every_ntt_schedule(gpu, scheme, log_n, q_bits):
    """Products and rotations under every CUDA NTT schedule: their ModUp reads one-prime digits in
    the NTT's first load (lifted input), their ModDown converts from its one special prime in the
    NTT's first load and fuses its division into the last kernel, and BFV's product transforms its
    four operands out of place in one launch; a mixed batch (FP64-path and integer-path primes).
    With two primes the ModDown's 2 x 2 rows take the cluster transform with the map, with three
    the warp-shuffle one, whose first kernel is a per-stage one below N = 2^11. Bit-identical to
    the CPU."""
    import ember
    from ember import _ember

    p = SCHEMES[scheme].Params(log_n=log_n, q_bits=q_bits, special_bits=(55,), insecure=True)
    t = p.plain_modulus
    rng = np.random.default_rng(log_n)
    a = rng.integers(-(t // 2), t // 2, p.n)
    b = rng.integers(-(t // 2), t // 2, p.n)
    sides = [Side(scheme, p, "cpu"), Side(scheme, p, gpu)]
    inputs = []
    for side in sides:
        side.reseed(3)
        inputs.append((side.ctx.encrypt(a, side.pk), side.ctx.encrypt(b, side.sk)))
    (cx, cy), (gx, gy) = inputs

    def ops(x, y):
        ex, ey = in_form(x, "eval"), in_form(y, "eval")
        return {
            "mul": x * y,
            "rot": x.rotate(1),
            "rot_neg": x.rotate(-7),
            "mul_eval": ex * ey,
            "rot_eval": ex.rotate(1),
        }

    expected = ops(cx, cy)
    for v in list(_ember.ntt_variants(gpu)) + ["auto"]:
        with ember.using_backend_options(gpu, ntt_variant=v):
            got = ops(gx, gy)
        for k, want in expected.items():
            same_ct(want, got[k], f"{v}: {k}")
    np.testing.assert_array_equal(
        sides[0].ctx.decrypt(expected["mul"], sides[0].sk), centered(a * b, t)
    )
