"""The model reader on three families with their own config.json conventions (issue 23): GPT-J, Phi-1.5/2
(model_type phi) and ChatGLM. Each must give the parameters of the published checkpoint and the KV bytes per
token vLLM allocates for that architecture; the configs are the shipped catalog's real copies
(reader/catalog/models/*/source.yaml names each one's repository, path and commit)."""
from __future__ import annotations

import json
from pathlib import Path

from reader.capacity.api import CapacityRequest, compute_capacity
from reader.catalog.load import get_gpu
from reader.catalog.model_files import read_model_path

MODELS = Path(__file__).resolve().parents[2] / "reader" / "catalog" / "models"


def kv_bytes_per_token(name: str) -> int:
    spec = read_model_path(MODELS / name)
    cap = compute_capacity(CapacityRequest(model=spec, gpu=get_gpu("H100"), vllm_version="0.32.0",
                                           max_model_len=2048, max_num_batched_tokens=2048, max_num_seqs=16,
                                           gpu_memory_utilization=0.9))
    return int(cap.kv_bytes_per_token.value)


def test_gpt_j_6b():
    """GPT-J-6B: n_embd 4096, n_layer 28, n_head 16 (KV heads too), head 256, n_inner null = 16384, vocab 50400.
    Per layer: one LayerNorm (2 x 4096), q/k/v/out without bias (4 x 4096^2), fc_in/fc_out with bias
    (2 x 4096 x 16384 + 16384 + 4096): 201,379,840; x 28 = 5,638,635,520. Outside: embedding and lm_head
    (2 x 50400 x 4096), lm_head bias 50400, final LayerNorm 8192: 412,247,264. Total 6,050,882,784 against the
    card's 6,053,381,344 (0.04% apart; the card's count comes from the JAX training code).
    KV per token, in bf16 (config.json names no dtype, vLLM's auto runs it in 16-bit):
    28 layers x 2 (K, V) x 16 heads x 256 x 2 bytes = 458,752."""
    spec = read_model_path(MODELS / "EleutherAI/gpt-j-6b")
    assert spec.params_total == 6_050_882_784
    assert abs(spec.params_total - 6_053_381_344) / 6_053_381_344 < 0.001
    assert (spec.num_hidden_layers, spec.num_key_value_heads, spec.head_dim) == (28, 16, 256)
    assert spec.max_position_embeddings == 2048  # n_positions
    assert kv_bytes_per_token("EleutherAI/gpt-j-6b") == 458_752


def test_phi_2():
    """Phi-2 (model_type phi): hidden 2560, 32 layers, 32 heads and 32 KV heads of 80, MLP 10240, vocab 51200.
    Per layer: one LayerNorm (2 x 2560), q/k/v/dense with bias (4 x (2560^2 + 2560)), fc1/fc2 with bias
    (2 x 2560 x 10240 + 10240 + 2560): 78,671,360; x 32 = 2,517,483,520. Outside: embedding and lm_head
    (2 x 51200 x 2560), lm_head bias 51200, final LayerNorm 5120: 262,200,320. Total 2,779,683,840, the
    "2.7 billion parameters" of the card. partial_rotary_factor 0.4 changes no size.
    KV per token in float16: 32 x 2 x 32 x 80 x 2 bytes = 327,680."""
    spec = read_model_path(MODELS / "microsoft/phi-2")
    assert spec.params_total == 2_779_683_840
    assert spec.torch_dtype == "float16"
    assert kv_bytes_per_token("microsoft/phi-2") == 327_680


def test_chatglm3_6b():
    """ChatGLM3-6B (model_type chatglm): num_layers 28, hidden 4096, 32 heads of 128, multi_query_group_num 2
    KV heads (multi_query_attention), ffn_hidden_size 13696 behind a GLU (dense_h_to_4h is 2 x 13696),
    padded_vocab_size 65024, seq_length 8192. Per layer: two RMSNorms (2 x 4096), query_key_value with bias
    (4096 x (4096 + 2 x 256) + 4608), dense without (4096^2), MLP 3 x 4096 x 13696: 203,960,832; x 28 =
    5,710,903,296. Outside: embedding and output layer (2 x 65024 x 4096), final RMSNorm 4096: 532,680,704.
    Total 6,243,584,000, the published 6.24B.
    KV per token in float16: 28 x 2 x 2 heads x 128 x 2 bytes = 28,672."""
    spec = read_model_path(MODELS / "THUDM/chatglm3-6b")
    assert spec.params_total == 6_243_584_000
    assert (spec.num_hidden_layers, spec.num_key_value_heads, spec.head_dim) == (28, 2, 128)
    assert spec.max_position_embeddings == 8192  # seq_length, which vLLM derives max_model_len from
    assert kv_bytes_per_token("THUDM/chatglm3-6b") == 28_672


def test_chatglm_without_multi_query_attention_keeps_a_kv_head_per_query_head(tmp_path):
    """GLMAttention (vllm/model_executor/models/chatglm.py): multi_query_group_num counts only with
    multi_query_attention; without it every head keeps K and V."""
    import json

    config = json.loads((MODELS / "THUDM/chatglm3-6b" / "config.json").read_text())
    config["multi_query_attention"] = False
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert read_model_path(tmp_path).num_key_value_heads == 32


