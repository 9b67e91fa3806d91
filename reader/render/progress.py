"""A one-line progress bar on stderr for long searches (only on a terminal: logs and pipes stay clean)."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressLine:
    """Called as progress(stage, simulations done, simulations in this round); `close()` clears the line.
    The bar fills by stage (the search does not know in advance how many rounds a stage takes)."""

    STAGES = ("search", "target", "capacity")  # plan's

    def __init__(self, label: str, stream: TextIO = sys.stderr, stages: tuple[str, ...] = STAGES) -> None:
        self.label = label
        self.stages = stages
        self.stream = stream
        self.enabled = stream.isatty()
        self.started = time.monotonic()
        self.width = 0

    def __call__(self, stage: str, done: int, running: int) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        index = self.stages.index(stage) if stage in self.stages else 0
        filled = int(20 * (index + (0.5 if running else 1.0)) / len(self.stages))
        bar = "#" * filled + "-" * (20 - filled)
        text = (f"{self.label} [{bar}] {stage:<8} {done:4d} simulated"
                + (f", {running} running" if running else "") + f"  {elapsed:5.0f} s")
        self.width = max(self.width, len(text))
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
