"""Architectures beyond the Llama mould, each with vLLM's own accounting (sources @ v0.32.0 unless said):

- hybrid Gated DeltaNet / Mamba2 models: the per-request recurrent state (MambaStateShapeCalculator,
  vllm/model_executor/layers/mamba/mamba_utils.py), the attention block size raised so one attention page
  holds a state and the state page padded to match (Platform._align_hybrid_block_size,
  vllm/platforms/interface.py), the Mamba layers grouped like attention kinds
  (_get_kv_cache_groups_uniform_page_size, vllm/v1/core/kv_cache_utils.py) and one state block per request
  and group, two with prefix caching (MambaSpec.max_memory_usage_bytes, vllm/v1/kv_cache_interface.py);
- MLA with int4 routed experts (Kimi-K2-Thinking), decode context parallelism;
- GPT-2 (learned positions, MHA, tied LM head), Llama 2 (no GQA), Mistral v0.1 (a window on every layer);
- Llama 4 Maverick FP8 against vLLM's own 'Model loading took' line;
- models vllm-reader does not model, refused with the reason.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from reader.batch import StepBatch
from reader.capacity.api import CapacityRequest, compute_capacity
from reader.capacity.budget import n_max
from reader.calibration.profile import default_calibration
from reader.capacity.steptime import StepTimeModel
from reader.catalog.hf_config import spec_from_config
from reader.catalog.model_files import read_model_path
from reader.catalog.load import get_gpu
from reader.errors import ReaderError

MODELS = Path(__file__).resolve().parents[2] / "reader" / "catalog" / "models"
GiB = 1 << 30


def batch(new: list[int], past: list[int]) -> StepBatch:
    return StepBatch(np.array(new), np.array(past), len(new))


def model(name: str):
    return read_model_path(MODELS / name)


def capacity(name: str, gpu: str = "H200", version: str = "0.32.0", **kw):
    base = dict(model=model(name), gpu=get_gpu(gpu), vllm_version=version, max_model_len=32768,
                max_num_batched_tokens=8192, max_num_seqs=256, gpu_memory_utilization=0.9)
    base.update(kw)
    return compute_capacity(CapacityRequest(**base))


# --------------------------------------------------------------------------------------- Qwen3-Next


def test_qwen3_next_reads_36_linear_and_12_full_layers_with_a_gated_delta_net_state():
    spec = model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert (spec.layer_kinds.linear, spec.layer_kinds.full) == (36, 12)
    assert spec.layer_mixers[:4] == ("linear", "linear", "linear", "full")  # full_attention_interval 4
    assert spec.ssm.kind == "gated_delta_net" and spec.attn_output_gate


def test_qwen3_next_attention_block_grows_to_hold_one_recurrent_state():
    """State per layer at TP 1: conv (2 x 16 x 128 + 32 x 128 = 8192) x 3 columns x 2 B = 49,152 B plus the
    recurrent state 32 heads x 128 x 128 x 2 B = 1,048,576 B. An attention token costs 2 x 2 KV heads x 256 x
    2 B = 2,048 B, so the block becomes 16 x ceil(1,097,728 / (16 x 2,048)) = 544 tokens."""
    cap = capacity("Qwen/Qwen3-Next-80B-A3B-Instruct", tensor_parallel_size=4, max_model_len=262144)
    tp1 = capacity("Qwen/Qwen3-Next-80B-A3B-Instruct", gpu="B200", max_model_len=8192)
    assert tp1.block_size == 16 * math.ceil((8192 * 3 * 2 + 32 * 128 * 128 * 2) / (16 * 2048)) == 544
    # at TP 4 the two KV heads are replicated (one per GPU) and the state splits by 4
    assert cap.block_size == 16 * math.ceil((2048 * 3 * 2 + 8 * 128 * 128 * 2) / (16 * 1024)) == 272
    assert any("raises the attention block size" in n for n in cap.notes)


def test_qwen3_next_groups_mamba_layers_like_an_attention_kind():
    """12 full + 36 linear layers: groups of 12 (the smaller kind), one full group and three Mamba groups. A
    request of L tokens takes ceil(L / 544) blocks in the full group and one in each Mamba group."""
    cap = capacity("Qwen/Qwen3-Next-80B-A3B-Instruct", gpu="B200", max_model_len=65536)
    assert cap.kv_groups.startswith("4 group(s), group size 12")
    blocks = cap.num_gpu_blocks.value
    assert cap.max_concurrency.value == pytest.approx(blocks / (math.ceil(65536 / 544) + 3))
    # vLLM 0.32 logs 'GPU KV cache size' as max concurrency x max_model_len (get_kv_cache_capacity)
    assert cap.gpu_kv_cache_tokens.value == int(cap.max_concurrency.value * 65536)


def test_prefix_caching_keeps_two_states_per_request_and_speculation_one_more_per_token():
    """mamba_cache_mode 'align' (prefix caching on) holds 2 + speculative blocks, 'none' 1 + speculative."""
    off = capacity("Qwen/Qwen3-Next-80B-A3B-Instruct", gpu="B200", max_model_len=65536)
    on = capacity("Qwen/Qwen3-Next-80B-A3B-Instruct", gpu="B200", max_model_len=65536, enable_prefix_caching=True)
    mtp = capacity("Qwen/Qwen3-Next-80B-A3B-Instruct", gpu="B200", max_model_len=65536, num_speculative_tokens=2,
                   speculative_method="mtp")
    full = math.ceil(65536 / 544)
    assert on.max_concurrency.value == pytest.approx(on.num_gpu_blocks.value / (full + 3 * 2))
    assert off.max_concurrency.value > on.max_concurrency.value
    # two drafted tokens: the conv state grows by two columns, and each Mamba group holds 1 + 2 blocks
    assert mtp.max_concurrency.value == pytest.approx(mtp.num_gpu_blocks.value / (math.ceil(65536 / mtp.block_size) + 3 * 3))


# --------------------------------------------------------------------------------------- Nemotron-H


def test_nemotron_h_layers_are_mamba_attention_or_mlp_alone():
    spec = model("nvidia/Nemotron-H-56B-Base-8K")
    kinds = spec.layer_kinds
    assert (kinds.linear, kinds.full, kinds.none) == (54, 10, 54)
    assert spec.layer_ffns.count("dense") == 54 and spec.layer_ffns.count("none") == 64
    assert not spec.mlp_gated and spec.norms_per_layer == 1


@pytest.mark.parametrize("version, ssm_bytes, block", [
    # NemotronHForCausalLMConfig's default under mamba_ssm_cache_dtype auto: float16 up to v0.19.1, float32 from v0.20.0
    ("0.18.0", 2, 16 * math.ceil((20480 * 3 * 2 + 256 * 64 * 256 * 2) / (16 * 4096))),
    ("0.32.0", 4, 16 * math.ceil((20480 * 3 * 2 + 256 * 64 * 256 * 4) / (16 * 4096))),
])
def test_nemotron_h_state_dtype_follows_the_release(version, ssm_bytes, block):
    """Mamba2 state at TP 1: conv (256 x 64 + 2 x 8 x 256 = 20480) x 3 x 2 B + SSM 256 heads x 64 x 256 x
    ssm_bytes; an attention token is 2 x 8 x 128 x 2 B = 4,096 B."""
    cap = capacity("nvidia/Nemotron-H-56B-Base-8K", gpu="B200", version=version, max_model_len=8192)
    assert cap.block_size == block
    assert cap.kv_groups.startswith("7 group(s), group size 10")  # 10 attention, 54 Mamba layers (6 padding)


def test_the_readme_gives_nemotron_h_page_with_the_releases_it_holds_for():
    """The README's architecture table: "Nemotron-H 56B: 2,080 up to vLLM 0.19.1, 4,128 from 0.20.0" (the float32
    SSM state from v0.20.0, NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE)."""
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    pages = {v: capacity("nvidia/Nemotron-H-56B-Base-8K", gpu="B200", version=v, max_model_len=8192).block_size
             for v in ("0.18.0", "0.19.1", "0.20.0", "0.31.0", "0.33.0")}
    assert pages == {"0.18.0": 2080, "0.19.1": 2080, "0.20.0": 4128, "0.31.0": 4128, "0.33.0": 4128}
    assert f"Nemotron-H 56B: {pages['0.19.1']:,} up to vLLM 0.19.1, {pages['0.20.0']:,} from 0.20.0" in readme


def test_nemotron_3_super_latent_experts_match_the_published_tensor_count():
    """NVIDIA-Nemotron-3-Super-120B-A12B: experts in a 1024-wide latent space. The BF16 safetensors hold
    123,611,012,096 parameters with 2,942,324,736 of MTP (a third-party count quoted from the headers); our
    language-model count adds the 20,480 float32 router biases those headers leave out."""
    spec = model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8")
    assert spec.moe.latent_size == 1024
    assert spec.params_total == 123_611_012_096 - 2_942_324_736 + 20_480


# --------------------------------------------------------------------------------------- MLA + int4


def test_kimi_k2_thinking_keeps_int4_experts_and_16_bit_attention():
    spec = model("moonshotai/Kimi-K2-Thinking")
    q = spec.quantization
    assert set(q.formats) == {"experts"}
    assert q.formats["experts"].bits_per_weight == 4 + 16 / 32  # int4 + a bf16 scale per 32 weights
    one_gpu = capacity("moonshotai/Kimi-K2-Thinking", gpu="B200", max_model_len=8192)
    parts = spec.params_by_part
    expected = parts["experts"] * 4.5 / 8 + (spec.params_total - parts["experts"]) * 2
    assert one_gpu.workers[0].weights.value == pytest.approx(expected, rel=0.01)
    cap = capacity("moonshotai/Kimi-K2-Thinking", tensor_parallel_size=8, max_model_len=262144)
    # at TP 8 each GPU holds an eighth, plus MLA's q_a / kv_a down-projections, which every rank keeps whole
    replicated = 61 * 7168 * (1536 + 512 + 64) * 2
    assert cap.workers[0].weights.value == pytest.approx(expected / 8 + replicated * 7 / 8, rel=0.01)
    assert cap.kv_bytes_per_token.value == 61 * (512 + 64) * 2  # one MLA latent per layer, not split by TP


def test_decode_context_parallel_spreads_a_requests_tokens_over_its_ranks():
    plain = capacity("moonshotai/Kimi-K2-Thinking", tensor_parallel_size=8, max_model_len=262144)
    dcp = capacity("moonshotai/Kimi-K2-Thinking", tensor_parallel_size=8, max_model_len=262144,
                   decode_context_parallel_size=8)
    assert dcp.max_concurrency.value == pytest.approx(8 * plain.max_concurrency.value)


# --------------------------------------------------------------------------------------- GPT-2, Llama 2, Mistral


def test_distilgpt2_counts_learned_positions_and_ties_the_lm_head():
    spec = model("distilbert/distilgpt2")
    assert (spec.learned_positions, spec.tie_word_embeddings, spec.mlp_gated) == (1024, True, False)
    assert spec.num_key_value_heads == spec.num_attention_heads == 12
    cap = capacity("distilbert/distilgpt2", gpu="L4", max_model_len=1024)
    assert cap.kv_bytes_per_token.value == 6 * 2 * 12 * 64 * 2
    assert "lm_head" not in cap.workers[0].weights.how  # tied: the embedding is the LM head
    assert cap.workers[0].weights.value == pytest.approx(spec.params_total * 2, rel=0.01)


def test_llama_2_has_no_gqa():
    cap = capacity("meta-llama/Llama-2-7b-chat-hf", gpu="L4", max_model_len=4096)
    assert cap.kv_bytes_per_token.value == 32 * 2 * 32 * 128 * 2 == 524288


def test_mistral_v0_1_slides_every_layer_and_v0_2_none():
    """v0.1: one sliding group; a request holds min(window - 1 + budget, L) tokens (+1 block) per layer
    (SlidingWindowSpec.max_memory_usage_bytes). v0.2 has no window."""
    v01 = capacity("mistralai/Mistral-7B-v0.1", max_model_len=32768)
    v02 = capacity("mistralai/Mistral-7B-Instruct-v0.2", max_model_len=32768)
    assert v01.kv_groups.startswith("1 group(s)") and "sliding 32 layers" in v01.kv_groups
    per_request = math.ceil(min(4096 - 1 + 8192, 32768) / 16) + 1
    assert v01.max_concurrency.value == pytest.approx(v01.num_gpu_blocks.value / per_request)
    assert v02.max_concurrency.value == pytest.approx(v02.num_gpu_blocks.value / (32768 / 16))


# --------------------------------------------------------------------------------------- quantized checkpoints


def test_llama_4_maverick_fp8_weights_sit_just_below_vllms_logged_load():
    """vllm-project/vllm#16152: 'Model loading took 48.8682 GiB' per GPU at TP 8 for this checkpoint, vision
    tower included; we count the language model only."""
    cap = capacity("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", tensor_parallel_size=8)
    weights = cap.workers[0].weights.value / GiB
    assert 0.95 * 48.8682 < weights < 48.8682
    assert any("vision" in w for w in cap.warnings)


def test_the_kv_cache_dtype_auto_follows_modelopt_but_not_compressed_tensors_scales():
    """get_kv_cache_quant_algo_string (vllm/utils/torch_utils.py) maps only ModelOpt's kv_cache_quant_algo."""
    nvidia = capacity("nvidia/Llama-3.3-70B-Instruct-FP8")
    assert nvidia.kv_cache_dtype.startswith("auto -> fp8")
    spec = spec_from_config({**json.loads((MODELS / "RedHatAI/Qwen3-32B-FP8-dynamic/config.json").read_text()),
                             "quantization_config": {**json.loads((MODELS / "RedHatAI/Qwen3-32B-FP8-dynamic/config.json")
                                                                  .read_text())["quantization_config"],
                                                     "kv_cache_scheme": {"num_bits": 8, "type": "float"}}},
                            model_id="m", source="s")
    assert spec.quantization.kv_cache_dtype is None and "kv_cache_scheme" in spec.notes


