"""The docs cannot drift from the code: the preset tables of docs/ckks.md and docs/bfv-bgv.md
(N, levels, log2 QP, dnum) against the parameter sets the code builds; the bootstrap timings
that README.md and docs/ckks.md quote agree; LICENSE is the Apache-2.0 text pyproject declares;
`ember --version` prints the version."""

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


def test_license_and_version(capsys):
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and len(text.splitlines()) > 190
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text()
    with pytest.raises(SystemExit) as done:
        cli_main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"ember {ember.__version__}"
