"""`vllm bench serve --save-result` files: what was measured, and the workload that produced it.

A result file (vllm/benchmarks/serve.py, main: `result_json`, v0.32.0) holds the benchmark's traffic
arguments (num_prompts, request_rate, burstiness, max_concurrency), `model_id`, the summary metrics
(duration, completed, failed, total_input_tokens, total_output_tokens, request/output/total token
throughput, mean/median/std/P<p> of ttft, tpot, itl and e2el in ms) and, with `--save-detailed`, one
entry per request: input_lens, output_lens, ttfts, itls, latencies, start_times, errors.

The workload a result is replayed with:
- per-request lengths from input_lens/output_lens when saved, else every request at the mean lengths
  (total tokens / completed) unless `--metadata random_input_len=... random_output_len=...
  random_range_ratio=...` recorded the random dataset's arguments;
- arrivals: the recorded send times (start_times) when nothing capped the concurrency (the client sends
  on its own schedule, whatever the server does); otherwise, and without details, a fresh draw of the
  benchmark's own process (Poisson or gamma at request_rate, all at once for inf), capped at
  max_concurrency as the client caps it (a request's clock starts when it is sent).

What the engine did, as the fit compares it (`fit_metrics`): the benchmark's own throughputs, and its
latency statistics recomputed over the requests the client received as a stream. A request whose tokens
all reached the client at once (its last token within 5% of its latency after its first, for three tokens
or more) was held up between the engine and the client (a busy API server or benchmark process coalesces a
stream into one read): its client-side TTFT is its end-to-end time and its TPOT is ~0, neither of which
says anything about engine steps. Without per-request details, or when fewer than a quarter of the
requests (or fewer than three) streamed, the file's latency statistics are not fitted, only its throughput.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..errors import ReaderError
from .delivery import BURST_FRACTION, bunched_waves

# Summary metrics the simulator reports too: bench key -> (SimResult attribute, LatencyStats field or None)
_LATENCY = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2el_ms"}
_STATS = {"mean": "mean", "median": "median", "p90": "p90", "p99": "p99"}
THROUGHPUTS = ("output_throughput", "request_throughput", "total_token_throughput")
DATASET_KEYS = ("random_input_len", "random_output_len", "random_range_ratio")
_REQUIRED = ("completed", "duration", "total_input_tokens", "total_output_tokens", "output_throughput",
             "num_prompts", "request_rate")


class BenchResult(BaseModel):
    """One benchmark run, as measured."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    path: str
    label: str
    model_id: str
    num_prompts: int
    request_rate: float  # requests per second; inf = all at once
    burstiness: float
    max_concurrency: Optional[int]
    completed: int
    failed: int
    duration_s: float
    total_input_tokens: int
    total_output_tokens: int
    metrics: dict[str, float]  # comparable metrics: output_throughput, median_tpot_ms, p99_ttft_ms, ...
    detailed: bool
    input_lens: tuple[int, ...] = ()
    output_lens: tuple[int, ...] = ()
    start_times: tuple[float, ...] = ()
    dataset_args: dict[str, Any] = {}  # random_input_len / random_output_len / random_range_ratio from --metadata
    fit_metrics: dict[str, float] = {}  # throughputs + latency statistics over the streamed requests
    burst_requests: int = 0  # requests the client received in one burst (see the module docstring)
    bunched_waves: int = 0  # closed-loop waves that finished in a bunch, of closed_waves (delivery.py)
    closed_waves: int = 0

    @property
    def mean_prompt_tokens(self) -> float:
        return self.total_input_tokens / max(self.completed, 1)

    def describe(self) -> str:
        rate = "all at once" if math.isinf(self.request_rate) else f"{self.request_rate:g} req/s"
        cap = f", at most {self.max_concurrency} in flight" if self.max_concurrency else ""
        mean_in = self.mean_prompt_tokens
        mean_out = self.total_output_tokens / max(self.completed, 1)
        return (f"{self.completed} requests, {rate}{cap}, prompts {mean_in:.0f} / outputs {mean_out:.0f} tokens on "
                f"average{'' if self.detailed else ' (summary only)'}")


