"""Turn a parsed Hugging Face `config.json` into a ModelSpec (files are found and read by model_files.py).

The reader derives what vLLM derives from the same file: the attention layout (GQA, MLA, sliding
windows, chunked attention), the layer plan of hybrid models (linear attention and Mamba layers,
layers with no mixer), MoE shapes, the checkpoint's quantization (hf_quant.py), and counts the
parameters from the shapes (hf_params.py). Only JSON is parsed; nothing from the model folder is
executed. Model types vLLM serves but we do not model (encoder-decoder, pooling-only) are refused
with the reason.

Family rules that config.json leaves implicit (which Gemma layers slide, which Llama 4 layers use
chunked attention, Qwen3-Next's layer pattern, defaults for keys a config omits) follow the
transformers configuration classes named in `_DEFAULTS_SOURCE`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..errors import ReaderError
from .hf_fields import Fields, read_json
from .hf_params import ATTENTION_MIXERS, Shape, count_params, is_moe_layer, params_by_part
from .hf_quant import MODELOPT_SIDECAR, read_quantization, read_quantization_file
from .types import LayerKinds, MLASpec, ModelSpec, MoESpec, RopeScaling, SsmSpec

CONFIG_NAME = "config.json"

_DEFAULTS_SOURCE = (
    "transformers configuration classes: src/transformers/models/gemma3/configuration_gemma3.py "
    "@ d98ac17c (Gemma3TextConfig), src/transformers/models/llama4/configuration_llama4.py @ b17cfe48 "
    "(Llama4TextConfig), models/gpt2/configuration_gpt2.py (GPT2Config: n_inner None = 4 x n_embd), "
    "models/qwen3_next/configuration_qwen3_next.py (layer_types from full_attention_interval), "
    "models/gptj/configuration_gptj.py (GPTJConfig: n_inner None = 4 x n_embd), "
    "models/minicpm3/configuration_minicpm3.py @ 5.19.0 (MiniCPM3Config: v_head_dim None = hidden / heads), "
    "models/llama/configuration_llama.py and models/mistral/configuration_mistral.py @ 5.19.0 (LlamaConfig, "
    "MistralConfig: the shape a nested text_config leaves out), "
    "models/falcon/configuration_falcon.py @ v4.57.6 and v5.19.0 (FalconConfig); older Falcon files "
    "(RefinedWeb, RefinedWebModel) follow vLLM's RWConfig, vllm/transformers_utils/configs/falcon.py @ v0.32.0, "
    "and name no length, for which vLLM assumes 2048 (_get_and_verify_max_len, vllm/config/model.py @ v0.32.0)"
)

# Values transformers applies when config.json omits the key. Only keys that change sizes are listed.
_GPT2_DEFAULTS = {"vocab_size": 50257, "max_position_embeddings": 1024, "tie_word_embeddings": True}
# GPT-2's key names, which GPT-J and GPT-BigCode keep (their configs' attribute_map; n_inner is the MLP width,
# None = 4 x n_embd): transformers models/gpt_bigcode/configuration_gpt_bigcode.py as vLLM 0.18.0 installs it
_GPT2_KEY_NAMES = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head",
                   "max_position_embeddings": "n_positions", "intermediate_size": "n_inner"}
_TYPE_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262208, "max_position_embeddings": 131072, "tie_word_embeddings": True,
                    "head_dim": 256, "sliding_window": 4096, "sliding_window_pattern": 6},
    "gemma2": {"tie_word_embeddings": True},
    "gemma": {"tie_word_embeddings": True},
    "llama4_text": {"tie_word_embeddings": False, "head_dim": 128, "intermediate_size_mlp": 16384,
                    "no_rope_layer_interval": 4, "attention_chunk_size": 8192, "interleave_moe_layer_step": 1},
    "gpt2": _GPT2_DEFAULTS,
    "gpt_bigcode": _GPT2_DEFAULTS,  # GPTBigCodeConfig's defaults are GPT2Config's (vocab 50257, n_positions 1024)
    "opt": {"tie_word_embeddings": True, "enable_bias": True},
    "qwen3_next": {"full_attention_interval": 4, "decoder_sparse_step": 1},
    "falcon": {"vocab_size": 65024, "max_position_embeddings": 2048},
    "bloom": {"vocab_size": 250880},  # BloomConfig
    "RefinedWeb": {"vocab_size": 250880, "max_position_embeddings": 2048},
    "RefinedWebModel": {"vocab_size": 250880, "max_position_embeddings": 2048},
}
# A nested text_config lists only what differs from its config class (llava-hf/llava-1.5-7b-hf's names its
# vocabulary and length, not its shape): transformers fills in the class's defaults, LlamaConfig and MistralConfig
# in transformers 5.19.0 as vLLM 0.32.0 installs it (models/llama/configuration_llama.py 64-84,
# models/mistral/configuration_mistral.py 63-80). A top-level config missing them is refused as broken instead.
_LLAMA_SHAPE = {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                "num_attention_heads": 32, "max_position_embeddings": 2048, "tie_word_embeddings": False}
_NESTED_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": _LLAMA_SHAPE,
    "mistral": {**_LLAMA_SHAPE, "intermediate_size": 14336, "num_key_value_heads": 8,
                "max_position_embeddings": 4096 * 32, "sliding_window": 4096},
}
# Tencent Hunyuan (vllm/model_executor/models/hunyuan_v1.py @ v0.18.0; served through the Transformers backend at
# v0.32.0): the head size as attention_head_dim, the routed experts per token as moe_topk, and num_experts,
# moe_topk, moe_intermediate_size and num_shared_expert each as one value or a list indexed by layer.
_HUNYUAN_TYPES = ("hunyuan", "hunyuan_v1_moe", "hunyuan_v1_dense")
_HUNYUAN_KEY_NAMES = {"head_dim": "attention_head_dim", "num_experts_per_tok": "moe_topk"}
_LAYER_LISTS = {t: frozenset({"num_experts", "moe_topk", "moe_intermediate_size", "num_shared_expert"})
                for t in _HUNYUAN_TYPES}
# Other names a family's config.json uses for a key (transformers' attribute_map).
_KEY_ALIASES: dict[str, dict[str, str]] = {
    "gpt2": _GPT2_KEY_NAMES,
    "gpt_bigcode": _GPT2_KEY_NAMES,
    "gptj": _GPT2_KEY_NAMES,
    "opt": {"intermediate_size": "ffn_dim"},
    # ChatGLM's own names, as vLLM reads them (vllm/model_executor/models/chatglm.py @ v0.32.0: num_layers,
    # ffn_hidden_size, padded_vocab_size; seq_length is among the keys _get_and_verify_max_len derives from)
    "chatglm": {"num_hidden_layers": "num_layers", "intermediate_size": "ffn_hidden_size",
                "vocab_size": "padded_vocab_size", "max_position_embeddings": "seq_length"},
    "nemotron_h": {"head_dim": "attention_head_dim"},
    # EXAONE 3.x's remote-code ExaoneConfig maps num_hidden_layers to num_layers (vLLM's exaone.py reads
    # config.num_hidden_layers @ v0.32.0)
    "exaone": {"num_hidden_layers": "num_layers"},
    # BloomConfig's attribute_map (n_layer, n_head; n_embed is read as hidden_size by BloomConfig.__init__)
    "bloom": {"num_hidden_layers": "n_layer", "num_attention_heads": "n_head", "hidden_size": "n_embed"},
    **{t: _HUNYUAN_KEY_NAMES for t in _HUNYUAN_TYPES},
    # RWConfig's attribute_map (vllm/transformers_utils/configs/falcon.py @ v0.32.0); FalconConfig has none, so a
    # model_type falcon file must use the long names
    "RefinedWeb": {"num_hidden_layers": "n_layer", "num_attention_heads": "n_head"},
    "RefinedWebModel": {"num_hidden_layers": "n_layer", "num_attention_heads": "n_head"},
}
# Decoder families whose config class defaults tie_word_embeddings to False (PretrainedConfig: True).
_UNTIED_BY_DEFAULT = {
    "gpt_neox", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen2_5_omni_text", "qwen3", "qwen3_moe", "phi3",
    "deepseek_v2", "deepseek_v3", "kimi_k2", "gpt_oss", "glm4_moe", "llama4_text", "qwen3_next", "nemotron_h",
    "qwen3_5_text", "qwen3_5_moe_text", "gptj", "phi", "qwen",
}
# the language model's type where the file does not name it: Ultravox's text_config is a LlamaConfig unless it
# names another type (UltravoxConfig, vllm/transformers_utils/configs/ultravox.py @ v0.32.0)
_TEXT_MODEL_TYPES = {"gemma3": "gemma3_text", "llama4": "llama4_text", "ultravox": "llama"}
_GDN_TYPES = {"qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"}  # Gated DeltaNet linear attention (Qwen3-Next, 3.5)
# Gemma 4: q_norm and k_norm with a learned scale per head dimension (v_norm has none: Gemma4Attention, gemma4.py
# @ v0.32.0)
_QK_NORM_TYPES = {"qwen3", "qwen3_moe", "gemma3_text", "gemma4_text", "lfm2"} | _GDN_TYPES
_FOUR_NORM_TYPES = {"gemma2", "gemma3_text"}  # pre/post attention and pre/post feed-forward norms
# always biased, whatever attention_bias says (the original Qwen's c_attn: bias=True, c_proj without one,
# vllm/model_executor/models/qwen.py @ v0.18.0)
_QKV_BIAS_TYPES = {"qwen2", "qwen2_moe", "qwen", "qwen2_5_omni_text"}  # the omni thinker's language model is Qwen2
_NO_O_BIAS_TYPES = {"glm4_moe"}  # attention_bias covers q/k/v only
_SCORE_BIAS_TYPES = {"deepseek_v3", "kimi_k2", "glm4_moe"}  # e_score_correction_bias per expert
_SHARED_GATE_TYPES = {"qwen2_moe"} | _GDN_TYPES  # shared_expert_gate: Linear(hidden, 1)
# use_sliding_window defaults false
_SLIDING_OFF_BY_DEFAULT = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_5_omni_text"}
# LayerNorm with a bias, biased linears, two-matrix MLP. Starcoder2 too: c_fc/c_proj, biases where use_bias (default
# true), nn.LayerNorm (vllm/model_executor/models/starcoder2.py @ v0.18.0; from v0.32.0 the Transformers backend
# runs transformers' modeling_starcoder2.py, the same modules)
# GPT-NeoX (Pythia, RedPajama-INCITE): LayerNorms with bias, biased query_key_value and dense, a two-matrix MLP
# (dense_h_to_4h, dense_4h_to_h), an untied embed_out (gpt_neox.py @ v0.18.0; the Transformers backend from 0.32.0)
# GPT-BigCode (StarCoder, WizardCoder, SantaCoder): GPT-2's block with one K/V head under multi_query
# (gpt_bigcode.py @ v0.18.0: c_attn of hidden + 2 x head_dim outputs; the Transformers backend from 0.32.0)
_LAYERNORM_TYPES = {"gpt2", "opt", "gptj", "phi", "starcoder2", "gpt_neox", "gpt_bigcode", "bloom", "persimmon"}
# GPT-J and Phi-1.5/2 run attention and MLP in parallel off one LayerNorm, and their lm_head has a bias
# (vllm/model_executor/models/gpt_j.py @ v0.32.0: GPTJBlock.ln_1 only, ParallelLMHead bias=True; PhiForCausalLM
# is served by the Transformers backend from v0.32.0 (registry.py), transformers' modeling_phi.py: one
# input_layernorm, lm_head bias=True; vllm/model_executor/models/phi.py @ v0.18.0 the same)
_PARALLEL_BLOCK_TYPES = {"gptj", "phi"}
_LM_HEAD_BIAS_TYPES = {"gptj", "phi"}
_UNBIASED_ATTENTION_TYPES = {"gptj"}  # GPT-J's qkv and out projections have no bias (gpt_j.py, bias=False)
_FALCON_TYPES = {"falcon", "RefinedWeb", "RefinedWebModel"}  # FalconForCausalLM, RWForCausalLM in vLLM
# Low-rank (MLA-shaped) attention weights, but vLLM caches a full key and value for every head: MiniCPM3Attention
# builds a plain Attention with num_kv_heads = num_heads and head size qk_nope + qk_rope, its value padded to that
# size (vllm/model_executor/models/minicpm3.py @ v0.32.0 and v0.18.0; minicpm3 is not among the model types
# is_deepseek_mla lists, vllm/transformers_utils/model_arch_config_convertor.py @ v0.32.0)
_PER_HEAD_KV_LOW_RANK_TYPES = {"minicpm3"}
# Keys vLLM derives max_model_len from beside max_position_embeddings, the smallest wins, and then
# model_max_length, where set, overrides whatever they gave (Command-R writes 8,192 positions and a 131,072
# model_max_length, and runs at the latter): derive_max_model_len_and_key,
# vllm/transformers_utils/model_arch_config_convertor.py @ v0.18.0 and v0.32.0
_MAX_LEN_KEYS = ("n_positions", "max_seq_len", "seq_length", "model_max_length", "max_target_positions",
                 "max_sequence_length", "max_seq_length", "seq_len")
# Config classes with no length attribute at all (BloomConfig: ALiBi, no positions): vLLM finds none of its keys and
# assumes 2048, and takes any --max-model-len as given (_get_and_verify_max_len, vllm/config/model.py @ v0.32.0)
_NO_LENGTH_TYPES = {"bloom"}
_VLLM_ASSUMED_MAX_LEN = 2048
_DTYPES = {"bfloat16": "bfloat16", "bf16": "bfloat16", "float16": "float16", "fp16": "float16",
           "half": "float16", "float32": "float32", "fp32": "float32", "float": "float32"}

# Model types vLLM serves that are not decoder-only generators: refused with the reason.
_ENCODER_DECODER_TYPES = {"t5", "mt5", "umt5", "bart", "mbart", "marian", "pegasus", "whisper", "florence2",
                          "encoder-decoder", "m2m_100", "nllb-moe", "mllama"}
_POOLING_TYPES = {"bert", "roberta", "xlm-roberta", "distilbert", "deberta", "deberta-v2", "electra", "mpnet",
                  "nomic_bert", "modernbert", "new", "gte", "jina_bert", "camembert", "albert"}
_POOLING_SUFFIXES = ("ForSequenceClassification", "ForTokenClassification", "ForMaskedLM",
                     "ForQuestionAnswering", "ForRewardModel", "ForEmbedding", "EmbeddingModel")
# Bare base-model architectures vLLM serves only as embedding models (in _EMBEDDING_MODELS and in no generation
# list: vllm/model_executor/models/registry.py @ v0.32.0), e.g. intfloat/e5-mistral-7b-instruct's MistralModel.
# Not every *Model is one: ChatGLMModel, Qwen2_5OmniModel and GPT2LMHeadModel generate.
_POOLING_ARCHITECTURES = {"BertModel", "Gemma2Model", "Gemma3TextModel", "GteModel", "GteNewModel", "LlamaModel",
                          "LlamaBidirectionalModel", "MistralModel", "ModernBertModel", "NomicBertModel", "Qwen2Model",
                          "RobertaModel", "XLMRobertaModel", "DeepseekV3BidirectionalModel", "CLIPModel",
                          "SiglipModel"}


# Every key this reader reads: the shipped catalog's config.json files are trimmed to these (and a
# test checks that they hold nothing else). quantization_config is kept whole; text_config (llm_config) and
# vision_config are trimmed the same way (vision_config only says the model is multimodal).
READ_KEYS = frozenset({
    "model_type", "architectures", "torch_dtype", "dtype", "text_config", "llm_config", "vision_config",
    "quantization_config",
    "is_encoder_decoder", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
    "head_dim", "intermediate_size", "intermediate_size_mlp", "vocab_size", "max_position_embeddings",
    "rope_scaling", "rope_parameters", "original_max_position_embeddings",
    "tie_word_embeddings", "attention_bias", "mlp_bias", "use_qk_norm", "topk_method", "sliding_window",
    "use_sliding_window", "max_window_layers", "layer_types", "sliding_window_pattern", "no_rope_layers",
    "no_rope_layer_interval", "attention_chunk_size", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
    "qk_nope_head_dim", "v_head_dim", "num_local_experts", "num_experts", "n_routed_experts",
    "num_experts_per_tok", "experts_per_token", "moe_intermediate_size", "n_shared_experts",
    "shared_expert_intermediate_size", "first_k_dense_replace", "decoder_sparse_step", "interleave_moe_layer_step",
    "mlp_only_layers", "n_embd", "n_layer", "n_head", "n_positions", "n_inner", "ffn_dim", "word_embed_proj_dim",
    "enable_bias", "full_attention_interval", "linear_num_value_heads", "linear_value_head_dim",
    "linear_num_key_heads", "linear_key_head_dim", "linear_conv_kernel_dim", "attn_output_gate",
    "hybrid_override_pattern", "attention_head_dim", "mamba_num_heads", "mamba_head_dim", "n_groups",
    "ssm_state_size", "conv_kernel", "mamba_ssm_cache_dtype", "use_bias", "use_conv_bias",
    "moe_shared_expert_intermediate_size", "conv_dim", "conv_L_cache", "conv_bias", "block_auto_adjust_ff_dim",
    "block_ffn_dim_multiplier", "block_multiple_of", "full_attn_idxs", "moe_latent_size", "mamba_ssm_dtype", "index_head_dim", "index_n_heads",
    "num_layers", "ffn_hidden_size", "padded_vocab_size", "seq_length", "multi_query_attention",
    "multi_query_group_num", "add_qkv_bias", "add_bias_linear", "rmsnorm", "multi_query", "new_decoder_architecture",
    "num_kv_heads", "n_head_kv", "parallel_attn", "num_ln_in_parallel_attn", "bias",
    "max_seq_len", "model_max_length", "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
    "moe_topk", "num_shared_expert", "use_mixed_mlp_moe", "use_cla", "cla_share_factor", "block_configs",
    "thinker_config", "n_embed", "global_head_dim", "num_global_key_value_heads", "attention_k_eq_v",
    "num_kv_shared_layers", "hidden_size_per_layer_input", "vocab_size_per_layer_input", "use_double_wide_mlp",
    "language_config", "text_model_id",
})


_TEXT_SECTIONS = ("text_config", "llm_config", "language_config")


def trim_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """config.json reduced to READ_KEYS (nested text_config too; vision_config to its model_type)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key not in READ_KEYS:
            continue
        if key in _TEXT_SECTIONS and isinstance(value, dict):
            value = trim_config(value)
        elif key == "thinker_config" and isinstance(value, dict):
            value = {k: trim_config(v) if k == "text_config" else {"model_type": v.get("model_type")}
                     for k, v in value.items()
                     if k in ("text_config", "vision_config", "audio_config") and isinstance(v, dict)}
        elif key == "vision_config" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k == "model_type"}
        out[key] = value
    return out


