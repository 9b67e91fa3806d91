"""The flat fact view of a resolved deployment that rule conditions are written against.

Rules are data (rules/*.yaml) and never reach into our classes: they name facts by these keys.

| key | value |
|---|---|
| `<dest>` | resolved value of a vLLM setting under its argparse dest (`max_num_batched_tokens`, `enable_chunked_prefill`, ...): the user's value or the version's default |
| `origin.<dest>` | where it came from: user, default, derived, assumed, overridden |
| `given.<dest>` | the user's value, only for flags the user set (also for flags this version lacks) |
| `absent.<dest>` | true when the user set a flag this vLLM version does not accept |
| `flag_versions.<dest>` | for an absent flag, the releases that have it ("0.6.3 to 0.17.1") |
| `invalid_choice.<dest>` | the version's argparse choices, when the user's value is not one of them |
| `out_of_bounds.<dest>`, `bound_name.<dest>`, `bound_message.<dest>`, `bound_source.<dest>` | when the user's value breaks a bound this release enforces (rules/flags/, reader/config/constraints.py): the requirement (`>= 1`), the setting or JSON key it is about, vLLM's message, and where vLLM states the bound. The value then takes no part in any resolved value |
| `effective.<name>` | derived values: model_dtype, kv_cache_dtype, world_size, gpus_needed, max_model_len (auto resolved to the model's length), max_num_scheduled_tokens, max_cudagraph_capture_size |
| `version`, `engine`, `entry_point`, `form` | vLLM release (tag), "v0"/"v1", "vllm serve"/"api_server", the file form |
| `spec.enabled`, `spec.method`, `spec.family`, `spec.model`, `spec.num_speculative_tokens`, `spec.draft_tensor_parallel_size`, `spec.inferred`, `spec.spelled_as` | speculative decoding |
| `model.known` and `model.<field>` | catalog facts: id, model_type, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, max_position_embeddings, vocab_size, is_moe, is_mla, is_multimodal, has_sliding_window, is_hybrid, num_experts, checkpoint_quantization, torch_dtype, params_total |
| `gpu.id`, `gpu.vendor`, `gpu.arch`, `gpu.memory_gib`, `gpu.has_fp8`, `gpu.assumed` | the GPU |
| `gpu.count`, `gpu.count_assumed` | GPUs available to this deployment |
| `gpu.count_origin` | where the GPU count came from: cli (--gpus), comment (the vllm-reader block), manifest, or none (assumed) |
| `env.<NAME>` | environment variables the vLLM process gets |
| `placeholders` | number of unresolved placeholders |
| `option.<dest>`, `spelling.<dest>` | for a flag the user set: the canonical option string (`--swap-space`) and the spelling the loader recorded |
| `deprecated.<dest>` | true when the version's flag table registers the user's flag as deprecated (or its help says so) |
| `unlisted_value.<dest>` | the values the version's help suggests (not enforced by argparse), when the user's value is not one of them |
| `spec.config.<key>` | a scalar or list value of the user's `--speculative-config` mapping as written (`prompt_lookup_min`, `tensor_parallel_size`, `method`, ...) |
| `compilation.<key>` | a key of the user's `--compilation-config` mapping as written (`cudagraph_capture_sizes`, `max_cudagraph_capture_size`, ...) |
| `given_max.<dest>` | the largest element of a list-valued flag the user set (`cudagraph_capture_sizes`) |
| `model_name` | the model as the config names it (None when the file names none) |
"""
from __future__ import annotations

import json
from typing import Any

from .flagtable import flag_table
from .resolve import ResolvedDeployment


