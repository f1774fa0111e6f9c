"""Big-integer CKKS (HEAAN): BigPoly arithmetic, HE Mul and rotations against a Python big-integer
reference, and the ember.heaan API (encryption, products, rescaling, rotations and conjugation,
serialization, security of the presets)."""

import random
import warnings

import numpy as np
import pytest
from bigref import from_words, to_words
from ember import _ember, heaan
from ember.errors import MismatchError, MissingKeyError, ParameterError, SecurityWarning

N = 64


def signed(v, bits):
    return v - (1 << bits) if v >> (bits - 1) else v


def negacyclic(a, b, mod):
    c = [0] * len(a)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                k = i + j
                if k < len(a):
                    c[k] += x * y
                else:
                    c[k - len(a)] -= x * y
    return [v % mod for v in c]


def big(values, bits, device="cpu"):
    return _ember.BigPoly.from_numpy(to_words(values, bits), bits, device)


@pytest.fixture(scope="module")
def multiplier():
    return _ember.BigMultiplier(_ember.RingContext.create(N, _ember.generate_ntt_primes(30, N, 40)))


@pytest.mark.parametrize("bits", [30, 64, 100, 200])
def test_bigpoly_word_arithmetic_matches_python_integers(bits, multiplier):
    rng = random.Random(bits)
    a = [rng.randrange(1 << bits) for _ in range(N)]
    b = [rng.randrange(1 << bits) for _ in range(N)]
    pa, pb = big(a, bits), big(b, bits)
    mod = 1 << bits
    assert from_words(pa.add(pb).to_numpy()) == [(x + y) % mod for x, y in zip(a, b)]
    assert from_words(pa.sub(pb).to_numpy()) == [(x - y) % mod for x, y in zip(a, b)]
    assert from_words(pa.negate().to_numpy()) == [(-x) % mod for x in a]
    for out in (bits, bits - 7):
        assert from_words(multiplier.multiply(pa, pb, out).to_numpy()) == negacyclic(a, b, 1 << out)
    for r in (1, 5, 63, 64, 65, bits - 1):
        if r < bits:
            expect = [((signed(x, bits) + (1 << (r - 1))) >> r) % (1 << (bits - r)) for x in a]
            assert from_words(pa.shifted(bits - r, 0, r).to_numpy()) == expect
    for left in (1, 63, 64, 70):
        expect = [(signed(x, bits) << left) % (1 << (bits + left)) for x in a]
        assert from_words(pa.shifted(bits + left, left, 0).to_numpy()) == expect
    for width in (bits + 100, bits - 3):
        assert from_words(pa.shifted(width).to_numpy()) == [
            signed(x, bits) % (1 << width) for x in a
        ]


def test_product_wider_than_its_inputs_is_refused(multiplier):
    with pytest.raises(ParameterError, match="exact mod"):
        multiplier.multiply(big([1] * N, 40), big([1] * N, 40), 41)


def rns_to_ints(poly):
    """The residues of an RnsPoly (coeff form) back to integers in [0, P) by CRT."""
    rows = poly.to_numpy()
    primes = poly.basis.primes
    p_all = 1
    for p in primes:
        p_all *= p
    out = []
    for c in range(rows.shape[1]):
        v = 0
        for limb, p in enumerate(primes):
            m = p_all // p
            v += int(rows[limb, c]) * m * pow(m, -1, p)
        out.append(v % p_all)
    return out


def switch_reference(d, key, bits, q_bits):
    """Key switching of d (ints mod 2^bits) by one key half (RnsPoly, NTT form, mod Q^2): d read
    signed times the key mod 2^(bits + log Q), read signed and divided by Q = 2^q_bits with
    rounding."""
    wide = bits + q_bits
    words = [v % (1 << (2 * q_bits)) for v in rns_to_ints(key.intt())]
    prod = negacyclic([signed(v, bits) for v in d], words, 1 << wide)
    return [((signed(v, wide) + (1 << (q_bits - 1))) >> q_bits) % (1 << bits) for v in prod]


