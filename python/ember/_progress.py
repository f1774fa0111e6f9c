"""A minimal progress bar for long-running calls (key generation for bootstrapping, circuit
runs): drawn on stderr only when it is a terminal; progress=False turns it off."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str, enabled: bool = True):
        self.total, self.label, self.done = max(total, 1), label, 0
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()

    def step(self, count: int = 1, note: str = "") -> None:
        """`count` more done; `note` (a rate, say) is shown after the time."""
        self.done += count
        if self.enabled:
            width = 30
            filled = width * self.done // self.total
            elapsed = time.perf_counter() - self.start
            sys.stderr.write(
                f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                f"{self.done}/{self.total} {elapsed:.1f}s" + (f" {note}" if note else "")
            )
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
