"""The corpus configs that failed at start-up for lack of KV memory (shared/corpus/configs/INDEX.yaml,
failed_at_startup_in_source: true), rebuilt by hand from their files: each must fail with the same
cause, and the table printed at the end puts our figures next to vLLM's quoted ones.

Where a quoted figure is not within ~10%, the row's `why` says why. Inputs that the source does not
state (the GPU of two issues, memory held by other processes) are marked ASSUMED in the row.
"""
from __future__ import annotations

import pytest
from test_capacity_specs import (a100_80, a800_80, deepseek_coder_33b, gpt_oss_120b, h20_141, h100, l40, qwen3_8b,
                                 qwen3_coder_30b_fp8, qwen3_coder_480b_fp8, qwen15_7b_chat, qwen25_05b, rtx4090,
                                 rtx5070ti, rtx5090)

from reader.capacity.api import CapacityRequest, compute_capacity
from reader.catalog.types import LayerKinds, ModelSpec

GiB = 1 << 30
ROWS: list[tuple[str, str, str, str, str]] = []


def row(case: str, figure: str, vllm: str, ours: str, why: str = "") -> None:
    ROWS.append((case, figure, vllm, ours, why))


def pct(ours: float, theirs: float) -> str:
    return f"{100 * (ours / theirs - 1):+.1f}%"


def cap(**kw):
    return compute_capacity(CapacityRequest(**kw))


def test_qwen_295_default_max_len_32768_on_one_24gb_gpu():
    """Qwen1.5-7B-Chat, vLLM ~0.4.0 (V0), no flags: max_model_len 32768 from the config, chunked prefill off
    so the profiling run uses max(32768, 2048) tokens. GPU not stated: ASSUMED a 24 GB card (RTX 4090)."""
    c = cap(model=qwen15_7b_chat(), gpu=rtx4090(), vllm_version="0.4.0", max_model_len=32768,
            max_num_batched_tokens=32768, max_num_seqs=256, gpu_memory_utilization=0.9)
    err = c.startup_error
    assert c.engine == "v0" and err is not None and err.kind == "max_len_too_long"
    assert err.message.startswith("The model's max seq len (32768) is larger than the maximum number of tokens")
    tokens = err.estimated_max_model_len
    row("qwen-295 Qwen1.5-7B V0 (GPU ASSUMED 24 GB)", "KV tokens", "7344", f"{tokens} ({pct(tokens, 7344)})")
    assert abs(tokens / 7344 - 1) < 0.10
    # the maintainer's fix: --max_model_len 7200 (profiling run shrinks to 7200 tokens too) starts
    fixed = cap(model=qwen15_7b_chat(), gpu=rtx4090(), vllm_version="0.4.0", max_model_len=7200,
                max_num_batched_tokens=7200, max_num_seqs=256, gpu_memory_utilization=0.9)
    assert fixed.startup_error is None


def test_kaito_2132_mistral_small_4_estimated_max_len_from_the_quoted_memory():
    """Mistral-Small-4-119B-2603: its config is in no stored copy, so neither its weights nor its GPU
    count can be computed. What can be checked is vLLM's arithmetic on its own figures: 22.5 GiB for
    1,048,576 tokens is 23,040 B/token; with 17.39 GiB available (50,638 16-token blocks) the binary
    search must land on 810,208. The stand-in below has exactly 23,040 B/token (45 layers x 1 KV head
    x 128 x 2 x 2 B); it is NOT the real architecture."""
    stand_in = ModelSpec(id="stand-in: 23,040 B/token", model_type="stand_in", num_hidden_layers=45, hidden_size=4096,
                         num_attention_heads=32, num_key_value_heads=1, head_dim=128, intermediate_size=8192,
                         vocab_size=131072, max_position_embeddings=1048576, layer_kinds=LayerKinds(full=45),
                         params_total=1, params_source="stand-in", source="derived from the quoted error",
                         verification="unverified")
    available = 50638 * 16 * 23040 + 1000  # 17.385 GiB, printed '17.39'
    c = cap(model=stand_in, gpu=h100(), vllm_version="0.15.2", max_model_len=1048576, max_num_batched_tokens=8192,
            max_num_seqs=256, gpu_memory_utilization=0.9, kv_cache_memory_bytes=available)
    err = c.startup_error
    print("\n" + err.message)
    assert "(22.5 GiB KV cache is needed" in err.message and "(17.39 GiB)" in err.message
    assert err.estimated_max_model_len == 810208
    row("kaito-2132 Mistral-Small-4 (stand-in KV shape)", "needed / est. max len", "22.5 GiB / 810208",
        f"{err.needed_bytes / GiB:.2f} GiB / {err.estimated_max_model_len}",
        "available KV taken from vLLM's message: architecture not in any stored copy")


