"""Per-backend options (ember.backend_options and friends), the measured NTT tables of `ember tune`,
and BFV's aux_bits, on the CPU. tests/gpu runs every switch on both settings against the CPU."""

from __future__ import annotations

import json

import ember
import numpy as np
import pytest
from ember import _ember, bfv, ring
from ember.cli import main as cli_main
from ember.ntt_tune import table_file

DEFAULTS = {
    "ntt_variant": "auto",
    "ntt_fp64": True,
    "ntt_unreduced": True,
    "key_product_words": True,
    "bconv_tensor": True,
    "fused_tensor": "auto",
    "fused_key_product": "auto",
    "cggi_rotation_group": "auto",
    "ntt_table": None,
}
CHANGED = {
    "ntt_variant": "harvey",
    "ntt_fp64": False,
    "ntt_unreduced": False,
    "key_product_words": False,
    "bconv_tensor": False,
    "fused_tensor": "always",
    "fused_key_product": "off",
    "cggi_rotation_group": 2,
}


@pytest.fixture
def cpu_options():
    """Restores the CPU backend's options after the test, whatever it set."""
    before = _ember.backend_options("cpu")
    yield
    _ember.set_backend_options("cpu", before)


def test_defaults_come_from_the_environment(monkeypatch):
    for name in ("NTT_FP64", "NTT_UNREDUCED", "KEY_PRODUCT_WORDS", "BCONV_TENSOR"):
        monkeypatch.delenv(f"EMBER_{name}", raising=False)
    monkeypatch.delenv("EMBER_FUSED_TENSOR", raising=False)
    monkeypatch.delenv("EMBER_FUSED_KEY_PRODUCT", raising=False)
    monkeypatch.delenv("EMBER_CGGI_ROTATION_GROUP", raising=False)
    seed = _ember.environment_backend_options()
    assert {k: seed[k] for k in DEFAULTS} == DEFAULTS and seed["ntt_table_rows"] == []
    # The old switches' spellings seed a new backend: 0 off, 1 always (fusions).
    monkeypatch.setenv("EMBER_NTT_FP64", "0")
    monkeypatch.setenv("EMBER_BCONV_TENSOR", "0")
    monkeypatch.setenv("EMBER_FUSED_TENSOR", "1")
    monkeypatch.setenv("EMBER_FUSED_KEY_PRODUCT", "0")
    monkeypatch.setenv("EMBER_CGGI_ROTATION_GROUP", "4")
    seed = _ember.environment_backend_options()
    assert seed["cggi_rotation_group"] == 4
    assert not seed["ntt_fp64"] and not seed["bconv_tensor"] and seed["ntt_unreduced"]
    assert seed["fused_tensor"] == "always" and seed["fused_key_product"] == "off"


def test_round_trip(cpu_options):
    ember.set_backend_options("cpu", **DEFAULTS)
    assert ember.backend_options("cpu") == DEFAULTS
    ember.set_backend_options("cpu", **CHANGED)
    assert ember.backend_options("cpu") == dict(DEFAULTS, **CHANGED)
    # Setting what backend_options returns changes nothing.
    ember.set_backend_options("cpu", **ember.backend_options("cpu"))
    assert ember.backend_options("cpu") == dict(DEFAULTS, **CHANGED)
    ember.set_backend_options("cpu", fused_tensor="auto")
    assert ember.backend_options("cpu")["fused_tensor"] == "auto"
    assert ember.backend_options("cpu")["fused_key_product"] == "off"


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"fused_tensors": "off"}, "unknown backend option.*fused_tensors.*use ntt_variant"),
        ({"ntt_variant": "warp_shuffle"}, "unknown NTT variant 'warp_shuffle' on cpu.*'harvey'"),
        ({"ntt_variant": 3}, "ntt_variant takes a name"),
        ({"ntt_fp64": 0}, "ntt_fp64 takes True or False"),
        ({"bconv_tensor": "off"}, "bconv_tensor takes True or False"),
        ({"fused_tensor": "sometimes"}, "fused_tensor takes 'auto', 'off', 'always'"),
        ({"fused_key_product": True}, "fused_key_product takes"),
        ({"cggi_rotation_group": 3}, "cggi_rotation_group takes 'auto', 1, 2 or 4"),
        ({"cggi_rotation_group": True}, "cggi_rotation_group takes"),
        ({"ntt_table": "/no/such/table.json"}, "cannot read the NTT table"),
    ],
)
def test_invalid_options_are_refused_and_change_nothing(cpu_options, changes, match):
    ember.set_backend_options("cpu", bconv_tensor=False)
    before = ember.backend_options("cpu")
    with pytest.raises(ember.ParameterError, match=match):
        ember.set_backend_options("cpu", **dict({"ntt_unreduced": False}, **changes))
    assert ember.backend_options("cpu") == before


