"""The vLLM metrics observe reads, by what they mean, with every spelling a release exported.

One table (this stage's version table): each entry lists the series names newest first; the first one a
scrape holds is used and the report says which. Sources: vllm/v1/metrics/loggers.py (PrometheusStatLogger)
at v0.18.0 and v0.32.0, and the renames in ../shared/reference/vllm/metrics.yaml `name_history`
(vllm:gpu_cache_usage_perc -> vllm:kv_cache_usage_perc in v0.9.2..v0.11.2; vllm:time_per_output_token_seconds
-> vllm:inter_token_latency_seconds in v0.10.2..v0.14.1; vllm:gpu_prefix_cache_* -> vllm:prefix_cache_* in
v0.9.2..v0.11.2). prometheus_client adds `_total` to counters, so V1's `vllm:num_preemptions` is scraped as
`vllm:num_preemptions_total`, the V0 spelling too. `vllm:iteration_tokens_total` is a histogram whose own name
ends in _total.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["counter", "gauge", "histogram", "info"]


@dataclass(frozen=True)
class Metric:
    key: str
    kind: Kind
    names: tuple[str, ...]   # newest spelling first
    what: str                # what it counts, for notes about missing metrics


METRICS: tuple[Metric, ...] = (
    Metric("preemptions", "counter", ("vllm:num_preemptions_total",), "preemptions"),
    Metric("finished", "counter", ("vllm:request_success_total",), "finished requests (by finished_reason)"),
    Metric("prompt_tokens", "counter", ("vllm:prompt_tokens_total",), "prefill tokens"),
    Metric("generation_tokens", "counter", ("vllm:generation_tokens_total",), "generated tokens"),
    Metric("recomputed_tokens", "counter", ("vllm:prompt_tokens_recomputed_total",), "recomputed prompt tokens"),
    Metric("prefix_queries", "counter", ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
           "prefix-cache queries (tokens)"),
    Metric("prefix_hits", "counter", ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
           "prefix-cache hits (tokens)"),
    Metric("running", "gauge", ("vllm:num_requests_running",), "running requests"),
    Metric("waiting", "gauge", ("vllm:num_requests_waiting",), "waiting requests"),
    Metric("waiting_by_reason", "gauge", ("vllm:num_requests_waiting_by_reason",), "waiting requests by reason"),
    Metric("kv_usage", "gauge", ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"), "KV-cache usage"),
    Metric("step_tokens", "histogram", ("vllm:iteration_tokens_total",), "tokens per engine step"),
    Metric("ttft", "histogram", ("vllm:time_to_first_token_seconds",), "time to first token"),
    Metric("itl", "histogram", ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
           "inter-token latency"),
    Metric("tpot", "histogram", ("vllm:request_time_per_output_token_seconds",), "time per output token"),
    Metric("queue", "histogram", ("vllm:request_queue_time_seconds",), "queueing time"),
    Metric("e2el", "histogram", ("vllm:e2e_request_latency_seconds",), "end-to-end latency"),
    Metric("inference", "histogram", ("vllm:request_inference_time_seconds",), "time running (after the queue)"),
    Metric("prompt_len", "histogram", ("vllm:request_prompt_tokens",), "prompt length per request"),
    Metric("output_len", "histogram", ("vllm:request_generation_tokens",), "output length per request"),
    Metric("request_preemptions", "histogram", ("vllm:request_num_preemptions",), "preemptions per request"),
    Metric("cache_config", "info", ("vllm:cache_config_info",), "the KV-cache configuration"),
)
BY_KEY = {m.key: m for m in METRICS}

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def series_names() -> list[str]:
    """Every series name the table can read (histograms as their _bucket/_sum/_count series)."""
    out: list[str] = []
    for metric in METRICS:
        for name in metric.names:
            out.extend(name + s for s in HISTOGRAM_SUFFIXES) if metric.kind == "histogram" else out.append(name)
    return out
