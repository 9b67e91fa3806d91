"""The flat fact view of a resolved deployment that rule conditions are written against.

Rules are data (rules/*.yaml) and never reach into our classes: they name facts by these keys.

| key | value |
|---|---|
| `<dest>` | resolved value of a vLLM setting under its argparse dest (`max_num_batched_tokens`, `enable_chunked_prefill`, ...): the user's value or the version's default; absent (unknown) when the user's value is a placeholder the file leaves open |
| `origin.<dest>` | where it came from: user, default, derived, assumed, overridden |
| `given.<dest>` | the user's value, only for flags the user set (also for flags this version lacks) |
| `absent.<dest>` | true when the user set a flag this vLLM version does not accept |
| `flag_versions.<dest>` | for an absent flag, the releases that have it ("0.6.3 to 0.17.1") |
| `invalid_choice.<dest>` | the version's argparse choices, when the user's value is not one of them |
| `out_of_bounds.<dest>`, `bound_name.<dest>`, `bound_message.<dest>`, `bound_source.<dest>` | when the user's value breaks a bound this release enforces (rules/flags/, reader/config/constraints.py): the requirement (`>= 1`), the setting or JSON key it is about, vLLM's message, and where vLLM states or enforces the bound. The value then takes no part in any resolved value |
| `key_error.<dest>`, `key_error_name.<dest>`, `key_error_value.<dest>`, `key_error_message.<dest>`, `key_error_config.<dest>` | when a key of the user's JSON option is one the release's config class refuses when vLLM builds its engine config (an unknown key, or a value of the wrong type; rules/flags `key_types`): what the key needs, the key, the value as JSON, pydantic's message as vLLM prints it, the class |
| `refused_syntax.<dest>`, `refused_written.<dest>`, `refused_removed_in.<dest>`, `refused_instead.<dest>` | when the user's value is written in a syntax an earlier release read and this one refuses (the KEY=VALUE form of a JSON option from 0.10.0): the form, the value as written, the release that removed it, the value as this release wants it. The value then takes no part in any resolved value |
| `effective.<name>` | derived values: model_dtype, kv_cache_dtype, world_size, gpus_needed, max_model_len (auto resolved to the model's length), max_num_scheduled_tokens, max_cudagraph_capture_size |
| `version`, `engine`, `entry_point`, `form` | vLLM release (tag), "v0"/"v1", "vllm serve"/"api_server", the file form |
| `spec.enabled`, `spec.method`, `spec.family`, `spec.model`, `spec.num_speculative_tokens`, `spec.draft_tensor_parallel_size`, `spec.inferred`, `spec.spelled_as` | speculative decoding |
| `model.source`, `model.resolved_id`, `model.inferred_from`, `model.assumption`, `model.unresolved`, `model.problem` | how the model was resolved (reader/catalog/resolution.py): local, hf-cache, catalog, hub or name; the id inferred from a path and how; what was assumed; true with the reason when the config names a model no source had |
| `model.known` and `model.<field>` | model facts (from its config.json, whatever the source): id, model_type, num_hidden_layers, num_attention_heads, num_key_value_heads, queries_per_kv (heads // KV heads), head_dim, max_position_embeddings, derived_max_len (the maximum vLLM derives from it with the checkpoint's RoPE scaling, per release: reader/config/max_len.py), vocab_size, is_moe, is_mla, is_multimodal, has_sliding_window, is_hybrid, num_experts, checkpoint_quantization, architecture (the first of architectures), removed_architecture, last_served and removal_source (an architecture this release no longer serves: rules/flags/_removed_architectures.json), file_quantization and quantization_file (an AutoGPTQ / AutoAWQ file beside a config.json without quantization_config, read by vLLM only under --quantization), torch_dtype, params_total, attention_chunk_size |
| `quantization.dtypes`, `quantization.dtypes_source`, `quantization.dtypes_check` | the model dtypes the quantization method vLLM ends up with accepts at this release, where its config class lists them and where vLLM refuses others (rules/flags/_quant_act_dtypes.json); only where the method and the dtype are certain |
| `gpu.id`, `gpu.vendor`, `gpu.arch`, `gpu.memory_gib`, `gpu.has_fp8`, `gpu.assumed` | the GPU |
| `gpu.count`, `gpu.count_assumed` | GPUs available to this deployment |
| `gpu.count_origin` | where the GPU count came from: cli (--gpus), comment (the vllm-reader block), manifest, or none (assumed) |
| `env.<NAME>` | environment variables the vLLM process gets |
| `placeholders` | number of unresolved placeholders |
| `option.<dest>`, `spelling.<dest>`, `written.<dest>` | for a flag the user set: the canonical option string (`--swap-space`), the spelling the loader recorded, and the option in the form the user wrote it (`--no-enable-chunked-prefill`; otherwise the canonical one) |
| `deprecated.<dest>` | true when the version's flag table registers the user's flag as deprecated (or its help says so) |
| `unregistered.<dest>`, `registry_source.<dest>`, `registry_message.<dest>` | when the user's string is not in the registry the release checks the option against at start-up (rules/flags/_registries.json: quantization methods, ...): the release's values, where they and the check are in its source, and vLLM's message |
| `unparsed_json.<dest>` | true when the user's value for an option that takes JSON or text (`--hf-overrides`) is not JSON, so vLLM's parser keeps it as text |
| `unlisted_value.<dest>` | the values the version's help suggests (not enforced by argparse), when the user's value is not one of them |
| `spec.config.<key>` | a scalar or list value of the user's `--speculative-config` mapping as written (`prompt_lookup_min`, `tensor_parallel_size`, `method`, ...) |
| `compilation.<key>` | a key of the user's `--compilation-config` mapping as written (`cudagraph_capture_sizes`, `max_cudagraph_capture_size`, ...) |
| `json.<dest>.<key>`, `json.<dest>.<key>.<sub>` | a key of any JSON-valued option the user set, as written (`json.attention_config.backend`, `json.compilation_config.pass_config.fuse_attn_quant`) |
| `draft.known` and `draft.<field>` | the draft model of `--speculative-config` when its config.json can be read (a local folder or file, or the catalog): model_type, architectures, vocab_size, max_position_embeddings, num_attention_heads, and `n_predict` (only from a local file) |
| `given_max.<dest>` | the largest element of a list-valued flag the user set (`cudagraph_capture_sizes`) |
| `model_name` | the model as the config names it (None when the file names none) |
| `hf_overrides.keeps_max_len` | true when the user's `--hf-overrides` (rope mappings only) leave the maximum length vLLM derives from config.json as it is at this release (reader/config/hf_overrides.py); absent when not known |
"""
from __future__ import annotations