def test_unknown_device_is_refused():
    with pytest.raises(ember.ParameterError, match="unknown device"):
        ember.backend_options("tpu")


def test_context_manager_restores(cpu_options):
    ember.set_backend_options("cpu", fused_key_product="always")
    before = ember.backend_options("cpu")
    with ember.using_backend_options("cpu", fused_tensor="off", ntt_fp64=False) as inside:
        assert inside == dict(before, fused_tensor="off", ntt_fp64=False)
        assert ember.backend_options("cpu") == inside
        with ember.using_backend_options("cpu", fused_tensor="always"):
            assert ember.backend_options("cpu")["fused_tensor"] == "always"
        assert ember.backend_options("cpu") == inside
    assert ember.backend_options("cpu") == before
    with (
        pytest.raises(RuntimeError, match="boom"),
        ember.using_backend_options("cpu", bconv_tensor=False),
    ):
        raise RuntimeError("boom")
    assert ember.backend_options("cpu") == before
    # A refused change leaves the block unentered and the options as they were.
    with (
        pytest.raises(ember.ParameterError),
        ember.using_backend_options("cpu", ntt_variant="cluster"),
    ):
        pytest.fail("entered the block")
    assert ember.backend_options("cpu") == before


def test_devices_hold_their_own_options(cpu_options):
    """Each device's backend has its own options ("cpu:1" where this build has several CPU
    devices; tests/gpu checks the CPU against the GPU)."""
    try:
        other = _ember.parse_device("cpu:1")
    except ember.ParameterError:
        pytest.skip("this build has one CPU device")
    before = ember.backend_options(other)
    with ember.using_backend_options("cpu", fused_tensor="off", bconv_tensor=False):
        assert ember.backend_options(other) == before
        with ember.using_backend_options(other, fused_tensor="always"):
            assert ember.backend_options("cpu")["fused_tensor"] == "off"
    assert ember.backend_options(other) == before


def sweep(prime_bits, rows):
    """`ember bench ntt --json` output: rows of (log_n, limbs, variant, forward_us, inverse_us)."""
    return {
        "device_name": "test GPU",
        "date": "2026-11-22",
        "prime_bits": prime_bits,
        "results": [
            {
                "log_n": n,
                "limbs": l,
                "variant": v,
                "forward_us": f,
                "inverse_us": i,
                "roundtrip_ok": True,
            }
            for n, l, v, f, i in rows
        ],
    }


def test_tune_table_file_applies_in_process(cpu_options, tmp_path):
    fp64 = sweep(50, [(12, 8, "harvey", 2.0, 3.0), (12, 8, "auto:harvey", 1.0, 1.0)])
    integer = sweep(60, [(13, 1, "harvey", 2.5, 2.0)])
    t = table_file(fp64, integer, gpu={"name": "test GPU", "multiprocessors": 2})
    assert t["fp64"]["rows"] == [
        {
            "log_n": 12,
            "limbs": 8,
            "forward": "harvey",
            "inverse": "harvey",
            "forward_us": 2.0,
            "inverse_us": 3.0,
        }
    ]
    assert [r["log_n"] for r in t["integer"]["rows"]] == [13]
    path = tmp_path / "table.json"
    path.write_text(json.dumps(t))
    ember.set_backend_options("cpu", ntt_table=str(path))
    assert ember.backend_options("cpu")["ntt_table"] == str(path)
    assert _ember.backend_options("cpu")["ntt_table_rows"] == [
        (12, 8, False, "harvey", "harvey"),
        (13, 1, True, "harvey", "harvey"),
    ]
    with ember.using_backend_options("cpu", ntt_table=None):
        assert ember.backend_options("cpu")["ntt_table"] is None
    assert ember.backend_options("cpu")["ntt_table"] == str(path)
    # A parsed table works too; rows naming a schedule this backend lacks are refused.
    ember.set_backend_options("cpu", ntt_table=t)
    assert ember.backend_options("cpu")["ntt_table"] == "measured on test GPU"
    t["fp64"]["rows"][0]["forward"] = "warp_shuffle"
    with pytest.raises(ember.ParameterError, match="names variant 'warp_shuffle', unknown on cpu"):
        ember.set_backend_options("cpu", ntt_table=t)
    for bad in ({"format": "other"}, dict(t, fp64={"rows": [{"log_n": 12}]})):
        with pytest.raises(ember.ParameterError, match="not an NTT table|malformed"):
            ember.set_backend_options("cpu", ntt_table=bad)
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ember.ParameterError, match="cannot read"):
        ember.set_backend_options("cpu", ntt_table=str(tmp_path / "bad.json"))


