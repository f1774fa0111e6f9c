"""bench/make_ntt_table.py: the rules by which measured NTT sweeps become the autotune tables."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "bench" / "make_ntt_table.py"
_spec = importlib.util.spec_from_file_location("make_ntt_table", _PATH)
make_ntt_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_ntt_table)


def sweep(rows, prime_bits=50):
    """A benchmark JSON as `ember bench ntt --json` writes it: (log_n, limbs, variant, fwd, inv)."""
    return {
        "device_name": "test GPU",
        "date": "2026-11-22",
        "prime_bits": prime_bits,
        "results": [
            {
                "log_n": log_n,
                "limbs": limbs,
                "variant": variant,
                "forward_us": fwd,
                "inverse_us": inv,
                "roundtrip_ok": True,
            }
            for log_n, limbs, variant, fwd, inv in rows
        ],
    }


def entries(text):
    """{(log_n, limbs): (forward, inverse)} from a generated table."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.count('"') == 4:
            head, fwd, _, inv, _ = line.split('"')
            log_n, limbs = (int(x) for x in head.strip("{ ,").split(",")[:2])
            out[(log_n, limbs)] = (fwd, inv)
    return out


def test_fastest_schedule_per_direction():
    data = sweep([(14, 8, "warp_shuffle", 6.0, 9.0), (14, 8, "two_kernel", 7.0, 6.5)])
    t = entries(make_ntt_table.table(data, "kT", 1.0))
    assert t[(14, 8)] == ("warp_shuffle", "two_kernel")


def test_auto_rows_and_failed_round_trips_are_ignored():
    data = sweep([(13, 8, "auto:warp_shuffle", 1.0, 1.0), (13, 8, "hybrid", 9.0, 9.0)])
    data["results"].append(
        dict(data["results"][1], variant="per_stage", forward_us=0.5, roundtrip_ok=False)
    )
    t = entries(make_ntt_table.table(data, "kT", 1.0))
    assert t[(13, 8)] == ("hybrid", "hybrid")


def test_cluster_is_dropped_where_it_only_falls_back():
    data = sweep([(17, 40, "cluster", 84.7, 82.0), (17, 40, "warp_shuffle", 84.8, 83.0)])
    t = entries(make_ntt_table.table(data, "kT", 1.0))
    assert t[(17, 40)] == ("warp_shuffle", "warp_shuffle")


def test_cluster_margin():
    rows = [(14, 8, "cluster", 6.5, 5.0), (14, 8, "warp_shuffle", 6.6, 6.0)]
    # Without a margin (FP64 table) a tie goes to the faster measurement.
    assert entries(make_ntt_table.table(sweep(rows), "kT", 1.0))[(14, 8)] == ("cluster", "cluster")
    # With the integer path's margin the cluster schedule must win by 5 %: the forward tie goes
    # to warp_shuffle, the inverse (17 % faster) stays.
    t = entries(make_ntt_table.table(sweep(rows, 60), "kT", make_ntt_table.CLUSTER_MARGIN_INT))
    assert t[(14, 8)] == ("warp_shuffle", "cluster")