def test_glm_4_9b_chat():
    """GLM-4-9B-Chat (model_type chatglm), ChatGLM3's layout at 40 layers and padded_vocab_size 151552. Per layer:
    2 x 4096 + 4096 x 4608 + 4608 + 4096^2 + 3 x 4096 x 13696 = 203,960,832; x 40 = 8,158,433,280. Outside:
    2 x 151552 x 4096 + 4096 = 1,241,518,080. Total 9,399,951,360, the published 9.4B.
    KV per token in bfloat16: 40 x 2 x 2 heads x 128 x 2 bytes = 40,960 (the GQA of 16 query heads per KV head
    keeps a 131072-token request at 5 GiB)."""
    spec = read_model_path(MODELS / "THUDM/glm-4-9b-chat")
    assert spec.params_total == 9_399_951_360
    assert spec.max_position_embeddings == 131072
    assert kv_bytes_per_token("THUDM/glm-4-9b-chat") == 40_960


def test_internvl2_2b_reads_its_language_model_from_llm_config():
    """InternVL2-2B (model_type internvl_chat) keeps its LM under llm_config, which vLLM renames text_config
    and builds (vllm/transformers_utils/config.py, internvl.py): internlm2-chat-1_8b, hidden 2048, 24 layers,
    16 heads and 8 KV heads of 128, MLP 8192 (gated), vocab 92553, untied. Per layer: 2 x 2048 (norms) +
    2048 x (2048 + 2 x 1024) + 2048^2 + 3 x 2048 x 8192 = 62,918,656; x 24 = 1,510,047,744. Outside:
    2 x 92553 x 2048 + 2048 = 379,099,136. Total 1,889,146,880: internlm2-chat-1_8b's published 1.89B; the
    vision tower (InternViT-300M) is not counted, as for every multimodal model (the capacity notes say so).
    KV per token in bfloat16: 24 x 2 x 8 x 128 x 2 bytes = 98,304."""
    from reader.capacity.api import CapacityRequest, compute_capacity

    folder = Path(__file__).resolve().parents[2] / "fixtures" / "hf_configs" / "internvl2-2b"
    spec = read_model_path(folder)
    assert spec.params_total == 1_889_146_880
    assert spec.is_multimodal and spec.num_key_value_heads == 8 and spec.model_type == "internvl_chat"
    cap = compute_capacity(CapacityRequest(model=spec, gpu=get_gpu("H100"), vllm_version="0.32.0",
                                           max_model_len=512, max_num_batched_tokens=2048, max_num_seqs=16,
                                           gpu_memory_utilization=0.9))
    assert int(cap.kv_bytes_per_token.value) == 98_304


def test_gpt_neox_redpajama_incite_3b():
    """GPT-NeoX (model_type gpt_neox; the RedPajama-INCITE and Pythia models): hidden 2560, 32 layers, 32 heads of
    80, MLP 10240, vocab 50432, untied. Per layer: two LayerNorms (4 x 2560), query_key_value with bias
    (2560 x 7680 + 7680), dense with bias (2560^2 + 2560), a two-matrix MLP with biases (dense_h_to_4h,
    dense_4h_to_h: 2 x 2560 x 10240 + 10240 + 2560): 78,676,480; x 32 = 2,517,647,360. Outside: embed_in and
    embed_out (2 x 50432 x 2560), final LayerNorm 5120: 258,216,960. Total 2,775,864,320, the card's "2.8B"
    (read as Llama-shaped, with a gated MLP, it was 3.61B).
    KV per token in float16: 32 x 2 x 32 x 80 x 2 bytes = 327,680."""
    spec = read_model_path(MODELS / "togethercomputer/RedPajama-INCITE-Chat-3B-v1")
    assert spec.params_total == 2_775_864_320
    assert kv_bytes_per_token("togethercomputer/RedPajama-INCITE-Chat-3B-v1") == 327_680


def test_gpt_bigcode_starcoder_has_one_kv_head(tmp_path):
    """GPT-BigCode (StarCoder, WizardCoder): GPT-2's key names and block, one K/V head under multi_query.
    StarCoder's shape (n_embd 6144, n_layer 40, n_head 48, n_inner 24576, n_positions 8192, vocab 49152): per layer
    two LayerNorms (4 x 6144), c_attn with bias (6144 x (6144 + 2 x 128) + 6400), c_proj with bias (6144^2 + 6144),
    the MLP's c_fc and c_proj with biases (2 x 6144 x 24576 + 24576 + 6144): 379,128,064; x 40 = 15,165,122,560.
    Outside: token and position tables ((49152 + 8192) x 6144) and the final LayerNorm (12,288), the head tied:
    352,333,824. Total 15,517,456,384, the published 15.5B. KV per token in float16: 40 x 2 x 1 x 128 x 2 bytes
    = 20,480."""
    (tmp_path / "config.json").write_text(json.dumps({
        "architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40,
        "n_head": 48, "n_inner": 24576, "n_positions": 8192, "vocab_size": 49152, "multi_query": True,
        "torch_dtype": "float16"}))
    spec = read_model_path(tmp_path)
    assert (spec.num_key_value_heads, spec.head_dim, spec.max_position_embeddings) == (1, 128, 8192)
    assert spec.params_total == 15_517_456_384