def test_ntt_results_do_not_depend_on_the_options(cpu_options):
    primes = ring.generate_ntt_primes(50, 1 << 10, 2) + ring.generate_ntt_primes(60, 1 << 10, 1)
    _, basis = ring.make_ring(1 << 10, primes)
    rng = np.random.default_rng(1)
    a = np.stack([rng.integers(0, q, 1 << 10, dtype=np.uint64) for q in primes])
    ref = ring.poly(basis, a, "coeff", "cpu").ntt().to_numpy()
    with ember.using_backend_options("cpu", **CHANGED):
        assert np.array_equal(ring.poly(basis, a, "coeff", "cpu").ntt().to_numpy(), ref)


@pytest.mark.skipif(bool(_ember.cuda_devices()), reason="a GPU is visible: tests/gpu tunes")
def test_tune_without_a_gpu_says_so(capsys):
    assert cli_main(["tune"]) == 2
    err = capsys.readouterr().err
    assert "no GPU to tune" in err and "no CUDA GPU is visible" in err


KEY = bytes(32)


def bfv_products(aux_bits):
    """Keys, a product and a product of products under BFV with the given aux_bits, fixed seeds."""
    p = bfv.Params(log_n=11, q_bits=(50, 45, 45), special_bits=(55,), insecure=True)
    ctx = bfv.Context(p, device="cpu", aux_bits=aux_bits)
    ctx._sampler = ring.Sampler(KEY)
    sk = ctx.keygen()
    pk = ctx.public_key(sk)
    ctx.set_eval_keys(ctx.eval_keys(sk))
    t = p.plain_modulus
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-(t // 2), t // 2, ctx.slots) for _ in range(2))
    ctx._sampler = ring.Sampler(KEY, 9)
    x, y = ctx.encrypt(a, pk), ctx.encrypt(b, sk)
    prods = {"mul": x * y, "mul2": (x * y) * x}
    words = {k: [c._raw.poly(i).to_numpy() for i in range(c._raw.size)] for k, c in prods.items()}
    dec = {k: ctx.decrypt(c, sk) for k, c in prods.items()}
    return ctx, words, dec, (a, b, t)


def test_bfv_aux_bits_give_the_same_products():
    """R only has to exceed t N Q: the lift to Q u R is exact and the scaling by t / Q rounds
    exactly, so every size of R gives the same product words (and so the same decryptions)."""
    from intref import centered

    ref_ctx, ref_words, ref_dec, (a, b, t) = bfv_products(None)
    np.testing.assert_array_equal(ref_dec["mul"], centered(a * b, t))
    np.testing.assert_array_equal(ref_dec["mul2"], centered(a * b * a, t))
    sizes = set()
    for bits in (50, 57, 60):
        ctx, words, dec, _ = bfv_products(bits)
        assert ctx.aux_bits == bits
        sizes.add(bits)
        for k in ref_words:
            for i, (w, r) in enumerate(zip(words[k], ref_words[k])):
                np.testing.assert_array_equal(w, r, err_msg=f"aux_bits={bits}: {k} poly {i}")
            np.testing.assert_array_equal(dec[k], ref_dec[k])
    assert bfv.aux_primes(ref_ctx.params, 50) != bfv.aux_primes(ref_ctx.params, 60)


@pytest.mark.parametrize("bad", [49, 0, "50", 57.0])
def test_bfv_aux_bits_are_checked(bad):
    with pytest.raises(ember.ParameterError, match="aux_bits must be None"):
        bfv.Context(bfv.Params.preset("N12_t65537"), device="cpu", aux_bits=bad)
