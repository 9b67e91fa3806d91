"""KV-cache figures, checked against the formulas of shared/reference/vllm/kv-capacity.md.

Each test prints the formula's inputs and our result (pytest -s shows them).
"""
from __future__ import annotations

import math

import pytest
from test_capacity_specs import deepseek_v3, gemma3_27b, gpt_oss_120b, h100, h200, llama31_8b, llama33_70b

from reader.capacity.api import CapacityRequest, compute_capacity
from reader.capacity.behaviour import behaviour
from reader.capacity.kv import kv_layout, page_bytes_per_layer
from reader.capacity.shapes import stage_layer_kinds

GiB = 1 << 30


def req(**kw) -> CapacityRequest:
    base = dict(model=llama31_8b(), gpu=h100(), vllm_version="0.18.0", max_model_len=131072,
                max_num_batched_tokens=8192, max_num_seqs=1024, gpu_memory_utilization=0.9)
    base.update(kw)
    return CapacityRequest(**base)


def test_llama31_8b_bytes_per_token_and_page():
    """Llama-3.1-8B bf16: 32 layers x 2 x 8 KV heads x 128 x 2 B = 128 KiB/token; 16-token page = 64 KiB
    per layer, 2 MiB per block across the 32 layers (kv-capacity.md section 2 example)."""
    cap = compute_capacity(req())
    print(f"\nbytes/token {cap.kv_bytes_per_token.value:,.0f} ({cap.kv_bytes_per_token.how}); page {cap.page_bytes.value:,.0f}")
    assert cap.kv_bytes_per_token.value == 32 * 2 * 8 * 128 * 2 == 131072
    assert cap.page_bytes.value == 16 * 2 * 8 * 128 * 2 == 65536


