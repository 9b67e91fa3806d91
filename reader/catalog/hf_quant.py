"""The checkpoint's own quantization: `quantization_config` in config.json, or ModelOpt's
hf_quant_config.json beside it, read into a QuantSpec (which parts are quantized, and how).

Storage per format follows the parameters vLLM creates for it (@ v0.32.0, under
vllm/model_executor/layers/quantization/):
- fp8 (Fp8Config): e4m3 weights, one fp32 scale per tensor, channel or 128x128 block;
- fbgemm_fp8 (fbgemm_fp8.py): e4m3 weights, one fp32 scale per output channel; LINEAR layers only
  (get_quant_method returns None for FusedMoE, so experts load unquantized);
- compressed-tensors (compressed_tensors/schemes/): float8 weights (W8A8 fp8, one scale per channel or
  tensor), int8 W8A8, wNa16 pack-quantized (int32-packed weights, one params_dtype scale per group and
  an int32-packed zero point per group when asymmetric), W4A4 NVFP4 (uint8-packed fp4, one fp8 scale
  per 16 weights);
- AWQ (auto_awq.py) and GPTQ (auto_gptq.py): int32-packed 4/8-bit weights, a params_dtype scale and an
  int32-packed zero point per group;
- mxfp4 (mxfp4.py): fp4 weights with one e8m0 scale per 32, experts only (gpt-oss);
- ModelOpt FP8 / NVFP4 (modelopt.py): per-tensor fp8 scales; fp4 with one fp8 scale per group_size (16);
- bitsandbytes: nf4/fp4 with an absmax per 64 weights (fp32, or 8-bit under double quantization), int8
  with a per-row scale (transformers' bitsandbytes integration; vLLM loaded it up to its removal).

Which modules a format leaves alone comes from the checkpoint's own lists (`ignore`,
`modules_to_not_convert`, `exclude_modules`), matched on the module names the part uses.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from ..errors import ReaderError
from .types import QUANT_PARTS, QuantFormat, QuantSpec

MODELOPT_SIDECAR = "hf_quant_config.json"
# AutoGPTQ's and AutoAWQ's own files beside config.json. vLLM reads one only when --quantization names a method
# whose config class lists it (AutoGPTQConfig / MoeWNA16Config: quantize_config.json; AutoAWQConfig: both;
# get_config_filenames in auto_gptq.py, moe_wna16.py, auto_awq.py, and get_quant_config in
# model_loader/weight_utils.py, called from VllmConfig._get_quantization_config only when
# model_config.quantization is set, vllm/config/vllm.py @ v0.32.0).
QUANT_FILES = ("quantize_config.json", "quant_config.json")
_KEY = "quantization_config"

# Parts of the language model, recognised from a module name (or a regex over names). The first
# rule that matches wins; a name matching none (a vision tower, a projector) is outside the
# language model and changes nothing we count.
_PART_RULES: tuple[tuple[str, re.Pattern], ...] = tuple((part, re.compile(rule)) for part, rule in (
    ("lm_head", r"lm_head|(^|\.)output(\.|$)"),
    ("outside", r"vision|visual|multi_modal|mm_projector|audio|patch_embed|embed_tokens|(^|\.)mtp|router"
                r"|(^|[.*])gate(\$|$|\.weight|\))"),
    ("shared_experts", r"shared_expert"),
    ("experts", r"experts"),
    ("linear_mixer", r"linear_attn|mamba|(^|\.)ssm|in_proj|out_proj|conv1d|(^|\.)mixer$"),
    ("attention", r"self_attn|(?<!linear_)attn|attention|(^|\.)(qkv_proj|q_proj|k_proj|v_proj|o_proj|q_a_proj"
                  r"|q_b_proj|kv_a_proj\w*|kv_b_proj|wq\w*|wkv\w*)"),
    ("dense_mlp", r"mlp|feed_forward|ffn|gate_up|gate_proj|up_proj|down_proj|fc1|fc2|c_fc|c_proj"),
))
# A pattern that targets every Linear layer of the model ("Linear" in compressed-tensors targets).
_ALL_LINEAR = {"linear", "re:.*"}


def part_of(name: str) -> Optional[str]:
    """The decoder part a module name or pattern refers to, "outside" for modules we do not count,
    None when the name does not say (e.g. a bare layer prefix such as 'model.layers.0')."""
    text = name.lower()
    for part, pattern in _PART_RULES:
        if pattern.search(text):
            return part
    return None


def excluded_parts(names: list) -> set[str]:
    """Parts a list leaves unquantized in every layer: names and patterns that pin no layer index."""
    whole: set[str] = set()
    for raw in names:
        if not isinstance(raw, str):
            continue
        part = part_of(raw)
        if part in (None, "outside"):
            continue
        if raw.startswith("re:") or not re.search(r"layers?\.\d+\.", raw):
            whole.add(part)
    return whole


def partial_exclusions(names: list) -> dict[str, set[int]]:
    """Layer indices per part that a list excludes one by one (model.layers.N.<part>)."""
    out: dict[str, set[int]] = {}
    for raw in names:
        if not isinstance(raw, str) or raw.startswith("re:"):
            continue
        part = part_of(raw)
        layer = re.search(r"layers?\.(\d+)\.", raw)
        if part not in (None, "outside") and layer:
            out.setdefault(part, set()).add(int(layer.group(1)))
    return out


def read_quantization(config: Mapping[str, Any], text_cfg: Optional[Mapping[str, Any]],
                      modelopt: Optional[Mapping[str, Any]], file: str, notes: list[str],
                      layer_parts: Mapping[str, int]) -> Optional[QuantSpec]:
    """QuantSpec of a checkpoint, or None for an unquantized one.

    layer_parts: how many layers hold each part (attention/linear_mixer/dense_mlp/experts/...), to
    decide whether a list that names layers one by one covers a part in every layer.
    """
    if modelopt is not None:
        section = modelopt.get("quantization")
        if not isinstance(section, dict):
            raise ReaderError("expected a 'quantization' object.", file=MODELOPT_SIDECAR, key="quantization")
        return _modelopt(section, MODELOPT_SIDECAR, "quantization", notes, layer_parts)
    qc = config.get(_KEY)
    if qc is None and text_cfg is not None:
        qc = text_cfg.get(_KEY)
    if qc is None:
        return None
    if not isinstance(qc, dict):
        raise ReaderError(f"expected an object, got {qc!r}.", file=file, key=_KEY)
    method = qc.get("quant_method")
    if not isinstance(method, str):
        raise ReaderError("expected the name of the method (fp8, awq, gptq, ...).", file=file,
                          key=f"{_KEY}.quant_method")
    return _by_method(method.lower(), qc, file, _KEY, notes, layer_parts)


def read_quantization_file(name: str, data: Mapping[str, Any], notes: list[str],
                           layer_parts: Mapping[str, int]) -> QuantSpec:
    """The QuantSpec an AutoGPTQ quantize_config.json or AutoAWQ quant_config.json describes. Older files name
    no method: AutoAWQ's keys (w_bit, q_group_size) or its file name say AWQ, anything else GPTQ."""
    if not isinstance(data, Mapping):
        raise ReaderError("expected an object.", file=name)
    method = data.get("quant_method")
    if not isinstance(method, str):
        method = "awq" if "w_bit" in data or name == "quant_config.json" else "gptq"
    return _by_method(method.lower(), data, name, "", notes, layer_parts)