def automorphism_reference(a, g, mod):
    """a(X^g) mod X^n + 1 and mod `mod`."""
    n = len(a)
    out = [0] * n
    for i, v in enumerate(a):
        e = i * g % (2 * n)
        if e < n:
            out[e] = v % mod
        else:
            out[e - n] = -v % mod
    return out


def test_he_mul_equals_the_python_big_integer_reference():
    log_q = 120
    ctx = _ember.HeaanContext(N, log_q, _ember.generate_ntt_primes(30, N, 16), "cpu")
    sampler = _ember.Sampler(bytes(range(32)), 0)
    sk = ctx.generate_secret(sampler)
    rk = ctx.generate_relin(sk, sampler)
    rng = random.Random(5)
    delta = 1 << 30
    xs = [rng.randrange(-50, 50) * delta for _ in range(N)]
    ys = [rng.randrange(-50, 50) * delta for _ in range(N)]
    a = ctx.encrypt_secret(big(xs, log_q), sk, sampler)
    b = ctx.encrypt_secret(big(ys, log_q), sk, sampler)
    c = ctx.multiply(a, b, rk)
    # The reference: Karatsuba's tensor product mod 2^bits, then d2 times the key mod
    # 2^(bits + log Q), read signed and divided by Q = 2^log_q with rounding.
    bits, q_bits, mod = log_q, log_q, 1 << log_q
    a0, a1 = from_words(a.c0.to_numpy()), from_words(a.c1.to_numpy())
    b0, b1 = from_words(b.c0.to_numpy()), from_words(b.c1.to_numpy())
    d0 = negacyclic(a0, b0, mod)
    d2 = negacyclic(a1, b1, mod)
    s01 = [(x + y) % mod for x, y in zip(a0, a1)]
    t01 = [(x + y) % mod for x, y in zip(b0, b1)]
    d1 = [(p - x - y) % mod for p, x, y in zip(negacyclic(s01, t01, mod), d0, d2)]
    c0 = [(x + y) % mod for x, y in zip(d0, switch_reference(d2, rk.b, bits, q_bits))]
    c1 = [(x + y) % mod for x, y in zip(d1, switch_reference(d2, rk.a, bits, q_bits))]
    assert from_words(c.c0.to_numpy()) == c0
    assert from_words(c.c1.to_numpy()) == c1
    # and it decrypts to the product of the messages
    m = [signed(v, log_q) for v in from_words(ctx.decrypt(c, sk).to_numpy())]
    expect = [signed(v, 200) for v in negacyclic(xs, ys, 1 << 200)]
    assert max(abs(x - y) for x, y in zip(m, expect)) < delta * delta * 2.0**-10


@pytest.mark.parametrize("bits", [30, 64, 130])
def test_automorphism_matches_python_integers(bits):
    rng = random.Random(bits)
    a = [rng.randrange(1 << bits) for _ in range(N)]
    pa = big(a, bits)
    for g in (5, 25, pow(5, 31, 2 * N), 2 * N - 1, 3):
        got = from_words(pa.automorphism(g).to_numpy())
        assert got == automorphism_reference(a, g, 1 << bits), g
    with pytest.raises(ParameterError, match="odd"):
        pa.automorphism(4)


