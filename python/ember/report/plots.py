"""The report's figures (PNG, matplotlib without a display): speedups over each peer per
operation, time against the hardware floor, scaling over devices, bootstrapping phases."""

from __future__ import annotations

from pathlib import Path

from ..errors import ParameterError


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display on servers and CI
        import matplotlib.pyplot as plt
    except ImportError as e:  # an optional dependency of the report alone
        raise ParameterError(
            "the benchmark report draws with matplotlib: pip install matplotlib "
            "(or pip install 'ember-fhe[report]')"
        ) from e
    return plt


def speedup_chart(pairs: list, peer: str, title: str, path: Path) -> Path | None:
    """Horizontal bars of the peer's time over Ember's for each operation (log scale; right of
    the line at 1, Ember is faster). None when no pair has this peer's figure."""
    rows = [p for p in pairs if p.peer == peer and p.theirs is not None]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.4))
    labels = [f"{p.group}: {p.op}" for p in rows]
    ratios = [p.ratio for p in rows]
    colors = ["tab:green" if r >= 1 else "tab:red" for r in ratios]
    ax.barh(range(len(rows)), ratios, color=colors)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel(f"{peer} time / Ember time (log scale; > 1: Ember faster)")
    ax.set_title(title, fontsize=9)
    for i, r in enumerate(ratios):
        ax.text(r, i, f" {r:.2f}x", va="center", fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def floor_chart(ntt: dict, path: Path) -> Path | None:
    """The NTT's forward time against the one-pass memory floor (read and write once at the
    measured copy bandwidth), by size, for the schedule the library picks."""
    rows = [r for r in ntt.get("results", []) if r["variant"].startswith("auto")]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.6))
    x = range(len(rows))
    ax.plot(x, [r["forward_us"] for r in rows], "o-", label="Ember forward")
    ax.plot(x, [r["inverse_us"] for r in rows], "s-", label="Ember inverse")
    ax.plot(x, [r["floor_us"] for r in rows], "k--", label="memory floor (one pass)")
    ax.set_xticks(list(x), [f"2^{r['log_n']}x{r['limbs']}" for r in rows], rotation=60, fontsize=6)
    ax.set_yscale("log")
    ax.set_ylabel("microseconds (log)")
    ax.set_title(
        f"NTT against the hardware floor, {ntt['device_name']} ({ntt['date']})", fontsize=9
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def scaling_chart(series: dict, title: str, path: Path) -> Path | None:
    """Speedup against the number of devices, one line per workload, and the ideal."""
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    most = 1
    for label, pts in series.items():
        pts = sorted(pts)
        most = max(most, pts[-1][0])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    ax.plot([1, most], [1, most], "k:", label="ideal")
    ax.set_xlabel("devices")
    ax.set_ylabel("speedup over one device")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def phases_chart(boot: dict, path: Path) -> Path | None:
    """One stacked bar per kind of input: the bootstrap's phases in milliseconds."""
    kinds = [("complex", boot)] + [(k, boot[k]) for k in ("real",) if boot.get(k)]
    kinds = [(k, r["phases_ms"]) for k, r in kinds if r.get("phases_ms")]
    if not kinds:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 1.0 + 0.6 * len(kinds)))
    for i, (kind, phases) in enumerate(kinds):
        left = 0.0
        for j, (name, ms) in enumerate(phases.items()):
            ax.barh(i, ms, left=left, color=f"C{j}", label=name if i == 0 else None)
            ax.text(left + ms / 2, i, f"{ms:.1f}", ha="center", va="center", fontsize=7)
            left += ms
    ax.set_yticks(range(len(kinds)), [k for k, _ in kinds])
    ax.set_xlabel("milliseconds")
    ax.set_title(f"Bootstrapping phases, {boot['preset']}, {boot['device_name']}", fontsize=9)
    ax.legend(fontsize=7, ncol=4, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["floor_chart", "phases_chart", "scaling_chart", "speedup_chart"]
