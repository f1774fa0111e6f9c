"""Frozen known answers (tests/kat/ring_kat.json): samplers, NTT, automorphism and ICRT outputs."""

import importlib.util
import json
from pathlib import Path

KAT_DIR = Path(__file__).resolve().parents[1] / "kat"


def _make_kat():
    spec = importlib.util.spec_from_file_location("make_kat", KAT_DIR / "make_kat.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ring_known_answers(device):
    frozen = json.loads((KAT_DIR / "ring_kat.json").read_text())
    now = _make_kat().compute(device)
    assert now == frozen["cases"]