# ---------------------------------------------------------------------------------------------
# From a config dict to a ModelSpec


@dataclass
class _NasBlocks:
    """A DeciLM (nemotron-nas) config's block_configs, layer by layer: attention or none, an MLP or none; and the
    uniform keys the rest of the reader reads (num_key_value_heads, intermediate_size) derived from them."""

    mixers: list[str]
    ffns: list[str]
    flat: dict[str, int]
    note: Optional[str]


@dataclass
class _Build:
    f: Fields
    model_type: str
    text_type: str
    notes: list[str] = field(default_factory=list)
    nas: Optional[_NasBlocks] = None


def spec_from_config(config: Mapping[str, Any], *, model_id: str, source: str, file: str = CONFIG_NAME,
                     modelopt: Optional[Mapping[str, Any]] = None,
                     quant_file: Optional[tuple[str, Mapping[str, Any]]] = None) -> ModelSpec:
    """Build a ModelSpec from a parsed config.json (and ModelOpt's hf_quant_config.json, if any; and an
    AutoGPTQ / AutoAWQ quantization file as (name, contents), read only where config.json has no quantization)."""
    top = Fields(config, file, "", {})
    model_type = top.str("model_type")
    if not model_type:
        raise ReaderError("this required key is missing: vLLM picks the architecture from it.",
                          file=file, key="model_type")
    archs = _architectures(config, file)
    _refuse_unmodelled(config, model_type, archs, file)
    text_key, text_cfg = _text_config(config)
    if text_cfg is not None and not isinstance(text_cfg, dict):
        raise ReaderError(f"expected an object, got {text_cfg!r}.", file=file, key=text_key)
    data = text_cfg if text_cfg is not None else config
    text_type = (data.get("model_type") if text_cfg is not None else None) or _TEXT_MODEL_TYPES.get(
        model_type, model_type)
    prefix = f"{text_key}." if text_cfg is not None else ""
    if text_cfg is not None and set(text_cfg) <= {"model_type"} and "num_hidden_layers" in config:
        # Fuyu's text_config names only its Persimmon type: the shapes sit at the top level, the values the text
        # config's defaults take for fuyu-8b (FuyuConfig, transformers; vllm/model_executor/models/fuyu.py)
        data, prefix = config, ""
    nas = _nas_blocks(data, file, prefix) if text_type == "nemotron-nas" else None
    if nas is not None:
        data = {**data, **nas.flat}
    defaults = _TYPE_DEFAULTS.get(text_type, {})
    if data is text_cfg:  # a nested text config leaves the rest to its class's defaults (llava-hf's)
        defaults = {**_NESTED_DEFAULTS.get(text_type, {}), **defaults}
    f = Fields(data, file, prefix, defaults, _KEY_ALIASES.get(text_type),
               _LAYER_LISTS.get(text_type, frozenset()))
    b = _Build(f, model_type, text_type, nas=nas)
    if nas is not None and nas.note:
        b.notes.append(nas.note)

    layers = f.req("num_hidden_layers")
    mixers, window, chunk = _mixers(b, layers)
    moe = _moe(f, text_type)
    ffns = _ffns(b, layers, moe)
    shape = _shape(b, layers, moe, mixers, ffns)
    gemma4 = _gemma4_attention(f, shape, mixers)
    if gemma4:
        shape = dataclasses.replace(shape, full_head_dim=gemma4.get("full_head_dim"),
                                    full_kv_heads=gemma4.get("full_kv_heads"),
                                    kv_shared_layers=gemma4.get("kv_shared_layers", 0))
    latent_cache = shape.mla is not None and text_type not in _PER_HEAD_KV_LOW_RANK_TYPES
    total, active = count_params(shape)
    quant = read_quantization(config, text_cfg, modelopt, file, b.notes, _layer_parts(shape))
    max_len, max_len_assumed = _max_len(b)
    file_quant = (read_quantization_file(quant_file[0], quant_file[1], b.notes, _layer_parts(shape))
                  if quant_file and quant is None else None)
    counts = {kind: mixers.count(kind) for kind in ("full", "sliding", "chunked", "linear", "none")}
    return ModelSpec(
        id=model_id,
        architectures=tuple(archs),
        model_type=model_type,
        num_hidden_layers=layers,
        hidden_size=shape.hidden,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        head_dim=shape.head_dim,
        intermediate_size=shape.intermediate,
        vocab_size=shape.vocab,
        max_position_embeddings=max_len,
        max_len_assumed=max_len_assumed,
        rope_scaling=_rope_scaling(f),
        original_max_position_embeddings=f.int("original_max_position_embeddings"),
        tie_word_embeddings=shape.tied,
        torch_dtype=_dtype(config, data, file, b.notes),
        torch_dtype_assumed=all(where.get(key) is None for where in (config, data) for key in ("torch_dtype", "dtype")),
        moe=moe,
        mla=shape.mla if latent_cache else None,
        low_rank_attention=None if latent_cache else shape.mla,
        layer_kinds=LayerKinds(**counts),
        layer_mixers=tuple(mixers),
        layer_ffns=tuple(ffns),
        sliding_window=window,
        **gemma4,
        attention_chunk_size=chunk,
        ssm=shape.ssm,
        mlp_gated=shape.mlp_gated,
        learned_positions=shape.learned_positions,
        per_layer_input_params=per_layer_input_params(f, shape.hidden, shape.layers),
        attn_output_gate=shape.attn_output_gate,
        norms_per_layer=shape.norms_per_layer,
        unmodelled=_unmodelled(f),
        quantization=quant,
        quantization_file=quant_file[0] if file_quant else None,
        file_quantization=file_quant,
        # a thinker's text config too; Molmo's vision tower is built from fixed settings, not a vision_config
        # (VisionBackboneConfig, vllm/model_executor/models/molmo.py @ v0.32.0)
        is_multimodal=text_cfg is not None or "vision_config" in config or config.get("model_type") == "molmo",
        params_total=total,
        params_by_part=params_by_part(shape),
        params_active=active,
        params_source="computed from config shapes by vllm-reader (not from safetensors)",
        source=source,
        notes=_final_notes(b),
    )