def test_awq_experts_and_attention_store_scales_and_zero_points():
    spec = model("casperhansen/mixtral-instruct-awq")
    assert set(spec.quantization.formats) == {"attention", "experts"}  # the router 'gate' stays 16-bit
    assert spec.quantization.formats["experts"].bits_per_weight == 4 + (16 + 4) / 128


# --------------------------------------------------------------------------------------- V0 and refusals


def test_v0_concurrency_at_a_context_is_explained_by_the_formula_it_uses():
    """V0 spans every layer with one block, so even a several-group model uses the one-group formula."""
    cap = capacity("mistralai/Mistral-7B-v0.1", gpu="A100-80GB-SXM", version="0.4.1", engine="v0",
                   workload_mean_context=2000.0)
    fig = cap.concurrency_at_mean
    blocks = int(cap.num_gpu_blocks.value)
    assert fig.value == pytest.approx(n_max(blocks - 1, 16, 2000.0))
    assert fig.how.startswith(f"({blocks} - 1 null block) x 16")


@pytest.mark.parametrize("config, words", [
    ({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "is_encoder_decoder": True}, "encoder-decoder"),
    ({"model_type": "whisper", "architectures": ["WhisperForConditionalGeneration"]}, "encoder-decoder"),
    ({"model_type": "bert", "architectures": ["BertModel"]}, "pooling"),
    ({"model_type": "qwen2", "architectures": ["Qwen2ForSequenceClassification"], "hidden_size": 8,
      "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 8, "vocab_size": 8,
      "max_position_embeddings": 8}, "pooling"),
])
def test_models_we_do_not_model_are_refused_with_the_reason(config, words):
    with pytest.raises(ReaderError) as info:
        spec_from_config(config, model_id="m", source="s")
    assert words in info.value.render()


