"""Unset values resolve to what the chosen vLLM release would use on this GPU, with the reason."""
from __future__ import annotations

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.config.resolve import resolve


def resolved(command: str, version: str, gpu: str = "H100-SXM", **opts):
    return resolve(load_command_line(command, LoadOptions(vllm_version=version, gpu=gpu, **opts)))


@pytest.mark.parametrize("version, value", [("0.18.0", 0.9), ("0.19.1", 0.9), ("0.20.0", 0.92), ("0.33.0", 0.92)])
def test_gpu_memory_utilization_default_changed_at_0_20(version, value):
    r = resolved("vllm serve meta-llama/Llama-3.1-8B", version)
    assert r.values["gpu_memory_utilization"].value == value
    assert r.values["gpu_memory_utilization"].origin == "default"
    assert "cache.py" in r.values["gpu_memory_utilization"].source


@pytest.mark.parametrize("version, gpu, tokens, seqs", [
    ("0.18.0", "H100-SXM", 8192, 1024),   # >= 70 GiB, not A100
    ("0.18.0", "A100-80GB-SXM", 2048, 256),  # A100 excluded from the large tier by name
    ("0.18.0", "L4", 2048, 256),
    ("0.18.0", "B200", 8192, 1024),
    ("0.28.0", "B200", 16384, 1024),      # >= 160 GiB tier from 0.28.0
    ("0.28.0", "H200", 8192, 1024),       # 139.8 GiB: below 160
    ("0.8.5", "A100-80GB-SXM", 8192, 1024),  # in 0.8.5 the tier was memory only
])
def test_batch_defaults_by_version_and_gpu(version, gpu, tokens, seqs):
    r = resolved("vllm serve meta-llama/Llama-3.1-8B", version, gpu)
    assert r.values["max_num_batched_tokens"].value == tokens
    assert r.values["max_num_seqs"].value == seqs


def test_offline_llm_class_gets_the_larger_budget():
    r = resolved("vllm serve meta-llama/Llama-3.1-8B", "0.18.0", usage_context="llm")
    assert r.values["max_num_batched_tokens"].value == 16384


def test_chunked_prefill_off_raises_the_default_budget_to_max_model_len():
    r = resolved("vllm serve meta-llama/Llama-3.1-8B --no-enable-chunked-prefill --max-model-len 32768", "0.18.0")
    assert r.values["max_num_batched_tokens"].value == 32768
    assert "raised to max_model_len" in r.values["max_num_batched_tokens"].why


def test_throughput_mode_doubles_defaults():
    r = resolved("vllm serve meta-llama/Llama-3.1-8B --performance-mode throughput", "0.18.0")
    assert r.values["max_num_batched_tokens"].value == 16384 and r.values["max_num_seqs"].value == 2048


def test_user_values_win_and_say_so():
    r = resolved("vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 32", "0.18.0")
    assert r.values["max_num_seqs"].value == 32 and r.values["max_num_seqs"].origin == "user"


def test_v1_forced_chunked_prefill_on_between_0_8_and_0_11():
    r = resolved("vllm serve meta-llama/Llama-3.1-8B --no-enable-chunked-prefill", "0.10.0")
    assert r.values["enable_chunked_prefill"].value is True
    assert r.values["enable_chunked_prefill"].origin == "overridden"
    r = resolved("vllm serve meta-llama/Llama-3.1-8B --no-enable-chunked-prefill", "0.18.0")
    assert r.values["enable_chunked_prefill"].value is False


def test_v0_engine_before_0_8_and_with_vllm_use_v1_0():
    assert resolved("vllm serve meta-llama/Llama-3.1-8B", "0.7.3").engine == "v0"
    assert resolved("VLLM_USE_V1=0 vllm serve meta-llama/Llama-3.1-8B", "0.8.5").engine == "v0"
    assert resolved("vllm serve meta-llama/Llama-3.1-8B", "0.8.5").engine == "v1"
    r = resolved("vllm serve meta-llama/Llama-3.1-8B --max-model-len 8192", "0.7.3")
    assert r.values["max_num_seqs"].value == 256 and r.values["enable_chunked_prefill"].value is False
    assert r.values["max_num_batched_tokens"].value == 8192  # max(max_model_len, 2048) without chunking


def test_max_model_len_defaults_to_the_models_positions():
    r = resolved("vllm serve meta-llama/Llama-3.1-8B", "0.18.0")
    assert r.values["max_model_len"].value == 131072


def test_checkpoint_quantization_and_fp8_kv_from_the_checkpoint():
    r = resolved("vllm serve nvidia/Llama-3.1-70B-Instruct-FP8", "0.18.0")
    assert r.values["quantization"].origin == "derived"
    assert r.derived["kv_cache_dtype"].value.startswith("fp8")


def test_container_model_paths_are_inferred_by_name_and_said_loudly():
    r = resolved("vllm serve /models/Qwen3-8B", "0.18.0")
    assert r.model is not None and r.model.id == "Qwen/Qwen3-8B"
    note = next(n for n in r.notes if "inferred" in n.message)
    assert "--model" in note.message and "'/models/Qwen3-8B'" in note.message
    assert r.model_resolution.inferred_from == "the folder name 'Qwen3-8B'"  # VR905 warns from this fact


def test_unknown_gpu_is_assumed_loudly():
    r = resolve(load_command_line("vllm serve meta-llama/Llama-3.1-8B", LoadOptions(vllm_version="0.18.0")))
    assert r.gpu_assumed and any("GPU not given" in n.message for n in r.notes)
    assert r.gpu_count == 1 and r.gpu_count_assumed


def test_draft_model_speculation_reduces_the_scheduled_budget_in_0_18_not_0_28():
    cmd = ("vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 64 --max-num-batched-tokens 4096 "
           """--speculative-config '{"model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4}'""")
    r = resolved(cmd, "0.18.0")
    assert r.speculative.family == "draft_model" and r.speculative.inferred
    assert r.derived["max_num_scheduled_tokens"].value == 4096 - 64
    assert resolved(cmd, "0.28.0").derived["max_num_scheduled_tokens"].value == 4096


def test_async_scheduling_auto_turns_off_for_draft_models():
    cmd = """vllm serve meta-llama/Llama-3.1-8B --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}'"""
    assert resolved(cmd, "0.18.0").values["async_scheduling"].value is False
    assert resolved("vllm serve meta-llama/Llama-3.1-8B", "0.18.0").values["async_scheduling"].value is True


def test_a_guessed_model_shape_is_flagged_for_the_reports_that_weigh_it():
    assert resolved("vllm serve /models/Qwen3-8B", "0.18.0").model_guessed
    assert not resolved("vllm serve Qwen/Qwen3-8B", "0.18.0").model_guessed