def _by_method(method: str, qc: Mapping[str, Any], file: str, where: str, notes: list[str],
               layer_parts: Mapping[str, int]) -> QuantSpec:
    """where: the key path of `qc` inside `file` ('' for a sidecar whose top level is the settings)."""
    if method == "fp8":
        return _fp8(qc, notes, layer_parts)
    if method == "fbgemm_fp8":
        return _fbgemm_fp8(qc, notes, layer_parts)
    if method in ("mxfp4", "gpt_oss_mxfp4"):
        return _mxfp4(qc, method, notes, layer_parts)
    if method in ("awq", "awq_marlin", "auto_awq", "gptq", "gptq_marlin", "auto_gptq"):
        return _awq_gptq(qc, method, file, where, notes, layer_parts)
    if method == "bitsandbytes":
        return _bitsandbytes(qc, notes, layer_parts)
    if method.startswith("modelopt"):
        return _modelopt(qc, file, where, notes, layer_parts)
    if method == "compressed-tensors":
        return _compressed_tensors(qc, file, where, notes, layer_parts)
    bits = qc.get("bits")
    if isinstance(bits, (int, float)) and not isinstance(bits, bool) and bits > 0:
        notes.append(f"quantization method '{method}' is not modelled in detail: {bits} bits per weight "
                     "assumed for every linear layer but the LM head, with no scale overhead.")
        return _spec(method, f"{method} {bits:g}-bit (assumed)", QuantFormat(weight_bits=float(bits)),
                     [], notes, layer_parts)
    raise ReaderError(f"quantization method '{method}' is not known to vllm-reader and gives no 'bits'.",
                      file=file, key=_at(where, "quant_method"),
                      hint=f"Add 'bits' to {where or file} or pass --quantization.")


