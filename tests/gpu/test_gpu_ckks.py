"""CKKS, CPU vs GPU: with the same fixed sampler key, a context on "cpu" and one on the GPU with the
same parameters produce bit-identical keys and ciphertext polynomials after encryption, additions,
products (relinearized and rescaled), rotations (own keys and the power-of-two fallback),
conjugation and hoisted rotations, and identical decryptions. Plus a full-size sanity check of the
N = 2^16 preset with the fewest levels (N16_L35, formerly N16_L34) on the GPU (precision within
ckksref's bound).

Skipped without a GPU by this directory's conftest; EMBER_EQUIV_DEVICE=cpu runs it CPU against CPU
(a self-check of the test code).
"""

from __future__ import annotations

import sys
from pathlib import Path

import ember
import numpy as np
import pytest
from ember import ckks, ring
from ember.errors import ParameterError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ckksref import bound_bits, check, complex_uniform, rot, uniform
from switches import KEY_SWITCH_SETTINGS, on_gpu

KEY = bytes(32)  # the sampler key of every context of the comparison


def _test_params(log_n, scale_bits, levels, special_mods, dnum=None):
    """A small insecure set: q_0 and the special primes of 60 bits."""
    return ckks.Params(
        log_n=log_n,
        scale_bits=scale_bits,
        levels=levels,
        first_mod_bits=60,
        special_mods=special_mods,
        special_mod_bits=60,
        dnum=dnum,
        insecure=True,
    )


PARAMS = {
    # alpha = 1 (one prime per digit), one special prime: exact ModUp/ModDown conversions.
    "N12_L4_k1": _test_params(12, 40, 4, 1),
    # alpha = 2, three digits, two special primes: fast base conversion in ModUp and ModDown.
    "N13_L5_k2": _test_params(13, 40, 5, 2, dnum=3),
    # 50- and 51-bit primes and ten one-prime digits: the FP64 path's largest primes (mixed with
    # integer-path ones), whose fused key product sums are recentered every 7 digits.
    "N12_L9_s50": _test_params(12, 50, 9, 1),
    # 20-bit primes: the smallest the parameters allow (the FP64 sums never recenter).
    "N12_L3_s20": _test_params(12, 20, 3, 1),
}


class Side:
    """A context on one device with keys drawn from the fixed sampler key."""

    def __init__(self, params, device):
        self.ctx = ckks.Context(params, device=device)
        self.ctx._sampler = ring.Sampler(KEY)
        self.sk = self.ctx.keygen()
        self.pk = self.ctx.public_key(self.sk)
        # Powers of two (sum_slots, the fallback) and two steps with their own keys.
        rotations = [1 << i for i in range(params.log_n - 1)] + [5, -3]
        self.ek = self.ctx.eval_keys(self.sk, rotations=rotations, conjugation=True)
        self.ctx.set_eval_keys(self.ek)

    def reseed(self, nonce: int):
        """Same randomness on both sides for the encryptions of one test, whatever ran before."""
        self.ctx._sampler = ring.Sampler(KEY, nonce)

    def dec(self, ct, complex=None):
        return self.ctx.decrypt(ct, self.sk, complex=complex)


@pytest.fixture(scope="module", params=list(PARAMS))
def pair(request, gpu):
    p = PARAMS[request.param]
    return p, Side(p, "cpu"), Side(p, gpu)


def same_poly(cpu_poly, gpu_poly, what):
    np.testing.assert_array_equal(gpu_poly.to_numpy(), cpu_poly.to_numpy(), err_msg=what)


def same_ct(c, g, what):
    """Bit-identical ciphertexts (every polynomial, level, scale) and identical decryptions."""
    assert g.level == c.level, what
    assert g.scale == c.scale, what
    assert g.is_complex == c.is_complex, what
    assert g._raw.size == c._raw.size, what
    for i in range(c._raw.size):
        same_poly(c._raw.poly(i), g._raw.poly(i), f"{what}: polynomial {i}")


def same_dec(cpu, gpu, c, g, what):
    np.testing.assert_array_equal(gpu.dec(g), cpu.dec(c), err_msg=what)


def encrypt_both(cpu, gpu, values, nonce, key="pk", level=None):
    cpu.reseed(nonce)
    gpu.reseed(nonce)
    c = cpu.ctx.encrypt(values, getattr(cpu, key), level=level)
    g = gpu.ctx.encrypt(values, getattr(gpu, key), level=level)
    same_ct(c, g, f"encrypt ({key})")
    return c, g