def _text_config(config: Mapping[str, Any]) -> tuple[str, Any]:
    """Where a multimodal wrapper keeps its language model (its key path, and the section or None): text_config;
    InternVL's llm_config, which vLLM renames to text_config and builds the language model from
    (vllm/transformers_utils/config.py "llm_config": "text_config"; vllm/model_executor/models/internvl.py
    @ v0.32.0); or an omni model's thinker_config.text_config (Qwen2.5-Omni: vLLM serves the thinker, whose text
    config is the model's, qwen2_5_omni_thinker.py and thinker_uses_mrope in transformers_utils/config.py); or
    DeepSeek-VL2's language_config, which its config class builds the text config from (DeepseekVLV2Config,
    vllm/transformers_utils/configs/deepseek_vl2.py @ v0.32.0)."""
    if config.get("model_type") == "deepseek_vl_v2" and "text_config" not in config:
        return "language_config", config.get("language_config")
    thinker = config.get("thinker_config")
    if "text_config" not in config and isinstance(thinker, dict) and "text_config" in thinker:
        return "thinker_config.text_config", thinker["text_config"]
    key = "llm_config" if "text_config" not in config and isinstance(config.get("llm_config"), dict) \
        else "text_config"
    return key, config.get(key)


def _final_notes(b: _Build) -> str:
    notes = list(b.notes)
    if b.f.defaulted:
        keys = ", ".join(sorted(set(b.f.defaulted)))
        notes.append(f"absent from config.json, transformers defaults used for: {keys} ({_DEFAULTS_SOURCE}).")
    return " ".join(notes)


