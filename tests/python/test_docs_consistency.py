"""The docs cannot drift from the code: the preset tables of docs/ckks.md and docs/bfv-bgv.md
(N, levels, log2 QP, dnum) against the parameter sets the code builds; the bootstrap timings
that README.md and docs/ckks.md quote agree; every measured figure README.md, docs/ckks.md and
docs/bfv-bgv.md quote is one that bench/RESULTS.md (the report) has; LICENSE is the Apache-2.0
text pyproject declares; `ember --version` prints the version."""

from __future__ import annotations

import re
from pathlib import Path

import ember
import pytest
from ember import bfv, bgv, ckks
from ember.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


def table_rows(path: Path, size_column: str) -> list[dict]:
    """Rows (header -> cell) of every markdown table whose header names `size_column`."""
    rows, header = [], None
    for line in path.read_text().splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells if size_column in cells else []
        elif header and not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells)))
    return rows


def leading_int(cell: str) -> int:
    return int(re.match(r"\d+", cell).group())


def ring_degree(cell: str) -> int:
    return 2 ** int(cell[2:]) if cell.startswith("2^") else int(cell)


def test_ckks_preset_table():
    rows = table_rows(ROOT / "docs" / "ckks.md", "log2(QP)")
    assert {r["preset"] for r in rows} == set(ckks.Params.presets())
    for row in rows:
        p = ckks.Params.preset(row["preset"])
        assert ring_degree(row["N"]) == p.n, row
        assert int(row["log2(QP)"]) == p.total_bits, row
        assert leading_int(row["dnum"]) == p.dnum, row
        levels = row.get("levels", row.get("levels between bootstraps"))
        assert leading_int(levels) == p.levels, row


def test_bfv_bgv_preset_table():
    rows = table_rows(ROOT / "docs" / "bfv-bgv.md", "log2 QP")
    mods = {"bfv": bfv, "bgv": bgv}
    named = set()
    for row in rows:
        scheme, name = (c.strip("`") for c in row["preset"].split())
        p = mods[scheme].Params.preset(name)
        named.add((scheme, name))
        assert ring_degree(row["N"]) == p.n, row
        assert int(row["log2 QP"]) == p.total_bits, row
        assert int(row["P"]) == sum(p.special_bits), row
    assert named == {(s, n) for s, m in mods.items() for n in m.Params.presets()}


def test_bootstrap_timings_agree():
    pattern = r"(\d+\.\d) ms for real (?:values )?and (\d+\.\d)\s+ms for complex"
    quoted = [
        re.search(pattern, " ".join((ROOT / f).read_text().split())).groups()
        for f in ("README.md", "docs/ckks.md")
    ]
    assert quoted[0] == quoted[1]


# A figure is a number (or a list/range of numbers: "387.4 and 373.7 ms", "26-32 %") with a unit of
# time, a ratio ("2.01x", written without a space, unlike "2 x N/2"), a rate or an accuracy.
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
MEASURE_UNIT = (
    r"x|\s?(?:ms|us|s|seconds|minutes|CPU-seconds|%|gates per second|images/s|images per second"
    r"|bits of precision)"
)
FIGURE = re.compile(
    rf"(?<![\w.^/-])((?:{NUMBER})(?:\s*(?:/|,|and|to|-)\s*(?:{NUMBER}))*)({MEASURE_UNIT})(?!\w)"
)
REPORT_NUMBER = re.compile(rf"(?<![\w.])({NUMBER})(x?)(?!\w)")

# Figures the docs quote that are not the report's measurements, each with why.
NOT_FROM_THE_REPORT = {
    "2 to 3 minutes": "the build's duration on 2 cores (README requirements), not a benchmark",
    "270 CPU-seconds": "the build's CPU time (README requirements), not a benchmark",
    "26-32 %": "a past A/B (fourteenth session), cited from RESULTS.md's git history",
    "6-9 %": "a past A/B (fourteenth session), cited from RESULTS.md's git history",
    "1-13 %": "a past A/B (fourteenth session), cited from RESULTS.md's git history",
}
CHECKED_DOCS = ("README.md", "docs/ckks.md", "docs/bfv-bgv.md")


def plain_text(path: Path) -> str:
    """The file's text on one line without bold markers: figures split over lines still match."""
    return " ".join(path.read_text().replace("**", "").split())


def figure_key(number: str, ratio: bool) -> str:
    """'1,234' and '1234' are the same figure; a ratio keeps its x ('2.01x' is not '2.01')."""
    return number.replace(",", "") + ("x" if ratio else "")


def quoted_figures(path: Path) -> list[tuple[str, str]]:
    """(phrase as written, figure key) for every measured figure the file quotes."""
    found = []
    for match in FIGURE.finditer(plain_text(path)):
        phrase, unit = match.group(0), match.group(2).strip()
        if phrase not in NOT_FROM_THE_REPORT:
            found += [
                (phrase, figure_key(n, unit == "x")) for n in re.findall(NUMBER, match.group(1))
            ]
    return found


def report_figures() -> set[str]:
    """Every number bench/RESULTS.md writes (in prose or table cells), ratios as ratios."""
    text = plain_text(ROOT / "bench" / "RESULTS.md")
    return {figure_key(n, bool(x)) for n, x in REPORT_NUMBER.findall(text)}


@pytest.mark.parametrize("doc", CHECKED_DOCS)
def test_quoted_figures_are_the_reports(doc):
    report = report_figures()
    stale = [(phrase, key) for phrase, key in quoted_figures(ROOT / doc) if key not in report]
    assert not stale, (
        f"{doc} quotes figures that bench/RESULTS.md does not have: {stale}; quote the report's "
        "current figure, or add a figure that is not a measurement to NOT_FROM_THE_REPORT with why"
    )


def test_quoted_figures_are_found():
    readme = {key for _, key in quoted_figures(ROOT / "README.md")}
    assert {"17.6", "23.0", "41239", "4.42x"} <= readme
    docs = " ".join(plain_text(ROOT / doc) for doc in CHECKED_DOCS)
    unused = [phrase for phrase in NOT_FROM_THE_REPORT if phrase not in docs]
    assert not unused, f"NOT_FROM_THE_REPORT lists phrases no doc quotes any more: {unused}"


def test_license_and_version(capsys):
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and len(text.splitlines()) > 190
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text()
    with pytest.raises(SystemExit) as done:
        cli_main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"ember {ember.__version__}"
