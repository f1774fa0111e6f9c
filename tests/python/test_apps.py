"""The shipped applications (examples/circuits, ember.apps): the cipher references against
published vectors and OpenSSL, every program lowered, the small ones synthesized and checked
against their native build on random inputs and run encrypted; the large ones are checked
natively here and synthesized by `ember bench apps` only (minutes each)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from ember.apps import APPS, ciphers, compile_app, get_app
from ember.apps.runner import check_native, equal_outputs, inputs_for
from ember.compiler import lower_c
from ember.compiler.native import c_compiler, random_inputs, run_native

CIRCUITS = Path(__file__).resolve().parents[2] / "examples" / "circuits"
CI_APPS = sorted(name for name, a in APPS.items() if a.ci)

needs_cc = pytest.mark.skipif(c_compiler() is None, reason="no system C compiler")


@pytest.fixture(scope="module")
def circuits():
    """The CI programs' circuits, compiled once per session into a private on-disk cache."""
    import os

    saved = {k: os.environ.get(k) for k in ("EMBER_CACHE_DIR", "EMBER_CIRCUITS_DIR")}
    os.environ["EMBER_CACHE_DIR"] = os.environ.get("EMBER_TEST_CACHE_DIR") or tempfile.mkdtemp(
        prefix="ember-apps-"
    )
    os.environ["EMBER_CIRCUITS_DIR"] = str(CIRCUITS)  # the examples read the source tree's data
    try:
        yield {name: compile_app(name, directory=CIRCUITS)[0] for name in CI_APPS}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ---- cipher references -------------------------------------------------------------------