def _architectures(config: Mapping[str, Any], file: str) -> list[str]:
    archs = config.get("architectures") or []
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise ReaderError(f"expected a list of class names, got {archs!r}.", file=file, key="architectures")
    return archs


def _refuse_unmodelled(config: Mapping[str, Any], model_type: str, archs: list[str], file: str) -> None:
    """Encoder-decoder and pooling-only models: vLLM serves them, vllm-reader does not model them."""
    what = ", ".join(archs) or model_type
    if config.get("is_encoder_decoder") is True or model_type in _ENCODER_DECODER_TYPES:
        raise ReaderError(
            f"{what} is an encoder-decoder model; vllm-reader models decoder-only generation, so its encoder "
            "cache, cross-attention KV and scheduling are not modelled.", file=file, key="model_type")
    if model_type in _HUNYUAN_TYPES and config.get("use_cla") and (config.get("cla_share_factor") or 1) > 1:
        raise ReaderError(
            f"{what} shares each layer's KV cache with the next {config['cla_share_factor'] - 1} (cross-layer "
            "attention, use_cla); vllm-reader does not model that sharing, so its KV cache would be counted "
            "wrong.", file=file, key="use_cla")
    if model_type in _POOLING_TYPES or (archs and all(a.endswith(_POOLING_SUFFIXES) or a in _POOLING_ARCHITECTURES
                                                      for a in archs)):
        raise ReaderError(
            f"{what} is a pooling (embedding or classification) model; vLLM serves it without generation, "
            "which vllm-reader does not model.", file=file, key="architectures" if archs else "model_type")


def _dtype(config: Mapping[str, Any], data: Mapping[str, Any], file: str, notes: list[str]) -> str:
    for where, key in ((config, "torch_dtype"), (config, "dtype"), (data, "torch_dtype"), (data, "dtype")):
        value = where.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or value.lower() not in _DTYPES:
            raise ReaderError(f"expected bfloat16, float16 or float32, got {value!r}.", file=file, key=key)
        return _DTYPES[value.lower()]
    # transformers then loads float32, and vLLM's dtype 'auto' runs a float32 config in bfloat16 where the
    # GPU supports it (_get_and_verify_dtype, vllm/config/model.py)
    notes.append("torch_dtype absent from config.json: bfloat16 assumed (vLLM's dtype auto runs it in 16-bit).")
    return "bfloat16"


def _head_dim(f: Fields, hidden: int, heads: int) -> int:
    explicit = f.int("head_dim")
    if explicit is not None:
        return explicit
    if hidden % heads:
        raise f.fail("head_dim", f"absent, and hidden_size {hidden} is not a multiple of "
                                 f"num_attention_heads {heads}.")
    return hidden // heads


def _layer_parts(s: Shape) -> dict[str, int]:
    """How many layers hold each quantizable part (for ignore lists that name layers one by one)."""
    mixers = [s.mixer(i) for i in range(s.layers)]
    ffns = [s.ffn(i) for i in range(s.layers)]
    moe_layers = ffns.count("moe")
    return {"attention": sum(mixers.count(k) for k in ATTENTION_MIXERS), "linear_mixer": mixers.count("linear"),
            "dense_mlp": ffns.count("dense"), "experts": moe_layers,
            "shared_experts": moe_layers if s.moe is not None and s.moe.shared_experts else 0, "lm_head": 1}


# ---------------------------------------------------------------------------------------------
# Shapes