def test_contexts_and_keys_identical(pair, gpu):
    p, cpu, gpu_side = pair
    assert cpu.ctx.device == "cpu" and gpu_side.ctx.device == gpu
    assert cpu.ctx._raw.params_id == gpu_side.ctx._raw.params_id
    assert [cpu.ctx.scale_at(lv) for lv in range(p.levels + 1)] == [
        gpu_side.ctx.scale_at(lv) for lv in range(p.levels + 1)
    ]
    same_poly(cpu.sk._raw.s, gpu_side.sk._raw.s, "secret key")
    same_poly(cpu.pk._raw.b, gpu_side.pk._raw.b, "public key b")
    assert cpu.pk._raw.seed == gpu_side.pk._raw.seed
    assert cpu.pk._raw.seed_nonce == gpu_side.pk._raw.seed_nonce
    assert sorted(cpu.ek.galois) == sorted(gpu_side.ek.galois)
    keys = [(cpu.ek.relin, gpu_side.ek.relin)] + [
        (cpu.ek.galois[g], gpu_side.ek.galois[g]) for g in sorted(cpu.ek.galois)
    ]
    for kc, kg in keys:
        assert kc.dnum == kg.dnum and kc.galois == kg.galois
        for j in range(kc.dnum):
            same_poly(
                cpu.ctx._raw.switch_key_part(kc, j),
                gpu_side.ctx._raw.switch_key_part(kg, j),
                f"switch key (galois {kc.galois}) digit {j}",
            )


@pytest.mark.parametrize("key", ["pk", "sk"])
def test_encrypt_decrypt(pair, key):
    p, cpu, gpu = pair
    rng = np.random.default_rng(1)
    for nonce, values in (
        (1000, uniform(rng, p.slots)),
        (2000, complex_uniform(rng, p.slots)),
        (3000, uniform(rng, 100)),
    ):
        c, g = encrypt_both(cpu, gpu, values, nonce, key)
        same_dec(cpu, gpu, c, g, f"decrypt ({key})")
        want = values if len(values) == p.slots else np.pad(values, (0, p.slots - len(values)))
        check(gpu.dec(g), want, bound_bits(p), f"gpu encrypt {key}")
    c, g = encrypt_both(cpu, gpu, uniform(rng, p.slots), 4000, key, level=1)
    same_dec(cpu, gpu, c, g, f"decrypt at level 1 ({key})")


def test_add_sub_negate(pair):
    p, cpu, gpu = pair
    rng = np.random.default_rng(2)
    x, y = uniform(rng, p.slots), uniform(rng, p.slots)
    cx, gx = encrypt_both(cpu, gpu, x, 5000)
    cy, gy = encrypt_both(cpu, gpu, y, 6000)
    cl, gl = encrypt_both(cpu, gpu, y, 7000, level=2)
    for what, f in (
        ("ct+ct", lambda a, b, low: a + b),
        ("ct-ct", lambda a, b, low: a - b),
        ("-ct", lambda a, b, low: -a),
        ("ct+scalar", lambda a, b, low: a + 0.25),
        ("ct+array", lambda a, b, low: a + y),
        ("ct+plaintext", lambda a, b, low: a + a._ctx.encode(y)),
        ("ct+ct (other level)", lambda a, b, low: a + low),
    ):
        c, g = f(cx, cy, cl), f(gx, gy, gl)
        same_ct(c, g, what)
        same_dec(cpu, gpu, c, g, what)


@pytest.mark.parametrize("setting", list(KEY_SWITCH_SETTINGS))
def test_multiply(pair, setting):
    """Under every key-switching option setting of switches.py on the GPU (in-process)."""
    with on_gpu(pair[2].ctx.device, setting):
        multiply_bit_identical(*pair)


def multiply_bit_identical(p, cpu, gpu):
    rng = np.random.default_rng(3)
    x, y = uniform(rng, p.slots), uniform(rng, p.slots)
    cx, gx = encrypt_both(cpu, gpu, x, 8000)
    cy, gy = encrypt_both(cpu, gpu, y, 9000)
    for what, f in (
        ("ct*ct", lambda a, b: a * b),
        ("square", lambda a, b: a._ctx.square(a)),
        ("ct*scalar", lambda a, b: a * 0.75),
        ("ct*integer", lambda a, b: a * 3),
        ("ct*array", lambda a, b: a * y),
        ("ct*complex", lambda a, b: a * (0.5 - 0.25j)),
        ("ct*ct*ct", lambda a, b: (a * b) * a),
    ):
        c, g = f(cx, cy), f(gx, gy)
        same_ct(c, g, what)
        same_dec(cpu, gpu, c, g, what)
    c, g = cx * cy, gx * gy
    assert g.level == p.levels - 1 and g.scale == gpu.ctx.scale_at(g.level)
    check(gpu.dec(g), x * y, bound_bits(p, 1), "gpu ct*ct")
    # A chain to level 0.
    c, g, want = cx, gx, x
    for k in range(p.levels):
        c, g, want = c * c, g * g, want * want
        same_ct(c, g, f"squaring chain, level {g.level}")
        check(gpu.dec(g), want, bound_bits(p, k + 1), "gpu squaring chain")
    same_dec(cpu, gpu, c, g, "squaring chain")


