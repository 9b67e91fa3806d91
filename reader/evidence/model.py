"""The one Evidence type: what the scoring rules of the verdict read, from any source.

A source fills what it can see and leaves the rest None (unknown, not zero): the simulator sees every
step; a server's metrics see counters exactly, histograms as buckets, and gauges only at the moments they
were sampled; a log's stats lines see what they print. The verdict never asks where evidence came from,
only whether a figure is known.

Sampled state (running, waiting, KV usage) is counted over `samples` moments of kind `sample_unit`:
every engine step for the simulator, every scrape (or Prometheus point) for metrics.

`figures` holds any further named quantity a source can report (memory terms from a log, for example);
the observed-beside-predicted comparison (compare.py) joins predicted and observed figures by key, so a
new source adds rows by adding figures, without a change here.
"""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, Field

from ..sim.result import LatencyStats, StepTimeEvidence


class Figure(BaseModel):
    """One named quantity a source reports, for the comparison table.

    key: stable id, shared by the predicted and the observed side (e.g. "memory.weights_gib").
    group: the table section (load, kv, scheduling, latency, throughput, memory, ...).
    tolerance: relative difference within which predicted and observed agree (None: shown, never flagged).
    if_off: the likely reason when they disagree.
    """

    key: str
    label: str
    value: Optional[float] = None
    unit: str = ""
    group: str = "other"
    exact: bool = False           # a count the source keeps exactly (not an estimate from buckets or samples)
    kind: Optional[str] = None    # what kind of figure (compare.TOLERANCE: count, gauge, bucket, setting)
    tolerance: Optional[float] = None
    if_off: str = ""
    low: Optional[float] = None   # the range the value is only known to lie in (a bucket, a span's bounds)
    high: Optional[float] = None
    bound: str = ""               # why only a bound is known (a client's view of a server-side figure)


class Evidence(BaseModel):
    source: str                   # "simulation", "metrics", "prometheus", "log", ...
    description: str = ""         # where it came from, in words
    duration_s: Optional[float] = None
    # metrics: the busy span's lower bound when the snapshots do not resolve it (duration_s is then the upper)
    duration_low_s: Optional[float] = None

    # the load
    num_requests: int = 0         # requests that finished (or, simulated, were sent)
    request_throughput: Optional[float] = None   # finished requests per second
    output_throughput: Optional[float] = None    # generated tokens per second
    total_token_throughput: Optional[float] = None
    prompt_tokens: Optional[LatencyStats] = None  # per-request prompt length (tokens)
    output_tokens: Optional[LatencyStats] = None  # per-request output length (tokens)
    prompt_token_share: Optional[float] = None    # prompt / (prompt + output) tokens computed
    prompt_tokens_total: Optional[int] = None
    output_tokens_total: Optional[int] = None

    # exact counts
    num_steps: Optional[int] = None               # engine steps, every one (a simulation counts them all)
    steps_with_output: Optional[int] = None       # steps in which a request got a token (what vLLM's
                                                  # vllm:iteration_tokens_total counts: one per batch of outputs)
    preemptions: int = 0
    preempted_requests: Optional[int] = None      # requests preempted at least once
    recomputed_tokens: Optional[int] = None
    prefix_cache_queries: Optional[int] = None    # tokens
    prefix_cache_hits: Optional[int] = None

    # the KV cache
    num_gpu_blocks: Optional[int] = None
    block_size: Optional[int] = None
    kv_cache_tokens: Optional[int] = None
    kv_usage_peak: Optional[float] = None
    kv_usage_mean: Optional[float] = None
    fraction_time_kv_above_95pct: Optional[float] = None

    # scheduler state, sampled
    samples: int = 0
    sample_unit: str = "steps"
    max_num_seqs: Optional[int] = None
    token_budget: Optional[int] = None
    running_mean: Optional[float] = None
    running_peak: Optional[float] = None
    waiting_peak: int = 0                         # requests left waiting (observed: a queue that lasted)
    requests_queued: Optional[int] = None         # metrics: requests whose queueing time shows a queue that lasted
    waiting_mean: Optional[float] = None
    waiting_by_reason: dict[str, float] = Field(default_factory=dict)  # mean per reason the server gives
    samples_blocked_by_kv: Optional[int] = None   # requests waited for free KV blocks
    samples_seqs_full_blocks_free: Optional[int] = None  # max_num_seqs full while KV blocks were free
    samples_stopped_by_budget: Optional[int] = None      # the token budget stopped admission
    admission_stops: dict[str, int] = Field(default_factory=dict)  # simulated: steps by stop reason

    # the token budget, per step
    budget_fill_mean: Optional[float] = None      # tokens / budget, mean over steps that ran
    budget_full_share: Optional[float] = None     # share of steps that used (about) the whole budget
    mean_tokens_per_step: Optional[float] = None
    mean_seqs_per_step: Optional[float] = None

    # latencies (ms)
    ttft_ms: LatencyStats = Field(default_factory=LatencyStats)
    itl_ms: LatencyStats = Field(default_factory=LatencyStats)
    tpot_ms: LatencyStats = Field(default_factory=LatencyStats)
    e2el_ms: LatencyStats = Field(default_factory=LatencyStats)
    queue_time_ms: LatencyStats = Field(default_factory=LatencyStats)

    # step times: every step's (a simulation), or the mean while busy (metrics: time over steps, in the intervals
    # between snapshots in which requests were in the server throughout)
    step_time: Optional[StepTimeEvidence] = None
    step_ms_mean: Optional[float] = None

    # metrics: the bucket (low, high) each bucket-derived percentile lies in, by "<histogram>.<median|p90|p99>"
    bucket_ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    unknown: list[str] = Field(default_factory=list)   # figure keys the source could not read (not zero)

    figures: list[Figure] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def requests_waited(self) -> bool:
        return self.waiting_peak > 0 or bool(self.requests_queued)

    def share(self, count: Optional[int]) -> float:
        """A count of sampled moments as a share of all samples (0 when unknown)."""
        return (count or 0) / self.samples if self.samples else 0.0

    def figure(self, key: str) -> Optional[Figure]:
        return next((f for f in self.figures if f.key == key), None)