# ---------------------------------------------------------------------------------------------
# Building the spec


def _spec(method: str, scheme: str, fmt: QuantFormat, excluded: list, notes: list[str],
          layer_parts: Mapping[str, int], *, parts: tuple[str, ...] = QUANT_PARTS, lm_head: bool = False,
          kv_cache_dtype: Optional[str] = None, per_part: Optional[dict[str, QuantFormat]] = None) -> QuantSpec:
    """`parts` the format may quantize, minus what `excluded` lists; the LM head only when the format
    quantizes it (GPTQ lm_head: true, a ModelOpt list that does not exclude it)."""
    names = [n for n in excluded if isinstance(n, str)]
    whole = excluded_parts(names)
    for part, layers in partial_exclusions(names).items():
        if part in whole:
            continue
        held = layer_parts.get(part, 0)
        if held and len(layers) >= held:
            whole.add(part)
        elif held:
            notes.append(f"the checkpoint leaves {part} unquantized in {len(layers)} of {held} layers; "
                         "those layers are counted as quantized.")
    chosen = [p for p in parts if p != "lm_head" and p not in whole and layer_parts.get(p, 1)]
    if lm_head and "lm_head" not in whole:
        chosen.append("lm_head")
    formats = {p: (per_part or {}).get(p, fmt) for p in chosen}
    if not formats:
        raise ReaderError(f"the quantization config of method '{method}' excludes every layer.", key=_KEY)
    return QuantSpec(method=method, scheme=scheme, formats=formats, excluded=tuple(names),
                     kv_cache_dtype=kv_cache_dtype)


def _fp8(qc: Mapping[str, Any], notes: list[str], layer_parts: Mapping[str, int]) -> QuantSpec:
    block = qc.get("weight_block_size")
    scheme = (f"fp8 block {block[0]}x{block[1]}" if isinstance(block, list) and len(block) == 2
              else "fp8 per-tensor") + f", {qc.get('activation_scheme') or 'dynamic'} activations"
    excluded = list(qc.get("ignored_layers") or []) + list(qc.get("modules_to_not_convert") or [])
    return _spec("fp8", scheme, QuantFormat(weight_bits=8, act_bits=8), excluded, notes, layer_parts)


def _fbgemm_fp8(qc: Mapping[str, Any], notes: list[str], layer_parts: Mapping[str, int]) -> QuantSpec:
    if layer_parts.get("experts"):
        notes.append("fbgemm_fp8 quantizes linear layers only: vLLM loads the MoE experts unquantized "
                     "(FBGEMMFp8Config.get_quant_method returns None for FusedMoE, "
                     "vllm/model_executor/layers/quantization/fbgemm_fp8.py @ v0.32.0).")
    parts = tuple(p for p in QUANT_PARTS if p != "experts")
    return _spec("fbgemm_fp8", "fp8 per-channel weights, dynamic per-token activations",
                 QuantFormat(weight_bits=8, act_bits=8), list(qc.get("modules_to_not_convert") or []),
                 notes, layer_parts, parts=parts)


