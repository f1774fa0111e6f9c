"""A short seeded run of the deserialization fuzzing harness (tests/fuzz): no crash on any
mutated input of any kind, every mutation refused under a MAC, and no accepted-and-different
input where the meaning is checkable (headers, fields, secret keys, verified keys)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fuzz import harness

INPUTS = {False: 500, True: 120}  # per kind; the long run is documented in docs/security.md


@pytest.fixture(scope="module")
def sets():
    return {}


@pytest.mark.parametrize("mac", [False, True], ids=["checksum", "mac"])
@pytest.mark.parametrize("kind", harness.KINDS)
def test_fuzz_kind(kind, mac, sets):
    counts = harness.run_campaign([kind], INPUTS[mac], seed=11, mac=mac, sets=sets)
    assert counts.failures(mac) == [], counts.crashes
    assert counts.total("crashed") == 0
    rows = {cls: row for (k, cls), row in counts.table.items()}
    # Every applicable class ran, raw corruption is always refused by the checksum or lengths.
    assert rows["raw"]["rejected"] == sum(rows["raw"].values())
    assert rows["header"]["different"] == 0
    if mac:
        assert counts.total("rejected") == INPUTS[mac]
