"""What a simulation returns (pydantic, JSON-serializable). Latencies are in milliseconds and
named as `vllm bench serve` names them; throughputs are per second of simulated time."""
from __future__ import annotations

from pydantic import BaseModel, Field


class LatencyStats(BaseModel):
    count: int = 0
    mean: float | None = None
    median: float | None = None
    std: float | None = None
    p90: float | None = None
    p99: float | None = None
    max: float | None = None


class Goodput(BaseModel):
    """Requests meeting every given SLO (ms), per second (vllm bench serve --goodput)."""

    slos_ms: dict[str, float]
    good_requests: int
    request_goodput: float
    fraction_good: float


class TimeSeries(BaseModel):
    """Per-step values averaged over buckets of consecutive steps (at most `max_points` buckets)."""

    steps_per_point: int
    t_s: list[float] = Field(default_factory=list)
    kv_usage: list[float] = Field(default_factory=list)
    kv_usage_max: list[float] = Field(default_factory=list)
    running: list[float] = Field(default_factory=list)
    waiting: list[float] = Field(default_factory=list)
    scheduled_tokens: list[float] = Field(default_factory=list)


class StepTimeEvidence(BaseModel):
    """Slow steps and what was in them, against the average step."""

    p50_ms: float | None = None
    mean_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    spike_steps: int = 0                  # steps at or above the P99 step time
    spike_mean_tokens: float | None = None
    spike_mean_prefill_tokens: float | None = None
    spike_mean_seqs: float | None = None
    mean_tokens: float | None = None
    mean_prefill_tokens: float | None = None
    mean_seqs: float | None = None


class StepEvidence(BaseModel):
    """What limited the run, step by step (reader.evidence.from_sim makes it the diagnosis's Evidence)."""

    num_steps: int = 0
    steps_with_output: int = 0                   # steps in which at least one request got a token
    token_budget: int = 0
    budget_fill_mean: float | None = None        # scheduled tokens / budget, mean over steps
    steps_budget_full: int = 0                   # steps that used the whole token budget
    # Steps in which waiting requests were left waiting, by the reason admission stopped:
    # token_budget, max_num_seqs, kv_blocks, kv_full_sequence, prompt_exceeds_budget, preemption.
    admission_stops: dict[str, int] = Field(default_factory=dict)
    steps_seqs_full_blocks_free: int = 0         # max_num_seqs stopped admission while KV blocks were free
    steps_admission_blocked_by_kv: int = 0       # kv_blocks + kv_full_sequence
    steps_with_preemption: int = 0
    kv_usage_peak: float | None = None
    kv_usage_mean: float | None = None
    fraction_time_kv_above_95pct: float | None = None
    running_mean: float | None = None
    running_peak: int = 0
    waiting_peak: int = 0
    waiting_mean: float | None = None
    queue_time_ms: LatencyStats = Field(default_factory=LatencyStats)
    step_time: StepTimeEvidence = Field(default_factory=StepTimeEvidence)


class RequestRecords(BaseModel):
    """Per-request outcomes (seconds; NaN-free: null where a request never got there)."""

    prompt_len: list[int]
    output_tokens: list[int]
    send_time_s: list[float | None]
    first_scheduled_s: list[float | None]
    first_token_s: list[float | None]
    finish_s: list[float | None]
    max_itl_s: list[float]
    num_preemptions: list[int]


class SimResult(BaseModel):
    mode: str
    vllm_version: str
    seed: int
    workload: str
    settings: dict
    num_requests: int
    completed: int
    failed: int
    duration_s: float
    total_input_tokens: int
    total_output_tokens: int
    request_throughput: float
    output_throughput: float
    total_token_throughput: float
    offered_rate: float | None = None  # open-loop arrivals per second as drawn (Workload.offered_rate)
    ttft_ms: LatencyStats
    tpot_ms: LatencyStats
    itl_ms: LatencyStats
    e2el_ms: LatencyStats
    queue_ms: LatencyStats
    goodput: Goodput | None = None
    preemptions: int = 0
    preempted_requests: int = 0
    recomputed_tokens: int = 0
    prefix_cache_queries: int = 0
    prefix_cache_hits: int = 0
    prefix_cache_hit_rate: float | None = None
    spec_draft_tokens: int = 0
    spec_accepted_tokens: int = 0
    num_steps: int = 0
    timeseries: TimeSeries
    evidence: StepEvidence
    notes: list[str] = Field(default_factory=list)
    requests: RequestRecords | None = None
    stopped: str | None = None  # the run ended early, its answer known (a P99 certainly over a limit: far_miss.py)
