"""Model and GPU specs for the capacity tests.

Catalog entries come from reader.catalog.load (the shipped catalog, sources per entry); models and
GPUs the corpus failures need but the catalog lacks are built here by hand and marked RECALL /
ASSUMED with the reason. No test here reads /work/shared at run time.
"""
from __future__ import annotations

from reader.catalog.load import get_gpu, get_model
from reader.catalog.types import GpuSpec, LayerKinds, ModelSpec, QuantSpec

GiB = 1 << 30
AIC = "ai-dynamo/aiconfigurator model_configs (via shared/reference/models.yaml)"


def _model(id: str, layers: int, hidden: int, heads: int, kv: int, hd: int, inter: int, vocab: int,
           max_pos: int, params: int, *, tie=False, kinds=None, source=AIC, verification="primary", **kw) -> ModelSpec:
    return ModelSpec(id=id, model_type=kw.pop("model_type", "llama"), num_hidden_layers=layers, hidden_size=hidden,
                     num_attention_heads=heads, num_key_value_heads=kv, head_dim=hd, intermediate_size=inter,
                     vocab_size=vocab, max_position_embeddings=max_pos, tie_word_embeddings=tie,
                     layer_kinds=kinds or LayerKinds(full=layers), params_total=params,
                     params_source="computed from config", source=source, verification=verification, **kw)


def llama31_8b() -> ModelSpec:
    return get_model("meta-llama/Llama-3.1-8B")


def llama33_70b() -> ModelSpec:
    return get_model("meta-llama/Llama-3.3-70B-Instruct")


def qwen3_8b() -> ModelSpec:
    return get_model("Qwen/Qwen3-8B")


def qwen15_7b_chat() -> ModelSpec:
    # RECALL: Qwen/Qwen1.5-7B-Chat config.json (MHA: 32 KV heads; max_position_embeddings 32768);
    # not in the catalog. The error text confirms max seq len 32768.
    return _model("Qwen/Qwen1.5-7B-Chat", 32, 4096, 32, 32, 128, 11008, 151936, 32768, 7721324544,
                  model_type="qwen2", verification="unverified", source="RECALL Qwen1.5-7B-Chat config.json")


def qwen25_05b() -> ModelSpec:
    # RECALL: Qwen/Qwen2.5-0.5B-Instruct config.json (24 layers, 896 hidden, 14 heads, 2 KV heads, tied)
    return _model("Qwen/Qwen2.5-0.5B-Instruct", 24, 896, 14, 2, 64, 4864, 151936, 32768, 494032768, tie=True,
                  model_type="qwen2", verification="unverified", source="RECALL Qwen2.5-0.5B-Instruct config.json")


def deepseek_coder_33b() -> ModelSpec:
    # RECALL: deepseek-ai/deepseek-coder-33b-instruct config.json: 62 layers, hidden 7168, 56 heads, 8 KV
    # heads, intermediate 19200, vocab 32256, max_position_embeddings 16384 with rope_scaling linear x4
    # (vLLM 0.4.x multiplied the derived max length by the linear factor -> 65536).
    return _model("deepseek-ai/deepseek-coder-33b-instruct", 62, 7168, 56, 8, 128, 19200, 32256, 16384,
                  33340000000, verification="unverified", source="RECALL deepseek-coder-33b-instruct config.json")


# the Qwen FP8 repos' block-fp8 quantization (as Qwen3-32B-FP8 in the catalog: fp8, lm_head excluded)
QWEN_FP8 = QuantSpec(method="fp8", weight_bits=8, quantized_modules="all_but_lm_head")


def qwen3_coder_480b_fp8() -> ModelSpec:
    # catalog shapes of Qwen3-Coder-480B-A35B-Instruct + the FP8 repo's quantization
    return get_model("Qwen/Qwen3-Coder-480B-A35B-Instruct").model_copy(update={
        "id": "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "quantization": QWEN_FP8})


def qwen3_coder_30b_fp8() -> ModelSpec:
    # catalog shapes of Qwen/Qwen3-30B-A3B with the Coder's 262144 context (the issue's own figure)
    return get_model("Qwen/Qwen3-30B-A3B").model_copy(update={
        "id": "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "max_position_embeddings": 262144, "quantization": QWEN_FP8})


def gpt_oss_120b() -> ModelSpec:
    return get_model("openai/gpt-oss-120b")


def deepseek_v3() -> ModelSpec:
    return get_model("deepseek-ai/DeepSeek-V3")


def gemma3_27b() -> ModelSpec:
    return get_model("google/gemma-3-27b-it")


def _gpu(id: str, mem: float, bw: float, bf16: float, fp8=None, nvlink=None, arch="Hopper (sm_90)",
         source="shared/reference/gpus.yaml", verification="primary") -> GpuSpec:
    return GpuSpec(id=id, vendor="NVIDIA", arch=arch, device_name=id, memory_bytes=int(mem),
                   memory_marketed_gb=round(mem / 1e9), hbm_bandwidth_gbps=bw, bf16_tflops=bf16, fp8_tflops=fp8,
                   nvlink_gbps_per_direction=nvlink, source=source, verification=verification)


def h100() -> GpuSpec:
    return get_gpu("H100-SXM")


def h200() -> GpuSpec:
    return get_gpu("H200-SXM")


def h20_141() -> GpuSpec:
    # The 141 GB H20 variant: the issue's own figures give total = (55.65 - 48.66) / (0.95 - 0.90)
    # = 139.8 GiB, the H200's torch total; compute figures from the catalog's (96 GB) H20.
    h20, h200_ = get_gpu("H20"), get_gpu("H200-SXM")
    return h20.model_copy(update={"id": "H20-141GB", "memory_bytes": h200_.memory_bytes,
                                  "hbm_bandwidth_gbps": h200_.hbm_bandwidth_gbps, "verification": "unverified"})


def a800_80() -> GpuSpec:
    # A800 80GB PCIe: the A100-80GB-PCIe with a slower NVLink; same memory
    return get_gpu("A100-80GB-PCIe").model_copy(update={"id": "A800-80GB-PCIe"})


def a100_80() -> GpuSpec:
    return get_gpu("A100-80GB-SXM")


def l40() -> GpuSpec:
    # L40: same 48 GB board memory as the catalog's L40S (46068 MiB); its compute is not used here
    return get_gpu("L40S").model_copy(update={"id": "L40"})


def rtx4090() -> GpuSpec:
    return get_gpu("RTX-4090")


def rtx5070ti() -> GpuSpec:
    # not in the catalog: 16 GB GDDR7; torch total ASSUMED 15.47 GiB (16 GB card less the driver reserve,
    # in proportion to the RTX-5090's 31.84 of 32 GiB would be 15.92 GiB; we take the lower, stated)
    return _gpu("RTX-5070-Ti", 15.47 * GiB, 896, 90, 180, None, arch="Blackwell consumer (sm_120)",
                verification="unverified", source="ASSUMED (not in catalog)")


def rtx5090() -> GpuSpec:
    return get_gpu("RTX-5090")


def h100_nvl() -> GpuSpec:
    return get_gpu("H100-NVL")


def test_specs_are_consistent():
    """The hand-built specs are what the rest of the suite assumes."""
    assert llama31_8b().num_key_value_heads == 8
    assert gpt_oss_120b().layer_kinds.sliding == 18
    assert deepseek_v3().mla.kv_lora_rank + deepseek_v3().mla.qk_rope_head_dim == 576