def _shape(b: _Build, layers: int, moe: Optional[MoESpec], mixers: list[str], ffns: list[str]) -> Shape:
    f, t = b.f, b.text_type
    if t in _FALCON_TYPES:
        return _falcon_shape(b, layers)
    hidden, heads = f.req("hidden_size"), f.req("num_attention_heads")
    kv_heads = heads if t in _PER_HEAD_KV_LOW_RANK_TYPES else _kv_heads(f, t, heads)
    mla = _mla(f, t)
    head_dim = (mla.qk_nope_head_dim + mla.qk_rope_head_dim) if mla else _head_dim(f, hidden, heads)
    tied = f.bool("tie_word_embeddings", default=t not in _UNTIED_BY_DEFAULT)
    attention_bias = f.bool("attention_bias", default=False)
    layernorm = t in _LAYERNORM_TYPES or (t == "chatglm" and not f.bool("rmsnorm", default=True))
    biased = layernorm and (t != "opt" or f.bool("enable_bias", default=True))
    if t == "chatglm":
        biased = f.bool("add_bias_linear", default=False)  # chatglm.py: dense and MLP biases
        attention_bias = biased or f.bool("add_qkv_bias", default=False)  # query_key_value's bias
    if t == "starcoder2":
        biased = f.bool("use_bias", default=True)  # every linear, attention's and MLP's (Starcoder2Config)
    shape = Shape(
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
        intermediate=_intermediate(b, hidden, ffns), vocab=f.req("vocab_size"), tied=tied, moe=moe, mla=mla,
        qkv_bias=attention_bias or t in _QKV_BIAS_TYPES or (biased and t not in _UNBIASED_ATTENTION_TYPES),
        o_bias=(attention_bias and t not in _NO_O_BIAS_TYPES and t != "chatglm")
        or (biased and t not in _UNBIASED_ATTENTION_TYPES),
        qk_norm=t in _QK_NORM_TYPES or (t == "glm4_moe" and f.bool("use_qk_norm", default=False)),
        norms_per_layer=4 if t in _FOUR_NORM_TYPES else (1 if t == "nemotron_h" or t in _PARALLEL_BLOCK_TYPES else 2),
        attention_sinks=t == "gpt_oss",
        expert_bias=t == "gpt_oss",
        router_bias=t == "gpt_oss",
        router_score_bias=(t in _SCORE_BIAS_TYPES and f.str("topk_method") in (None, "noaux_tc"))
        or (t == "nemotron_h" and moe is not None),
        shared_expert_gate=t in _SHARED_GATE_TYPES and moe is not None and moe.shared_experts > 0,
        mlp_gated=not ((layernorm and t != "chatglm") or t == "nemotron_h"),
        mlp_bias=biased or f.bool("mlp_bias", default=False),
        norm_bias=layernorm,
        learned_positions=_learned_positions(b),
        attn_output_gate=t in _GDN_TYPES and f.bool("attn_output_gate", default=True),
        ssm=_ssm(b) if "linear" in mixers else None,
        mamba_bias=(t == "nemotron_h" and f.bool("use_bias", default=False))
        or (t == "lfm2" and f.bool("conv_bias", default=False)),
        mamba_conv_bias=f.bool("use_conv_bias", default=True),
        mixers=tuple(mixers),
        ffns=tuple(ffns),
        extra_outer=_opt_projections(b, hidden) + (f.req("vocab_size") if t in _LM_HEAD_BIAS_TYPES else 0)
        + (2 * hidden if t == "bloom" else 0)  # BLOOM's word_embeddings_layernorm (weight and bias)
        + per_layer_input_params(f, hidden, layers),
    )
    return shape


def per_layer_input_params(f: Fields, hidden: int, layers: int) -> int:
    """Gemma 4's per-layer inputs (hidden_size_per_layer_input > 0): a table of vocab_size_per_layer_input rows,
    each a layers x width vector, looked up by token; the projection of the embedding to the same layers x width
    and its norm; and in every layer a gate (hidden -> width), a projection back (width -> hidden) and a norm
    (embed_tokens_per_layer, per_layer_model_projection, per_layer_input_gate, per_layer_projection,
    vllm/model_executor/models/gemma4.py @ v0.32.0)."""
    width = f.int("hidden_size_per_layer_input", positive=False) or 0
    if not width:
        return 0
    rows = f.int("vocab_size_per_layer_input") or f.req("vocab_size")
    return rows * layers * width + hidden * layers * width + width + layers * (2 * hidden * width + hidden)


_ROPE_KEYS = ("rope_scaling", "rope_parameters")  # transformers 5 renamed rope_scaling to rope_parameters


def _rope_scaling(f: Fields) -> Optional[RopeScaling]:
    """The RoPE scaling mapping (or, per layer type, the first of them: vLLM applies one factor to the whole
    model, _get_and_verify_max_len, vllm/config/model.py @ v0.32.0); None without one."""
    for key in _ROPE_KEYS:
        value = f.data.get(key)
        if value is None:
            continue
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            value = next(iter(value.values()))
        if not isinstance(value, dict):
            raise ReaderError(f"expected a mapping, got {value!r}.", file=f.file, key=f"{f.prefix}{key}")
        rope = Fields(value, f.file, f"{f.prefix}{key}.", {})
        kind = rope.str("rope_type") or rope.str("type")
        if kind is None:
            raise rope.fail("rope_type", "this required key is missing (or null).")
        return RopeScaling(type=kind, factor=rope.number("factor"),
                           original_max_position_embeddings=rope.int("original_max_position_embeddings"))
    return None


def _max_len(b: _Build) -> tuple[int, bool]:
    """The longest sequence vLLM derives from config.json: the smallest of the length keys it reads (the original
    Qwen writes seq_length, its training length, beside max_position_embeddings; Qwen-14B's 2048 is below its
    8192, and vLLM takes 2048); and whether vLLM found none and assumed one."""
    f = b.f
    if b.text_type in _NO_LENGTH_TYPES and not f.has("max_position_embeddings") and not any(
            f.data.get(k) is not None for k in _MAX_LEN_KEYS):
        b.notes.append(f"config.json names no length (its family has none: ALiBi): vLLM assumes "
                       f"{_VLLM_ASSUMED_MAX_LEN} and takes any --max-model-len as given.")
        return _VLLM_ASSUMED_MAX_LEN, True
    others = [k for k in _MAX_LEN_KEYS if f.data.get(k) is not None]
    # Baichuan-13B writes model_max_length alone (ALiBi): vLLM takes the smallest key it finds, whichever
    length = f.req("max_position_embeddings") if f.has("max_position_embeddings") or not others else f.int(others[0])
    for key in _MAX_LEN_KEYS:
        other = f.int(key) if f.data.get(key) is not None else None
        if other is not None and other < length:
            b.notes.append(f"{key} {other} is below max_position_embeddings {length}: vLLM derives max_model_len "
                           f"from the smaller.")
            length = other
    override = f.int("model_max_length") if f.data.get("model_max_length") else None
    if override is not None and override > length:
        b.notes.append(f"model_max_length {override} overrides the smaller length keys ({length}), as vLLM reads it.")
        length = override
    return length, False


def _falcon_shape(b: _Build, layers: int) -> Shape:
    """Falcon as vLLM builds it (vllm/model_executor/models/falcon.py @ v0.32.0): one query_key_value and one
    dense projection, an MLP of two matrices 4 x hidden wide (dense_h_to_4h, dense_4h_to_h, GELU, no gate; the
    config's ffn_hidden_size is not read), every linear biased when `bias` is set, LayerNorms with a bias, and
    the lm_head tied to the embedding unless tie_word_embeddings says otherwise."""
    f = b.f
    hidden, heads = f.req("hidden_size"), f.req("num_attention_heads")
    bias = f.bool("bias", default=False)
    new_decoder = _falcon_new_decoder(b, hidden)
    return Shape(
        layers=layers, hidden=hidden, heads=heads, kv_heads=_falcon_kv_heads(b, heads, new_decoder),
        head_dim=_head_dim(f, hidden, heads), intermediate=4 * hidden, vocab=f.req("vocab_size"),
        tied=f.bool("tie_word_embeddings", default=True), qkv_bias=bias, o_bias=bias,
        norms_per_layer=_falcon_norms_per_layer(b, new_decoder), mlp_gated=False, mlp_bias=bias, norm_bias=True,
    )


def _falcon_new_decoder(b: _Build, hidden: int) -> bool:
    """Falcon-40B/180B's layout. RWConfig switches it on for any hidden size of 8192, which is how the old
    falcon-40b file (model_type RefinedWeb, no new_decoder_architecture key) gets it."""
    if b.f.bool("new_decoder_architecture", default=False):
        return True
    return b.text_type != "falcon" and hidden == 8192