def _mxfp4(qc: Mapping[str, Any], method: str, notes: list[str], layer_parts: Mapping[str, int]) -> QuantSpec:
    fmt = QuantFormat(weight_bits=4, group_size=32, scale_bits=8)
    return _spec(method, "mxfp4 (e2m1, one e8m0 scale per 32)", fmt, list(qc.get("modules_to_not_convert") or []),
                 notes, layer_parts, parts=("experts",))


def _awq_gptq(qc: Mapping[str, Any], method: str, file: str, where: str, notes: list[str],
              layer_parts: Mapping[str, int]) -> QuantSpec:
    bits = _number(qc, ("bits", "w_bit"), file, where)
    group = qc.get("group_size", qc.get("q_group_size", 128))
    if not isinstance(group, int) or isinstance(group, bool):
        raise ReaderError(f"expected a whole number, got {group!r}.", file=file, key=_at(where, "group_size"))
    awq = "awq" in method
    # AWQ always stores zero points; GPTQ stores them too (qzeros), symmetric or not (auto_gptq.py).
    fmt = QuantFormat(weight_bits=bits, group_size=group if group > 0 else None, scale_bits=16, zero_bits=bits)
    sym = "" if awq else (" symmetric" if qc.get("sym", True) else " asymmetric")
    scheme = f"int{bits:g} group {group if group > 0 else 'per-channel'}{sym}" + (
        " act-order" if qc.get("desc_act") else "")
    excluded = list(qc.get("modules_to_not_convert") or [])
    if group <= 0:
        notes.append(f"{method} per-channel scales (group_size {group}): scale overhead not counted.")
    return _spec(method, scheme, fmt, excluded, notes, layer_parts, lm_head=bool(qc.get("lm_head")))


def _bitsandbytes(qc: Mapping[str, Any], notes: list[str], layer_parts: Mapping[str, int]) -> QuantSpec:
    excluded = list(qc.get("llm_int8_skip_modules") or [])
    if qc.get("load_in_4bit"):
        kind = str(qc.get("bnb_4bit_quant_type") or "fp4")
        double = bool(qc.get("bnb_4bit_use_double_quant"))
        # absmax per 64 weights: fp32, or 8-bit with one fp32 per 256 absmax under double quantization
        fmt = QuantFormat(weight_bits=4, group_size=64, scale_bits=8 + 32 / 256 if double else 32)
        scheme = f"bitsandbytes {kind}" + (" double-quant" if double else "")
    else:
        fmt = QuantFormat(weight_bits=8)
        scheme = "bitsandbytes int8 (LLM.int8)"
    return _spec("bitsandbytes", scheme, fmt, excluded, notes, layer_parts)


_MODELOPT_ALGOS = {"FP8": (8, None, 0), "FP8_PB_WO": (8, None, 0), "FP8_PER_CHANNEL_PER_TOKEN": (8, None, 0),
                   "NVFP4": (4, 16, 8), "W4A8_AWQ": (4, 128, 16), "W4A16_AWQ": (4, 128, 16), "INT8_SQ": (8, None, 0),
                   "MXFP8": (8, 32, 8), "NVFP4_AWQ": (4, 16, 8), "W4A16_NVFP4": (4, 16, 8), "MXFP4": (4, 32, 8),
                   "W4A8_MXFP4_FP8": (4, 32, 8)}


