"""`diagnose LOG`: a log alone is diagnosed as its config would be, with what it measured; a log of a failed
start gets vLLM's own refusal as the verdict, set against what vllm-reader's rules and memory model say."""
from __future__ import annotations

from pathlib import Path

from reader.config.context import LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.run import diagnose

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "fixtures" / "logs" / "live"
PUBLIC = ROOT / "fixtures" / "logs" / "public"
MODELS = ROOT / "fixtures" / "live"


def run(path: Path, model: str | None = None, **options):
    options = LoadOptions(model=model, workload={"preset": "chat", "num_requests": 60}, **options)
    resolved = resolve(load_deployment(str(path), options), model_override=model)
    return diagnose(resolved, whatifs=False)


def test_a_started_log_is_diagnosed_with_the_kv_cache_vllm_measured():
    d = run(LIVE / "vllm-0.32.0-cpu-serve.log", model=str(MODELS / "tiny-llama" / "config.json"))
    assert d.starts and d.verdict.limit != "startup"
    assert d.capacity.kv_cache_tokens == 1048576 and d.vllm_version == "0.32.0"


def test_a_memory_refusal_is_the_verdict_and_the_capacity_model_agrees():
    d = run(LIVE / "vllm-0.32.0-cpu-refused-kv-memory.log", model=str(MODELS / "wide-llama" / "config.json"))
    assert not d.starts and d.verdict.limit == "startup"
    assert "refused to start (the log, line" in d.verdict.headline
    assert "To serve at least one request with the model's max seq len (32768)" in d.verdict.headline
    evidence = " ".join(d.verdict.signals[0].evidence)
    assert "check agrees: with the log's measured memory the capacity model predicts the same failure" in evidence
    assert "16,256" in evidence  # vLLM's own estimate of the longest length that fits


def test_a_config_refusal_is_the_verdict_and_a_rule_agrees():
    d = run(LIVE / "vllm-0.32.0-cpu-refused-max-len.log", model=str(MODELS / "tiny-llama" / "config.json"))
    assert not d.starts and "User-specified max_model_len (8192)" in d.verdict.headline
    assert "check agrees: rule VR402 predicts this refusal" in " ".join(d.verdict.signals[0].evidence)


def test_a_refusal_nothing_predicts_is_reported_as_a_gap():
    d = run(PUBLIC / "gpustack-1800_qwen25-vl-7b_v084_namespace_3090.log", model="Qwen/Qwen2.5-7B-Instruct")
    evidence = " ".join(d.verdict.signals[0].evidence)
    assert not d.starts and "maximum number of tokens that can be stored in KV cache (2400)" in d.verdict.headline
    assert "a rule to add" in evidence and "the GPU was not given" in evidence