def test_aes_reference_fips197():
    # FIPS-197 appendix C.1 (AES-128) and appendix A.1 (the last round key of its key).
    rk = ciphers.aes128_expand_key(bytes(range(16)))
    pt = bytes.fromhex("00112233445566778899aabbccddeeff")
    ct = ciphers.aes128_encrypt_block(rk, pt)
    assert ct.hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"
    assert ciphers.aes128_decrypt_block(rk, ct) == pt
    rk = ciphers.aes128_expand_key(bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"))
    assert rk[-16:].hex() == "d014f9a8c9ee2589e13f0cc8b6630ca6"
    assert ciphers.SBOX[0x53] == 0xED and ciphers.INV_SBOX[0xED] == 0x53


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command")
def test_aes_reference_matches_openssl(rng):
    for _ in range(4):
        key = bytes(rng.integers(0, 256, 16, dtype=np.uint8))
        data = bytes(rng.integers(0, 256, 48, dtype=np.uint8))
        out = subprocess.run(
            ["openssl", "enc", "-aes-128-ecb", "-nopad", "-K", key.hex()],
            input=data,
            capture_output=True,
            check=True,
        ).stdout
        rk = ciphers.aes128_expand_key(key)
        mine = b"".join(ciphers.aes128_encrypt_block(rk, data[i : i + 16]) for i in (0, 16, 32))
        assert out == mine


def test_simon_speck_reference_vectors():
    # The test vectors of "The SIMON and SPECK Families of Lightweight Block Ciphers"
    # (Beaulieu et al., 2013), 128/128: key words k1 k0, plaintext and ciphertext words x y.
    k1, k0 = 0x0F0E0D0C0B0A0908, 0x0706050403020100
    rk = ciphers.simon128_expand_key(k1, k0)
    ct = ciphers.simon128_encrypt(rk, 0x6373656420737265, 0x6C6C657661727420)
    assert ct == (0x49681B1E1E54FE3F, 0x65AA832AF84E0BBC)
    assert ciphers.simon128_decrypt(rk, *ct) == (0x6373656420737265, 0x6C6C657661727420)
    rk = ciphers.speck128_expand_key(k1, k0)
    ct = ciphers.speck128_encrypt(rk, 0x6C61766975716520, 0x7469206564616D20)
    assert ct == (0xA65D985179783265, 0x7860FEDF5C570D18)
    assert ciphers.speck128_decrypt(rk, *ct) == (0x6C61766975716520, 0x7469206564616D20)


# ---- every program ------------------------------------------------------------------------


# The full MNIST networks unroll 2048 x 64 neuron inputs: lowering alone takes about two minutes
# (and compiling them five to ten), so CI lowers and synthesizes their 8-neuron pieces and checks
# their native builds instead.
FRONT_END_TOO_SLOW = {"mnist_plain", "mnist_enc"}


@pytest.mark.parametrize("name", sorted(set(APPS) - FRONT_END_TOO_SLOW - set(CI_APPS)))
def test_every_program_lowers(name):
    """The front end accepts every benchmark-sized program (the CI-sized ones are compiled in
    full below; Yosys runs on the rest in `ember bench apps`)."""
    app = APPS[name]
    verilog, inputs, outputs = lower_c((CIRCUITS / app.source).read_text(), app.function)
    assert inputs and outputs and verilog.startswith("module")


class _Ports:
    """The ports of a function from its declaration alone (parsed, not lowered: the full MNIST
    networks take minutes to lower), for native-only checks. written: the array parameters
    the function writes (its outputs besides the return value)."""

    def __init__(self, name, written=()):
        from ember.circuit import Port
        from ember.compiler.native import param_kinds

        app = APPS[name]
        params, ret = param_kinds(CIRCUITS / app.source, app.function)
        self.inputs = [Port(n, t.width, t.signed, shape or ()) for n, t, shape in params]
        self.outputs = [Port("return", ret.width, ret.signed)] if ret is not None else []
        self.outputs += [p for p in self.inputs if p.name in written]


@needs_cc
@pytest.mark.parametrize("name", ["aes128", "simon128", "speck128"])
def test_native_ciphers_match_reference(name, rng):
    """The full cipher programs, built natively, decrypt what the reference encrypted (and
    AES the FIPS-197 vector)."""
    app = APPS[name]
    ports = _Ports(name, written=("out", "pt"))
    examples = [app.example(rng) for _ in range(5)]
    if name == "aes128":
        rk = ciphers.aes128_expand_key(bytes(range(16)))
        ct = bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a")
        examples.append(
            (
                {"rk": list(rk), "in": list(ct)},
                {"out": list(bytes.fromhex("00112233445566778899aabbccddeeff"))},
            )
        )
    n = len(examples)
    sets = {
        p.name: np.stack([np.asarray(e[0].get(p.name, np.zeros(p.shape, int))) for e in examples])
        for p in ports.inputs
    }
    got = run_native(CIRCUITS / app.source, app.function, ports, sets, n)
    for i, (_, want) in enumerate(examples):
        assert equal_outputs({k: v[i] for k, v in got.items()}, want), (name, i)


@needs_cc
def test_native_linear_algebra_matches_numpy(rng):
    """The benchmark-sized linear algebra, built natively, against numpy (int64, wrapped to the
    32-bit results): the programs the circuits must match are right."""
    n = 100
    cases = {
        "dot500": (
            {
                "a": rng.integers(-(2**15), 2**15, (n, 500)),
                "b": rng.integers(-(2**15), 2**15, (n, 500)),
            },
            lambda a, b: {"return": (a * b).sum(axis=1)},
        ),
        "matvec": (
            {
                "v": rng.integers(-(2**15), 2**15, (n, 125)),
                "m": rng.integers(-(2**15), 2**15, (n, 125, 4)),
            },
            lambda v, m: {"out": np.einsum("ni,nij->nj", v, m)},
        ),
        "matmul10": (
            {
                "a": rng.integers(-(2**15), 2**15, (n, 10, 10)),
                "b": rng.integers(-(2**15), 2**15, (n, 10, 10)),
            },
            lambda a, b: {"c": a @ b},
        ),
        "vadd500": (
            {
                "a": rng.integers(-(2**31), 2**31, (n, 500)),
                "b": rng.integers(-(2**31), 2**31, (n, 500)),
            },
            lambda a, b: {"c": a + b},
        ),
    }
    for name, (sets, ref) in cases.items():
        app = APPS[name]
        got = run_native(CIRCUITS / app.source, app.function, _Ports(name, ("out", "c")), sets, n)
        for k, want in ref(**sets).items():
            wrapped = (want + 2**31) % 2**32 - 2**31
            assert np.array_equal(got[k].astype(np.int64), wrapped), name


@needs_cc
@pytest.mark.parametrize("name", CI_APPS)
def test_ci_programs_match_native(name, circuits, rng):
    """circ.evaluate equals the native build on 1,000 random input sets and the example."""
    app = APPS[name]
    inputs, expected = inputs_for(app, circuits[name], rng)
    res = check_native(app, circuits[name], 1000, rng, CIRCUITS, extra=inputs)
    assert res["mismatches"] == 0, res["first"]
    if expected is not None:
        assert equal_outputs(circuits[name].evaluate(**inputs), expected)


@pytest.mark.parametrize("name", ["add32", "simon_round", "aes_sbox4"])
def test_ci_programs_run_encrypted(name, circuits, rng):
    from ember.apps.runner import make_context, run_encrypted

    circ = circuits[name]
    inputs, expected = inputs_for(get_app(name), circ, rng)
    ctx = make_context("test_insecure", "cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    res, _ = run_encrypted(circ, inputs, ctx, ck, sk, ["cpu"], progress=False)
    assert equal_outputs(res, circ.evaluate(**inputs))
    if expected is not None:
        assert equal_outputs(res, expected)


@needs_cc
def test_logreg_native_approximates_sigmoid(rng):
    """The fixed-point programs (built natively) are close to the sigmoid where the series
    converges: |z| <= 1 gives an error below 0.5% of the scale."""
    for name, frac, scale in (("logreg_small", 8, 80640), ("logreg_large", 16, 1451520)):
        app = APPS[name]
        ports = _Ports(name)
        one = 1 << frac
        n = 200
        x = rng.integers(-one, one + 1, (n, 4))
        w = rng.integers(-one // 4, one // 4 + 1, (n, 4))
        b = np.zeros(n, dtype=np.int64)
        got = run_native(CIRCUITS / app.source, app.function, ports, {"x": x, "w": w, "b": b}, n)
        z = (x * w).sum(axis=1) / one / one
        want = scale / (1 + np.exp(-z))
        err = np.abs(got["return"].astype(float) - want) / scale
        assert err.max() < 0.005, (name, err.max())


def test_random_inputs_cover_every_type(circuits, rng):
    sets = random_inputs(circuits["simon_round"], 10, rng)
    assert sets["in"].dtype == np.uint64 and sets["in"].shape == (10, 2)


# ---- the MNIST network ----------------------------------------------------------------------

MNIST = Path(__file__).resolve().parents[3] / "shared" / "data" / "mnist"


def _model():
    from ember.apps.dinn import Model

    return Model.load(CIRCUITS / "mnist_dinn.npz")


def _subset():
    from ember.apps.flows import mnist_test_images

    return mnist_test_images(CIRCUITS)


@pytest.mark.skipif(
    not (MNIST / "t10k-images-idx3-ubyte.gz").exists(), reason=f"no MNIST data at {MNIST}"
)
def test_mnist_plaintext_accuracy():
    """The integer network classifies at least 96% of the 10,000 MNIST test images, and the
    shipped 100-image subset is the test set's first 100."""
    from ember.apps.dinn import load_mnist

    x, y = load_mnist(MNIST, "t10k")
    acc = float((_model().predict(x) == y).mean())
    assert acc >= 0.96, acc
    bits, labels = _subset()
    assert np.array_equal(bits, x[:100]) and np.array_equal(labels, y[:100])


@needs_cc
def test_mnist_c_programs_match_model():
    """Both generated C programs, built natively, classify the 100 test images like the numpy
    model (the weights as compiled-in tables and as parameters)."""
    model = _model()
    x, _ = _subset()
    want = model.predict(x)
    for name, extra in (
        ("mnist_plain", {}),
        ("mnist_enc", {"neg": (model.w < 0).astype(int), "bias": model.b, "v": model.v}),
    ):
        app = APPS[name]
        sets = {"x": x, **{k: np.broadcast_to(v, (len(x),) + v.shape) for k, v in extra.items()}}
        got = run_native(CIRCUITS / app.source, app.function, _Ports(name), sets, len(x))
        assert np.array_equal(got["return"].astype(np.int64), want), name


def test_mnist_fhe_encrypted_matches_plaintext():
    """FHE-DiNN's way (no compiler): encrypted pixels, free sums, one bootstrap a neuron; the
    decrypted scores of a test image equal the plaintext network's exactly."""
    from ember import cggi
    from ember.apps.dinn import encrypted_scores

    model = _model()
    x, _ = _subset()
    ctx = cggi.Context(cggi.Params.preset("test_int_insecure"), device="cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    scores, _, boots = encrypted_scores(ctx, ck, sk, model, x[7:8])
    assert np.array_equal(scores, model.scores(x[7:8]))
    assert boots == model.hidden


def test_mnist_fhe_batches_images():
    """Several images a server call (batch 2 over 3 images: a full and a partial batch) give
    each image's own scores, on the first 12 neurons of the network."""
    from ember import cggi
    from ember.apps.dinn import Model, encrypted_scores

    full = _model()
    model = Model(full.idx[:12], full.w[:12], full.b[:12], full.v[:, :12])
    x, _ = _subset()
    ctx = cggi.Context(cggi.Params.preset("test_int_insecure"), device="cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    scores, _, boots = encrypted_scores(ctx, ck, sk, model, x[3:6], batch=2)
    assert np.array_equal(scores, model.scores(x[3:6]))
    assert boots == 3 * 12


def test_bench_and_cli(circuits, capsys, tmp_path):
    """`ember bench apps` on the CPU (one device exists, so the count 2 is dropped), from a
    folder written by `ember apps compile --out` (as a machine without Yosys runs it), and
    `ember apps list` / `ember apps run` end to end, from the session's cache."""
    from ember.apps.bench import bench_apps
    from ember.cli import main

    assert main(["apps", "compile", "add32", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "add32.circuit").exists()
    r = bench_apps(
        device="cpu",
        devices="1,2",
        preset="test_insecure",
        programs="add32",
        precompiled=tmp_path,
        modes="wave,dataflow",
    )
    assert r["device_counts"] == [1]
    row = r["results"][0]
    assert row["ok"] == {"1": True, "1_dataflow": True} and row["compile_cached"]
    assert row["seconds"] == row["seconds_wave"] and set(row["seconds_dataflow"]) == {"1"}
    assert main(["apps", "list"]) == 0
    args = ["apps", "run", "simon_round", "--preset", "test_insecure", "--no-progress"]
    assert main(args + ["--seed", "3"]) == 0
    assert '"ok": true' in capsys.readouterr().out


def test_synthesis_falls_back_to_abc_default(monkeypatch):
    """Where Yosys fails with the fast ABC script, the compiler retries with ABC's default."""
    from ember.compiler import compile_c, synth

    monkeypatch.setattr(synth, "ABC_SCRIPT", "+no_such_abc_command")
    circ = compile_c(CIRCUITS / "add32.c", "add32")
    assert circ.evaluate(a=-5, b=7)["return"] == 2


def test_transcipher_data_path(rng):
    """The transciphering exchange (client AES + CGGI key, server circuit on trivial ciphertext
    blocks, client decryption) with a stand-in for the AES circuit of the same ports: the
    first step of AES decryption, the block XOR the last round key."""
    from ember.apps import transcipher
    from ember.apps.runner import make_context
    from ember.compiler import compile_source

    src = """#include <stdint.h>
    void first_step(const uint8_t rk[176], const uint8_t in[16], uint8_t out[16]) {
      for (int i = 0; i < 16; i++) out[i] = in[i] ^ rk[160 + i];
    }"""
    circ = compile_source(src, "first_step")
    ctx = make_context("test_insecure", "cpu")
    ck = ctx.keygen()
    sk = ctx.server_key(ck, progress=False)
    key = bytes(rng.integers(0, 256, 16, dtype=np.uint8))
    blocks, enc_rk = transcipher.client_encrypt(ctx, ck, key, b"two blocks of data here")
    outs = transcipher.server_transcipher(ctx, sk, circ, blocks, enc_rk)
    got = transcipher.client_decrypt(ctx, ck, outs)
    last = ciphers.aes128_expand_key(key)[160:]
    assert len(blocks) == 2
    assert got == b"".join(bytes(a ^ b for a, b in zip(block, last)) for block in blocks)