def _modelopt(section: Mapping[str, Any], file: str, key: str, notes: list[str],
              layer_parts: Mapping[str, int]) -> QuantSpec:
    algo = str(section.get("quant_algo") or "").upper()
    if algo == "MIXED_PRECISION":
        return _modelopt_mixed(section, file, key, notes, layer_parts)
    if algo not in _MODELOPT_ALGOS:
        raise ReaderError(f"unknown ModelOpt quant_algo {algo or None!r} (known: {', '.join(_MODELOPT_ALGOS)}).",
                          file=file, key=_at(key, "quant_algo"))
    bits, default_group, scale_bits = _MODELOPT_ALGOS[algo]
    group = section.get("group_size") or default_group
    fmt = QuantFormat(weight_bits=bits, group_size=group if scale_bits else None, scale_bits=scale_bits,
                      act_bits=4 if algo in ("NVFP4", "NVFP4_AWQ") else (8 if algo in ("FP8", "INT8_SQ", "W4A8_AWQ")
                                                                     else None))
    excluded = list(section.get("exclude_modules") or section.get("ignore") or [])
    # ModelOpt quantizes the LM head unless exclude_modules names it (modelopt.py is_layer_excluded)
    return _spec("modelopt_fp4" if "NVFP4" in algo else "modelopt", f"ModelOpt {algo}", fmt, excluded,
                 notes, layer_parts, lm_head=True, kv_cache_dtype=_modelopt_kv(section))


def _modelopt_kv(section: Mapping[str, Any]) -> Optional[str]:
    """The KV-cache dtype 'auto' resolves to for a ModelOpt checkpoint
    (get_kv_cache_quant_algo_string, vllm/utils/torch_utils.py @ v0.32.0; same rule @ v0.18.0)."""
    kv = section.get("kv_cache_scheme") or section.get("kv_cache_quant_algo")
    if isinstance(kv, dict):
        if kv.get("num_bits") == 8 and kv.get("type") == "float" and kv.get("dynamic") is False:
            return "fp8"
        if kv.get("num_bits") == 4 and kv.get("type") == "float":
            return "nvfp4"
        return None
    text = str(kv or "").lower()
    return {"fp8": "fp8", "nvfp4": "nvfp4"}.get(text)


def _modelopt_mixed(section: Mapping[str, Any], file: str, key: str, notes: list[str],
                    layer_parts: Mapping[str, int]) -> QuantSpec:
    """MIXED_PRECISION: `quantized_layers` maps module names to their own quant_algo."""
    layers = section.get("quantized_layers")
    if not isinstance(layers, dict) or not layers:
        raise ReaderError("MIXED_PRECISION needs a 'quantized_layers' object.", file=file,
                          key=_at(key, "quantized_layers"))
    per_part: dict[str, QuantFormat] = {}
    algos: dict[str, str] = {}
    for name, entry in layers.items():
        part = part_of(str(name))
        algo = str((entry or {}).get("quant_algo") or "").upper() if isinstance(entry, dict) else ""
        if part in (None, "outside") or algo not in _MODELOPT_ALGOS:
            continue
        bits, default_group, scale_bits = _MODELOPT_ALGOS[algo]
        group = (entry.get("group_size") if isinstance(entry, dict) else None) or default_group
        fmt = QuantFormat(weight_bits=bits, group_size=group if scale_bits else None, scale_bits=scale_bits)
        # a part quantized two ways in different layers keeps the wider format (weights not undercounted)
        if part not in per_part or fmt.bits_per_weight > per_part[part].bits_per_weight:
            per_part[part], algos[part] = fmt, algo
    if not per_part:
        raise ReaderError("quantized_layers names no layer of the language model with a known quant_algo.",
                          file=file, key=_at(key, "quantized_layers"))
    scheme = "ModelOpt mixed: " + ", ".join(f"{p} {a}" for p, a in algos.items())
    main = next(iter(per_part.values()))
    return _spec("modelopt_mixed", scheme, main, list(section.get("exclude_modules") or []), notes, layer_parts,
                 parts=tuple(p for p in QUANT_PARTS if p in per_part), lm_head="lm_head" in per_part,
                 kv_cache_dtype=_modelopt_kv(section), per_part=per_part)


