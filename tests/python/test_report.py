"""ember bench report: the report of committed raw results (Ember's JSON and the peers' JSON lines
of the same runs) holds the ratios the files imply, a figure for every comparison, and a suite
run on the CPU goes into it too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ember.cli import main
from ember.report import load_sources, make_report

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
RUN = "2026-11-23s18_h200_final"
FILES = [
    f"{RUN}_bench_ntt.json",
    f"{RUN}_phantom_ntt.jsonl",
    f"{RUN}2_bench_ckks.json",
    f"{RUN}2_phantom_ckks.jsonl",
    f"{RUN}_desilo_ckks.jsonl",
    f"{RUN}_bench_bgv.json",
    f"{RUN}_phantom_bfv_bgv.jsonl",
    f"{RUN}_bench_boot.json",
    f"{RUN}_desilo_boot.jsonl",
    "2026-11-27s22_h100x4_bench_circuit.json",
]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    pytest.importorskip("matplotlib", reason="the report's figures need matplotlib")
    out = tmp_path_factory.mktemp("report")
    return make_report(out, [RESULTS / f for f in FILES]), out


def test_sources_are_sorted_by_kind_and_peer():
    src = load_sources([RESULTS / f for f in FILES])
    assert set(src.ember) == {"ntt", "ckks", "bgv", "boot", "circuit"}
    assert set(src.peers) == {"phantom", "desilo"}
    assert len(src.files) == len(FILES)


def test_report_holds_the_ratios_of_the_files(report):
    path, out = report
    text = path.read_text()
    for kind in ("ntt", "ckks", "bgv", "boot", "circuit"):
        assert f"## {kind}\n" in text
    # One cell checked against the raw files: Phantom's rotation at N15 over Ember's.
    ours = json.loads((RESULTS / FILES[2]).read_text())
    e = next(r for r in ours["results"] if r["name"] == "N15")["rotate_ms"]
    phantom = [
        json.loads(x) for x in (RESULTS / FILES[3]).read_text().splitlines() if x.startswith("{")
    ]
    p = next(r for r in phantom if r.get("set") == "15_18m2s" and r.get("op") == "rotate")
    p = p["batch10_median_us"] / 1e3
    assert f"| N15 | rotate | {e:.3f} | {p:.3f} | {p / e:.2f}x |" in text
    # Every figure the report shows exists and is a PNG.
    figures = [
        line[line.index("(") + 1 : -1] for line in text.splitlines() if line.startswith("![")
    ]
    assert len(figures) >= 7
    for name in figures:
        assert (out / name).read_bytes()[:8] == PNG


def test_cli_runs_a_suite_into_the_report(tmp_path):
    pytest.importorskip("matplotlib", reason="the report's figures need matplotlib")
    assert (
        main(
            [
                "bench",
                "report",
                "--out",
                str(tmp_path),
                "--run",
                "ntt",
                "--device",
                "cpu",
                "--quick",
            ]
        )
        == 0
    )
    assert (tmp_path / "raw" / "bench_ntt.json").exists()
    assert "## ntt" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "ntt_floor.png").read_bytes()[:8] == PNG


def test_nothing_to_report_is_refused(tmp_path):
    import ember

    with pytest.raises(ember.ParameterError, match="nothing to report"):
        make_report(tmp_path)
    with pytest.raises(ember.ParameterError, match="does not exist"):
        make_report(tmp_path, [tmp_path / "missing.json"])