def metric_names() -> list[str]:
    """Every metric a result can be compared on, in a stable order."""
    return list(THROUGHPUTS) + [f"{s}_{m}_ms" for m in _LATENCY for s in _STATS]


def sim_metric(result: Any, name: str) -> Optional[float]:
    """The same metric from a simulation's SimResult."""
    if name in THROUGHPUTS:
        return float(getattr(result, name))
    stat, metric, _ = name.split("_", 2)
    stats = getattr(result, _LATENCY[metric])
    value = getattr(stats, _STATS[stat])
    return None if value is None else float(value)


def read_bench(path: str | Path) -> BenchResult:
    """A result file, checked; anything that is not one is refused in one sentence naming the file."""
    from ..calibration.profile import read_input

    name = str(path)
    text = read_input(path, "the bench result")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ReaderError(f"not a `vllm bench serve` result: not valid JSON ({err.msg}). Save one with "
                          "`vllm bench serve ... --save-result`.", file=name, line=err.lineno) from None
    if not isinstance(data, dict) or any(k not in data for k in _REQUIRED):
        missing = next((k for k in _REQUIRED if not isinstance(data, dict) or k not in data), "")
        raise ReaderError(f"not a `vllm bench serve --save-result` file: it has no '{missing}'.", file=name,
                          key=missing or None)
    return _parse(data, name)


def _number(data: dict[str, Any], key: str, file: str, kind=float, low: Optional[float] = None) -> Any:
    value = data.get(key)
    if kind is float and value in ("inf", "Infinity"):
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ReaderError(f"'{key}' must be a number, not {value!r}.", file=file, key=key)
    if low is not None and value < low:
        raise ReaderError(f"'{key}' must be at least {low:g}, not {value!r}.", file=file, key=key)
    return kind(value)


def _parse(data: dict[str, Any], file: str) -> BenchResult:
    if data.get("ramp_up_strategy"):
        raise ReaderError("a benchmark with a request-rate ramp-up cannot be replayed (its rate changes during the "
                          "run); calibrate with fixed-rate runs.", file=file, key="ramp_up_strategy")
    completed = _number(data, "completed", file, int, 0)
    if completed < 1:
        raise ReaderError("the benchmark completed no request; there is nothing to calibrate on.", file=file,
                          key="completed")
    rate = _number(data, "request_rate", file, float)
    if rate <= 0:
        raise ReaderError(f"'request_rate' must be positive, not {rate!r}.", file=file, key="request_rate")
    concurrency = data.get("max_concurrency")
    if concurrency is not None:
        concurrency = _number(data, "max_concurrency", file, int, 1)
    metrics = {k: float(data[k]) for k in metric_names() if isinstance(data.get(k), (int, float))
               and not isinstance(data.get(k), bool)}
    _check_latency_lists(data, file)
    detail = _detail(data, file)
    result = dict(
        path=file, label=Path(file).name, model_id=str(data.get("model_id") or ""),
        num_prompts=_number(data, "num_prompts", file, int, 1), request_rate=rate,
        burstiness=_number(data, "burstiness", file, float, 0) if "burstiness" in data else 1.0,
        max_concurrency=concurrency, completed=completed, failed=int(data.get("failed") or 0),
        duration_s=_number(data, "duration", file, float, 0), total_input_tokens=_number(
            data, "total_input_tokens", file, int, 0), total_output_tokens=_number(data, "total_output_tokens", file,
                                                                                   int, 0),
        metrics=metrics, detailed=detail is not None,
        dataset_args={k: data[k] for k in DATASET_KEYS if k in data})
    if detail is not None:
        result.update(detail)
    result["fit_metrics"], result["burst_requests"] = _fit_metrics(data, metrics)
    result["bunched_waves"], result["closed_waves"] = bunched_waves(data)
    if result["burstiness"] <= 0:
        raise ReaderError("'burstiness' must be positive.", file=file, key="burstiness")
    return BenchResult(**result)


MIN_STREAMED_SHARE, MIN_STREAMED = 0.25, 3
LATENCY_LISTS = ("ttfts", "latencies", "itls")  # --save-detailed, one entry per request, beside output_lens


