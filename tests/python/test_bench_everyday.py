"""ember.bench_everyday.run on two CPU devices: a JSON-ready report whose correctness flags hold
(load equals before, the error bound holds over the squarings, every device decrypts the
ciphertext saved on the first to the same values)."""

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
