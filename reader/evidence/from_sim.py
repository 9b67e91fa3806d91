"""A simulation's result as Evidence: every step seen, so the sampled state is counted over steps."""
from __future__ import annotations

from ..sim.result import LatencyStats, SimResult
from .model import Evidence


def from_simulation(result: SimResult) -> Evidence:
    ev = result.evidence
    steps = ev.num_steps
    stops = ev.admission_stops
    st = ev.step_time
    return Evidence(
        source="simulation", description=f"simulation ({result.mode}) of {result.workload}",
        duration_s=result.duration_s, num_requests=result.num_requests,
        request_throughput=result.request_throughput, output_throughput=result.output_throughput,
        total_token_throughput=result.total_token_throughput,
        prompt_tokens=_mean_only(result.completed, result.total_input_tokens),
        output_tokens=_mean_only(result.completed, result.total_output_tokens),
        prompt_token_share=(result.total_input_tokens / (result.total_input_tokens + result.total_output_tokens)
                            if result.total_input_tokens + result.total_output_tokens else None),
        prompt_tokens_total=result.total_input_tokens, output_tokens_total=result.total_output_tokens,
        num_steps=steps, steps_with_output=ev.steps_with_output, preemptions=result.preemptions,
        preempted_requests=result.preempted_requests, recomputed_tokens=result.recomputed_tokens,
        prefix_cache_queries=result.prefix_cache_queries, prefix_cache_hits=result.prefix_cache_hits,
        kv_usage_peak=ev.kv_usage_peak, kv_usage_mean=ev.kv_usage_mean,
        fraction_time_kv_above_95pct=ev.fraction_time_kv_above_95pct,
        samples=steps, sample_unit="steps",
        max_num_seqs=result.settings.get("max_num_seqs"), token_budget=ev.token_budget,
        running_mean=ev.running_mean, running_peak=ev.running_peak, waiting_peak=ev.waiting_peak, waiting_mean=ev.waiting_mean,
        samples_blocked_by_kv=ev.steps_admission_blocked_by_kv,
        samples_seqs_full_blocks_free=ev.steps_seqs_full_blocks_free,
        samples_stopped_by_budget=stops.get("token_budget", 0) + stops.get("prompt_exceeds_budget", 0),
        admission_stops=dict(stops),
        budget_fill_mean=ev.budget_fill_mean, budget_full_share=ev.steps_budget_full / max(steps, 1),
        mean_tokens_per_step=st.mean_tokens, mean_seqs_per_step=st.mean_seqs,
        ttft_ms=result.ttft_ms, itl_ms=result.itl_ms, tpot_ms=result.tpot_ms, e2el_ms=result.e2el_ms,
        queue_time_ms=ev.queue_time_ms, step_time=st, step_ms_mean=st.mean_ms,
        notes=list(result.notes),
    )


def _mean_only(count: int, total: int) -> LatencyStats:
    return LatencyStats(count=count, mean=total / count) if count else LatencyStats()
