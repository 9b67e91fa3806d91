"""Scrapes as samples: the exposition text parsed by prometheus_client's own parser, kept as plain
(name, labels, value) triples at one time, so a live page, a saved file and a Prometheus range query
all become the same list of snapshots."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ReaderError
from .scrape import Scrape


@dataclass(frozen=True)
class Sample:
    name: str
    labels: tuple[tuple[str, str], ...]   # sorted (label, value) pairs
    value: float

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)


@dataclass
class Snapshot:
    time: float
    source: str
    samples: list[Sample] = field(default_factory=list)
    time_known: bool = True


def parse(scrape: Scrape) -> Snapshot:
    """The vLLM samples of one scrape; a page that is not Prometheus text, or holds no vllm: metric, is bad input."""
    from prometheus_client.parser import text_string_to_metric_families

    samples: list[Sample] = []
    other = 0
    example = ""
    try:
        for family in text_string_to_metric_families(scrape.text):
            for s in family.samples:
                if s.name.startswith("vllm:"):
                    samples.append(Sample(s.name, tuple(sorted(s.labels.items())), float(s.value)))
                else:
                    other += 1
                    example = example or s.name
    except (ValueError, TypeError, IndexError) as err:
        raise ReaderError(f"not Prometheus metrics text ({_short(err)}): expected a vLLM server's /metrics page.",
                          file=scrape.source) from None
    if not samples:
        what = (f"it has {other} metric samples (e.g. {example}) but none named vllm:*" if other
                else "it holds no metrics at all")
        raise ReaderError(f"this is not a vLLM server's metrics page: {what}.", file=scrape.source,
                          hint="Point observe at the vLLM OpenAI server's /metrics (the same port as /v1).")
    return Snapshot(time=scrape.time, source=scrape.source, samples=samples, time_known=scrape.time_known)


def _short(err: Exception) -> str:
    text = " ".join(str(err).split())
    return text[:160] + ("..." if len(text) > 160 else "")
