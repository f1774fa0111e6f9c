"""`ember bench report`: runs the chosen suites (or reads their JSON), reads the peers' figures
from the same run, and writes DIR/report.md with PNG figures beside it."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from ..errors import ParameterError
from . import plots, tables
from .sources import load_sources

# The order of the report's sections.
KINDS = [
    "ntt",
    "ckks",
    "ckks32",
    "bfv",
    "bgv",
    "boot",
    "cggi",
    "multi",
    "split",
    "dist",
    "circuit",
    "apps",
]


def _commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def run_suites(suites, out: Path, device: str | None, quick: bool) -> list:
    """Runs each `ember bench` suite and writes its JSON under out/raw; returns the paths."""
    from ..bench import run_bench

    raw = out / "raw"
    paths = []
    for suite in suites:
        if suite not in KINDS:
            raise ParameterError(f"unknown suite {suite!r}; suites: {', '.join(KINDS)}")
        if suite == "apps":
            from ..apps.bench import bench_apps

            doc = bench_apps(device=device, quick=quick)
        else:
            doc = run_bench(suite, device=device, quick=quick)
        doc.setdefault("benchmark", suite)
        raw.mkdir(parents=True, exist_ok=True)
        path = raw / f"bench_{suite}.json"
        path.write_text(json.dumps(doc, indent=1))
        paths.append(path)
    return paths


def make_report(out, inputs=(), run=(), device: str | None = None, quick: bool = False) -> Path:
    """Writes out/report.md (and its PNGs) from the suites in `run` (run now) and the files or
    folders in `inputs` (Ember's bench JSON and peers' JSON lines). Returns the report's path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = list(inputs) + run_suites(list(run), out, device, quick)
    if not paths:
        raise ParameterError("nothing to report: give --run SUITES or JSON files / folders")
    src = load_sources(paths)
    if not src.ember:
        raise ParameterError("no Ember benchmark JSON among the inputs (ember bench ... --json)")
    phantom, desilo = src.peer("phantom"), src.peer("desilo")
    parts = [
        "# Ember benchmark report",
        "",
        f"Written {time.strftime('%Y-%m-%d %H:%M')} at commit {_commit() or 'unknown'} from "
        f"{len(src.files)} files: " + ", ".join(f"`{Path(f).name}`" for f in src.files) + ".",
        (
            "Peers' figures are those measured in the same run; ratios are the peer's time over "
            "Ember's (above 1: Ember is faster)."
        ),
        "",
    ]

    def figure(path, caption):
        if path is not None:
            parts.append(f"![{caption}]({path.name})\n")

    for kind in KINDS:
        doc = src.latest(kind)
        if doc is None:
            continue
        parts.append(f"## {kind}\n")
        if kind == "ntt":
            t = tables.ntt_table(doc, phantom)
            parts += [t.markdown(), tables.ntt_schedules_table(doc).markdown()]
            figure(plots.floor_chart(doc, out / "ntt_floor.png"), "NTT against the floor")
            figure(
                plots.speedup_chart(t.pairs, "Phantom", t.title, out / "ntt_phantom.png"),
                "NTT vs Phantom",
            )
        elif kind == "ckks":
            t = tables.ckks_table(doc, phantom, desilo)
            parts.append(t.markdown())
            for peer in ("Phantom", "DESILO"):
                figure(
                    plots.speedup_chart(t.pairs, peer, t.title, out / f"ckks_{peer.lower()}.png"),
                    f"CKKS vs {peer}",
                )
        elif kind in ("bfv", "bgv"):
            t = tables.integer_table(doc, phantom)
            parts.append(t.markdown())
            figure(
                plots.speedup_chart(t.pairs, "Phantom", t.title, out / f"{kind}_phantom.png"),
                f"{kind} vs Phantom",
            )
        elif kind == "ckks32":
            parts.append(tables.hmult_words_table(doc, phantom).markdown())
        elif kind == "boot":
            t = tables.boot_table(doc, desilo)
            parts.append(t.markdown())
            cheddar = src.peer("cheddar")
            if cheddar or len({d["preset"] for d in src.ember["boot"]}) > 1:
                w = tables.boot_words_table(src.ember["boot"], cheddar)
                parts.append(w.markdown())
                figure(
                    plots.speedup_chart(w.pairs, "Cheddar", w.title, out / "boot_cheddar.png"),
                    "bootstrap vs Cheddar",
                )
            figure(plots.phases_chart(doc, out / "boot_phases.png"), "bootstrapping phases")
            figure(
                plots.speedup_chart(t.pairs, "DESILO", t.title, out / "boot_desilo.png"),
                "bootstrap vs DESILO",
            )
        elif kind == "cggi":
            others = {
                k: v for k, v in src.peers.items() if k not in ("phantom", "desilo", "cheddar")
            }
            parts.append(tables.cggi_table(doc, others).markdown())
        elif kind == "apps":
            parts.append(tables.apps_table(doc).markdown())
        series = tables.scaling_series(doc)
        if series:
            if kind != "apps":
                parts += ["| workload | devices: speedup |", "|---|---|"]
                parts += [
                    f"| {k} | " + ", ".join(f"{d}: {s:.2f}x" for d, s in v) + " |"
                    for k, v in series.items()
                ]
                parts.append("")
            figure(
                plots.scaling_chart(
                    series, f"{kind}: scaling over devices", out / f"{kind}_scaling.png"
                ),
                f"{kind} scaling",
            )
    report = out / "report.md"
    report.write_text("\n".join(parts) + "\n")
    return report


__all__ = ["KINDS", "make_report", "run_suites"]
