"""Read a Hugging Face `config.json` (a file, or a folder holding one) into a ModelSpec.

The reader is for models the catalog does not hold: it derives what vLLM derives from the same
file (attention layout, MoE/MLA shape, sliding windows, the checkpoint's quantization) and counts
the parameters from the shapes. Only JSON is parsed; nothing from the model folder is executed.

Family rules that config.json leaves implicit (which Gemma layers slide, which Llama 4 layers use
chunked attention, defaults for keys a config omits) follow the transformers configuration
classes named in `_DEFAULTS_SOURCE`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from ..errors import ReaderError
from .types import LayerKinds, MLASpec, ModelSpec, MoESpec, QuantSpec

CONFIG_NAME = "config.json"
MODELOPT_SIDECAR = "hf_quant_config.json"

_DEFAULTS_SOURCE = (
    "transformers configuration classes: src/transformers/models/gemma3/configuration_gemma3.py "
    "@ d98ac17c (Gemma3TextConfig), src/transformers/models/llama4/configuration_llama4.py @ b17cfe48 "
    "(Llama4TextConfig)"
)

# Values transformers applies when config.json omits the key. Only keys that change sizes are listed.
_TYPE_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262208, "max_position_embeddings": 131072, "tie_word_embeddings": True,
                    "head_dim": 256, "sliding_window": 4096, "sliding_window_pattern": 6},
    "gemma2": {"tie_word_embeddings": True},
    "gemma": {"tie_word_embeddings": True},
    "llama4_text": {"tie_word_embeddings": False, "head_dim": 128, "intermediate_size_mlp": 16384,
                    "no_rope_layer_interval": 4, "attention_chunk_size": 8192, "interleave_moe_layer_step": 1},
}
# Decoder families whose config class defaults tie_word_embeddings to False (PretrainedConfig: True).
_UNTIED_BY_DEFAULT = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3", "deepseek_v2",
    "deepseek_v3", "kimi_k2", "gpt_oss", "glm4_moe", "llama4_text",
}
_TEXT_MODEL_TYPES = {"gemma3": "gemma3_text", "llama4": "llama4_text"}
_QK_NORM_TYPES = {"qwen3", "qwen3_moe", "gemma3_text"}
_FOUR_NORM_TYPES = {"gemma2", "gemma3_text"}  # pre/post attention and pre/post feed-forward norms
_QKV_BIAS_TYPES = {"qwen2", "qwen2_moe"}  # always biased, whatever attention_bias says
_NO_O_BIAS_TYPES = {"glm4_moe"}  # attention_bias covers q/k/v only
_SCORE_BIAS_TYPES = {"deepseek_v3", "kimi_k2", "glm4_moe"}  # e_score_correction_bias per expert
_SLIDING_OFF_BY_DEFAULT = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}  # use_sliding_window defaults false
_DTYPES = {"bfloat16": "bfloat16", "bf16": "bfloat16", "float16": "float16", "fp16": "float16",
           "half": "float16", "float32": "float32", "fp32": "float32", "float": "float32"}


# ---------------------------------------------------------------------------------------------
# Reading the file


def resolve_config_path(path: str | Path) -> Path:
    """The config.json a user's path means: the file itself, or config.json inside a folder."""
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / CONFIG_NAME
        if not p.is_file():
            raise ReaderError(f"the folder '{path}' has no {CONFIG_NAME}.", file=str(path),
                              hint="Point to a Hugging Face model folder or to its config.json.")
    elif not p.is_file():
        raise ReaderError(f"no such file or folder: '{path}'.", file=str(path))
    return p