def _compressed_tensors(qc: Mapping[str, Any], file: str, where: str, notes: list[str],
                        layer_parts: Mapping[str, int]) -> QuantSpec:
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise ReaderError("no config_groups found.", file=file, key=_at(where, "config_groups"))
    per_part: dict[str, QuantFormat] = {}
    schemes = []
    for gname, group in groups.items():
        if not isinstance(group, dict) or not isinstance(group.get("weights"), dict):
            continue
        fmt, words = _ct_format(group, file, _at(where, f"config_groups.{gname}"))
        schemes.append(words)
        for part in _ct_targets(group.get("targets") or ["Linear"]):
            per_part.setdefault(part, fmt)
    if not per_part:
        raise ReaderError("no config_groups.*.weights.num_bits found.", file=file, key=_at(where, "config_groups"))
    kv = qc.get("kv_cache_scheme")
    if isinstance(kv, dict) and kv.get("num_bits") == 8:
        notes.append("the checkpoint carries fp8 KV-cache scales (kv_cache_scheme); vLLM uses them only "
                     "when --kv-cache-dtype fp8 is given ('auto' keeps the model dtype for compressed-tensors, "
                     "get_kv_cache_quant_algo_string, vllm/utils/torch_utils.py @ v0.32.0).")
    main = per_part.get("experts") or next(iter(per_part.values()))
    return _spec("compressed-tensors", "; ".join(dict.fromkeys(schemes)), main, list(qc.get("ignore") or []),
                 notes, layer_parts, parts=tuple(p for p in QUANT_PARTS if p in per_part),
                 lm_head="lm_head" in per_part, per_part=per_part)


def _ct_targets(targets: list) -> list[str]:
    """Parts a config group's `targets` cover: "Linear" is every linear layer but the LM head (which
    compressed-tensors lists in `ignore` when it is kept; a separate group targets it otherwise)."""
    parts: list[str] = []
    for target in targets:
        text = str(target)
        if text.lower() in _ALL_LINEAR or text.endswith("Linear"):
            parts += [p for p in QUANT_PARTS if p != "lm_head"]
        else:
            part = part_of(text)
            if part not in (None, "outside"):
                parts.append(part)
    return list(dict.fromkeys(parts))


def _ct_format(group: Mapping[str, Any], file: str, key: str) -> tuple[QuantFormat, str]:
    w = group["weights"]
    bits = _number(w, ("num_bits",), file, f"{key}.weights")
    kind = str(w.get("type") or "int")
    strategy = str(w.get("strategy") or "tensor")
    acts = group.get("input_activations")
    act_bits = acts.get("num_bits") if isinstance(acts, dict) else None
    if kind == "float" and bits == 4:
        # NVFP4 (W4A4 or W4A16): fp4 values, one fp8 scale per group (16)
        size = w.get("group_size") or 16
        fmt = QuantFormat(weight_bits=4, group_size=size, scale_bits=8, act_bits=act_bits)
        name = "mxfp4" if size == 32 else "nvfp4"
        return fmt, f"{name} group {size}" + (" W4A4" if act_bits == 4 else " W4A16")
    if strategy == "group" and w.get("group_size"):
        size = int(w["group_size"])
        sym = w.get("symmetric", True)
        # int groups keep a params_dtype scale (wNa16); float groups an 8-bit one (MXFP8: e8m0)
        fmt = QuantFormat(weight_bits=bits, group_size=size, scale_bits=8 if kind == "float" else 16,
                          zero_bits=0 if sym else bits, act_bits=act_bits)
        return fmt, f"{kind}{bits:g} group {size} {'symmetric' if sym else 'asymmetric'}" + (
            f" W{bits:g}A{act_bits}" if act_bits else f" W{bits:g}A16")
    fmt = QuantFormat(weight_bits=bits, act_bits=act_bits)
    return fmt, f"{kind}{bits:g} per-{strategy}" + (
        f", {'dynamic' if acts.get('dynamic') else 'static'} {acts.get('strategy')} activations"
        if isinstance(acts, dict) else " weight-only")


def _number(qc: Mapping[str, Any], names: tuple[str, ...], file: str, where: str) -> float:
    for name in names:
        value = qc.get(name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ReaderError(f"expected a positive number, got {value!r}.", file=file, key=_at(where, name))
            return float(value)
    raise ReaderError("this required key is missing.", file=file, key=_at(where, names[0]))


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


__all__ = ["read_quantization", "part_of", "excluded_parts", "MODELOPT_SIDECAR"]
