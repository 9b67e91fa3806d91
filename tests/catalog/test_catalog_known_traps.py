"""Spot checks from the reference's "known traps": the figures that size a KV cache and a roofline."""
from __future__ import annotations

import pytest

from _catalog_helpers import REFERENCE_FIGURES, kv_bytes_per_token_bf16
from reader.catalog.load import get_gpu, get_model, list_models


def test_llama_3_1_8b_uses_gqa_with_8_kv_heads():
    spec = get_model("meta-llama/Llama-3.1-8B")
    assert spec.num_key_value_heads == 8
    assert kv_bytes_per_token_bf16(spec) == 131072


def test_deepseek_v3_caches_one_576_value_latent_per_layer():
    spec = get_model("deepseek-ai/DeepSeek-V3")
    assert spec.mla is not None
    assert spec.mla.kv_lora_rank + spec.mla.qk_rope_head_dim == 576
    assert spec.head_dim == 192  # qk_nope 128 + qk_rope 64
    assert kv_bytes_per_token_bf16(spec) == 70272


def test_phi_3_5_mini_has_no_gqa_and_no_effective_window():
    spec = get_model("microsoft/Phi-3.5-mini-instruct")
    assert spec.num_key_value_heads == 32
    assert kv_bytes_per_token_bf16(spec) == 393216
    assert spec.layer_kinds.full == 32 and spec.sliding_window is None