def facts(r: ResolvedDeployment) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dest, item in r.values.items():
        out[dest] = item.value
        out[f"origin.{dest}"] = item.origin
    for name, item in r.derived.items():
        out[f"effective.{name}"] = item.value
    d = r.deployment
    for dest, flag in d.flags.items():
        out[f"given.{dest}"] = flag.value
        if not flag.in_version:
            out[f"absent.{dest}"] = True
            out[f"flag_versions.{dest}"] = flag.versions_with_flag
        if flag.invalid_choice is not None:
            out[f"invalid_choice.{dest}"] = flag.invalid_choice
        if flag.out_of_bounds is not None:
            bad = flag.out_of_bounds
            out.update({f"out_of_bounds.{dest}": bad.requirement, f"bound_name.{dest}": bad.name,
                        f"bound_value.{dest}": bad.value, f"bound_message.{dest}": bad.vllm_message,
                        f"bound_source.{dest}": bad.source})
        if dest not in r.values and flag.in_version and flag.out_of_bounds is None:
            out.setdefault(dest, flag.value)
    out.update({"version": r.version, "engine": r.engine, "entry_point": d.entry_point, "form": d.form,
                "placeholders": len(d.placeholders)})
    _speculative(r, out)
    _model(r, out)
    _gpu(r, out)
    for name, value in d.env.items():
        out[f"env.{name}"] = value
    _flag_details(r, out)
    return out


def _flag_details(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    """Spelling, deprecation and the inside of JSON-valued flags, for the rules in rules/validation/."""
    d = r.deployment
    out["model_name"] = d.model
    table = flag_table(r.version_tuple)
    for dest, flag in d.flags.items():
        out[f"option.{dest}"] = flag.option
        out[f"spelling.{dest}"] = flag.spelling
        spec = table.spec_for_dest(dest) if flag.in_version else None
        if spec is not None and (spec.get("deprecated") or spec.get("deprecated_in_help")):
            out[f"deprecated.{dest}"] = True
        suggested = spec.get("suggested") if spec is not None else None
        if suggested and isinstance(flag.value, str) and flag.value not in suggested:
            out[f"unlisted_value.{dest}"] = list(suggested)
        if isinstance(flag.value, list) and flag.value and all(isinstance(v, (int, float)) for v in flag.value):
            out[f"given_max.{dest}"] = max(flag.value)
    for dest, prefix in (("speculative_config", "spec.config."), ("compilation_config", "compilation.")):
        flag = d.flags.get(dest)
        value = flag.value if flag is not None else None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = None
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, (str, int, float, bool)) or item is None:
                    out[prefix + str(key)] = item
                elif isinstance(item, list):
                    out[prefix + str(key)] = list(item)


def _speculative(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    spec = r.speculative
    out["spec.enabled"] = spec is not None
    if spec is None:
        return
    out.update({"spec.method": spec.method, "spec.family": spec.family, "spec.model": spec.model,
                "spec.num_speculative_tokens": spec.num_speculative_tokens,
                "spec.draft_tensor_parallel_size": spec.draft_tensor_parallel_size,
                "spec.inferred": spec.inferred, "spec.spelled_as": spec.spelled_as})


def _model(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    m = r.model
    out["model.known"] = m is not None
    if m is None:
        return
    out.update({
        "model.id": m.id, "model.model_type": m.model_type, "model.num_hidden_layers": m.num_hidden_layers,
        "model.num_attention_heads": m.num_attention_heads, "model.num_key_value_heads": m.num_key_value_heads,
        "model.head_dim": m.head_dim, "model.max_position_embeddings": m.max_position_embeddings,
        "model.vocab_size": m.vocab_size, "model.is_moe": m.moe is not None, "model.is_mla": m.mla is not None,
        "model.is_multimodal": m.is_multimodal, "model.has_sliding_window": m.layer_kinds.sliding > 0,
        "model.is_hybrid": m.layer_kinds.linear > 0, "model.num_experts": m.moe.num_experts if m.moe else 0,
        "model.checkpoint_quantization": m.quantization.method if m.quantization else None,
        "model.torch_dtype": m.torch_dtype, "model.params_total": m.params_total,
    })


def _gpu(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    g = r.gpu
    if g is not None:
        out.update({"gpu.id": g.id, "gpu.vendor": g.vendor, "gpu.arch": g.arch, "gpu.memory_gib": g.memory_gib,
                    "gpu.has_fp8": g.fp8_tflops is not None, "gpu.assumed": r.gpu_assumed})
    out.update({"gpu.count": r.gpu_count, "gpu.count_assumed": r.gpu_count_assumed,
                "gpu.count_origin": r.deployment.context.gpu_count_origin})
