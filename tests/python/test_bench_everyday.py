"""ember.bench_everyday.run and run_encoding on two CPU devices: JSON-ready reports whose
correctness flags hold (load equals before, the error bound holds over the squarings, every device
decrypts the ciphertext saved on the first to the same values; the host and device encoding paths
agree)."""

from __future__ import annotations

import json

from ember import bench_everyday


def test_report_is_json_and_correct():
    report = bench_everyday.run(device="cpu", devices=["cpu", "cpu:1"], depth=2, repeat=1)
    json.dumps(report)
    assert report["devices"] == ["cpu", "cpu:1"] and report["parameters"]["levels"] == 2
    correct = report["correct"]
    assert correct["load_equals_before"] and correct["error_bound_holds"]
    assert correct["every_device_decrypts_the_same"] and set(correct["per_device"]) == {
        "cpu",
        "cpu:1",
    }
    assert all(v > 0 for v in report["seconds"].values())


def test_encoding_report_is_json_and_correct():
    """run_encoding on two CPU devices (a small preset): both paths agree, the words too."""
    report = bench_everyday.run_encoding(devices=["cpu", "cpu:1"], preset="N13_L3", repeat=1)
    json.dumps(report)
    assert report["benchmark"] == "ckks_encoding" and report["correct"]
    assert set(report["per_device"]) == {"cpu", "cpu:1"}
    for result in report["per_device"].values():
        assert result["correct"]["encoded_words_equal_fraction"] > 0.999
        assert all(v > 0 for v in result["seconds"].values())


def test_integer_encoding_report_is_json_and_correct():
    """run_integer_encoding on a CPU device (small presets): both paths give the same words and
    decryptions, equal to the input."""
    presets = {"bfv": "N12_t65537", "bgv": "N13_t65537"}
    report = bench_everyday.run_integer_encoding(devices=["cpu"], presets=presets, repeat=1)
    json.dumps(report)
    assert report["benchmark"] == "integer_encoding" and report["correct"]
    for scheme, result in report["per_device"]["cpu"].items():
        assert result["preset"] == presets[scheme] and all(result["correct"].values())
        assert all(v > 0 for v in result["ms"].values())
