"""The model reader on three more families people serve (issue 23): Starcoder2 (a two-matrix, biased MLP under
LayerNorm), the original Qwen (QWenLMHeadModel: intermediate_size counts two matrices, its own length keys) and
MiniCPM3 (MLA's low-rank weights, yet vLLM caches a full K and V per head). Each must give the published
parameter count and the KV bytes per token vLLM allocates: layers x 2 (K, V) x KV heads x head size x dtype bytes.
The configs are the shipped catalog's (each source.yaml names the repository, path and commit it was read from:
real copies for Qwen and MiniCPM3, TensorRT-LLM's restated keys for Starcoder2)."""
from __future__ import annotations

from pathlib import Path

from reader.capacity.api import CapacityRequest, compute_capacity
from reader.catalog.hf_config import spec_from_config
from reader.catalog.load import get_gpu
from reader.catalog.model_files import read_model_path

MODELS = Path(__file__).resolve().parents[2] / "reader" / "catalog" / "models"


def kv_bytes_per_token(spec) -> int:
    cap = compute_capacity(CapacityRequest(model=spec, gpu=get_gpu("H100"), vllm_version="0.32.0",
                                           max_model_len=2048, max_num_batched_tokens=2048, max_num_seqs=16,
                                           gpu_memory_utilization=0.9))
    return int(cap.kv_bytes_per_token.value)


def test_starcoder2_7b():
    """Starcoder2-7B: hidden 4608, 32 layers, 36 heads and 4 KV heads of 128, MLP 18432, vocab 49152, tied.
    Per layer: two LayerNorms with bias (4 x 4608), q/k/v/o with bias (4608 x (4608 + 2 x 512) + 5632 + 4608^2 +
    4608), c_fc/c_proj with bias (2 x 4608 x 18432 + 18432 + 4608): 217,106,944; x 32 = 6,947,422,208. Outside: the
    tied embedding 49152 x 4608 and the final LayerNorm 9216: 226,501,632. Total 7,173,923,840: the 7.17B issue 23
    quotes from the model page (the card: "a 7B parameter model"); read as a gated three-matrix MLP it was 9.89B. Every layer slides over 4096 tokens.
    KV per token in bfloat16: 32 x 2 x 4 x 128 x 2 bytes = 65,536."""
    spec = read_model_path(MODELS / "bigcode/starcoder2-7b")
    assert spec.params_total == 7_173_923_840
    assert abs(spec.params_total - 7.17e9) / 7.17e9 < 0.01
    assert not spec.mlp_gated and spec.tie_word_embeddings
    assert (spec.layer_kinds.sliding, spec.sliding_window) == (32, 4096)
    assert kv_bytes_per_token(spec) == 65_536


def test_starcoder2_without_use_bias_has_no_biases():
    """use_bias false drops every linear's bias (Starcoder2Attention and Starcoder2MLP take bias=use_bias), while
    the LayerNorms keep theirs: 32 x (5632 + 4608 + 18432 + 4608) fewer."""
    import json

    config = json.loads((MODELS / "bigcode/starcoder2-7b" / "config.json").read_text())
    unbiased = spec_from_config({**config, "use_bias": False}, model_id="x", source="test")
    assert unbiased.params_total == 7_173_923_840 - 32 * (5632 + 4608 + 18432 + 4608)


def test_qwen_72b_chat():
    """Qwen-72B-Chat (QWenLMHeadModel): hidden 8192, 80 layers, 64 heads (no num_key_value_heads: MHA) of 128,
    intermediate_size 49152 = w1 and w2 together, so each of gate, up and down is 24576 (vLLM's qwen.py builds
    QWenMLP with intermediate_size // 2), vocab 152064, untied. Per layer: two RMSNorms (2 x 8192), c_attn with bias
    (8192 x 3 x 8192 + 3 x 8192), c_proj without (8192^2), MLP 3 x 8192 x 24576: 872,456,192; x 80 =
    69,796,495,360. Outside: embedding and lm_head 2 x 152064 x 8192, final RMSNorm 8192: 2,491,424,768. Total
    72,287,920,128 against the published 72B (it read 120.6B with the doubled MLP).
    KV per token in bfloat16 (no torch_dtype; vLLM's auto): 80 x 2 x 64 x 128 x 2 bytes = 2,621,440."""
    spec = read_model_path(MODELS / "Qwen/Qwen-72B-Chat")
    assert spec.params_total == 72_287_920_128
    assert abs(spec.params_total - 72e9) / 72e9 < 0.01
    assert (spec.num_key_value_heads, spec.head_dim, spec.intermediate_size) == (64, 128, 24576)
    assert spec.max_position_embeddings == 32768
    assert kv_bytes_per_token(spec) == 2_621_440