def _falcon_kv_heads(b: _Build, heads: int, new_decoder: bool) -> int:
    """FalconAttention's KV heads: num_kv_heads groups in the new decoder layout (n_head_kv in RefinedWeb files,
    RWConfig's default 1; FalconConfig's default is one per query head), else one with multi_query (both
    configs default it to true), else one per query head."""
    f = b.f
    if new_decoder:
        if b.text_type == "falcon":
            return f.int("num_kv_heads") or heads
        return f.int("n_head_kv") or f.int("num_kv_heads") or 1
    return 1 if f.bool("multi_query", default=True) else heads


def _falcon_norms_per_layer(b: _Build, new_decoder: bool) -> int:
    """FalconDecoderLayer: two LayerNorms when attention and MLP run one after the other or when the parallel
    block has num_ln_in_parallel_attn 2 (the new decoder layout's default), else one shared LayerNorm.
    parallel_attn defaults to true in FalconConfig and false in RWConfig."""
    f = b.f
    if not f.bool("parallel_attn", default=b.text_type == "falcon"):
        return 2
    shared_norms = f.int("num_ln_in_parallel_attn") or (2 if new_decoder else 1)
    return 2 if shared_norms == 2 else 1


def _kv_heads(f: Fields, text_type: str, heads: int) -> int:
    """KV heads as vLLM sizes the cache: ChatGLM keeps multi_query_group_num of them only with
    multi_query_attention (GLMAttention, vllm/model_executor/models/chatglm.py @ v0.32.0)."""
    if text_type == "chatglm":
        return f.req("multi_query_group_num") if f.bool("multi_query_attention", default=False) else heads
    if text_type == "gpt_bigcode":
        return 1 if f.bool("multi_query", default=True) else heads
    return f.int("num_key_value_heads") or heads


def _four_x_unless_given(b: _Build, hidden: int) -> int:
    return b.f.int("intermediate_size") or 4 * hidden  # n_inner None: 4 x n_embd (GPT2MLP, GPTJMLP, GPTBigMLP)


def _gate_and_up_together(b: _Build, hidden: int) -> int:
    """The original Qwen's and Molmo's configs give gate and up together: each of the MLP's gate, up and down
    matrices is intermediate_size // 2 wide (QWenMLP, vllm/model_executor/models/qwen.py @ v0.18.0;
    LanguageModelMLP, molmo.py 567 @ v0.32.0)."""
    return b.f.req("intermediate_size") // 2