def test_the_cli_refuses_an_encoder_decoder_folder_with_exit_2(tmp_path):
    import subprocess
    import sys

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5", "is_encoder_decoder": True}))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "reader", "capacity", str(root / "fixtures/examples/llama-3.1-8b-h100-chat.yaml"),
                           "--model", str(tmp_path)], capture_output=True, text=True, cwd=root, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "encoder-decoder" in done.stderr and "Traceback" not in done.stderr


# --------------------------------------------------------------------------------------- step time


def test_step_time_counts_the_recurrent_state_of_linear_layers():
    spec = model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    stm = StepTimeModel(spec, get_gpu("H200"), default_calibration(get_gpu("H200").id), tp=4)
    small = stm.breakdown(batch([1] * 8, [1000] * 8))
    large = stm.breakdown(batch([1] * 64, [1000] * 64))
    assert large["attention"] > small["attention"] > 0
    # decode-only steps take the same time through the multi-step shortcut and the general path
    assert stm.decode_time(64, 64 * 1000, 64) == pytest.approx(stm(batch([1] * 64, [1000] * 64)))


def test_gpt2_mlp_has_two_matrices_in_the_step_time_model():
    stm = StepTimeModel(model("distilbert/distilgpt2"), get_gpu("L4"), default_calibration(get_gpu("L4").id))
    assert [g.name for g in stm.shapes.dense_mlp] == ["up", "down"]
    assert stm(batch([1] * 4, [100] * 4)) > 0


