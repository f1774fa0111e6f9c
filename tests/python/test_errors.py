"""Bad inputs raise typed ember errors (which are also the matching builtins) with useful messages."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import ring
from ringref import distinct_primes

N = 32


@pytest.fixture(scope="module")
def setup():
    primes = distinct_primes([50, 40, 61], N)
    ctx, basis = ring.make_ring(N, primes)
    return ctx, basis, primes


def test_error_hierarchy():
    assert issubclass(ember.ParameterError, ember.Error)
    assert issubclass(ember.ParameterError, ValueError)
    assert issubclass(ember.MismatchError, ember.Error)
    assert issubclass(ember.MismatchError, ValueError)
    assert issubclass(ember.DeviceError, ember.Error)
    assert issubclass(ember.DeviceError, RuntimeError)
    assert issubclass(ember.DeviceMemoryError, ember.DeviceError)
    assert issubclass(ember.DeviceMemoryError, MemoryError)
    assert issubclass(ember.MissingKeyError, KeyError)
    assert issubclass(ember.SerializationError, ValueError)


# ---------------------------------------------------------------------------------------------
# Ring parameters


def test_degree_not_power_of_two():
    q = ring.generate_ntt_primes(40, 128, 1)[0]
    for n in (100, 0, 3, 96):
        with pytest.raises(ember.ParameterError, match="power of two") as ei:
            ring.RingContext.create(n, [q])
        assert isinstance(ei.value, ValueError)
        assert str(n) in str(ei.value)


def test_degree_out_of_range():
    q = ring.generate_ntt_primes(40, 1 << 17, 1)[0]
    for n in (2, 8, 1 << 18):
        with pytest.raises(ember.ParameterError, match="range"):
            ring.RingContext.create(n, [q])


def test_modulus_not_ntt_friendly():
    # A prime that is not 1 mod 2N, and a composite that is.
    with pytest.raises(ember.ParameterError, match="NTT-friendly") as ei:
        ring.RingContext.create(16, [2147483647])
    assert "2147483647" in str(ei.value)
    q = ring.generate_ntt_primes(40, 16, 1)[0]
    composite = (1 << 39) + 1  # = 1 mod 32, divisible by 3
    assert composite % 32 == 1 and composite % 3 == 0
    with pytest.raises(ember.ParameterError, match="NTT-friendly"):
        ring.RingContext.create(16, [q, composite])
    # 97 = 3 * 32 + 1 is NTT-friendly for N = 16 but not for N = 2^16.
    ring.RingContext.create(16, [97])
    with pytest.raises(ember.ParameterError, match="NTT-friendly"):
        ring.RingContext.create(1 << 16, [97])


def test_modulus_too_large_or_empty():
    with pytest.raises(ember.ParameterError):
        ring.RingContext.create(16, [(1 << 62) + 1])
    with pytest.raises(ember.ParameterError):
        ring.RingContext.create(16, [])
    with pytest.raises(ember.ParameterError):
        ring.generate_ntt_primes(62, 16, 1)
    with pytest.raises(ember.ParameterError, match="NTT-friendly primes"):
        ring.generate_ntt_primes(20, 1 << 17, 50)
    with pytest.raises(ember.ParameterError):
        ring.primitive_root_2n(2147483647, 16)


def test_repeated_primes():
    q1, q2 = ring.generate_ntt_primes(45, 64, 2)
    with pytest.raises(ember.ParameterError, match="twice") as ei:
        ring.RingContext.create(64, [q1, q2, q1])
    assert str(q1) in str(ei.value)


def test_basis_ids(setup):
    ctx, _, _ = setup
    with pytest.raises(ember.ParameterError, match="out of range"):
        ring.RnsBasis(ctx, [0, 3])
    with pytest.raises(ember.ParameterError, match="twice"):
        ring.RnsBasis(ctx, [1, 1])
    with pytest.raises(ember.ParameterError):
        ring.RnsBasis(ctx, [])
    with pytest.raises(ember.MismatchError):
        ring.RnsBasis(ctx, [0, 1]).concat(ring.RnsBasis(ctx, [1]))
    other = ring.RingContext.create(N, [ctx.prime(i) for i in range(3)])
    with pytest.raises(ember.MismatchError):
        ring.RnsBasis(ctx, [0]).concat(ring.RnsBasis(other, [1]))


# ---------------------------------------------------------------------------------------------
# Building polynomials


def test_from_numpy_wrong_shape(setup):
    _, basis, _ = setup
    for shape in [(2, N), (3, N + 1), (3, N // 2), (N, 3)]:
        with pytest.raises(ember.ParameterError, match="shape") as ei:
            ring.RnsPoly.from_numpy(basis, np.zeros(shape, dtype=np.uint64))
        assert "(3, 32)" in str(ei.value)
    with pytest.raises(ember.ParameterError, match="limbs, N"):
        ring.poly(basis, np.zeros(3 * N, dtype=np.uint64))
    with pytest.raises(ember.ParameterError):
        ring.poly(basis, np.zeros((3, N), dtype=np.float64))
    with pytest.raises(ember.ParameterError):
        ring.RnsPoly.from_signed(basis, np.zeros(N + 1, dtype=np.int64))
    with pytest.raises(ember.ParameterError):
        ring.RnsPoly.zeros(basis, "fourier", "cpu")


def test_unreduced_values(setup):
    _, basis, primes = setup
    a = np.zeros((3, N), dtype=np.uint64)
    a[1, 5] = primes[1]
    with pytest.raises(ember.ParameterError, match="not reduced") as ei:
        ring.poly(basis, a)
    msg = str(ei.value)
    assert "limb 1" in msg and "word 5" in msg and str(primes[1]) in msg
    a[1, 5] = 0
    a[2, 0] = np.uint64(2**64 - 1)
    with pytest.raises(ember.ParameterError, match="not reduced"):
        ring.RnsPoly.from_numpy(basis, a, "eval", "cpu")
    with pytest.raises(ember.ParameterError, match="non-negative"):
        ring.poly(basis, -np.ones((3, N), dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# Operand mismatches


def test_mismatched_bases_and_forms(setup):
    ctx, basis, _ = setup
    sub = ring.RnsBasis(ctx, [0, 1])
    a = ring.RnsPoly.zeros(basis, "coeff", "cpu")
    b = ring.RnsPoly.zeros(sub, "coeff", "cpu")
    e = ring.RnsPoly.zeros(basis, "eval", "cpu")
    with pytest.raises(ember.MismatchError, match="bases"):
        a.add(b)
    with pytest.raises(ember.MismatchError):
        a.sub(b)
    with pytest.raises(ember.MismatchError, match="forms") as ei:
        a.add(e)
    assert isinstance(ei.value, ValueError)
    assert "ntt" in str(ei.value)
    with pytest.raises(ember.MismatchError):
        a - e
    with pytest.raises(ember.MismatchError):
        e.multiply(ring.RnsPoly.zeros(sub, "eval", "cpu"))
    # Same primes, other context object: a different ring.
    other = ring.RnsBasis.all(ring.RingContext.create(N, [ctx.prime(i) for i in range(3)]))
    with pytest.raises(ember.MismatchError):
        a + ring.RnsPoly.zeros(other, "coeff", "cpu")


def test_multiply_needs_eval_form(setup):
    _, basis, _ = setup
    a = ring.RnsPoly.zeros(basis, "coeff", "cpu")
    with pytest.raises(ember.MismatchError, match="eval"):
        a.multiply(a)
    with pytest.raises(ember.MismatchError):
        a * a
    with pytest.raises(ember.MismatchError, match="eval"):
        a.copy().multiply_accumulate_inplace(a, a)
    e = ring.RnsPoly.zeros(basis, "eval", "cpu")
    with pytest.raises(ember.MismatchError):
        e.copy().multiply_accumulate_inplace(e, a)


def test_ntt_twice_and_intt_twice(setup):
    _, basis, _ = setup
    a = ring.RnsPoly.zeros(basis, "coeff", "cpu")
    e = a.ntt()
    with pytest.raises(ember.MismatchError, match="already in eval"):
        e.ntt()
    with pytest.raises(ember.MismatchError):
        e.ntt_inplace()
    with pytest.raises(ember.MismatchError, match="already in coeff"):
        a.intt()
    with pytest.raises(ember.MismatchError):
        a.intt_inplace()
    # A failed transform leaves the polynomial as it was.
    assert e.form == "eval" and a.form == "coeff"


def test_automorphism_exponent(setup):
    _, basis, _ = setup
    a = ring.RnsPoly.zeros(basis, "coeff", "cpu")
    for k in (0, 2, 4, 2 * N - 2):
        with pytest.raises(ember.ParameterError, match="odd"):
            a.automorphism(k)
    for k in (2 * N + 1, 4 * N + 3):
        with pytest.raises(ember.ParameterError):
            a.automorphism(k)
    with pytest.raises(ember.ParameterError):
        a.ntt().automorphism(6)


def test_multiply_scalar_per_limb_count(setup):
    _, basis, _ = setup
    a = ring.RnsPoly.zeros(basis, "coeff", "cpu")
    with pytest.raises(ember.ParameterError, match="one per limb"):
        a.multiply_scalar_per_limb([1, 2])
    with pytest.raises(ember.ParameterError):
        a.multiply_scalar_per_limb([1, 2, 3, 4])


# ---------------------------------------------------------------------------------------------
# Devices


def test_unknown_device_string(setup):
    _, basis, _ = setup
    for spec in ("tpu", "cuda:x", "CPU", "cuda:", "gpu0", "cuda:12345"):
        with pytest.raises(ember.ParameterError, match="unknown device"):
            ring.RnsPoly.zeros(basis, "coeff", spec)
    with pytest.raises(ember.ParameterError):
        ember.resolve_device("tpu")
    with pytest.raises(ember.ParameterError):
        ember.set_default_device("nowhere")
    with pytest.raises(ember.ParameterError):
        ring.poly(basis, np.zeros((3, N), dtype=np.uint64), device="tpu")


@pytest.mark.skipif(ember.backends() != ["cpu"], reason="only meaningful in a CPU-only build")
def test_cuda_in_cpu_only_build(setup):
    _, basis, _ = setup
    assert ember._ember.cuda_devices() == []
    assert [d.kind for d in ember.devices()] == ["cpu"]
    assert ember.resolve_device("auto") == "cpu"
    for spec in ("cuda", "cuda:0", "gpu"):
        with pytest.raises(ember.DeviceError, match="CUDA") as ei:
            ring.RnsPoly.zeros(basis, "coeff", spec)
        assert isinstance(ei.value, RuntimeError)
        assert "cpu" in str(ei.value)  # the message says what to use instead
    with pytest.raises(ember.DeviceError):
        ring.poly(basis, np.zeros((3, N), dtype=np.uint64)).to("cuda")
    with pytest.raises(ember.DeviceError):
        ring.Sampler(bytes(32)).uniform(basis, "cuda")
    with pytest.raises(ember.DeviceError):
        ring.to_rns([0] * N, basis, device="cuda")


@pytest.mark.skipif(bool(ember._ember.cuda_devices()), reason="a GPU is visible")
def test_cuda_device_without_a_visible_gpu(setup):
    # Whether or not the CUDA backend is compiled in, asking for a GPU that is not there is a
    # DeviceError, never a crash.
    _, basis, _ = setup
    assert ember.resolve_device("auto") == "cpu"
    for spec in ("cuda", "cuda:0", "cuda:3"):
        with pytest.raises(ember.DeviceError):
            ring.RnsPoly.zeros(basis, "coeff", spec)
    with pytest.raises(ember.DeviceError):
        ring.poly(basis, np.zeros((3, N), dtype=np.uint64), device="cuda")
    with pytest.raises(ember.DeviceError):
        ring.RnsPoly.zeros(basis, "coeff", "cpu").to("cuda:1")