def _lfm2_width(b: _Build, hidden: int) -> Optional[int]:
    """Lfm2MLP under block_auto_adjust_ff_dim: two thirds of intermediate_size, times block_ffn_dim_multiplier,
    rounded up to block_multiple_of (vllm/model_executor/models/lfm2.py 61-68 @ v0.32.0)."""
    f = b.f
    if f.raw("block_auto_adjust_ff_dim") is not True:
        return None
    multiplier = f.raw("block_ffn_dim_multiplier")
    if multiplier is not None and (isinstance(multiplier, bool) or not isinstance(multiplier, (int, float))):
        raise f.fail("block_ffn_dim_multiplier", f"expected a number, got {multiplier!r}.")
    width = int(int(2 * f.req("intermediate_size") / 3) * (multiplier or 1.0))
    step = f.int("block_multiple_of") or 1
    return -(-width // step) * step


# The families whose dense MLP width is not plain intermediate_size; a rule may answer None (not this file).
_MLP_WIDTH_RULES = {
    "llama4_text": lambda b, hidden: b.f.req("intermediate_size_mlp"),
    "gpt2": _four_x_unless_given, "gptj": _four_x_unless_given, "gpt_bigcode": _four_x_unless_given,
    # BloomMLP: dense_h_to_4h / dense_4h_to_h (vllm/model_executor/models/bloom.py @ v0.32.0)
    "bloom": lambda b, hidden: 4 * hidden,
    "qwen": _gate_and_up_together, "molmo": _gate_and_up_together,
    "lfm2": _lfm2_width,
}


def _intermediate(b: _Build, hidden: int, ffns: list[str]) -> int:
    f = b.f
    rule = _MLP_WIDTH_RULES.get(b.text_type)
    width = rule(b, hidden) if rule is not None else None
    if width is not None:
        return width
    if "dense" not in ffns and not f.has("intermediate_size"):
        return f.req("moe_intermediate_size")  # every layer is MoE: no dense MLP to size (Qwen3.5 MoE)
    if f.raw("use_double_wide_mlp") is True and (f.int("num_kv_shared_layers", positive=False) or 0):
        return _double_wide_mean(b, len(ffns))
    return f.req("intermediate_size")


def _double_wide_mean(b: _Build, layers: int) -> int:
    """Gemma 4: the KV-shared layers' MLPs are twice as wide (Gemma4DecoderLayer, gemma4.py @ v0.32.0); the mean
    stands for every MLP, the same weights and FLOPs in all."""
    shared = b.f.int("num_kv_shared_layers", positive=False)
    width = b.f.req("intermediate_size")
    mean = round(width * (layers + min(shared, layers)) / layers)
    b.notes.append(f"the last {shared} layers' MLPs are twice as wide (use_double_wide_mlp: {2 * width}): "
                   f"their mean, {mean}, stands for every MLP (the same weights and FLOPs in all).")
    return mean


def _learned_positions(b: _Build) -> int:
    if b.text_type in ("gpt2", "gpt_bigcode"):
        return b.f.req("max_position_embeddings")
    if b.text_type == "opt":
        return b.f.req("max_position_embeddings") + 2  # OPTLearnedPositionalEmbedding's offset of 2
    return 0


def _opt_projections(b: _Build, hidden: int) -> int:
    """OPT-350m embeds in word_embed_proj_dim and projects in and out of the hidden size; the
    embedding table then has word_embed_proj_dim columns, not hidden (counted here as the difference)."""
    if b.text_type != "opt":
        return 0
    proj = b.f.int("word_embed_proj_dim") or hidden
    if proj == hidden:
        return 0
    vocab = b.f.req("vocab_size")
    return 2 * proj * hidden + vocab * (proj - hidden)


def _mla(f: Fields, text_type: str) -> Optional[MLASpec]:
    if not f.has("kv_lora_rank"):
        return None
    return MLASpec(
        kv_lora_rank=f.req("kv_lora_rank"),
        qk_rope_head_dim=f.req("qk_rope_head_dim"),
        qk_nope_head_dim=f.req("qk_nope_head_dim"),
        v_head_dim=_v_head_dim(f, text_type),
        q_lora_rank=f.int("q_lora_rank"),
    )


def _v_head_dim(f: Fields, text_type: str) -> int:
    """MiniCPM3Config takes hidden_size // num_attention_heads when v_head_dim is absent
    (transformers' models/minicpm3/configuration_minicpm3.py, 5.19.0)."""
    if text_type in _PER_HEAD_KV_LOW_RANK_TYPES and not f.has("v_head_dim"):
        f.defaulted.append("v_head_dim")
        return f.req("hidden_size") // f.req("num_attention_heads")
    return f.req("v_head_dim")


def _ssm(b: _Build) -> SsmSpec:
    f = b.f
    if b.text_type in _GDN_TYPES:
        # Qwen3.5 names the recurrent state's dtype (mamba_ssm_dtype), which vLLM takes under 'auto'
        # (Qwen3_5ForConditionalGenerationConfig, vllm/model_executor/models/config.py @ v0.32.0)
        return SsmSpec(kind="gated_delta_net", heads=f.req("linear_num_value_heads"),
                       head_dim=f.req("linear_value_head_dim"), groups=f.req("linear_num_key_heads"),
                       state_size=f.req("linear_key_head_dim"), conv_kernel=f.req("linear_conv_kernel_dim"),
                       ssm_state_dtype=_state_dtype(f, "mamba_ssm_dtype"))
    if b.text_type == "nemotron_h":
        # vLLM's NemotronHForCausalLMConfig takes the config's own mamba_ssm_cache_dtype under 'auto'; without
        # one it picks a per-release default (applied by the capacity model)
        return SsmSpec(kind="mamba2", heads=f.req("mamba_num_heads"), head_dim=f.req("mamba_head_dim"),
                       groups=f.req("n_groups"), state_size=f.req("ssm_state_size"),
                       conv_kernel=f.req("conv_kernel"), ssm_state_dtype=_state_dtype(f, "mamba_ssm_cache_dtype"))
    if b.text_type == "lfm2":
        # ShortConv (vllm/model_executor/layers/mamba/short_conv.py @ v0.32.0): its state is conv_dim x
        # (conv_L_cache - 1) columns (short_conv_state_shape, mamba_utils.py)
        return SsmSpec(kind="short_conv", heads=1, head_dim=f.req("conv_dim"), groups=1, state_size=1,
                       conv_kernel=f.req("conv_L_cache"))
    raise f.fail("model_type", f"linear-attention layers of model type '{b.text_type}' are not modelled "
                               "(known: Qwen3-Next Gated DeltaNet, Nemotron-H Mamba2, LFM2 short convolution).")


def _state_dtype(f: Fields, key: str) -> Optional[str]:
    dtype = f.str(key)
    if dtype is not None and dtype not in ("float32", "bfloat16", "float16"):
        raise f.fail(key, f"expected float32, bfloat16 or float16, got {dtype!r}.")
    return dtype


def _gemma4_attention(f: Fields, shape: Shape, mixers: list[str]) -> dict[str, Any]:
    """Gemma 4's full-attention layers take global_head_dim (512 when absent) and, under attention_k_eq_v,
    num_global_key_value_heads (Gemma4TextConfig's per_layer_config, transformers configuration_gemma4.py, which
    vLLM's Gemma4Attention reads per layer, gemma4.py @ v0.32.0); the last num_kv_shared_layers layers keep no KV
    cache. Other families: nothing of their own."""
    if not f.has("global_head_dim") and not f.has("num_kv_shared_layers"):
        return {}
    out: dict[str, Any] = {"kv_shared_layers": f.int("num_kv_shared_layers", positive=False) or 0}
    if out["kv_shared_layers"] >= len(mixers):
        raise f.fail("num_kv_shared_layers", f"{out['kv_shared_layers']} shared layers leave none of the "
                                             f"{len(mixers)} to keep a KV cache.")
    if "full" in mixers and f.has("global_head_dim"):
        wide = f.req("global_head_dim")
        kv = f.int("num_global_key_value_heads") if f.raw("attention_k_eq_v") is True else None
        if wide != shape.head_dim or (kv and kv != shape.kv_heads):
            out.update(full_head_dim=wide, full_kv_heads=kv or shape.kv_heads)
    return out


def _unmodelled(f: Fields) -> tuple[str, ...]:
    """What the config describes that the shape does not carry, said in every capacity report. Gemma 4's keys as
    vLLM reads them: vllm/model_executor/models/gemma4.py @ v0.32.0."""
    out = []
    if f.has("index_head_dim"):
        out.append(f"DeepSeek sparse attention: the indexer's own key cache ({f.int('index_head_dim')} values per "
                   "token per layer) and its weights are not counted; KV figures cover the MLA latent only")
    head, wide = f.int("head_dim"), f.int("global_head_dim")
    if wide and head and wide != head:
        out.append(f"the attention kernels' time of every layer is counted at the sliding layers' head size ({head}); "
                   f"the full-attention layers' weights, projections and KV cache are counted at their own ({wide})")
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# MoE


def _moe(f: Fields, text_type: str) -> Optional[MoESpec]:
    experts_key = next((k for k in ("num_local_experts", "num_experts", "n_routed_experts") if f.has(k)), None)
    if experts_key is None:
        return None
    num_experts = f.int(experts_key, positive=False) or 0
    if num_experts <= 1:
        return None
    top_k_key = "num_experts_per_tok" if f.has("num_experts_per_tok") else "experts_per_token"
    expert_size_key = "moe_intermediate_size" if f.has("moe_intermediate_size") else "intermediate_size"
    shared, shared_size = _shared_experts(f, text_type)
    step_key = "interleave_moe_layer_step" if text_type == "llama4_text" else "decoder_sparse_step"
    return MoESpec(
        num_experts=num_experts,
        experts_per_token=f.req(top_k_key),
        moe_intermediate_size=f.req(expert_size_key),
        shared_experts=shared,
        shared_expert_intermediate_size=shared_size,
        dense_layers=f.int("first_k_dense_replace", positive=False) or 0,
        moe_layer_step=f.int(step_key) or 1,
        latent_size=f.int("moe_latent_size"),
    )


def _shared_experts(f: Fields, text_type: str) -> tuple[int, Optional[int]]:
    if text_type == "llama4_text":
        return 1, None  # one shared expert per MoE layer, of the routed experts' size (architecture)
    if text_type == "nemotron_h" and f.has("n_shared_experts"):
        count = f.int("n_shared_experts", positive=False) or 0
        return count, f.int("moe_shared_expert_intermediate_size")
    if text_type in _HUNYUAN_TYPES:
        # one shared MLP of num_shared_expert x intermediate_size where use_mixed_mlp_moe (hunyuan_v1.py)
        mixed = f.raw("use_mixed_mlp_moe")
        count = (f.int("num_shared_expert", positive=False) or 0) if mixed else 0
        return (1, count * f.req("intermediate_size")) if count else (0, None)
    if f.has("n_shared_experts"):
        return f.int("n_shared_experts", positive=False) or 0, None
    size = f.int("shared_expert_intermediate_size", positive=False) or 0
    return (1, size) if size else (0, None)


def _ffns(b: _Build, layers: int, moe: Optional[MoESpec]) -> list[str]:
    """Feed-forward block per layer: Nemotron-H's pattern, Qwen's mlp_only_layers, else the MoE rule."""
    f = b.f
    if b.text_type == "nemotron_h":
        pattern = _nemotron_pattern(f, layers)
        ffns = ["moe" if c == "E" else ("dense" if c == "-" else "none") for c in pattern]
        if "moe" in ffns and moe is None:
            raise f.fail("hybrid_override_pattern", "has MoE layers ('E') but the config gives no experts.")
        return ffns
    if b.nas is not None:
        return list(b.nas.ffns)
    dense_listed = f.list("mlp_only_layers") or []
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in dense_listed):
        raise f.fail("mlp_only_layers", f"expected layer indices from 0 to {layers - 1}, got {dense_listed!r}.")
    return ["moe" if is_moe_layer(moe, i) and i not in dense_listed else "dense" for i in range(layers)]


# ---------------------------------------------------------------------------------------------
# Token mixers per layer


_TYPE_KIND = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked",
              "linear_attention": "linear", "mamba": "linear", "attention": "full", "conv": "linear",
              "deepseek_sparse_attention": "full"}  # sparse attention over a full MLA cache (GLM-5.2)
_NEMOTRON_CODES = {"M": "linear", "*": "full", "-": "none", "E": "none"}