def _check_latency_lists(data: dict[str, Any], file: str) -> None:
    """Per-request latencies, where the file has them, are lists of numbers as long as output_lens: a file
    whose lists are damaged is refused rather than fitted on its throughput alone without a word."""
    present = [k for k in LATENCY_LISTS if k in data]
    if not present:
        return
    lens = data.get("output_lens")
    if not isinstance(lens, list):
        raise ReaderError(f"'output_lens' must be a list with one entry per request beside "
                          f"{', '.join(repr(k) for k in present)}.", file=file, key="output_lens")
    n = len(lens)
    for key in LATENCY_LISTS:
        value = data.get(key)
        if not isinstance(value, list):
            raise ReaderError(f"'{key}' must be a list with one entry per request (it is "
                              f"{'missing' if key not in data else type(value).__name__}, beside "
                              f"{', '.join(repr(k) for k in present)}).", file=file, key=key)
        if len(value) != n:
            raise ReaderError(f"'{key}' has {len(value)} entries and 'output_lens' {n}: one per request each.",
                              file=file, key=key)
        if key == "itls" and not all(isinstance(row, list) for row in value):
            raise ReaderError("'itls' must hold one list of inter-token latencies (seconds) per request.",
                              file=file, key=key)
        entries = [x for row in value for x in row] if key == "itls" else value
        bad = next((x for x in entries if not _is_seconds(x)), None)
        if bad is not None:
            raise ReaderError(f"'{key}' must hold numbers (seconds), not {bad!r}.", file=file, key=key)


def _is_seconds(x: Any) -> bool:
    """A latency entry: a number, or None (vLLM leaves some unset for a failed request)."""
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _fit_metrics(data: dict[str, Any], metrics: dict[str, float]) -> tuple[dict[str, float], int]:
    """The metrics the fit compares: throughputs, and latencies over the requests that streamed."""
    out = {k: v for k, v in metrics.items() if k in THROUGHPUTS}
    try:
        ttft = np.asarray(data["ttfts"], dtype=float)
        e2e = np.asarray(data["latencies"], dtype=float)
        out_len = np.asarray(data["output_lens"], dtype=float)
        itls = data["itls"]
        ok = np.array([not e for e in data.get("errors") or [""] * ttft.size], dtype=bool)
        assert ttft.size == e2e.size == out_len.size == ok.size == len(itls)
    except (KeyError, TypeError, ValueError, AssertionError):
        return out, 0
    ok &= np.isfinite(ttft) & np.isfinite(e2e) & (out_len >= 1)
    burst = ok & (out_len >= 3) & (e2e - ttft < BURST_FRACTION * e2e)
    streamed = ok & ~burst
    if streamed.sum() < max(MIN_STREAMED, MIN_STREAMED_SHARE * ok.sum()):
        return out, int(burst.sum())
    multi = streamed & (out_len > 1)
    tpot = (e2e[multi] - ttft[multi]) / (out_len[multi] - 1)
    itl = np.array([x for i in np.flatnonzero(streamed) for x in itls[i]], dtype=float)
    for name, values in (("ttft", ttft[streamed]), ("tpot", tpot), ("itl", itl), ("e2el", e2e[streamed])):
        if values.size:
            ms = values * 1000.0
            p90, p99 = np.percentile(ms, [90, 99])
            out.update({f"mean_{name}_ms": float(ms.mean()), f"median_{name}_ms": float(np.median(ms)),
                        f"p90_{name}_ms": float(p90), f"p99_{name}_ms": float(p99)})
    return out, int(burst.sum())