@pytest.mark.parametrize("setting", list(KEY_SWITCH_SETTINGS))
def test_rotate_and_conjugate(pair, setting):
    """Under every key-switching option setting of switches.py on the GPU (in-process)."""
    with on_gpu(pair[2].ctx.device, setting):
        rotate_and_conjugate_bit_identical(*pair)


def rotate_and_conjugate_bit_identical(p, cpu, gpu):
    rng = np.random.default_rng(4)
    z = complex_uniform(rng, p.slots)
    cz, gz = encrypt_both(cpu, gpu, z, 10000)
    # Own keys (1, 2, 4, 5, -3), the power-of-two fallback (3 = 1 + 2, 7, 100) and step 0.
    for s in (1, 2, 4, 5, -3, 3, 7, 100, 0):
        c, g = cz.rotate(s), gz.rotate(s)
        same_ct(c, g, f"rotate {s}")
        same_dec(cpu, gpu, c, g, f"rotate {s}")
    check(gpu.dec(gz.rotate(5)), rot(z, 5), bound_bits(p, keyswitches=1), "gpu rotate")
    c, g = cz.conj(), gz.conj()
    same_ct(c, g, "conj")
    same_dec(cpu, gpu, c, g, "conj")
    check(gpu.dec(g), np.conj(z), bound_bits(p, keyswitches=1), "gpu conj")
    # After a product (lower level, rescaled ciphertext).
    c, g = (cz * cz).rotate(1).conj(), (gz * gz).rotate(1).conj()
    same_ct(c, g, "rotate and conj after ct*ct")


def test_rotate_many(pair):
    p, cpu, gpu = pair
    rng = np.random.default_rng(5)
    x = uniform(rng, p.slots)
    cx, gx = encrypt_both(cpu, gpu, x, 11000)
    steps = [0, 1, 2, 4, 5, -3, 1]
    cs, gs = cpu.ctx.rotate_many(cx, steps), gpu.ctx.rotate_many(gx, steps)
    for s, c, g in zip(steps, cs, gs):
        same_ct(c, g, f"rotate_many step {s}")
        same_dec(cpu, gpu, c, g, f"rotate_many step {s}")
        np.testing.assert_array_equal(gpu.dec(g), gpu.dec(gx.rotate(s)))
    # At a lower level.
    cs, gs = cpu.ctx.rotate_many(cx * 0.5, steps), gpu.ctx.rotate_many(gx * 0.5, steps)
    for s, c, g in zip(steps, cs, gs):
        same_ct(c, g, f"rotate_many step {s} after ct*scalar")


def test_poly_eval_and_sum(pair):
    p, cpu, gpu = pair
    rng = np.random.default_rng(6)
    x = uniform(rng, p.slots)
    cx, gx = encrypt_both(cpu, gpu, x, 12000)
    coeffs = [0.5, 0.25, -0.125, 0.0625]
    c, g = cpu.ctx.poly_eval(cx, coeffs), gpu.ctx.poly_eval(gx, coeffs)
    same_ct(c, g, "poly_eval")
    same_dec(cpu, gpu, c, g, "poly_eval")
    c, g = cpu.ctx.inner_product(cx, x[::-1].copy()), gpu.ctx.inner_product(gx, x[::-1].copy())
    same_ct(c, g, "inner_product (sum_slots)")


def full_size_preset() -> str:
    """The N = 2^16 preset with the fewest levels (N16_L34, since renamed N16_L35)."""
    names = [
        n
        for n in ckks.Params.presets()
        if ckks.Params.preset(n).log_n == 16 and ckks.Params.preset(n).boot is None
    ]
    return min(names, key=lambda n: ckks.Params.preset(n).levels)