import json
from typing import Any

from .flagtable import flag_table, quantization_dtypes, registry_for, removed_architecture
from .hf_overrides import keeps_derived_max_len
from .max_len import derived_max_len
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
        if flag.key_error is not None:
            bad = flag.key_error
            out.update({f"key_error.{dest}": bad.requirement, f"key_error_name.{dest}": bad.name,
                        f"key_error_value.{dest}": json.dumps(bad.value), f"key_error_message.{dest}": bad.vllm_message,
                        f"key_error_config.{dest}": bad.config})
        if flag.refused_syntax is not None:
            bad = flag.refused_syntax
            out.update({f"refused_syntax.{dest}": bad.form, f"refused_written.{dest}": bad.written,
                        f"refused_removed_in.{dest}": bad.removed_in, f"refused_instead.{dest}": bad.instead})
        if dest not in r.values and flag.in_version and flag.out_of_bounds is None:
            out.setdefault(dest, flag.value)
        if flag.unresolved and flag.value is None:
            out.pop(dest, None)  # a placeholder the file leaves open: the default stands in for it, rules must not
    out.update({"version": r.version, "engine": r.engine, "entry_point": d.entry_point, "form": d.form,
                "placeholders": len(d.placeholders)})
    _speculative(r, out)
    _model(r, out)
    _quantization_dtypes(r, out)
    _gpu(r, out)
    for name, value in d.env.items():
        out[f"env.{name}"] = value
    _flag_details(r, out)
    overrides = d.flags.get("hf_overrides")
    if overrides is not None and keeps_derived_max_len(overrides.value, r.version_tuple):
        out["hf_overrides.keeps_max_len"] = True
    return out