@pytest.mark.parametrize("gpu, version, util", [(h100, "0.18.0", 0.9), (h200, "0.18.0", 0.9), (h200, "0.20.0", 0.92)])
def test_llama31_8b_blocks_tokens_concurrency_follow_vllm_formulas(gpu, version, util):
    """num_blocks = floor(available / page / layers); 'GPU KV cache size' = num_blocks x 16;
    'Maximum concurrency for L tokens' = num_blocks / ceil(L / 16)."""
    cap = compute_capacity(req(gpu=gpu(), vllm_version=version, gpu_memory_utilization=util))
    w = cap.workers[0]
    avail = w.available_kv.value
    print(f"\n{gpu().id} v{version} util {util}: available {avail / GiB:.2f} GiB = {w.available_kv.how}")
    print("  " + "\n  ".join(cap.log_lines))
    blocks = int(avail // 65536 // 32)
    assert cap.num_gpu_blocks.value == blocks
    assert cap.gpu_kv_cache_tokens.value == blocks * 16
    assert cap.max_concurrency.value == pytest.approx(blocks / math.ceil(131072 / 16))
    assert f"GPU KV cache size: {blocks * 16:,} tokens" in cap.log_lines
    assert w.requested.value == math.ceil(gpu().memory_bytes * util)


def test_gpu_memory_utilization_default_and_cudagraph_subtraction_change_at_v0_20():
    """flags.yaml: default 0.9 through v0.19.1, 0.92 from v0.20.0; the CUDA-graph estimate is subtracted
    from the KV budget only from v0.20.0 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default 1)."""
    assert behaviour("gpu_memory_utilization_default", (0, 19, 1)).value == 0.9
    assert behaviour("gpu_memory_utilization_default", (0, 20, 0)).value == 0.92
    old = compute_capacity(req(gpu=h200(), vllm_version="0.19.1", gpu_memory_utilization=0.9))
    new = compute_capacity(req(gpu=h200(), vllm_version="0.20.0", gpu_memory_utilization=0.92))
    eager = compute_capacity(req(gpu=h200(), vllm_version="0.20.0", gpu_memory_utilization=0.92, enforce_eager=True))
    g_old, g_new = old.workers[0].cudagraph.value, new.workers[0].cudagraph.value
    print(f"\nv0.19.1 graphs subtracted {g_old / GiB:.2f} GiB; v0.20.0 {g_new / GiB:.2f} GiB ({new.workers[0].cudagraph.how})")
    assert g_old == 0 and g_new > 0 and eager.workers[0].cudagraph.value == 0
    delta = new.workers[0].available_kv.value - old.workers[0].available_kv.value
    expected = math.ceil(h200().memory_bytes * 0.92) - math.ceil(h200().memory_bytes * 0.9) - g_new
    assert delta == pytest.approx(expected, abs=2)


def test_tensor_parallel_splits_kv_heads_and_replicates_when_tp_exceeds_them():
    m = llama33_70b()
    for tp, heads in ((1, 8), (2, 4), (8, 1), (16, 1)):
        _, tok, how = page_bytes_per_layer(m, tp, 2.0, 16)
        print(f"\nTP {tp}: {tok:,.0f} B/token/layer = {how}")
        assert tok == 2 * heads * 128 * 2


def test_mla_latent_is_576_values_and_not_split_by_tp():
    """DeepSeek-V3: one 512+64 latent per token per layer, no factor 2, the same on every TP rank:
    61 x 576 x 2 B = 70,272 B/token (CATALOG-README 'MLA' trap)."""
    m = deepseek_v3()
    for tp in (1, 8, 16):
        lay = kv_layout(m, stage_layer_kinds(m, [61], 0), tp, 2.0, 16)
        print(f"\nDeepSeek-V3 TP {tp}: {lay.bytes_per_token_full:,.0f} B/token per GPU")
        assert lay.bytes_per_token_full == 61 * 576 * 2 == 70272


def test_fp8_kv_cache_halves_bytes_per_token_and_doubles_blocks():
    bf16 = compute_capacity(req(gpu=h200(), max_model_len=8192))
    fp8 = compute_capacity(req(gpu=h200(), max_model_len=8192, kv_cache_dtype="fp8"))
    print(f"\nbf16 {bf16.kv_bytes_per_token.value:,.0f} B/token, {bf16.num_gpu_blocks.value:,.0f} blocks; "
          f"fp8 {fp8.kv_bytes_per_token.value:,.0f} B/token, {fp8.num_gpu_blocks.value:,.0f} blocks")
    assert fp8.kv_bytes_per_token.value * 2 == bf16.kv_bytes_per_token.value
    assert fp8.num_gpu_blocks.value in (2 * bf16.num_gpu_blocks.value, 2 * bf16.num_gpu_blocks.value + 1)


def test_sliding_window_layers_keep_only_the_window_in_the_worst_case():
    """gpt-oss-120b: 18 sliding (window 128) + 18 full layers, 2 groups of 18. One 131072-token request
    needs ceil(131072/16) blocks in the full group but only ceil(min(127 + mnbt, L)/16) + 1 in the
    sliding group (kv_cache_interface.py 251-270 @ v0.18.0)."""
    m = gpt_oss_120b()
    lay = kv_layout(m, stage_layer_kinds(m, [36], 0), 1, 2.0, 16)
    page = 16 * 2 * 8 * 64 * 2
    mnbt = 8192
    full_blocks = math.ceil(131072 / 16)
    sw_blocks = math.ceil(min(127 + mnbt, 131072) / 16) + 1
    need = lay.request_bytes(131072, mnbt)
    print(f"\n{lay.num_groups} groups, group size {lay.group_size}; full {full_blocks} + sliding {sw_blocks} blocks "
          f"x page {page} x 18 = {need / GiB:.3f} GiB (all-full would be {36 * 131072 * 2 * 8 * 64 * 2 / GiB:.3f} GiB)")
    assert (lay.num_groups, lay.group_size) == (2, 18)
    assert need == 18 * page * (full_blocks + sw_blocks)
    # and the tokens figure divides blocks by the number of groups
    assert lay.tokens(1000) == 1000 // 2 * 16


def test_gemma3_five_to_one_pattern_groups():
    """Gemma 3 27B: 52 sliding + 10 full layers -> group size 10 (52 > 1.5 x 10), 6 sliding groups + 1 full."""
    m = gemma3_27b()
    lay = kv_layout(m, stage_layer_kinds(m, [62], 0), 1, 2.0, 16)
    print(f"\n{lay.num_groups} groups of {lay.group_size} layers")
    assert lay.group_size == 10 and lay.num_groups == 7


def test_startup_error_and_estimated_max_len_by_binary_search():
    """When one max_model_len request does not fit, vLLM raises with the needed/available GiB and the
    longest length that fits (binary search, estimate_max_model_len l.662-714)."""
    cap = compute_capacity(req(kv_cache_memory_bytes=10 * GiB, max_model_len=131072))
    err = cap.startup_error
    print("\n" + err.message)
    assert err.kind == "max_len_too_long" and err.needed_bytes == 131072 * 131072
    assert err.estimated_max_model_len == (10 * GiB // (16 * 131072)) * 16  # whole blocks of 16 tokens
    assert "(16.0 GiB KV cache is needed" in err.message and "(10.0 GiB)" in err.message
    assert "estimated maximum model length is 81920" in err.message
    # one token more than the estimate does not fit, the estimate itself does
    ok = compute_capacity(req(kv_cache_memory_bytes=10 * GiB, max_model_len=81920))
    assert ok.startup_error is None
    assert compute_capacity(req(kv_cache_memory_bytes=10 * GiB, max_model_len=81921)).startup_error is not None


def test_num_gpu_blocks_override_replaces_the_computed_count():
    cap = compute_capacity(req(num_gpu_blocks_override=1000, max_model_len=8192))
    assert cap.num_gpu_blocks.value == 1000 and cap.gpu_kv_cache_tokens.value == 16000


def test_max_concurrency_formula_at_mean_and_p99_context():
    cap = compute_capacity(req(gpu=h200(), max_model_len=32768, workload_mean_context=2000, workload_p99_context=12000))
    blocks = cap.num_gpu_blocks.value
    print(f"\nN_max at mean 2000: {cap.concurrency_at_mean.value:.1f} ({cap.concurrency_at_mean.how}); "
          f"at p99 12000: {cap.concurrency_at_p99.value:.1f}")
    assert cap.concurrency_at_mean.value == pytest.approx((blocks - 1) * 16 / 2000)
    assert cap.concurrency_at_p99.value == pytest.approx((blocks - 1) * 16 / 12000)