def test_full_size_preset_on_gpu(gpu):
    """The N = 2^16 preset on the GPU: encrypt, multiply, rotate by 1 and 7 (their own keys),
    decrypt. The rotations' slots are checked against numpy exactly (np.roll) first, then their
    precision against ckksref's bound, last (a precision shortfall there is not a GPU fault: the
    CPU gives the same bits; see test_ckks.test_key_switch_adds_only_rounding_error)."""
    name = full_size_preset()
    p = ckks.Params.preset(name)
    ctx = ckks.Context(p, device=gpu)
    ctx._sampler = ring.Sampler(KEY)  # deterministic: the same result on every run and device
    top = p.message_primes
    assert ctx.device == gpu and ctx.slots == 2**15 and ctx.max_level == top
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk, rotations=[1, 7]))
    rng = np.random.default_rng(16)
    x, y = uniform(rng, ctx.slots), uniform(rng, ctx.slots)
    a, b = ctx.encrypt(x, pk), ctx.encrypt(y, pk)
    check(ctx.decrypt(a, sk), x, bound_bits(p), f"{name} encrypt")
    prod = a * b
    assert prod.level == top - 1 and prod.scale == ctx.scale_at(top - 1)
    check(ctx.decrypt(prod, sk), x * y, bound_bits(p, 1), f"{name} ct*ct")
    sq = prod * prod
    assert sq.level == top - 2
    check(ctx.decrypt(sq, sk), (x * y) ** 2, bound_bits(p, 2), f"{name} ct*ct")
    with pytest.raises(ember.MissingKeyError):
        a.rotate(3)  # 3 = 1 + 2: no key for 2
    rotated = [
        (ctx.decrypt(c.rotate(s), sk), rot(want, s), depth)
        for s in (1, 7)
        for c, want, depth in ((a, x, 0), (prod, x * y, 1))
    ]
    for got, want, _ in rotated:  # the right slots, to a loose 2^-10
        np.testing.assert_allclose(got, want, rtol=0, atol=2.0**-10)
    for got, want, depth in rotated:
        check(got, want, bound_bits(p, depth, keyswitches=1), f"{name} rotate")


# ---------------------------------------------------------------- encoding on the device
# The GPU context reads the values in its own memory (numpy input is uploaded first) and runs the
# special FFT, rounding, residues and NTT there (CkksEncodeOps); decoding runs the two-prime CRT
# and the FFT there. Both must equal the CPU backend's words and doubles bit for bit.

ENCODE_PARAMS = _test_params(13, 40, 5, 2, dnum=3)  # Q_5: 60 + 5 x 40 bits


@pytest.fixture(scope="module")
def encoders(gpu):
    return ckks.Context(ENCODE_PARAMS, device="cpu"), ckks.Context(ENCODE_PARAMS, device=gpu)


ENCODE_CASES = {
    # (level, log2 scale or None for the level's standard one, values, sparse)
    "real_top": (5, None, "real", False),
    "complex_l2": (2, None, "complex", False),
    "real_l0": (0, 30, "real", False),
    "short_padded": (3, None, "short", False),
    "sparse": (4, None, "sparse", False),
    "float32": (5, None, "float32", False),
    "scale_2^70": (3, 70, "complex", False),
    "scale_2^150_wide_decode": (5, 150, "real", False),
}


def _encode_values(kind, slots, rng):
    if kind == "complex":
        return rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
    if kind == "short":
        return rng.uniform(-1, 1, 37)
    if kind == "sparse":
        return rng.uniform(-1, 1, 16)
    if kind == "float32":
        return rng.uniform(-1, 1, slots).astype(np.float32)
    return rng.uniform(-1, 1, slots)


@pytest.mark.parametrize("case", list(ENCODE_CASES))
def test_device_encode_and_decode_bit_identical(encoders, case):
    cpu, dev = encoders
    level, scale_bits, kind, _ = ENCODE_CASES[case]
    values = _encode_values(kind, cpu.slots, np.random.default_rng(len(case)))
    scale = None if scale_bits is None else 2.0**scale_bits
    sparse = kind == "sparse"
    c = cpu.encode(values, level, scale, sparse=sparse)
    g = dev.encode(values, level, scale, sparse=sparse)
    same_poly(c._poly, g._poly, f"encode {case}")
    assert g.is_complex == c.is_complex
    for complex_out in (False, True):
        np.testing.assert_array_equal(
            dev.decode(g, complex=complex_out), cpu.decode(c, complex=complex_out), err_msg=case
        )


def test_device_decrypt_bit_identical_at_every_level(encoders):
    cpu, dev = encoders
    for ctx in (cpu, dev):
        ctx._sampler = ring.Sampler(KEY)
    sk_c, sk_g = cpu.keygen(), dev.keygen()
    rng = np.random.default_rng(9)
    values = rng.uniform(-1, 1, cpu.slots) + 1j * rng.uniform(-1, 1, cpu.slots)
    for level in range(cpu.max_level + 1):
        cpu._sampler, dev._sampler = ring.Sampler(KEY, level), ring.Sampler(KEY, level)
        c = cpu.encrypt(values, sk_c, level=level)
        g = dev.encrypt(values, sk_g, level=level)
        same_ct(c, g, f"encrypt at level {level}")
        np.testing.assert_array_equal(
            dev.decrypt(g, sk_g), cpu.decrypt(c, sk_c), err_msg=f"level {level}"
        )


def test_device_encode_errors(encoders):
    _, dev = encoders
    with pytest.raises(ParameterError, match="finite"):
        dev._raw.encode_slots(np.array([1.0, np.nan]), 1, 2.0**40)
    with pytest.raises(ParameterError, match="reaches 2\\^"):
        dev._raw.encode_slots(np.array([1e30]), 0, 2.0**40)