def read_json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ReaderError(f"cannot read the file: {err}.", file=str(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ReaderError(f"not valid JSON: {err.msg}.", file=str(path), line=err.lineno) from None
    if not isinstance(data, dict):
        raise ReaderError("expected a JSON object at the top level.", file=str(path))
    return data


def read_hf_config(path: str | Path) -> ModelSpec:
    """ModelSpec for a local config.json (or a folder holding one; hf_quant_config.json beside it is read too)."""
    config_path = resolve_config_path(path)
    config = read_json(config_path)
    sidecar_path = config_path.parent / MODELOPT_SIDECAR
    sidecar = read_json(sidecar_path) if sidecar_path.is_file() else None
    return spec_from_config(config, model_id=str(path), source=f"local file {config_path}",
                            file=str(config_path), modelopt=sidecar)


# ---------------------------------------------------------------------------------------------
# Typed access with errors that name the file and key


class _Fields:
    """A config dict plus the defaults of its family; every getter checks the type it returns."""

    def __init__(self, data: Mapping[str, Any], file: str, prefix: str, defaults: Mapping[str, Any]):
        self.data, self.file, self.prefix, self.defaults = data, file, prefix, defaults
        self.defaulted: list[str] = []

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str) -> Any:
        if self.data.get(key) is not None:
            return self.data[key]
        if key in self.defaults:
            self.defaulted.append(key)
            return self.defaults[key]
        return None

    def _fail(self, key: str, message: str) -> ReaderError:
        return ReaderError(message, file=self.file, key=self.prefix + key)

    def int(self, key: str, *, required: bool = False, positive: bool = True) -> Optional[int]:
        value = self.raw(key)
        if value is None:
            if required:
                raise self._fail(key, "this required key is missing (or null).")
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise self._fail(key, f"expected a whole number, got {value!r}.")
        if positive and value <= 0:
            raise self._fail(key, f"expected a number above 0, got {value!r}.")
        return int(value)

    def req(self, key: str) -> int:
        value = self.int(key, required=True)
        assert value is not None
        return value

    def bool(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._fail(key, f"expected true or false, got {value!r}.")
        return value

    def str(self, key: str) -> Optional[str]:
        value = self.raw(key)
        if value is not None and not isinstance(value, str):
            raise self._fail(key, f"expected a string, got {value!r}.")
        return value

    def list(self, key: str) -> Optional[list]:
        value = self.raw(key)
        if value is not None and not isinstance(value, list):
            raise self._fail(key, f"expected a list, got {value!r}.")
        return value


# ---------------------------------------------------------------------------------------------
# Shapes and parameter counts


@dataclass(frozen=True)
class Shape:
    """Everything the parameter count needs, normalised across families."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    moe: Optional[MoESpec] = None
    mla: Optional[MLASpec] = None
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    attention_sinks: bool = False
    expert_bias: bool = False
    router_bias: bool = False
    router_score_bias: bool = False
    shared_expert_gate: bool = False


def _attention_params(s: Shape) -> int:
    if s.mla is not None:
        m = s.mla
        qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            q = s.hidden * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * s.heads * qk_head
        else:
            q = s.hidden * s.heads * qk_head
        kv = (s.hidden * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
              + m.kv_lora_rank * s.heads * (m.qk_nope_head_dim + m.v_head_dim))
        return q + kv + s.heads * m.v_head_dim * s.hidden
    q_width, kv_width = s.heads * s.head_dim, s.kv_heads * s.head_dim
    params = s.hidden * (q_width + 2 * kv_width) + q_width * s.hidden
    if s.qkv_bias:
        params += q_width + 2 * kv_width
    if s.o_bias:
        params += s.hidden
    if s.qk_norm:
        params += 2 * s.head_dim
    if s.attention_sinks:
        params += s.heads
    return params


def _expert_params(s: Shape, size: int) -> int:
    params = 3 * s.hidden * size  # gate, up, down
    if s.expert_bias:
        params += 2 * size + s.hidden
    return params


def _moe_layer_params(s: Shape) -> tuple[int, int]:
    """(all parameters, parameters used per token) of one MoE feed-forward block."""
    moe = s.moe
    assert moe is not None
    expert = _expert_params(s, moe.moe_intermediate_size)
    router = s.hidden * moe.num_experts
    router += moe.num_experts if s.router_bias else 0
    router += moe.num_experts if s.router_score_bias else 0
    shared_size = moe.shared_expert_intermediate_size or moe.moe_intermediate_size
    shared = moe.shared_experts * _expert_params(s, shared_size)
    shared += s.hidden if s.shared_expert_gate else 0
    total = moe.num_experts * expert + router + shared
    return total, moe.experts_per_token * expert + router + shared


def is_moe_layer(moe: Optional[MoESpec], index: int) -> bool:
    return moe is not None and moe.is_moe_layer(index)


def count_params(s: Shape) -> tuple[int, Optional[int]]:
    """(params_total, params_active) from the shapes; active is None for dense models."""
    embed = s.vocab * s.hidden
    outer = embed + (0 if s.tied else embed) + s.hidden  # + final norm
    per_layer = _attention_params(s) + s.norms_per_layer * s.hidden
    dense_mlp = 3 * s.hidden * s.intermediate
    total = active = outer
    moe_total, moe_active = _moe_layer_params(s) if s.moe else (0, 0)
    for index in range(s.layers):
        if is_moe_layer(s.moe, index):
            total += per_layer + moe_total
            active += per_layer + moe_active
        else:
            total += per_layer + dense_mlp
            active += per_layer + dense_mlp
    return total, (active if s.moe else None)


# ---------------------------------------------------------------------------------------------
# From a config dict to a ModelSpec


@dataclass
class _Build:
    f: _Fields
    model_type: str
    text_type: str
    notes: list[str] = field(default_factory=list)


def spec_from_config(config: Mapping[str, Any], *, model_id: str, source: str, file: str = CONFIG_NAME,
                     modelopt: Optional[Mapping[str, Any]] = None) -> ModelSpec:
    """Build a ModelSpec from a parsed config.json (and ModelOpt's hf_quant_config.json, if any)."""
    top = _Fields(config, file, "", {})
    model_type = top.str("model_type")
    if not model_type:
        raise ReaderError("this required key is missing: vLLM picks the architecture from it.",
                          file=file, key="model_type")
    text_cfg = config.get("text_config")
    if text_cfg is not None and not isinstance(text_cfg, dict):
        raise ReaderError(f"expected an object, got {text_cfg!r}.", file=file, key="text_config")
    data = text_cfg if text_cfg is not None else config
    text_type = (data.get("model_type") if text_cfg is not None else None) or _TEXT_MODEL_TYPES.get(
        model_type, model_type)
    prefix = "text_config." if text_cfg is not None else ""
    b = _Build(_Fields(data, file, prefix, _TYPE_DEFAULTS.get(text_type, {})), model_type, text_type)

    shape, mla, moe, head_dim = _shape(b)
    kinds, window, chunk = _layer_kinds(b, shape.layers)
    total, active = count_params(shape)
    quant = _quantization(config, text_cfg, modelopt, file, b.notes)
    spec = ModelSpec(
        id=model_id,
        architectures=tuple(_architectures(config, file)),
        model_type=model_type,
        num_hidden_layers=shape.layers,
        hidden_size=shape.hidden,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        head_dim=head_dim,
        intermediate_size=shape.intermediate,
        vocab_size=shape.vocab,
        max_position_embeddings=b.f.req("max_position_embeddings"),
        tie_word_embeddings=shape.tied,
        torch_dtype=_dtype(config, data, file, b.notes),
        moe=moe,
        mla=mla,
        layer_kinds=kinds,
        sliding_window=window,
        attention_chunk_size=chunk,
        quantization=quant,
        is_multimodal=text_cfg is not None or "vision_config" in config,
        params_total=total,
        params_active=active,
        params_source="computed from config shapes by vllm-reader (not from safetensors)",
        source=source,
        notes=_final_notes(b),
    )
    return spec


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


def _dtype(config: Mapping[str, Any], data: Mapping[str, Any], file: str, notes: list[str]) -> str:
    for where, key in ((config, "torch_dtype"), (config, "dtype"), (data, "torch_dtype"), (data, "dtype")):
        value = where.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or value.lower() not in _DTYPES:
            raise ReaderError(f"expected bfloat16, float16 or float32, got {value!r}.", file=file, key=key)
        return _DTYPES[value.lower()]
    notes.append("torch_dtype absent from config.json: bfloat16 assumed.")
    return "bfloat16"


def _head_dim(f: _Fields, hidden: int, heads: int) -> int:
    explicit = f.int("head_dim")
    if explicit is not None:
        return explicit
    if hidden % heads:
        raise f._fail("head_dim", f"absent, and hidden_size {hidden} is not a multiple of "
                                  f"num_attention_heads {heads}.")
    return hidden // heads


def _shape(b: _Build) -> tuple[Shape, Optional[MLASpec], Optional[MoESpec], int]:
    f, t = b.f, b.text_type
    hidden, heads, layers = f.req("hidden_size"), f.req("num_attention_heads"), f.req("num_hidden_layers")
    kv_heads = f.int("num_key_value_heads") or heads
    mla = _mla(f)
    head_dim = (mla.qk_nope_head_dim + mla.qk_rope_head_dim) if mla else _head_dim(f, hidden, heads)
    moe = _moe(f, t)
    if t == "llama4_text":
        intermediate = f.req("intermediate_size_mlp")
    else:
        intermediate = f.req("intermediate_size")
    tied = f.bool("tie_word_embeddings", default=t not in _UNTIED_BY_DEFAULT)
    attention_bias = f.bool("attention_bias", default=False)
    shape = Shape(
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
        intermediate=intermediate, vocab=f.req("vocab_size"), tied=tied, moe=moe, mla=mla,
        qkv_bias=attention_bias or t in _QKV_BIAS_TYPES,
        o_bias=attention_bias and t not in _NO_O_BIAS_TYPES,
        qk_norm=t in _QK_NORM_TYPES or (t == "glm4_moe" and f.bool("use_qk_norm", default=False)),
        norms_per_layer=4 if t in _FOUR_NORM_TYPES else 2,
        attention_sinks=t == "gpt_oss",
        expert_bias=t == "gpt_oss",
        router_bias=t == "gpt_oss",
        router_score_bias=t in _SCORE_BIAS_TYPES and f.str("topk_method") in (None, "noaux_tc"),
        shared_expert_gate=t == "qwen2_moe",
    )
    return shape, mla, moe, head_dim


def _mla(f: _Fields) -> Optional[MLASpec]:
    if not f.has("kv_lora_rank"):
        return None
    return MLASpec(
        kv_lora_rank=f.req("kv_lora_rank"),
        qk_rope_head_dim=f.req("qk_rope_head_dim"),
        qk_nope_head_dim=f.req("qk_nope_head_dim"),
        v_head_dim=f.req("v_head_dim"),
        q_lora_rank=f.int("q_lora_rank"),
    )


def _moe(f: _Fields, text_type: str) -> Optional[MoESpec]:
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
    mlp_only = f.list("mlp_only_layers") or []
    if mlp_only:
        raise f._fail("mlp_only_layers", "dense layers listed by index are not supported yet; "
                                         "use a catalog entry or remove the list.")
    return MoESpec(
        num_experts=num_experts,
        experts_per_token=f.req(top_k_key),
        moe_intermediate_size=f.req(expert_size_key),
        shared_experts=shared,
        shared_expert_intermediate_size=shared_size,
        dense_layers=f.int("first_k_dense_replace", positive=False) or 0,
        moe_layer_step=f.int(step_key) or 1,
    )


def _shared_experts(f: _Fields, text_type: str) -> tuple[int, Optional[int]]:
    if text_type == "llama4_text":
        return 1, None  # one shared expert per MoE layer, of the routed experts' size (architecture)
    if f.has("n_shared_experts"):
        return f.int("n_shared_experts", positive=False) or 0, None
    size = f.int("shared_expert_intermediate_size", positive=False) or 0
    return (1, size) if size else (0, None)


def _layer_kinds(b: _Build, layers: int) -> tuple[LayerKinds, Optional[int], Optional[int]]:
    """Counts of full/sliding/chunked/linear layers, the sliding window and the chunk size."""
    f, t = b.f, b.text_type
    window = f.int("sliding_window")
    types = f.list("layer_types")
    if types is not None:
        return _kinds_from_types(f, types, layers, window)
    if t == "llama4_text":
        return _llama4_kinds(f, layers)
    if t == "gemma2":
        sliding = sum(1 for i in range(layers) if (i + 1) % 2)
        return LayerKinds(full=layers - sliding, sliding=sliding), window, None
    if t == "gemma3_text":
        pattern = f.req("sliding_window_pattern")
        sliding = sum(1 for i in range(layers) if (i + 1) % pattern)
        return LayerKinds(full=layers - sliding, sliding=sliding), window, None
    if window is None or not f.bool("use_sliding_window", default=t not in _SLIDING_OFF_BY_DEFAULT):
        if window is not None:
            b.notes.append(f"sliding_window {window} is set but use_sliding_window is false: all layers full.")
        return LayerKinds(full=layers), None, None
    max_pos = f.int("max_position_embeddings")
    if max_pos is not None and window >= max_pos:
        b.notes.append(f"sliding_window {window} is not below max_position_embeddings {max_pos}: no effect.")
        return LayerKinds(full=layers), None, None
    if f.has("max_window_layers") and t in _QKV_BIAS_TYPES | {"qwen3", "qwen3_moe"}:
        first_sliding = min(f.int("max_window_layers", positive=False) or 0, layers)
        return LayerKinds(full=first_sliding, sliding=layers - first_sliding), window, None
    return LayerKinds(full=0, sliding=layers), window, None


_TYPE_KIND = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked",
              "linear_attention": "linear", "mamba": "linear"}


def _kinds_from_types(f: _Fields, types: list, layers: int,
                      window: Optional[int]) -> tuple[LayerKinds, Optional[int], Optional[int]]:
    if len(types) != layers:
        raise f._fail("layer_types", f"lists {len(types)} layers but num_hidden_layers is {layers}.")
    counts = {"full": 0, "sliding": 0, "chunked": 0, "linear": 0}
    for value in types:
        kind = _TYPE_KIND.get(value) if isinstance(value, str) else None
        if kind is None:
            raise f._fail("layer_types", f"unknown layer type {value!r} (known: {', '.join(_TYPE_KIND)}).")
        counts[kind] += 1
    if counts["sliding"] and window is None:
        raise f._fail("sliding_window", "layer_types has sliding layers but no sliding_window is set.")
    chunk = f.int("attention_chunk_size") if counts["chunked"] else None
    return LayerKinds(**counts), (window if counts["sliding"] else None), chunk


def _llama4_kinds(f: _Fields, layers: int) -> tuple[LayerKinds, Optional[int], Optional[int]]:
    chunk = f.int("attention_chunk_size")
    rope_flags = f.list("no_rope_layers")  # 1 = uses RoPE and local (chunked) attention
    if not rope_flags:
        interval = f.req("no_rope_layer_interval")
        rope_flags = [int((i + 1) % interval != 0) for i in range(layers)]
    if len(rope_flags) != layers:
        raise f._fail("no_rope_layers", f"lists {len(rope_flags)} layers but num_hidden_layers is {layers}.")
    chunked = sum(1 for flag in rope_flags if flag) if chunk else 0
    return LayerKinds(full=layers - chunked, chunked=chunked), None, (chunk if chunked else None)


# ---------------------------------------------------------------------------------------------
# Quantization


def _quantization(config: Mapping[str, Any], text_cfg: Optional[Mapping[str, Any]],
                  modelopt: Optional[Mapping[str, Any]], file: str, notes: list[str]) -> Optional[QuantSpec]:
    if modelopt is not None:
        section = modelopt.get("quantization")
        if not isinstance(section, dict):
            raise ReaderError("expected a 'quantization' object.", file=MODELOPT_SIDECAR, key="quantization")
        return _modelopt(section, MODELOPT_SIDECAR)
    qc = config.get("quantization_config")
    if qc is None and text_cfg is not None:
        qc = text_cfg.get("quantization_config")
    if qc is None:
        return None
    if not isinstance(qc, dict):
        raise ReaderError(f"expected an object, got {qc!r}.", file=file, key="quantization_config")
    method = qc.get("quant_method")
    if not isinstance(method, str):
        raise ReaderError("expected the name of the method (fp8, awq, gptq, ...).", file=file,
                          key="quantization_config.quant_method")
    return _quant_from_method(method.lower(), qc, file, notes)


_MODELOPT_BITS = {"FP8": 8.0, "NVFP4": 4.5, "W4A8_AWQ": 4.0, "W4A16_AWQ": 4.0, "INT8_SQ": 8.0}


def _modelopt(section: Mapping[str, Any], file: str) -> QuantSpec:
    algo = str(section.get("quant_algo") or "").upper()
    if algo not in _MODELOPT_BITS:
        raise ReaderError(f"unknown ModelOpt quant_algo {algo or None!r} (known: {', '.join(_MODELOPT_BITS)}).",
                          file=file, key="quantization.quant_algo")
    excluded = section.get("exclude_modules") or []
    kv = str(section.get("kv_cache_quant_algo") or "").upper()
    return QuantSpec(
        method="modelopt_fp4" if algo == "NVFP4" else "modelopt",
        weight_bits=_MODELOPT_BITS[algo],
        quantized_modules="all_but_lm_head" if any("lm_head" in str(m) for m in excluded) else "all_linear",
        kv_cache_dtype="fp8" if kv == "FP8" else None,
    )


def _quant_from_method(method: str, qc: Mapping[str, Any], file: str, notes: list[str]) -> QuantSpec:
    key = "quantization_config"
    if method in ("fp8", "fbgemm_fp8"):
        return QuantSpec(method=method, weight_bits=8.0, quantized_modules="all_but_lm_head")
    if method == "mxfp4":
        return QuantSpec(method="mxfp4", weight_bits=4.25, quantized_modules="experts_only")
    if method in ("awq", "awq_marlin", "gptq", "gptq_marlin"):
        bits = _number(qc, "bits", file, key)
        lm_head = bool(qc.get("lm_head"))
        return QuantSpec(method=method, weight_bits=bits,
                         quantized_modules="all_linear" if lm_head else "all_but_lm_head")
    if method == "bitsandbytes":
        bits = 4.0 if qc.get("load_in_4bit") else 8.0
        return QuantSpec(method=method, weight_bits=bits, quantized_modules="all_but_lm_head")
    if method == "modelopt":
        return _modelopt(qc, file)
    if method == "compressed-tensors":
        return _compressed_tensors(qc, file)
    bits = qc.get("bits")
    if isinstance(bits, (int, float)) and not isinstance(bits, bool) and bits > 0:
        notes.append(f"quantization method '{method}' is not modelled in detail: {bits} bits per weight assumed.")
        return QuantSpec(method=method, weight_bits=float(bits), quantized_modules="all_but_lm_head")
    raise ReaderError(f"quantization method '{method}' is not known to vllm-reader and gives no 'bits'.",
                      file=file, key="quantization_config.quant_method",
                      hint="Add 'bits' to quantization_config or use a catalog model.")


def _number(qc: Mapping[str, Any], name: str, file: str, key: str) -> float:
    value = qc.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ReaderError(f"expected a positive number, got {value!r}.", file=file, key=f"{key}.{name}")
    return float(value)


def _compressed_tensors(qc: Mapping[str, Any], file: str) -> QuantSpec:
    groups = qc.get("config_groups") or {}
    bits = None
    for group in groups.values() if isinstance(groups, dict) else []:
        weights = group.get("weights") if isinstance(group, dict) else None
        if isinstance(weights, dict) and isinstance(weights.get("num_bits"), (int, float)):
            bits = float(weights["num_bits"])
            break
    if bits is None:
        raise ReaderError("no config_groups.*.weights.num_bits found.", file=file,
                          key="quantization_config.config_groups")
    kv = qc.get("kv_cache_scheme")
    kv_dtype = "fp8" if isinstance(kv, dict) and kv.get("num_bits") == 8 and kv.get("type") == "float" else None
    ignored = qc.get("ignore") or []
    return QuantSpec(method="compressed-tensors", weight_bits=bits, kv_cache_dtype=kv_dtype,
                     quantized_modules="all_but_lm_head" if "lm_head" in ignored else "all_linear")


__all__ = ["read_hf_config", "spec_from_config", "resolve_config_path", "count_params", "Shape",
           "is_moe_layer", "CONFIG_NAME", "MODELOPT_SIDECAR"]