def test_gpt_oss_has_64_wide_heads_and_alternating_128_token_windows():
    for name, layers in (("openai/gpt-oss-20b", 24), ("openai/gpt-oss-120b", 36)):
        spec = get_model(name)
        assert spec.head_dim == 64
        assert (spec.layer_kinds.sliding, spec.layer_kinds.full) == (layers // 2, layers // 2)
        assert spec.sliding_window == 128
        assert spec.quantization.method == "mxfp4"
        assert set(spec.quantization.formats) == {"experts"}  # attention, router, LM head stay 16-bit


def test_gemma_3_27b_has_128_wide_heads_and_52_sliding_layers():
    spec = get_model("google/gemma-3-27b-it")
    assert spec.head_dim == 128
    assert (spec.layer_kinds.sliding, spec.layer_kinds.full) == (52, 10)
    assert spec.sliding_window == 1024
    assert spec.is_multimodal


def test_gemma_2_alternates_4096_windows():
    spec = get_model("google/gemma-2-9b")
    assert (spec.layer_kinds.sliding, spec.layer_kinds.full, spec.sliding_window) == (21, 21, 4096)
    assert spec.head_dim == 256


def test_llama_4_chunks_three_layers_in_four():
    for name in ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"):
        spec = get_model(name)
        assert (spec.layer_kinds.chunked, spec.layer_kinds.full) == (36, 12)
        assert spec.attention_chunk_size == 8192
    assert get_model("llama-4-maverick").moe.moe_layer_step == 2


def test_qwen2_windows_are_switched_off_and_mistral_v0_3_has_none():
    assert get_model("Qwen/Qwen2.5-7B").layer_kinds.full == 28
    assert get_model("Qwen/Qwen2.5-7B").sliding_window is None
    assert get_model("mistralai/Mistral-7B-v0.3").sliding_window is None


@pytest.mark.parametrize("name, head_dim", [("Qwen/Qwen3-4B", 128), ("mistralai/Mistral-Small-24B-Instruct-2501", 128),
                                            ("google/gemma-2-9b", 256), ("google/gemma-3-4b-it", 256),
                                            ("meta-llama/Llama-3.2-1B", 64)])
def test_explicit_head_dims_win_over_hidden_over_heads(name, head_dim):
    assert get_model(name).head_dim == head_dim


def test_checkpoints_that_ship_quantized_say_so():
    assert get_model("deepseek-ai/DeepSeek-R1").quantization.method == "fp8"
    assert get_model("moonshotai/Kimi-K2-Instruct").quantization.method == "fp8"
    assert get_model("Qwen/Qwen3-32B-FP8").quantization.weight_bits == 8
    nvidia = get_model("nvidia/Llama-3.1-70B-Instruct-FP8").quantization
    assert (nvidia.method, nvidia.kv_cache_dtype) == ("modelopt", "fp8")
    assert "lm_head" not in nvidia.formats  # exclude_modules names it
    awq = get_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert (awq.quantization.method, awq.quantization.weight_bits, awq.torch_dtype) == ("awq", 4, "float16")
    assert get_model("meta-llama/Llama-3.1-8B").quantization is None


def test_llama_3_and_3_1_differ_only_in_max_positions():
    old, new = get_model("meta-llama/Meta-Llama-3-8B-Instruct"), get_model("meta-llama/Llama-3.1-8B-Instruct")
    assert (old.max_position_embeddings, new.max_position_embeddings) == (8192, 131072)
    assert old.params_total == new.params_total and old.num_key_value_heads == new.num_key_value_heads


@pytest.mark.parametrize("name, total, active", [
    ("meta-llama/Llama-3.1-8B", 8.03e9, None), ("meta-llama/Llama-3.1-70B", 70.55e9, None),
    ("meta-llama/Llama-3.1-405B", 405.85e9, None), ("Qwen/Qwen2.5-7B", 7.62e9, None),
    ("Qwen/Qwen2.5-72B", 72.7e9, None), ("Qwen/Qwen3-30B-A3B", 30.5e9, 3.3e9),
    ("mistralai/Mixtral-8x7B-v0.1", 46.7e9, 12.9e9),
])
def test_param_counts_match_the_published_figures_within_half_a_percent(name, total, active):
    spec = get_model(name)
    assert spec.params_total == pytest.approx(total, rel=0.005)
    if active is not None:
        assert spec.params_active == pytest.approx(active, rel=0.02)  # headline rounded to 0.1B


def test_param_counts_equal_the_references_computed_figures():
    checked = 0
    for name, ref in REFERENCE_FIGURES.items():
        spec = get_model(name)
        if "params_total" in ref:
            assert spec.params_total == ref["params_total"], name
            checked += 1
        if "params_active" in ref:
            assert spec.params_active == ref["params_active"], name
    assert checked >= 20


def test_kv_shapes_equal_the_references_figures():
    for name, ref in REFERENCE_FIGURES.items():
        spec = get_model(name)
        assert (spec.num_hidden_layers, spec.num_key_value_heads) == (ref["num_hidden_layers"], ref["num_key_value_heads"])
        if "kv_bytes_per_token_bf16_mla" in ref:
            assert kv_bytes_per_token_bf16(spec) == ref["kv_bytes_per_token_bf16_mla"], name
        else:
            assert spec.head_dim == ref["head_dim"], name
            assert kv_bytes_per_token_bf16(spec) == ref["kv_bytes_per_token_bf16_if_all_layers_full"], name


def test_h100_sxm_bf16_is_the_dense_989_not_the_sparse_1979():
    gpu = get_gpu("H100-SXM")
    assert gpu.bf16_tflops == 989
    assert gpu.fp8_tflops == 1978
    assert gpu.nvlink_gbps_per_direction == 450


def test_h200_memory_is_what_torch_measured():
    gpu = get_gpu("H200")
    assert gpu.memory_bytes == 150_109_880_320
    assert round(gpu.memory_gib, 2) == 139.80
    assert gpu.device_name == "NVIDIA H200"
    assert gpu.verification == "measured"


def test_h100_memory_sits_in_the_79_gib_band_and_tier_thresholds_hold():
    assert 79.0 < get_gpu("H100-SXM").memory_gib < 79.7
    assert "a100" in get_gpu("A100-80GB-SXM").device_name.lower()
    assert "a100" not in get_gpu("H100-SXM").device_name.lower()
    assert get_gpu("B200").memory_gib > 160 > get_gpu("H200").memory_gib > 70


def test_no_gpu_reports_more_memory_than_it_is_sold_with_in_gib():
    for gpu in __import__("reader.catalog.load", fromlist=["list_gpus"]).list_gpus():
        assert gpu.memory_gib <= gpu.memory_marketed_gb + 0.5, gpu.id
        assert gpu.memory_gib > 0.85 * gpu.memory_marketed_gb * 1e9 / 2**30, gpu.id


def test_dense_flops_never_exceed_sparse_headlines_in_disguise():
    # Hopper and Blackwell dense bf16 is half of fp8; a sparse figure slipped in would break it.
    for name in ("H100-SXM", "H100-PCIe", "H200", "B200", "GB200", "L40S", "L4"):
        gpu = get_gpu(name)
        assert gpu.fp8_tflops == pytest.approx(2 * gpu.bf16_tflops, rel=0.03), name


def test_every_model_in_the_catalog_has_positive_shapes():
    for spec in list_models():
        assert spec.head_dim * spec.num_attention_heads > 0
        assert spec.num_attention_heads % spec.num_key_value_heads == 0, spec.id