def _diagnose(corpus_file: str, folder: str):
    from reader.config.from_cli import load_and_resolve, load_options
    from reader.diagnose.run import diagnose

    corpus = Path(__file__).resolve().parents[2] / "fixtures" / "corpus" / corpus_file
    options = load_options(workload="{preset: chat, num_requests: 30}", model=str(MODELS / folder))
    return diagnose(load_and_resolve(str(corpus), options), whatifs=False)


def test_diagnose_says_the_hybrid_block_size_and_what_a_multimodal_model_leaves_out():
    d = _diagnose("recipes_qwen3-next_mtp.sh", "Qwen/Qwen3-Next-80B-A3B-Instruct")
    raised = [n for n in d.notes if n.startswith("KV blocks of ")]
    assert len(raised) == 1 and "not 16" in raised[0] and "recurrent state" in raised[0]
    d = _diagnose("skypilot_vllm-multinode_llama4-maverick_tp8_pp2.sky.yaml",
                  "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8")
    assert any(n.startswith("multimodal model: the vision/audio encoder's weights") for n in d.notes)
    assert not any(n.startswith("KV blocks of ") for n in d.notes)


@pytest.mark.parametrize("version, held", [("0.31.0", 2), ("0.32.0", 3)])
def test_nemotron_h_mamba2_layers_hold_a_prefill_checkpoint_under_prefix_caching_from_0_32(version, held):
    """From 0.32.0 MambaMixer2 asks one more block per request in align mode for the state it exports at block
    boundaries inside a prefill (num_prefill_checkpoint_blocks=1, mamba_mixer2.py); Gated DeltaNet and ShortConv
    do not. 10 attention layers and 54 Mamba layers: one full group and six Mamba groups."""
    cap = capacity("nvidia/Nemotron-H-56B-Base-8K", gpu="B200", version=version, max_model_len=8192,
                   enable_prefix_caching=True)
    full = math.ceil(8192 / cap.block_size)
    assert cap.max_concurrency.value == pytest.approx(cap.num_gpu_blocks.value / (full + 6 * held))


