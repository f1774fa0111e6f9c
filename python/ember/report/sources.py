"""The inputs of a benchmark report: Ember's `ember bench ... --json` files, recognized by their
"benchmark" field, and peers' JSON-lines files (one record a line with a "peer" field: Phantom,
DESILO, cuFHE, OpenFHE, ...), measured in the same run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParameterError


@dataclass
class Sources:
    """ember: benchmark kind ("ntt", "ckks", ...) -> its JSON documents in the order given;
    peers: peer name ("phantom", "desilo", ...) -> its records; files: every path read."""

    ember: dict = field(default_factory=dict)
    peers: dict = field(default_factory=dict)
    files: list = field(default_factory=list)

    def latest(self, kind: str) -> dict | None:
        docs = self.ember.get(kind)
        return docs[-1] if docs else None

    def peer(self, name: str) -> list:
        return self.peers.get(name, [])


def benchmark_kind(doc: dict) -> str | None:
    """The benchmark a JSON document of Ember holds (older `bench cggi` files have no
    "benchmark" field: they are known by their "gates" and "pbs" tables)."""
    if "benchmark" in doc:
        return str(doc["benchmark"])
    if "gates" in doc and "pbs" in doc:
        return "cggi"
    return None


def _records(text: str) -> list:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a harness's progress line that happens to start with a brace
    return out


def load_sources(paths) -> Sources:
    """Reads each file (a folder: every *.json and *.jsonl in it, sorted by name)."""
    src = Sources()
    files = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files += sorted(list(p.glob("*.json")) + list(p.glob("*.jsonl")))
        elif p.exists():
            files.append(p)
        else:
            raise ParameterError(f"report input {p} does not exist")
    for f in files:
        text = f.read_text()
        try:
            doc = json.loads(text)
            docs = [doc] if isinstance(doc, dict) else []
        except json.JSONDecodeError:
            docs = _records(text)
        used = False
        for d in docs:
            if "peer" in d:
                src.peers.setdefault(str(d["peer"]).lower(), []).append(d)
                used = True
            elif (kind := benchmark_kind(d)) is not None:
                src.ember.setdefault(kind, []).append(d)
                used = True
        if used:
            src.files.append(str(f))
    return src


__all__ = ["Sources", "benchmark_kind", "load_sources"]