def test_rotation_key_switch_equals_the_python_big_integer_reference():
    log_q = 120
    ctx = _ember.HeaanContext(N, log_q, _ember.generate_ntt_primes(30, N, 16), "cpu")
    sampler = _ember.Sampler(bytes(range(32)), 1)
    sk = ctx.generate_secret(sampler)
    rng = random.Random(7)
    delta = 1 << 30
    xs = [rng.randrange(-50, 50) * delta for _ in range(N)]
    ct = ctx.encrypt_secret(big(xs, log_q), sk, sampler)
    for g, bits in ((5, log_q), (2 * N - 1, log_q), (pow(5, 3, 2 * N), 90)):
        key = ctx.generate_rotation(sk, g, sampler)
        assert key.galois == g
        a = ct if bits == log_q else ctx.mod_down(ct, bits)
        out = ctx.apply_galois(a, key)
        # The reference: both halves through X -> X^g, then c1(X^g) switched back to s.
        mod = 1 << bits
        c0 = automorphism_reference(from_words(a.c0.to_numpy()), g, mod)
        d = automorphism_reference(from_words(a.c1.to_numpy()), g, mod)
        t0, t1 = switch_reference(d, key.b, bits, log_q), switch_reference(d, key.a, bits, log_q)
        assert from_words(out.c0.to_numpy()) == [(x + y) % mod for x, y in zip(c0, t0)]
        assert from_words(out.c1.to_numpy()) == t1
        # and it decrypts to the message at X^g
        m = [signed(v, bits) for v in from_words(ctx.decrypt(out, sk).to_numpy())]
        expect = [signed(v, bits) for v in automorphism_reference(xs, g, mod)]
        assert max(abs(x - y) for x, y in zip(m, expect)) < 2**20
    relin = ctx.generate_relin(sk, sampler)
    with pytest.raises(MismatchError, match="not a rotation"):
        ctx.apply_galois(ct, relin)
    with pytest.raises(MismatchError, match="not the relinearization key"):
        ctx.multiply(ct, ct, key)
    with pytest.raises(ParameterError, match="odd"):
        ctx.generate_rotation(sk, 6, sampler)


@pytest.fixture(scope="module")
def small():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        params = heaan.Params.preset("test_N10_logQ120", insecure=True)
    ctx = heaan.Context(params, device="cpu")
    sk = ctx.keygen()
    ctx.set_relin_key(ctx.relin_key(sk))
    return ctx, sk, ctx.public_key(sk)


def test_encrypt_multiply_rescale_decrypt(small):
    ctx, sk, pk = small
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, ctx.slots)
    y = rng.uniform(-1, 1, ctx.slots)
    cx, cy = ctx.encrypt(x, pk), ctx.encrypt(y, sk)
    assert np.max(np.abs(ctx.decrypt(cx, sk) - x)) < 2**-13  # scale 2^30, fresh error ~2^13
    z = cx * cy + cx  # the sum brings cx down to the product's modulus
    assert z.bits == 90 and z.scale_bits == 30
    assert np.max(np.abs(ctx.decrypt(z, sk) - (x * y + x))) < 2**-10
    w = z * z  # two levels used of three
    assert w.bits == 60
    assert np.max(np.abs(ctx.decrypt(w, sk) - (x * y + x) ** 2)) < 2**-8
    assert np.max(np.abs(ctx.decrypt(-w - w, sk) + 2 * (x * y + x) ** 2)) < 2**-7


def test_shape_kept_and_phases_reported(small):
    ctx, sk, pk = small
    x = np.arange(12.0).reshape(3, 4) / 16
    cx = ctx.encrypt(x, pk)
    out = ctx.decrypt(cx, sk)
    assert out.shape == (3, 4) and np.max(np.abs(out - x)) < 2**-13
    prod, phases = ctx.multiply_phases(cx, cx)
    assert set(phases) == {"crt", "ntt", "intt", "icrt", "other"}
    assert np.max(np.abs(ctx.decrypt(prod.rescale(), sk) - x * x)) < 2**-10


def test_errors(small):
    ctx, _sk, pk = small
    cx = ctx.encrypt([0.5], pk)
    with pytest.raises(MismatchError, match="scales"):
        cx + ctx.multiply(cx, cx, rescale=False)
    with pytest.raises(ParameterError, match="slots"):
        ctx.encrypt(np.zeros(ctx.slots + 1), pk)
    with pytest.raises(ParameterError, match="level"):
        (((cx * cx) * cx) * cx) * cx
    with pytest.raises(ParameterError, match="expected a heaan.SecretKey"):
        ctx.decrypt(cx, pk)