PR12_QUOTED = [(0.9, 48.66, 205728), (0.95, 55.65, 235296)]  # utilization, vLLM's available GiB and est. max len


@pytest.mark.parametrize("util, vllm_avail, vllm_est", PR12_QUOTED)
def test_recipes_pr12_qwen3_coder_480b_fp8_dp8_ep(util, vllm_avail, vllm_est):
    """Qwen3-Coder-480B-A35B-FP8, -dp 8 --enable-expert-parallel (TP 1, EP 8), v0.10.1, default max len
    262144. The H20 is the 141 GB variant (the two quoted figures differ by 0.05 x 139.8 GiB)."""
    c = cap(model=qwen3_coder_480b_fp8(), gpu=h20_141(), vllm_version="0.10.1", data_parallel_size=8,
            enable_expert_parallel=True, max_model_len=262144, max_num_batched_tokens=8192, max_num_seqs=1024,
            gpu_memory_utilization=util)
    err = c.startup_error
    print("\n" + err.message + "\n  " + c.workers[0].available_kv.how)
    assert err.kind == "max_len_too_long"
    assert "(62.00 GiB KV cache is needed" in err.message  # 62 layers x 4 KiB x 262144, exact
    avail = err.available_bytes / GiB
    row(f"recipes-pr12 480B-FP8 DP8 EP util {util}", "needed GiB", "62.00", f"{err.needed_bytes / GiB:.2f} (exact)")
    row(f"recipes-pr12 480B-FP8 DP8 EP util {util}", "available GiB", f"{vllm_avail}", f"{avail:.2f} ({pct(avail, vllm_avail)})")
    row(f"recipes-pr12 480B-FP8 DP8 EP util {util}", "est. max len", f"{vllm_est}",
        f"{err.estimated_max_model_len} ({pct(err.estimated_max_model_len, vllm_est)})")
    assert abs(avail / vllm_avail - 1) < 0.10
    assert abs(err.estimated_max_model_len / vllm_est - 1) < 0.10


def test_vllm_10439_qwen25_05b_util_04_on_v064_counts_other_processes():
    """Qwen2.5-0.5B at --gpu-memory-utilization 0.4, max len 512, v0.6.4.post1 (works on v0.6.3).
    v0.6.4's profiler counted total - free as its own non-torch memory, so memory held by OTHER processes
    counted against the 0.4 (docs v0.6.4: 'a global gpu memory utilization limit'); v0.6.3 and v0.6.5+
    measured their own increase only. The issue states neither the GPU nor what else ran on it: ASSUMED
    an 80 GB A100 with 45% of it held by other processes (the maintainers' advice, 0.5-0.6, fits that)."""
    other = int(0.45 * a100_80().memory_bytes)
    kw = dict(model=qwen25_05b(), gpu=a100_80(), max_model_len=512, max_num_batched_tokens=2048, max_num_seqs=256,
              other_process_memory_bytes=other)
    bad = cap(vllm_version="0.6.4", gpu_memory_utilization=0.4, **kw)
    ok_old = cap(vllm_version="0.6.3", gpu_memory_utilization=0.4, **kw)
    ok_more = cap(vllm_version="0.6.4", gpu_memory_utilization=0.6, **kw)
    assert bad.startup_error is not None and bad.startup_error.kind == "no_kv_memory"
    assert bad.startup_error.message.startswith("No available memory for the cache blocks")
    assert ok_old.startup_error is None and ok_more.startup_error is None
    w = bad.workers[0]
    non_kv = w.weights.value + w.activation_peak.value + w.non_torch.value
    threshold = w.requested.value - non_kv
    row("vllm-10439 Qwen2.5-0.5B v0.6.4 util 0.4 (GPU, load ASSUMED)", "error", "No available memory",
        f"No available memory once other processes hold > {threshold / GiB:.1f} GiB; v0.6.3 and util 0.6 start",
        "other-process memory is not in the issue")


