"""Bounded traffic for the live tests and fixture recorders: token-id prompts of chosen lengths sent to a
LiveServer all at once (a burst) or one after another at a fixed pace, and a background scraper of its
/metrics page. Every loop is bounded in count and time; all traffic stays on 127.0.0.1."""
from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from reader.observe.scrape import Scrape, save


def request_lengths(seed: int, count: int, prompt: tuple[int, int], output: tuple[int, int]) -> list[tuple[int, int]]:
    """(prompt tokens, output tokens) per request, uniform in the given inclusive ranges."""
    rng = random.Random(seed)
    return [(rng.randint(*prompt), rng.randint(*output)) for _ in range(count)]


def prompt_ids(seed: int, length: int) -> list[int]:
    """A token-id prompt; ids 3..1023 avoid the tiny model's special tokens."""
    rng = random.Random(seed)
    return [rng.randint(3, 1023) for _ in range(length)]


def burst(server, lengths: list[tuple[int, int]], timeout: float = 600.0) -> list[dict]:
    """Every request at once; returns the completions in request order."""
    def one(i: int) -> dict:
        p, o = lengths[i]
        return server.complete(prompt_ids(i, p), o, timeout=timeout)
    with ThreadPoolExecutor(max_workers=len(lengths)) as pool:
        return list(pool.map(one, range(len(lengths))))


def paced(server, lengths: list[tuple[int, int]], gap_s: float, timeout: float = 120.0) -> list[dict]:
    """One request every gap_s seconds, each waited for before the next: nothing ever queues."""
    out = []
    for i, (p, o) in enumerate(lengths):
        started = time.monotonic()
        out.append(server.complete(prompt_ids(i, p), o, timeout=timeout))
        time.sleep(max(0.0, gap_s - (time.monotonic() - started)))
    return out


class Scraper:
    """Scrapes the server's /metrics every `interval` seconds in a thread until stopped (at most `limit` scrapes)
    and keeps each scrape; `save(path)` writes them in the format `vllm-reader observe` reads."""

    def __init__(self, server, interval: float, limit: int = 2000):
        self.server, self.interval, self.limit = server, interval, limit
        self.scrapes: list[Scrape] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "Scraper":
        self.take()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self.take()

    def take(self) -> Scrape:
        scrape = Scrape(text=self.server.get("/metrics"), time=time.time(), source=self.server.url + "/metrics")
        self.scrapes.append(scrape)
        return scrape

    def save(self, path: Path) -> None:
        save(self.scrapes, path)

    def _run(self) -> None:
        while not self._stop.wait(self.interval) and len(self.scrapes) < self.limit:
            self.take()