def test_presets_state_their_security():
    for name in ("N14_logQ200", "N15_logQ420", "N16_logQ880", "N17_logQ1760"):
        p = heaan.Params.preset(name)
        assert 2 * p.log_q <= {14: 438, 15: 881, 16: 1772, 17: 3544}[p.log_n]
    for name in ("N16_logQ1200", "N14_logQ300", "test_N10_logQ120"):
        with pytest.raises(ParameterError, match="security"):
            heaan.Params.preset(name)
    with pytest.warns(SecurityWarning):
        assert heaan.Params.preset("N16_logQ1200", insecure=True).levels == 39


def test_save_load_pickle_deepcopy_every_object(small, tmp_path):
    import copy
    import pickle

    import ember

    ctx, sk, pk = small
    x = np.linspace(-1, 1, 24).reshape(2, 12)
    ct = ctx.encrypt(x, pk) * ctx.encrypt(x, sk)
    for obj in (ctx.params, ctx, sk, pk, ctx._relin, ct):
        path = tmp_path / "obj.ember"
        ember.save(obj, path)
        back = ember.load(path, ctx=None if obj is ctx.params or obj is ctx else ctx)
        assert type(back) is type(obj)
        assert type(pickle.loads(pickle.dumps(obj))) is type(obj)
    ct2 = copy.deepcopy(ct)
    assert ct2.bits == ct.bits and ct2.scale_bits == ct.scale_bits and ct2.shape == (2, 12)
    assert np.array_equal(ct2._raw.c0.to_numpy(), ct._raw.c0.to_numpy())
    sk2 = ctx.secret_key_from_bytes(sk.to_bytes())
    pk2 = ctx.public_key_from_bytes(pk.to_bytes())
    rk2 = ctx.relin_key_from_bytes(ctx._relin.to_bytes())
    assert np.array_equal(rk2._raw.b.to_numpy(), ctx._relin._raw.b.to_numpy())
    y = ctx.ciphertext_from_bytes(ctx.encrypt(x, pk2).to_bytes())
    assert np.max(np.abs(ctx.decrypt(y, sk2)[: x.size] - x.reshape(-1))) < 2**-13
    # a fresh context from the saved parameters reads the same objects
    other = ember.persist.load_bytes(ember.persist.dump_bytes(ctx))
    assert other.params_id == ctx.params_id
    ember.save(ct, tmp_path / "ct.ember")
    assert (
        np.max(np.abs(ctx.decrypt(ember.load(tmp_path / "ct.ember", ctx=ctx), sk) - x * x)) < 2**-9
    )


def test_malformed_bytes_are_refused(small):
    from ember.errors import SerializationError

    ctx, sk, pk = small
    blob = bytearray(ctx.encrypt([0.25], pk).to_bytes())
    with pytest.raises(SerializationError):
        ctx.ciphertext_from_bytes(bytes(blob[:-20]))
    with pytest.raises(SerializationError):
        ctx.public_key_from_bytes(bytes(blob))  # a ciphertext is not a public key
    bad = np.array(sk._raw.values, dtype=np.int8)
    bad[0] = 2
    blob = ember_pack_secret(ctx, bad)
    with pytest.raises(SerializationError, match="-1, 0 or 1"):
        ctx.secret_key_from_bytes(blob)


def ember_pack_secret(ctx, values):
    from ember import serialize

    return serialize.pack(serialize.KIND_SECRET_KEY, ctx.params_id, 0, values.tobytes())


def test_products_spread_over_devices_give_the_same_words(small):
    ctx, sk, pk = small
    x = np.linspace(-1, 1, ctx.slots)
    a, b = ctx.encrypt(x, pk), ctx.encrypt(x[::-1].copy(), sk)
    one = ctx.multiply(a, b, rescale=False)
    for devices in (
        ["cpu:1"],
        ["cpu:1", "cpu:2"],
        ["cpu:1", "cpu:2", "cpu:3"],
        ["cpu:3", "cpu:1", "cpu:2", "cpu:4"],
    ):
        spread = ctx.multiply(a, b, rescale=False, devices=devices)
        assert np.array_equal(spread._raw.c0.to_numpy(), one._raw.c0.to_numpy()), devices
        assert np.array_equal(spread._raw.c1.to_numpy(), one._raw.c1.to_numpy()), devices
    assert np.max(np.abs(ctx.decrypt(ctx.rescale(spread), sk) - x * x[::-1])) < 2**-10


