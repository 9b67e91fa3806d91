"""Progress on stderr for long commands (plan's search, sweep's grid, observe's scraping, the diagnose --metrics
window): a line rewritten in place on a terminal; nothing in a pipe or in CI (`CI` set), so logs stay clean,
unless the user asks for it (--progress), and then one plain line per update."""
from __future__ import annotations

import os
import sys
import time
from typing import Optional, TextIO


def shown_by_default(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("CI")


class ProgressLine:
    """`say(text)` shows a line; `close()` clears it. Called as progress(stage, simulations done, simulations in
    this round), it draws plan's bar, which fills by stage (the search does not know in advance how many rounds a
    stage takes). show: None for the default (a terminal outside CI), True or False to force it."""

    STAGES = ("search", "target", "capacity")  # plan's

    def __init__(self, label: str, stream: TextIO = sys.stderr, show: Optional[bool] = None,
                 stages: tuple[str, ...] = STAGES) -> None:
        self.label = label
        self.stages = stages
        self.stream = stream
        self.enabled = shown_by_default(stream) if show is None else show
        self.in_place = stream.isatty()
        self.started = time.monotonic()
        self.width = 0

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def say(self, text: str) -> None:
        if not self.enabled:
            return
        line = f"{self.label}: {text}"
        if self.in_place:
            self.width = max(self.width, len(line))
            self.stream.write("\r" + line.ljust(self.width))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def __call__(self, stage: str, done: int, running: int) -> None:
        index = self.stages.index(stage) if stage in self.stages else 0
        filled = int(20 * (index + (0.5 if running else 1.0)) / len(self.stages))
        bar = "#" * filled + "-" * (20 - filled)
        self.say(f"[{bar}] {stage:<8} {done:4d} simulated" + (f", {running} running" if running else "")
                 + f"  {self.elapsed_s:5.0f} s")

    def close(self) -> None:
        if self.enabled and self.in_place and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
