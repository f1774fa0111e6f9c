"""The command line honours the default device (issue 31): a --device left out means
ember.set_default_device, else $EMBER_DEVICE, else "auto", and a --device given wins. The
environment names cpu:1 (a second CPU device) where the test must tell it from what "auto" picks."""

from __future__ import annotations

import json
from pathlib import Path

import ember
import pytest
from ember.cli import main
from isolated import run_python

CIRCUITS = Path(__file__).resolve().parents[2] / "examples" / "circuits"
ADD32_INPUTS = ["--inputs", '{"a": -5, "b": 7}']


@pytest.fixture(scope="module")
def add32(tmp_path_factory) -> Path:
    """A folder holding add32.circuit, written by `ember apps compile` into a private cache."""
    folder = tmp_path_factory.mktemp("circuits")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMBER_CACHE_DIR", str(folder / "cache"))
        mp.setenv("EMBER_CIRCUITS_DIR", str(CIRCUITS))  # the source tree's C files
        assert main(["apps", "compile", "add32", "--out", str(folder)]) == 0
    return folder


@pytest.fixture
def env_device(monkeypatch):
    """EMBER_DEVICE=cpu:1 and no ember.set_default_device setting (restored after the test)."""
    monkeypatch.setattr(ember, "_default_device", None)
    monkeypatch.setenv("EMBER_DEVICE", "cpu:1")
    monkeypatch.setenv("EMBER_CIRCUITS_DIR", str(CIRCUITS))
    yield "cpu:1"


def json_out(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", [["demo"], ["bench"], ["tune"], ["run"], ["apps", "run"]])
def test_help_names_the_default(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--device DEVICE" in text and "(default: $EMBER_DEVICE, else auto)" in text


def test_run_on_the_default_device(env_device, add32, capsys):
    """`ember run`: EMBER_DEVICE, then ember.set_default_device over it, then --device over
    both; the decrypted sum is right on each."""
    args = ["run", str(add32 / "add32.circuit"), *ADD32_INPUTS, "--no-progress"]
    assert main(args) == 0
    report = json_out(capsys)
    assert report["device"] == "cpu:1" and report["run"]["device_names"] == ["cpu:1"]
    assert report["outputs"] == {"return": 2} and report["matches_plaintext_evaluation"]
    ember.set_default_device("cpu:2")
    assert main(args) == 0
    assert json_out(capsys)["device"] == "cpu:2"
    assert main([*args, "--device", "cpu"]) == 0
    report = json_out(capsys)
    assert report["device"] == "cpu" and report["outputs"] == {"return": 2}


def test_apps_run_on_the_default_device(env_device, add32, capsys):
    args = ["apps", "run", "add32", "--preset", "test_insecure", "--no-progress"]
    args += ["--circuits-from", str(add32)]
    assert main(args) == 0
    report = json_out(capsys)
    assert report["devices"] == ["cpu:1"] and report["ok"]
    assert main([*args, "--device", "cpu"]) == 0
    report = json_out(capsys)
    assert report["devices"] == ["cpu"] and report["ok"]


def test_bench_on_the_default_device(env_device, add32, capsys):
    args = ["bench", "apps", "--preset", "test_insecure", "--programs", "add32", "--devices", "1"]
    args += ["--circuits-from", str(add32)]
    assert main(args) == 0
    doc = json_out(capsys)
    assert doc["device"] == "cpu:1" and doc["results"][0]["ok"] == {"1": True}
    assert main([*args, "--device", "cpu"]) == 0
    assert json_out(capsys)["device"] == "cpu"


def test_tune_refuses_a_default_device_that_is_no_gpu(env_device, monkeypatch, capsys):
    """EMBER_DEVICE=cpu on any machine: `ember tune` says there is no GPU to tune."""
    monkeypatch.setenv("EMBER_DEVICE", "cpu")
    assert main(["tune"]) == 2
    assert "DeviceError: there is no GPU to tune here" in capsys.readouterr().err


def test_demo_in_a_process_with_ember_device_cpu(monkeypatch):
    """`EMBER_DEVICE=cpu ember demo` (a fresh interpreter, as from a shell) runs on the CPU."""
    monkeypatch.setenv("EMBER_DEVICE", "cpu")
    out = run_python("import sys; from ember.cli import main; sys.exit(main(['demo']))")
    assert "device=cpu " in out and "keys" in out and "demo OK" in out