@pytest.fixture(scope="module")
def rotating(small):
    """The small context with keys for steps 1, 2, 4, 3, -1 and conjugation."""
    ctx, sk, pk = small
    keys = ctx.rotation_keys(sk, rotations=[1, 2, 4, 3, -1], conjugation=True)
    ctx.set_rotation_keys(keys)
    return ctx, sk, pk, keys


def test_rotate_and_conjugate_match_numpy(rotating):
    ctx, sk, pk, _ = rotating
    rng = np.random.default_rng(4)
    z = rng.uniform(-1, 1, ctx.slots) + 1j * rng.uniform(-1, 1, ctx.slots)
    cz = ctx.encrypt(z, pk)
    slots = ctx.slots
    # 3 and -1 have their own keys; 6 and 7 are composed from 1, 2 and 4; 0 is a copy. Each key
    # switch adds about a fresh encryption's error (2^-14 to 2^-17 here): 2^-11 bounds three.
    for k in (0, 1, 3, -1, 6, 7, slots + 3, -slots - 1, 2 * slots + 6):
        got = ctx.decrypt(cz.rotate(k), sk, complex=True)
        assert np.max(np.abs(got - np.roll(z, -k))) < 2**-11, k
    got = ctx.decrypt(cz.conj(), sk, complex=True)
    assert np.max(np.abs(got - np.conj(z))) < 2**-11
    got = ctx.decrypt(ctx.conj(cz.rotate(3)), sk, complex=True)
    assert np.max(np.abs(got - np.conj(np.roll(z, -3)))) < 2**-11


def test_rotation_after_multiply_and_rescale(rotating):
    ctx, sk, pk, _ = rotating
    rng = np.random.default_rng(5)
    x, y = rng.uniform(-1, 1, ctx.slots), rng.uniform(-1, 1, ctx.slots)
    prod = ctx.encrypt(x, pk) * ctx.encrypt(y, sk)
    assert prod.bits == 90
    r = prod.rotate(-1)
    assert r.bits == 90 and r.scale_bits == 30
    assert np.max(np.abs(ctx.decrypt(r, sk) - np.roll(x * y, 1))) < 2**-10
    w = (r * r).rotate(5)  # a second level, a composed rotation
    assert np.max(np.abs(ctx.decrypt(w, sk) - np.roll(np.roll(x * y, 1) ** 2, -5))) < 2**-8
    rotated, phases = ctx.rotate_phases(prod, 3)
    assert set(phases) == {"crt", "ntt", "intt", "icrt", "other"}
    assert np.array_equal(rotated._raw.c0.to_numpy(), prod.rotate(3)._raw.c0.to_numpy())


def test_rotation_errors(rotating):
    ctx, _sk, pk, _keys = rotating
    cx = ctx.encrypt([0.5, 0.25], pk)
    with pytest.raises(MissingKeyError, match="rotation 8"):
        cx.rotate(8)  # no key for 8 and no power of two 8 to compose it from
    with pytest.raises(ParameterError, match="integers"):
        cx.rotate(1.5)
    with pytest.raises(ParameterError, match="RotationKeys"):
        ctx.set_rotation_keys(ctx._relin)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        other = heaan.Context(heaan.Params.preset("test_N10_logQ120", insecure=True), "cpu")
    osk = other.keygen()
    only_one = other.rotation_keys(osk, rotations=[1])
    with pytest.raises(MismatchError, match="another HEAAN context"):
        ctx.set_rotation_keys(only_one)
    with pytest.raises(MissingKeyError, match="no key"):
        other.encrypt([1.0], osk).rotate(1)  # keys generated but not set
    other.set_rotation_keys(only_one)
    with pytest.raises(MissingKeyError, match="conjugation"):
        other.encrypt([1.0], osk).conj()
    assert only_one.galois_elements == [5]
    assert (only_one | other.rotation_keys(osk, conjugation=True)).galois_elements == [5, 2047]


