"""The memory estimate against vLLM's own start-up logs quoted in public issues/PRs.

vLLM measures the activation peak and non-torch memory; we estimate them from tensor sizes
(reader/capacity/memory.py, constants in data/vllm_memory.yaml). Each case prints vLLM's figure
next to ours.
"""
from __future__ import annotations

import pytest
from test_capacity_specs import _gpu, llama31_8b

from reader.capacity.api import CapacityRequest, compute_capacity

GiB = 1 << 30


def rtx3090():
    # total 23.58 GiB as the log itself prints it (vllm#10517)
    return _gpu("RTX-3090", 23.58 * GiB, 936, 71, None, None, arch="Ampere (sm_86)", verification="unverified",
                source="total from the vLLM log in vllm#10517")


@pytest.mark.parametrize("max_len, act, kv", [(20000, 2.07, 3.81), (29000, 2.99, 2.89)])
def test_v0_llama31_8b_on_rtx3090(max_len, act, kv):
    """vllm#10517 (V0, v0.6.4 log format): Llama-3.1-8B on an RTX 3090 at 0.9, chunked prefill off so the
    profiling run has max_model_len tokens: 'peak_torch_memory' - 14.99 GiB weights = the activation peak
    (17.06 -> 2.07 GiB at 20000, 17.98 -> 2.99 at 29000), 'kv_cache_size' 3.81 / 2.89 GiB, and at 29000 the
    V0 check fails: 'max seq len (29000) is larger than ... KV cache (23648)'."""
    c = compute_capacity(CapacityRequest(model=llama31_8b(), gpu=rtx3090(), vllm_version="0.6.4", max_model_len=max_len,
                                         max_num_batched_tokens=max_len, max_num_seqs=256, gpu_memory_utilization=0.9))
    w = c.workers[0]
    ours_act, ours_kv = w.activation_peak.value / GiB, w.available_kv.value / GiB
    print(f"\nmax_len {max_len}: activation vLLM {act} / ours {ours_act:.2f} GiB ({w.activation_peak.how}); "
          f"KV vLLM {kv} / ours {ours_kv:.2f} GiB")
    assert ours_act == pytest.approx(act, rel=0.05)
    assert ours_kv == pytest.approx(kv, rel=0.06)
    if max_len == 29000:
        err = c.startup_error
        print(f"  vLLM: KV cache (23648) / ours: {err.message}")
        assert err.kind == "max_len_too_long" and err.estimated_max_model_len == pytest.approx(23648, rel=0.06)
    else:
        assert c.startup_error is None


def test_v0_llama3_8b_h100_tp1_and_tp2():
    """vllm PR #10511 (V0, Dec 2024): Meta-Llama-3-8B on H100 (79.22 GiB), 0.9: weights 14.96 GiB,
    activation peak 1.26 GiB at TP1 and TP2 (the sampler pass over 256 x 128256 logits is not split by TP),
    available KV 53.29 GiB at TP1."""
    gpu = _gpu("H100-SXM (79.22 GiB as logged)", 79.22 * GiB, 3350, 989, 1978, 450)
    m = llama31_8b().model_copy(update={"max_position_embeddings": 8192})
    for tp in (1, 2):
        c = compute_capacity(CapacityRequest(model=m, gpu=gpu, vllm_version="0.6.5", engine="v0", tensor_parallel_size=tp,
                                             max_model_len=8192, max_num_batched_tokens=8192, max_num_seqs=256,
                                             gpu_memory_utilization=0.9))
        w = c.workers[0]
        print(f"\nTP{tp}: weights {w.weights.value / GiB:.2f} (vLLM {14.96 / tp:.2f}), activation "
              f"{w.activation_peak.value / GiB:.2f} (vLLM 1.26), available {w.available_kv.value / GiB:.2f} GiB"
              + (" (vLLM 53.29)" if tp == 1 else ""))
        assert w.weights.value / GiB == pytest.approx(14.96 / tp, rel=0.01)
        assert w.activation_peak.value / GiB == pytest.approx(1.26, rel=0.10)
        if tp == 1:
            assert w.available_kv.value / GiB == pytest.approx(53.29, rel=0.03)


@pytest.mark.parametrize("model_id, tp, pp", [
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 8, 1),   # experts on every 2nd layer only
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 4, 2),
    ("deepseek-ai/DeepSeek-V2-Lite", 1, 2),                     # a dense first layer
    ("Qwen/Qwen3-30B-A3B", 2, 1),
    ("meta-llama/Llama-3.1-70B", 4, 1),
])
def test_unquantized_weights_on_all_gpus_add_up_to_the_models_parameters(model_id, tp, pp):
    """16-bit weights summed over the TP x PP workers come to 2 bytes per catalog parameter (the catalog
    counts parameters from config.json shapes): which layers carry experts must agree between the two."""
    from reader.catalog.load import get_gpu, get_model

    model = get_model(model_id)
    c = compute_capacity(CapacityRequest(model=model, gpu=get_gpu("H200"), vllm_version="0.18.0",
                                         tensor_parallel_size=tp, pipeline_parallel_size=pp, max_model_len=4096,
                                         max_num_batched_tokens=4096, max_num_seqs=64, gpu_memory_utilization=0.9))
    total = sum(w.weights.value for w in c.workers) * tp
    print(f"\n{model_id} TP{tp} PP{pp}: {total / 1e9:.1f} GB of weights, catalog {2 * model.params_total / 1e9:.1f} GB")
    assert total == pytest.approx(2 * model.params_total, rel=0.02)
