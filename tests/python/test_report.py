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


WORDS_RUN = "2026-11-28s30_h200"
WORDS_FILES = [
    f"{WORDS_RUN}_bench_boot_N16_boot32.json",
    f"{WORDS_RUN}_bench_boot_N16_boot.json",
    f"{WORDS_RUN}_bench_ckks32.json",
    f"{WORDS_RUN}_cheddar_boot.jsonl",
    f"{WORDS_RUN}_phantom_ckks.jsonl",
]


def test_words_tables_hold_cheddar_and_phantom_of_the_same_run():
    # Issue 33's comparison: both word widths' bootstraps beside Cheddar's, HMult beside Phantom's.
    from ember.report import tables

    src = load_sources([RESULTS / f for f in WORDS_FILES])
    assert {"cheddar", "phantom"} <= set(src.peers)
    boot = tables.boot_words_table(src.ember["boot"], src.peer("cheddar"))
    ours = json.loads((RESULTS / WORDS_FILES[0]).read_text())
    cheddar = next(
        r for r in src.peer("cheddar") if r.get("record") == "bootstrap" and not r.get("min_ks")
    )
    assert boot.rows[0][0] == "Ember N16_boot32" and boot.rows[-1][0].startswith("Cheddar")
    assert boot.rows[0][2] == f"{ours['bootstrap_ms']:.2f}"
    assert boot.rows[-1][2] == f"{cheddar['bootstrap_ms']:.2f}"
    pair = next(p for p in boot.pairs if p.group == "bootstrap" and p.op == "Ember N16_boot32")
    assert pair.ratio == pytest.approx(cheddar["bootstrap_ms"] / ours["bootstrap_ms"])
    hmult = tables.hmult_words_table(src.latest("ckks32"), src.peer("phantom"))
    assert [r[1] for r in hmult.rows if r[0] == "Phantom"] == ["16_27m7s", "16_36m4s"]
    e32 = json.loads((RESULTS / WORDS_FILES[2]).read_text())["results"][0]
    ph = next(
        r
        for r in src.peer("phantom")
        if r.get("set") == "16_27m7s" and r.get("op") == "multiply_relin"
    )
    ratio = ph["wall_median_us"] / 1e3 / e32["hmult_ms"]
    assert f"16_27m7s {ratio:.2f}x" in hmult.rows[0][-1]