def test_rotation_keys_serialize(rotating, tmp_path):
    import pickle

    import ember
    from ember.errors import SerializationError

    ctx, _sk, pk, keys = rotating
    blob = keys.to_bytes()
    back = ctx.rotation_keys_from_bytes(blob)
    assert back.galois_elements == keys.galois_elements
    for g in keys.galois_elements:
        assert np.array_equal(back._keys[g].a.to_numpy(), keys._keys[g].a.to_numpy())
    ember.save(keys, tmp_path / "rot.ember")
    loaded = ember.load(tmp_path / "rot.ember", ctx=ctx)
    assert type(loaded) is heaan.RotationKeys and loaded.galois_elements == keys.galois_elements
    assert type(pickle.loads(pickle.dumps(keys))) is heaan.RotationKeys
    ct = ctx.encrypt(np.linspace(-1, 1, ctx.slots), pk)
    want = ct.rotate(3)._raw.c1.to_numpy()
    ctx.set_rotation_keys(loaded)
    try:
        assert np.array_equal(ct.rotate(3)._raw.c1.to_numpy(), want)
    finally:
        ctx.set_rotation_keys(keys)
    with pytest.raises(SerializationError):
        ctx.relin_key_from_bytes(blob)  # rotation keys are not a relinearization key
    bad = bytearray(blob[:-16])  # a Galois element made even, the checksum recomputed
    from ember import serialize

    header = serialize._HEADER.size
    bad[header + 4] ^= 1
    payload = bytes(bad[header:])
    forged = serialize.pack(serialize.KIND_HEAAN_ROTATION_KEYS, ctx.params_id, 0, payload)
    with pytest.raises(SerializationError, match="odd"):
        ctx.rotation_keys_from_bytes(forged)


def test_encoding_matches_the_host_reference(small):
    """The device path (special FFT, scaling, rounding, words in the backend) gives the words of
    numpy's rounding of the host special FFT's coefficients, as two's complement mod Q."""
    ctx, _sk, _pk = small
    rng = np.random.default_rng(6)
    z = (rng.uniform(-4, 4, ctx.slots) + 1j * rng.uniform(-4, 4, ctx.slots))[:300]
    full = np.zeros(ctx.slots, dtype=complex)
    full[: z.size] = z
    coeffs = np.rint(ctx._raw.slots_to_coeffs(full) * 2.0**ctx.params.log_p).astype(np.int64)
    expect = to_words([int(c) for c in coeffs], ctx.params.log_q)
    for values in (z, list(z)):
        m, shape = ctx.encode(values)
        assert shape is None and np.array_equal(m.to_numpy(), expect)
    real, _ = ctx.encode(np.float32([0.5, -0.25]))
    assert np.max(np.abs(ctx.decode(real, ctx.params.log_p)[:3] - [0.5, -0.25, 0])) < 2**-25
    with pytest.raises(ParameterError, match="finite"):
        ctx.encode([1.0, np.nan])
    with pytest.raises(ParameterError, match="2\\^62"):
        ctx.encode([2.0**45])  # coefficients of about 2^(45 + 30 - 9)


def test_decode_is_the_exactly_rounded_division(small):
    """Decoding reads each multi-word coefficient signed and divides it by 2^scale_bits to the
    nearest double (Python's int / int), then runs the host special FFT's arithmetic."""
    ctx, _sk, _pk = small
    rng = random.Random(8)
    bits = ctx.params.log_q
    values = [rng.randrange(1 << bits) for _ in range(ctx.params.n - 4)]
    values += [1 << (bits - 1), (1 << bits) - 1, 0, (1 << 70) + 1]  # -2^119, -1, 0, a sticky bit
    poly = big(values, bits)
    for scale_bits in (30, 100, 0):
        exact = np.array([signed(v, bits) / (1 << scale_bits) for v in values])
        want = ctx._raw.coeffs_to_slots(exact)
        got = ctx.decode(poly, scale_bits, complex=True)
        assert np.array_equal(got, want), scale_bits
        assert np.array_equal(ctx.decode(poly, scale_bits), want.real)