def test_qwen_7b_chat_takes_seq_length_as_its_length():
    """Qwen-7B-Chat writes max_position_embeddings 32768 and seq_length 8192; vLLM derives max_model_len from the
    smallest length key it finds (derive_max_model_len_and_key, model_arch_config_convertor.py), so 8192.
    Its MLP is 3 x 4096 x 11008 per layer (intermediate_size 22016 halved)."""
    spec = read_model_path(MODELS / "Qwen/Qwen-7B-Chat")
    assert spec.max_position_embeddings == 8192
    assert spec.intermediate_size == 11008
    assert spec.params_total == 7_721_324_544
    assert "seq_length 8192" in spec.notes


def test_minicpm3_4b_caches_a_key_and_value_per_head():
    """MiniCPM3-4B: 62 layers, hidden 2560, 40 heads, low-rank attention (q_lora 768, kv_lora 256, qk 64 nope + 32
    rope, v 64), MLP 6400, vocab 73448, tied. Attention per layer: q_a 2560 x 768 + its norm 768 + q_b 768 x 40 x 96
    + kv_a 2560 x (256 + 32) + its norm 256 + kv_b 256 x 40 x (64 + 64) + o 40 x 64 x 2560 = 13,517,824. Per layer
    with the MLP (3 x 2560 x 6400) and two RMSNorms: 62,674,944; x 62 = 3,885,846,528. Outside: 73448 x 2560 + 2560
    = 188,029,440. Total 4,073,875,968: the 4.07B issue 23 quotes
    from the model page (the card's name says 4B).
    vLLM's MiniCPM3Attention is a plain Attention with every head's K and V (num_kv_heads = heads, head size
    64 + 32 = 96, V padded to 96), not MLA's latent: 62 x 2 x 40 x 96 x 2 bytes = 952,320 per token in bfloat16,
    27 times the 35,712 an MLA latent of 256 + 32 would take. The file has no v_head_dim: hidden / heads, as
    MiniCPM3Config takes it."""
    spec = read_model_path(MODELS / "openbmb/MiniCPM3-4B")
    assert spec.params_total == 4_073_875_968
    assert abs(spec.params_total - 4.07e9) / 4.07e9 < 0.01
    assert spec.mla is None and spec.low_rank_attention is not None
    assert (spec.num_key_value_heads, spec.head_dim, spec.low_rank_attention.v_head_dim) == (40, 96, 64)
    assert "v_head_dim" in spec.notes
    assert kv_bytes_per_token(spec) == 952_320


def test_minicpm3_weights_are_the_low_rank_projections():
    """The per-GPU weights follow the low-rank shapes (13.5M attention parameters a layer), not a 40-head MHA's
    qkv and o (4 x 2560 x 3840 would be 39.3M)."""
    from reader.capacity.shapes import gpu_shapes, resolve_weight_format

    spec = read_model_path(MODELS / "openbmb/MiniCPM3-4B")
    gpu = get_gpu("H100")
    shapes = gpu_shapes(spec, gpu, resolve_weight_format(spec, None, "auto", gpu))
    assert [g.name for g in shapes.attn] == ["q_a", "q_b", "kv_a", "kv_b", "o"]
    assert shapes.kv_heads == 40


def _llama_with(**length_keys):
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
              "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 2048,
              "vocab_size": 32000, "max_position_embeddings": 8192, "torch_dtype": "bfloat16", **length_keys}
    return spec_from_config(config, model_id="test/llama", source="test")


def test_every_length_key_vllm_reads_can_shorten_the_model():
    """vLLM takes the smallest of max_position_embeddings, n_positions, max_seq_len, seq_length,
    model_max_length, max_target_positions, max_sequence_length, max_seq_length and seq_len."""
    for key in ("max_seq_len", "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len"):
        spec = _llama_with(**{key: 4096})
        assert spec.max_position_embeddings == 4096, key
        assert f"{key} 4096 is below max_position_embeddings 8192" in spec.notes
    assert _llama_with(max_seq_len=16384).max_position_embeddings == 8192


def test_model_max_length_overrides_the_other_length_keys_even_upward():
    """Command-R writes 8,192 positions and a model_max_length of 131,072, and vLLM runs it at the latter: where
    model_max_length is set, it replaces what the other keys gave (derive_max_model_len_and_key)."""
    spec = _llama_with(model_max_length=131072)
    assert spec.max_position_embeddings == 131072
    assert "model_max_length 131072 overrides" in spec.notes
    assert _llama_with(model_max_length=4096, seq_length=2048).max_position_embeddings == 4096