def test_vllm_17431_qwen3_8b_a800_util_04_fails_on_v1_not_on_v0():
    """Qwen3-8B on an A800 80GB PCIe at --gpu-memory-utilization 0.4, vLLM 0.8.5: V1 fails with 'No available
    memory', the same command with VLLM_USE_V1=0 starts. V1's worker of that era added (total - free) minus
    torch's own allocations to its peak, i.e. it counted other processes' memory; V0 had per-instance
    accounting since v0.6.5. With ASSUMED 12 GiB held by another process, ours reproduces both outcomes."""
    other = 12 * GiB
    v1 = cap(model=qwen3_8b(), gpu=a800_80(), vllm_version="0.8.5", max_model_len=40960, max_num_batched_tokens=8192,
             max_num_seqs=1024, gpu_memory_utilization=0.4, other_process_memory_bytes=other)
    # V0 at 0.8.5: max_model_len 40960 > 32768 turns chunked prefill on -> budget 2048, 256 seqs
    v0 = cap(model=qwen3_8b(), gpu=a800_80(), vllm_version="0.8.5", engine="v0", max_model_len=40960,
             max_num_batched_tokens=2048, max_num_seqs=256, gpu_memory_utilization=0.4, other_process_memory_bytes=other)
    assert v1.engine == "v1" and v1.startup_error is not None and v1.startup_error.kind == "no_kv_memory"
    assert v0.startup_error is None
    w = v1.workers[0]
    threshold = w.requested.value - w.weights.value - w.activation_peak.value - w.non_torch.value
    row("vllm-17431 Qwen3-8B A800 v0.8.5 util 0.4 (load ASSUMED)", "error V1 / V0", "No available memory / starts",
        f"No available memory / starts (V1 fails once others hold > {threshold / GiB:.1f} GiB)",
        "other-process memory is not in the issue")


def test_vllm_27508_gpt_oss_120b_on_one_h100():
    """gpt-oss-120b, one H100, --gpu-memory-utilization 0.95 --max-num-batched-tokens 1024 (~v0.11):
    'Available KV cache memory: 1.71 GiB' then the KV check fails for max len 131072; with default flags
    'No available memory'."""
    c = cap(model=gpt_oss_120b(), gpu=h100(), vllm_version="0.11.0", max_model_len=131072, max_num_batched_tokens=1024,
            max_num_seqs=1024, gpu_memory_utilization=0.95)
    err = c.startup_error
    w = c.workers[0]
    print("\n" + w.available_kv.how + "\n" + err.message)
    assert err.kind == "max_len_too_long"
    avail = w.available_kv.value / GiB
    row("vllm-27508 gpt-oss-120b H100 util 0.95 mnbt 1024", "available GiB", "1.71", f"{avail:.2f} ({pct(avail, 1.71)})",
        "0.28 GiB gap = catalog H100 total 79.33 GiB vs the 79.19 GiB vLLM logs of H100s show (+0.13 x 0.95) and "
        "our 65.82 GiB of MXFP4 weights vs 'Model loading took 65.9651 GiB' (vllm#23278, +0.15)")
    row("vllm-27508 gpt-oss-120b H100 util 0.95 mnbt 1024", "weights GiB", "65.97 (vllm#23278)",
        f"{w.weights.value / GiB:.2f} ({pct(w.weights.value / GiB, 65.9651)})")
    assert 1.71 < avail < 1.71 + 0.35
    assert abs(w.weights.value / GiB / 65.9651 - 1) < 0.01
    default = cap(model=gpt_oss_120b(), gpu=h100(), vllm_version="0.11.0", max_model_len=131072,
                  max_num_batched_tokens=8192, max_num_seqs=1024, gpu_memory_utilization=0.9)
    assert default.startup_error.kind == "no_kv_memory"
    row("vllm-27508 gpt-oss-120b H100 defaults", "error", "No available memory", "No available memory "
        f"(available {default.workers[0].available_kv.value / GiB:.2f} GiB)")


def test_vllm_34076_qwen3_coder_30b_fp8_pp2_heterogeneous():
    """PP=2 with VLLM_PP_LAYER_PARTITION=16,32 over an RTX 5070 Ti 16GB and an RTX 5090 32GB, v0.15.2:
    vLLM checked ALL 48 layers (24.0 GiB for 262144 tokens) against the smaller stage's 3.18 GiB."""
    c = cap(model=qwen3_coder_30b_fp8(), gpu=rtx5070ti(), stage_gpus=(rtx5070ti(), rtx5090()),
            pipeline_parallel_size=2, pp_layer_partition=(16, 32), vllm_version="0.15.2", max_model_len=262144,
            max_num_batched_tokens=2048, max_num_seqs=256, gpu_memory_utilization=0.9)
    err = c.startup_error
    print("\n" + err.message)
    assert err.kind == "max_len_too_long" and "(24.0 GiB KV cache is needed" in err.message
    avail = err.available_bytes / GiB
    row("vllm-34076 30B-A3B-FP8 PP2 16+32 GB", "needed GiB", "24.0", f"{err.needed_bytes / GiB:.1f} (exact)")
    row("vllm-34076 30B-A3B-FP8 PP2 16+32 GB", "available GiB", "3.18", f"{avail:.2f} ({pct(avail, 3.18)})",
        "5070 Ti not in the catalog: torch total ASSUMED 15.47 GiB")
    row("vllm-34076 30B-A3B-FP8 PP2 16+32 GB", "est. max len", "34736",
        f"{err.estimated_max_model_len} ({pct(err.estimated_max_model_len, 34736)})")
    assert abs(avail / 3.18 - 1) < 0.10 and abs(err.estimated_max_model_len / 34736 - 1) < 0.10