def test_gemma_4_full_attention_layers_hold_and_run_their_own_projections():
    # nvidia/Gemma-4-31B-IT-NVFP4: sliding layers 32 query heads and 16 KV heads of 256; full layers 4 KV heads of
    # 512 (attention_k_eq_v: vLLM still allocates the V shard). On one GPU the qkv projection is 16,384 wide on a
    # sliding layer and 20,480 on a full one.
    from reader.capacity.shapes import gpu_shapes, resolve_weight_format
    from reader.catalog.load import get_gpu, get_model

    spec, gpu = get_model("nvidia/Gemma-4-31B-IT-NVFP4"), get_gpu("B200")
    shapes = gpu_shapes(spec, gpu, resolve_weight_format(spec, None, "bfloat16", gpu), tp=1)
    assert (shapes.attn[0].n, shapes.attn_full[0].n) == ((32 + 2 * 16) * 256, (32 + 2 * 4) * 512)
    assert (shapes.kv_width("sliding"), shapes.kv_width("full")) == (16 * 256, 4 * 512)
    # a KV-shared layer (the E-models' last layers) holds q_proj and o_proj only
    assert shapes.attn_bytes("full", cached=False) == pytest.approx(
        shapes.attn_bytes("full") * (2 * 32 * 512) / (2 * 32 * 512 + 2 * 4 * 512))
