"""Every bundled example gets a diagnosis, and its verdict is what the simulation's evidence shows."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.checks import rule_errors
from reader.diagnose.run import diagnose
from reader.diagnose.scenario import slos_from

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "fixtures" / "examples"

EXPECTED = {
    "llama-3.1-8b-h100-chat.yaml": "load",  # 4.8 req/s, nothing waits; its 8,192-token chunks give ITL P99 3x the median, within the SLO
    "llama-3.3-70b-fp8-h100-128-clients.yaml": "kv_memory",
    "qwen2.5-32b-a100-rag.yaml": "kv_memory",
    "llama-3.1-8b-l40s-16-seqs.sh": "admission",
    "mistral-7b-h100-unchunked-rag.yaml": "budget_large",
    "qwen3-8b-h100-small-budget.yaml": "budget_small",
    "llama-3.1-70b-2xa100-long-context.yaml": "startup",
    "llama-3.1-8b-draft-model-v0.10.sh": "startup",
}

_CACHE: dict = {}


def diagnosis(name: str):
    if name not in _CACHE:
        resolved = resolve(load_deployment(str(EXAMPLES / name), LoadOptions()))
        _CACHE[name] = (resolved, diagnose(resolved, slos_ms=slos_from(resolved), workers=2))
    return _CACHE[name]


def test_every_example_has_an_expected_verdict():
    assert sorted(EXPECTED) == sorted(p.name for p in EXAMPLES.iterdir() if p.is_file())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_verdict_matches_the_evidence(name):
    _, d = diagnosis(name)
    assert d.verdict.limit == EXPECTED[name], d.verdict.headline
    ev, base = d.evidence, d.baseline
    limit = d.verdict.limit
    if limit == "startup":
        assert not d.starts
        assert d.capacity.startup_error or any(f.severity == "error" for f in d.findings)
        return
    assert d.starts and ev is not None and base is not None
    if limit == "kv_memory":
        assert base.preemptions > 0 or ev.samples_blocked_by_kv > 0
        assert ev.kv_usage_peak > 0.9
    elif limit == "admission":
        assert ev.samples_seqs_full_blocks_free > 0 and ev.waiting_peak > 0
    elif limit == "budget_small":
        assert ev.admission_stops.get("token_budget", 0) + ev.admission_stops.get("prompt_exceeds_budget", 0) > 0
    elif limit == "budget_large":
        assert base.itl_p99_ms >= 2 * base.itl_median_ms
        assert ev.step_time.spike_mean_prefill_tokens > 0.5 * ev.step_time.spike_mean_tokens
    elif limit == "load":
        assert ev.waiting_peak == 0
    signal = next(s for s in d.verdict.signals if s.limit == limit)
    assert signal.evidence, "the verdict shows its numbers"


@pytest.mark.parametrize("name", sorted(n for n, v in EXPECTED.items() if v not in ("startup", "load")))
def test_recommendations_were_simulated_and_are_never_refused_by_the_rules(name):
    resolved, d = diagnosis(name)
    assert d.whatifs, "a limited deployment gets candidate changes"
    for w in d.whatifs:
        if w.status == "simulated":
            assert w.metrics is not None and w.metrics.completed > 0
        if w.recommended:
            assert w.status == "simulated" and w.score > 1.02
    from reader.config.edit import with_flags
    for w in d.whatifs:
        if w.recommended:
            assert rule_errors(resolve(with_flags(resolved.deployment, w.changes))) == []


def test_the_limited_examples_get_a_tested_improvement():
    for name in ("qwen2.5-32b-a100-rag.yaml", "llama-3.1-8b-l40s-16-seqs.sh", "mistral-7b-h100-unchunked-rag.yaml",
                 "llama-3.3-70b-fp8-h100-128-clients.yaml"):
        _, d = diagnosis(name)
        rec, base = d.recommendation, d.baseline
        assert rec is not None, name
        if max(rec.metrics.goodput_rps, base.goodput_rps) >= 0.1 * base.request_throughput:
            assert rec.metrics.goodput_rps >= base.goodput_rps, name
        else:
            # Hardly a request meets the SLOs either way: throughput and the SLO'd tails decide.
            assert (rec.metrics.output_throughput > 1.02 * base.output_throughput
                    or rec.metrics.itl_p99_ms < 0.9 * base.itl_p99_ms
                    or rec.metrics.ttft_p99_ms < 0.9 * base.ttft_p99_ms), name


def test_a_start_up_failure_recommends_what_makes_it_start():
    _, d = diagnosis("llama-3.1-70b-2xa100-long-context.yaml")
    rec = d.recommendation
    assert rec is not None and rec.status == "simulated"
    assert "max_model_len" in rec.changes or "gpu_memory_utilization" in rec.changes or "kv_cache_dtype" in rec.changes


def test_an_open_loop_load_beyond_capacity_is_named_with_its_factor():
    _, rag = diagnosis("qwen2.5-32b-a100-rag.yaml")   # Poisson arrivals, ~0.23 req/s completed
    assert rag.verdict.overload is not None and rag.verdict.overload > 5
    assert f"{rag.verdict.overload:.1f}x what this deployment completes" in rag.verdict.headline
    _, chat = diagnosis("llama-3.1-8b-h100-chat.yaml")  # keeps up with its arrivals
    assert chat.verdict.overload is None
    _, headline = diagnosis("llama-3.3-70b-fp8-h100-128-clients.yaml")  # closed loop: no offered rate
    assert headline.verdict.overload is None