def _mixers(b: _Build, layers: int) -> tuple[list[str], Optional[int], Optional[int]]:
    """The mixer of each layer (full/sliding/chunked/linear/none), the sliding window and the chunk size."""
    f, t = b.f, b.text_type
    window = f.int("sliding_window")
    types = f.list("layer_types")
    if types is not None:
        return _mixers_from_types(f, types, layers, window)
    if t == "nemotron_h":
        return [_NEMOTRON_CODES[c] for c in _nemotron_pattern(f, layers)], None, None
    if t == "lfm2":
        # earlier LFM2 files name the attention layers instead; transformers' Lfm2Config builds layer_types from
        # them and the rest are short convolutions (configuration_lfm2.py)
        wanted = f.list("full_attn_idxs")
        if wanted is None or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in wanted):
            raise f.fail("full_attn_idxs", f"expected layer_types or a list of attention layers below {layers}.")
        return ["full" if i in wanted else "linear" for i in range(layers)], None, None
    if b.nas is not None:
        if len(b.nas.mixers) != layers:
            raise f.fail("block_configs", f"lists {len(b.nas.mixers)} blocks but num_hidden_layers is {layers}.")
        return list(b.nas.mixers), None, None
    if t in _GDN_TYPES:
        interval = f.req("full_attention_interval")
        return ["full" if (i + 1) % interval == 0 else "linear" for i in range(layers)], None, None
    if t == "llama4_text":
        return _llama4_mixers(f, layers)
    if t == "gemma2":
        return ["sliding" if (i + 1) % 2 else "full" for i in range(layers)], window, None
    if t == "gemma3_text":
        pattern = f.req("sliding_window_pattern")
        return ["sliding" if (i + 1) % pattern else "full" for i in range(layers)], window, None
    if window is None or not f.bool("use_sliding_window", default=t not in _SLIDING_OFF_BY_DEFAULT):
        if window is not None:
            b.notes.append(f"sliding_window {window} is set but use_sliding_window is false: all layers full.")
        return ["full"] * layers, None, None
    max_pos = f.int("max_position_embeddings")
    if max_pos is not None and window >= max_pos:
        b.notes.append(f"sliding_window {window} is not below max_position_embeddings {max_pos}: no effect.")
        return ["full"] * layers, None, None
    if f.has("max_window_layers") and t in _QKV_BIAS_TYPES | {"qwen3", "qwen3_moe"}:
        first_sliding = min(f.int("max_window_layers", positive=False) or 0, layers)
        return ["full" if i < first_sliding else "sliding" for i in range(layers)], window, None
    # Mistral v0.1 style: one window on every layer (vLLM's Attention takes cache_config.sliding_window
    # when the layer has no per-layer window, vllm/model_executor/layers/attention/attention.py @ v0.32.0)
    return ["sliding"] * layers, window, None


def _nas_blocks(data: Mapping[str, Any], file: str, prefix: str) -> _NasBlocks:
    """vllm/model_executor/models/nemotron_nas.py @ v0.32.0: a layer's attention is absent where no_op, else has
    num_attention_heads // n_heads_in_group KV heads (and vLLM takes the first such layer's count for the whole
    model: NemotronNasModelArchConfigConvertor); its MLP is absent where no_op, else int(2 * ffn_mult * hidden / 3)
    rounded up to a multiple of 256 wide (or the block's intermediate_size)."""
    key = prefix + "block_configs"
    blocks, hidden, heads = data.get("block_configs"), data.get("hidden_size"), data.get("num_attention_heads")
    if not isinstance(blocks, list) or not blocks:
        raise ReaderError("expected a list of one block per layer (attention and ffn).", file=file, key=key)
    if not isinstance(hidden, int) or not isinstance(heads, int):
        raise ReaderError("hidden_size and num_attention_heads must be whole numbers.", file=file, key=key)
    read = [_nas_block(i, block, hidden, heads, file, key) for i, block in enumerate(blocks)]
    groups = {group for group, _ in read if group}
    widths = [width for _, width in read if width]
    if len(groups) > 1:
        raise ReaderError(f"attention layers differ in KV heads (n_heads_in_group {sorted(groups)}); vllm-reader "
                          "models one KV head count for every layer.", file=file, key=key)
    flat = {"num_key_value_heads": heads // groups.pop() if groups else heads}
    note = None
    if widths:
        flat["intermediate_size"] = round(sum(widths) / len(widths))
        if len(set(widths)) > 1:
            note = (f"MLP widths differ by layer ({min(widths)}-{max(widths)}, from block_configs' ffn_mult): their "
                    f"mean, {flat['intermediate_size']}, stands for every MLP (the same weights and FLOPs in all).")
    return _NasBlocks(mixers=["full" if group else "none" for group, _ in read],
                      ffns=["dense" if width else "none" for _, width in read], flat=flat, note=note)


def _nas_block(i: int, block: Any, hidden: int, heads: int, file: str, key: str) -> tuple[int, int]:
    """(n_heads_in_group, MLP width) of one block, 0 for a sublayer that is no_op."""
    attn, ffn = (block.get("attention"), block.get("ffn")) if isinstance(block, dict) else (None, None)
    if not isinstance(attn, dict) or not isinstance(ffn, dict):
        raise ReaderError(f"block {i}: expected an object with 'attention' and 'ffn' objects.", file=file, key=key)
    if attn.get("replace_with_linear") or ffn.get("replace_with_linear"):
        raise ReaderError(f"block {i} replaces a sublayer with a linear layer (replace_with_linear), which vLLM's "
                          "DeciLM model does not build.", file=file, key=key)
    group = 0
    if not attn.get("no_op"):
        group = attn.get("n_heads_in_group")
        if not isinstance(group, int) or isinstance(group, bool) or group <= 0 or heads % group:
            raise ReaderError(f"block {i}: n_heads_in_group {group!r} does not divide {heads} heads.", file=file,
                              key=key)
    if ffn.get("no_op"):
        return group, 0
    mult, width = ffn.get("ffn_mult"), ffn.get("intermediate_size")
    if isinstance(mult, (int, float)) and not isinstance(mult, bool) and mult > 0:
        width = -(-int(2 * mult * hidden / 3) // 256) * 256
    if not isinstance(width, int) or isinstance(width, bool) or width <= 0:
        raise ReaderError(f"block {i}: expected ffn_mult or intermediate_size for its MLP.", file=file, key=key)
    return group, width


def _nemotron_pattern(f: Fields, layers: int) -> str:
    pattern = f.str("hybrid_override_pattern")
    if not pattern:
        raise f.fail("hybrid_override_pattern", "this required key is missing: it says which layers are Mamba, "
                                                "attention and MLP.")
    if len(pattern) != layers or set(pattern) - set(_NEMOTRON_CODES):
        raise f.fail("hybrid_override_pattern", f"expected {layers} characters from M, *, - and E, "
                                                f"got {pattern!r}.")
    return pattern


def _mixers_from_types(f: Fields, types: list, layers: int,
                       window: Optional[int]) -> tuple[list[str], Optional[int], Optional[int]]:
    if len(types) != layers:
        raise f.fail("layer_types", f"lists {len(types)} layers but num_hidden_layers is {layers}.")
    mixers = []
    for value in types:
        kind = _TYPE_KIND.get(value) if isinstance(value, str) else None
        if kind is None:
            raise f.fail("layer_types", f"unknown layer type {value!r} (known: {', '.join(_TYPE_KIND)}).")
        mixers.append(kind)
    if "sliding" in mixers and window is None:
        raise f.fail("sliding_window", "layer_types has sliding layers but no sliding_window is set.")
    chunk = f.int("attention_chunk_size") if "chunked" in mixers else None
    return mixers, (window if "sliding" in mixers else None), chunk


def _llama4_mixers(f: Fields, layers: int) -> tuple[list[str], Optional[int], Optional[int]]:
    chunk = f.int("attention_chunk_size")
    rope_flags = f.list("no_rope_layers")  # 1 = uses RoPE and local (chunked) attention
    if not rope_flags:
        interval = f.req("no_rope_layer_interval")
        rope_flags = [int((i + 1) % interval != 0) for i in range(layers)]
    if len(rope_flags) != layers:
        raise f.fail("no_rope_layers", f"lists {len(rope_flags)} layers but num_hidden_layers is {layers}.")
    mixers = ["chunked" if flag and chunk else "full" for flag in rope_flags]
    return mixers, None, (chunk if "chunked" in mixers else None)


__all__ = ["spec_from_config", "trim_config", "READ_KEYS", "count_params", "Shape",
           "is_moe_layer", "CONFIG_NAME", "MODELOPT_SIDECAR", "read_json"]