def _detail(data: dict[str, Any], file: str) -> Optional[dict[str, Any]]:
    """The successful requests' lengths and send times, when the file has them (--save-detailed)."""
    keys = ("input_lens", "output_lens", "start_times")
    if not all(isinstance(data.get(k), list) for k in keys):
        given = [k for k in keys if isinstance(data.get(k), list)]
        bad = next((k for k in keys if k in data and not isinstance(data[k], list)), None)
        if given and bad:
            raise ReaderError(f"'{bad}' must be a list with one entry per request, as {given[0]!r} is.", file=file,
                              key=bad)
        return None
    n = len(data["input_lens"])
    if any(len(data[k]) != n for k in keys):
        raise ReaderError("the per-request lists (input_lens, output_lens, start_times) have different lengths.",
                          file=file, key="start_times")
    errors = data.get("errors") if isinstance(data.get("errors"), list) and len(data["errors"]) == n else [""] * n
    rows = []
    for i in range(n):
        if errors[i]:
            continue  # a failed request: the benchmark counts no tokens for it
        row = []
        for key, kind in (("start_times", float), ("input_lens", int), ("output_lens", int)):
            try:
                if isinstance(data[key][i], bool):
                    raise TypeError
                row.append(kind(data[key][i]))
            except (TypeError, ValueError):
                raise ReaderError(f"request {i}'s entry in '{key}' must be a number, not {data[key][i]!r}.",
                                  file=file, key=key) from None
        rows.append(tuple(row))
    rows = [r for r in rows if r[1] >= 1 and r[2] >= 1]
    if not rows:
        return None
    rows.sort()
    return {"start_times": tuple(r[0] for r in rows), "input_lens": tuple(r[1] for r in rows),
            "output_lens": tuple(r[2] for r in rows)}


def workload(result: BenchResult, seed: int = 0) -> Any:
    """The requests of the benchmark as the simulator's Workload (see the module docstring)."""
    from ..sim.workload import Workload

    cap = result.max_concurrency
    if result.detailed:
        prompt = np.array(result.input_lens, dtype=np.int64)
        output = np.array(result.output_lens, dtype=np.int64)
        n = prompt.size
        if cap is None:
            starts = np.array(result.start_times, dtype=np.float64)
            arrival = starts - starts[0]
        else:
            arrival = _arrivals(result, n, seed)
    else:
        n = result.completed
        prompt, output = _summary_lengths(result, n, seed)
        arrival = _arrivals(result, n, seed)
    return Workload(arrival=arrival, prompt_len=prompt, output_len=output, prefix_group=np.full(n, -1, np.int64),
                    prefix_len=np.zeros(n, np.int64), priority=np.zeros(n, np.int64), max_concurrency=cap,
                    description=f"replay of {result.label}: {result.describe()}")


def _arrivals(result: BenchResult, n: int, seed: int) -> np.ndarray:
    """The benchmark's own arrival process (vllm/benchmarks/serve.py get_request: gamma gaps of shape
    burstiness and mean 1/rate; the first request at once)."""
    if math.isinf(result.request_rate):
        return np.zeros(n)
    rng = np.random.default_rng(seed)
    gaps = rng.gamma(result.burstiness, 1.0 / (result.request_rate * result.burstiness), size=n)
    gaps[0] = 0.0
    return np.cumsum(gaps)


def _summary_lengths(result: BenchResult, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Lengths without per-request details: the random dataset's arguments when --metadata recorded
    them (uniform within range_ratio of each, as vLLM's RandomDataset samples), else the means."""
    mean_in = max(1, round(result.total_input_tokens / result.completed))
    mean_out = max(1, round(result.total_output_tokens / result.completed))
    metadata = result.dataset_args
    try:
        want_in = int(metadata.get("random_input_len", mean_in))
        want_out = int(metadata.get("random_output_len", mean_out))
        ratio = float(metadata.get("random_range_ratio", 0.0))
    except (TypeError, ValueError):
        raise ReaderError("the random dataset's metadata (random_input_len, random_output_len, random_range_ratio) "
                          "must be numbers.", file=result.path) from None
    if not ratio:
        return np.full(n, want_in, np.int64), np.full(n, want_out, np.int64)
    rng = np.random.default_rng(seed + 1)

    def draw(center: int) -> np.ndarray:
        low, high = max(1, math.floor(center * (1 - ratio))), max(1, math.ceil(center * (1 + ratio)))
        return rng.integers(low, high + 1, size=n).astype(np.int64)

    return draw(want_in), draw(want_out)