def test_vllm_4429_deepseek_coder_33b_on_two_l40():
    """deepseek-coder-33b-instruct, fp16, TP 2 on 2x L40 48GB, vLLM 0.4.1 (V0), no max len: vLLM 0.4.x
    multiplied the config's 16384 by the linear rope factor 4 -> max_model_len 65536, and with chunked
    prefill off the profiling run used 65536 tokens. vLLM: 'No available memory for the cache blocks'.
    Ours: the same cause (31 GiB of weights per GPU + a 6 GiB activation peak at 65536 tokens leave ~2 GiB,
    far from the 65536 tokens the max length needs) but a different message: we keep 2.3 GiB and so fail
    the V0 max-seq-len check instead. V0 <= 0.6.3 measured peak as total - free after profiling, which
    also counts the caching allocator's reserved-but-unused segments and the CUDA context; we model the
    allocated peak only, so ours is optimistic by about that much."""
    c = cap(model=deepseek_coder_33b(), gpu=l40(), vllm_version="0.4.1", tensor_parallel_size=2, dtype="float16",
            max_model_len=65536, max_num_batched_tokens=65536, max_num_seqs=256, gpu_memory_utilization=0.9)
    err = c.startup_error
    w = c.workers[0]
    print("\n" + w.available_kv.how + "\n" + err.message)
    assert err is not None and err.kind in ("no_kv_memory", "max_len_too_long")
    assert w.available_kv.value < 0.35 * err.needed_bytes
    row("vllm-4429 deepseek-coder-33b 2xL40 V0", "error", "No available memory",
        f"max seq len 65536 > {err.estimated_max_model_len} KV tokens (available {w.available_kv.value / GiB:.2f} GiB)",
        "same cause, other message: V0 counted reserved-not-allocated memory, we count the allocated peak")
    # the model's own context (16384) with a 16384-token profiling run starts
    ok = cap(model=deepseek_coder_33b(), gpu=l40(), vllm_version="0.4.1", tensor_parallel_size=2, dtype="float16",
             max_model_len=16384, max_num_batched_tokens=16384, max_num_seqs=256, gpu_memory_utilization=0.9)
    assert ok.startup_error is None


def test_the_corpus_table_puts_our_figures_beside_vllms_quoted_ones():
    """Runs every case above itself (so it needs no test order and no state other tests left) and prints the
    comparison table: one row or more per case."""
    ROWS.clear()
    cases = [test_qwen_295_default_max_len_32768_on_one_24gb_gpu,
             test_kaito_2132_mistral_small_4_estimated_max_len_from_the_quoted_memory,
             test_vllm_10439_qwen25_05b_util_04_on_v064_counts_other_processes,
             test_vllm_17431_qwen3_8b_a800_util_04_fails_on_v1_not_on_v0, test_vllm_27508_gpt_oss_120b_on_one_h100,
             test_vllm_34076_qwen3_coder_30b_fp8_pp2_heterogeneous, test_vllm_4429_deepseek_coder_33b_on_two_l40]
    for case in cases:
        before = len(ROWS)
        case()
        assert len(ROWS) > before, f"{case.__name__} adds no row to the table"
    for quoted in PR12_QUOTED:
        test_recipes_pr12_qwen3_coder_480b_fp8_dp8_ep(*quoted)
    width = (52, 22, 22, 40)
    print("\n" + " | ".join(h.ljust(n) for h, n in zip(("case", "figure", "vLLM (quoted)", "ours"), width)) + " | why")
    for case, fig, vllm, ours, why in ROWS:
        print(" | ".join(v.ljust(n) for v, n in zip((case, fig, vllm, ours), width)) + f" | {why}")
    assert len({r[0].split(" ")[0] for r in ROWS}) == len(cases) + 1  # every issue has its row