def _flag_details(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    """Spelling, deprecation and the inside of JSON-valued flags, for the rules in rules/validation/."""
    d = r.deployment
    out["model_name"] = d.model
    table = flag_table(r.version_tuple)
    registries = not _newer_than_the_tables(d.context.vllm_version)
    for dest, flag in d.flags.items():
        out[f"option.{dest}"] = flag.option
        out[f"spelling.{dest}"] = flag.spelling
        out[f"written.{dest}"] = written_option(flag.spelling, flag.option)
        spec = table.spec_for_dest(dest) if flag.in_version else None
        if spec is not None and (spec.get("deprecated") or spec.get("deprecated_in_help")):
            out[f"deprecated.{dest}"] = True
        if spec is not None and spec.get("type") == "json_or_str" and isinstance(flag.value, str):
            out[f"unparsed_json.{dest}"] = True  # argparse keeps text that is not JSON as the text itself
        suggested = spec.get("suggested") if spec is not None else None
        if suggested and isinstance(flag.value, str) and flag.value not in suggested:
            out[f"unlisted_value.{dest}"] = list(suggested)
        if isinstance(flag.value, list) and flag.value and all(isinstance(v, (int, float)) for v in flag.value):
            out[f"given_max.{dest}"] = max(flag.value)
        if registries:
            _registry_facts(dest, flag.value, r.version_tuple, out)
    for dest, flag in d.flags.items():
        value = _json_mapping(flag.value)
        if value is None:
            continue
        _mapping_facts(value, f"json.{dest}.", out, depth=2)
        short = {"speculative_config": "spec.config.", "compilation_config": "compilation."}.get(dest)
        if short:
            _mapping_facts(value, short, out, depth=1)


def _newer_than_the_tables(asked: Any) -> bool:
    """A release newer than the newest table: its registries may hold values the newest one lacks."""
    from ..errors import ReaderError
    from ..versions import choose_version

    try:
        return bool(asked) and choose_version(str(asked)).span == "newer"
    except (ReaderError, ValueError):  # a placeholder (`${VERSION}`): read as the newest table, said elsewhere
        return False


def _registry_facts(dest: str, value: Any, version: Any, out: dict[str, Any]) -> None:
    """`unregistered.<dest>` (the release's values) when the user's string is not in the registry vLLM checks it against
    at start-up, with the registry's source and vLLM's message for this value."""
    registry = registry_for(dest, version) if isinstance(value, str) else None
    name = {"lower": str.lower, "upper": str.upper}.get(registry["normalize"], str)(value) if registry else value
    if registry is None or name in registry["values"] or name in registry.get("also", {}):
        return
    if registry.get("dotted") and "." in name:
        return  # an import path ('module.Class') the release imports: not checkable here
    values = registry["values"]
    out[f"unregistered.{dest}"] = sorted([*values, *(v.lower() for v in registry.get("also", {}))])
    out[f"registry_source.{dest}"] = f"{registry['src']}, refused at {registry['check']}"
    out[f"registry_message.{dest}"] = registry["vllm_message"].format(value=name, values=values,
                                                                       joined=", ".join(values))


def written_option(spelling: str, option: str) -> str:
    """The option as the user wrote it, in command-line form: `--no-enable-chunked-prefill` stays so (a YAML key
    `no-enable-chunked-prefill:` becomes it), other spellings (`maxNumSeqs`, `-tp`, `--max_num_seqs`) keep the
    canonical option the user meant."""
    word = spelling.strip().rstrip(":").lstrip("-").replace("_", "-")
    return f"--{word}" if word.startswith("no-") and word[3:] == option.lstrip("-") else option


def _json_mapping(value: Any) -> Any:
    """A JSON option's value as a mapping (it may still be the text the user wrote), or None."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _mapping_facts(value: dict, prefix: str, out: dict[str, Any], depth: int) -> None:
    for key, item in value.items():
        if isinstance(item, (str, int, float, bool)) or item is None:
            out[prefix + str(key)] = item
        elif isinstance(item, list):
            out[prefix + str(key)] = list(item)
        elif isinstance(item, dict) and depth > 1:
            _mapping_facts(item, f"{prefix}{key}.", out, depth - 1)


def _speculative(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    spec = r.speculative
    out["spec.enabled"] = spec is not None
    if spec is None:
        return
    out.update({"spec.method": spec.method, "spec.family": spec.family, "spec.model": spec.model,
                "spec.num_speculative_tokens": spec.num_speculative_tokens,
                "spec.draft_tensor_parallel_size": spec.draft_tensor_parallel_size,
                "spec.inferred": spec.inferred, "spec.spelled_as": spec.spelled_as})
    draft = spec.draft
    out["draft.known"] = draft is not None
    if draft is not None:
        out.update({f"draft.{name}": value for name, value in draft.model_dump().items() if value is not None})


def _model(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    m = r.model
    out["model.known"] = m is not None
    res = r.model_resolution
    if res is not None:
        out.update({"model.source": res.source, "model.resolved_id": res.resolved_id,
                    "model.inferred_from": res.inferred_from, "model.assumption": "; ".join(res.assumptions) or None,
                    "model.unresolved": not res.found, "model.problem": res.problem})
    if m is None:
        return
    out.update({
        "model.id": m.id, "model.model_type": m.model_type, "model.num_hidden_layers": m.num_hidden_layers,
        "model.num_attention_heads": m.num_attention_heads, "model.num_key_value_heads": m.num_key_value_heads,
        "model.queries_per_kv": m.num_attention_heads // m.num_key_value_heads,
        "model.head_dim": m.head_dim, "model.max_position_embeddings": m.max_position_embeddings,
        "model.derived_max_len": None if m.max_len_assumed else derived_max_len(m, r.version_tuple),
        "model.vocab_size": m.vocab_size, "model.is_moe": m.moe is not None, "model.is_mla": m.mla is not None,
        "model.is_multimodal": m.is_multimodal, "model.has_sliding_window": m.layer_kinds.sliding > 0,
        "model.is_hybrid": m.layer_kinds.linear > 0, "model.num_experts": m.moe.num_experts if m.moe else 0,
        "model.checkpoint_quantization": m.quantization.method if m.quantization else None,
        "model.file_quantization": m.file_quantization.method if m.file_quantization else None,
        "model.quantization_file": m.quantization_file,
        "model.torch_dtype": m.torch_dtype, "model.params_total": m.params_total,
        "model.architecture": m.architectures[0] if m.architectures else None,
        "model.attention_chunk_size": m.attention_chunk_size,
    })
    removed = removed_architecture(m.architectures, r.version_tuple)
    # a catalog entry kept from an older revision of its repository (verification secondary) may name an
    # architecture the current files no longer do (tiiuae/falcon-7b's RWForCausalLM): only a file the user's
    # launch reads, or the catalog's copy of the current one, says what vLLM will be given
    if removed is not None and not (res is not None and res.source == "catalog" and m.verification != "primary"):
        out.update({"model.removed_architecture": removed[0], "model.last_served": removed[1],
                    "model.removal_source": removed[2]})


# a checkpoint's awq or gptq runs on its Marlin kernel where the GPU and the settings allow
# (override_quantization_method, vllm/model_executor/layers/quantization/gptq_marlin.py, awq_marlin.py @ v0.18.0),
# and that kernel takes bfloat16 too; only --quantization awq / gptq pins the older kernel
_MARLIN_SWAPPED = ("awq", "gptq")


def _quantization_dtypes(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    """The model dtypes the quantization method vLLM ends up with accepts at this release, when both the method
    and the dtype vLLM picks are certain (a float32 or dtype-less checkpoint under --dtype auto ran in float16 on
    older releases and bfloat16 on newer ones)."""
    method, given = out.get("quantization"), out.get("given.quantization")
    if not isinstance(method, str) or (given is None and method in _MARLIN_SWAPPED):
        return
    stored = out.get("model.checkpoint_quantization") or out.get("model.file_quantization")
    if given is not None and stored != given:
        return  # vLLM stops earlier: on the mismatch, or where it finds no settings for the method to read
    if (r.value("dtype") or "auto") == "auto" and (r.model is None or r.model.torch_dtype_assumed
                                                    or r.model.torch_dtype == "float32"):
        return
    found = quantization_dtypes(method, r.version_tuple)
    if found is not None:
        out.update({"quantization.dtypes": found[0], "quantization.dtypes_source": found[1],
                    "quantization.dtypes_check": found[2]})


def _gpu(r: ResolvedDeployment, out: dict[str, Any]) -> None:
    g = r.gpu
    if g is not None:
        out.update({"gpu.id": g.id, "gpu.vendor": g.vendor, "gpu.arch": g.arch, "gpu.memory_gib": g.memory_gib,
                    "gpu.has_fp8": g.fp8_tflops is not None, "gpu.assumed": r.gpu_assumed})
    out.update({"gpu.count": r.gpu_count, "gpu.count_assumed": r.gpu_count_assumed,
                "gpu.count_origin": r.deployment.context.gpu_count_origin})
