"""load: a file in any supported form -> a `Deployment` (the user's values only).

Detects the form, finds the vLLM launch(es), picks one, chooses the vLLM version whose flag
table parses it, and parses the arguments as that version's `vllm serve` would.
"""
from __future__ import annotations

import json
from pathlib import Path as FsPath
from typing import Any, Optional

from pydantic import ValidationError

from ..errors import ReaderError, validation_words
from ..versions import VersionChoice, choose_version, format_version
from .argv import ArgParser
from .context import LoadOptions, merge_options, parse_comment_block
from .flagtable import flag_table, option_history
from .find import find_invocations
from .forms import others
from .forms.scripts import script_invocations
from .forms.storage_uri import note_for as storage_note, parse_model_uri
from .invocation import ConfigEntry, Invocation
from .model import Context, Deployment, GivenFlag, Note, ServingConfig, SourceLoc, SpeculativeSpec
from .tokens import Token
from .version_span import outside_tables_note
from .yamlsafe import MAX_BYTES

def load_deployment(path: str, options: Optional[LoadOptions] = None) -> Deployment:
    options = options or LoadOptions()
    text = read_text(path)
    block = parse_comment_block(text, path)
    options, origins = merge_options(options, block)
    invocations = find_invocations(path, text, options.set)
    index = _pick(invocations, options.pick, path)
    inv = invocations[index]
    version = _choose_version(options, origins, inv)
    deployment = build_deployment(inv, version, path, options, origins)
    if len(invocations) > 1:
        deployment.notes.insert(0, others.notes_for_multiple(invocations, index))
    if block is not None:
        deployment.notes.append(Note(level="info", loc=SourceLoc(file=path, line=block.line),
                                     message="context read from the '# vllm-reader:' comment block"))
    return deployment


def load_command_line(command: str, options: Optional[LoadOptions] = None) -> Deployment:
    """A `vllm serve ...` line given directly (e.g. `vllm-reader check --command '...'`)."""
    options = options or LoadOptions()
    invocations = script_invocations(command, None, options.set)
    if not invocations:
        raise ReaderError("the command is not a vLLM launch (expected `vllm serve MODEL ...`, "
                          "`python -m vllm.entrypoints.openai.api_server ...` or `docker run ... vllm...`).")
    inv = invocations[_pick(invocations, options.pick, "<command line>")]
    _, origins = merge_options(options, None)
    return build_deployment(inv, _choose_version(options, origins, inv), "<command line>", options, origins)


# ---- reading and form detection ----------------------------------------------------------------

def read_text(path: str) -> str:
    p = FsPath(path)
    if not p.exists():
        raise ReaderError("no such file.", file=path)
    if p.is_dir():
        raise ReaderError("this is a directory; give the config file inside it.", file=path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise ReaderError(f"the file is larger than {MAX_BYTES // 2**20} MiB; vllm-reader refuses to read it.",
                              file=path)
        raw = p.read_bytes()
    except OSError as err:
        raise ReaderError(f"cannot read the file ({err.strerror}).", file=path) from None
    if b"\x00" in raw[:8192]:
        raise ReaderError("this is a binary file, not a config.", file=path)
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise ReaderError("the file is not UTF-8 text.", file=path)


def _pick(invocations: list[Invocation], pick: Optional[int], path: str) -> int:
    if pick is None:
        return 0
    if pick > len(invocations):
        where = "the command line holds" if path == "<command line>" else "the file holds"
        raise ReaderError(f"--pick {pick}: {where} only {len(invocations)} vLLM launch(es).",
                          file=None if path == "<command line>" else path, key="pick")
    return pick - 1


def _choose_version(options: LoadOptions, origins: dict[str, str], inv: Invocation) -> VersionChoice:
    if options.vllm_version:
        return choose_version(options.vllm_version, origins.get("vllm_version", "cli"))
    if inv.version is not None:
        return choose_version(str(inv.version.value), "log" if inv.form == "vllm-log" else "image")
    if options.release:
        return choose_version(options.release, options.release_from or "log")
    return choose_version(None)


# ---- building the deployment ------------------------------------------------------------------

def build_deployment(inv: Invocation, version: VersionChoice, path: str, options: LoadOptions,
                     origins: dict[str, str]) -> Deployment:
    notes = list(inv.notes)
    tokens = entries_to_tokens(inv.entries, version, notes, inv.entry_point) + inv.tokens
    parser = ArgParser(version.tag, path, accepts_positional_model=_positional_allowed(inv, version),
                       beyond_tables=version.requested if version.may_postdate_tables else None)
    parsed = parser.parse(tokens)
    notes += parsed.notes
    flags = parsed.flags
    model, model_loc = _model(inv, parsed.positional_model, flags, notes)
    uri = parse_model_uri(model)
    if uri is not None:
        notes.append(Note(level="info", loc=model_loc, key="model", message=storage_note(uri)))
        model = uri.model
    serving = _serving_config(flags, path)
    context = _context(options, origins, inv, version)
    deployment = Deployment(
        source=path, form=inv.form, entry_point=inv.entry_point, vllm_version_tag=format_version(version.tag),
        model=model, model_loc=model_loc, model_uri=uri.uri if uri is not None else None, flags=flags,
        serving=serving, speculative=_speculative(flags),
        env=inv.env, image=inv.image, context=context, notes=notes, placeholders=parsed.placeholders, log=inv.log,
    )
    if version.outside_tables:
        deployment.notes.insert(0, outside_tables_note(version))
    elif version.note():
        deployment.notes.insert(0, Note(level="info", message=version.note()))
    if inv.version is not None and version.origin not in ("image", "log"):
        deployment.notes.append(Note(level="info", loc=inv.version.loc, message=(
            f"the {inv.version.origin} says vLLM {inv.version.value}; using {version.tag_str} as asked")))
    elif inv.version is not None and inv.version.inferred:
        deployment.notes.append(Note(level="info", loc=inv.version.loc, message=(
            f"vLLM {version.tag_str} assumed from the {inv.version.origin}; an image built from a later commit may "
            "accept more: set the release with --vllm-version")))
    for placeholder in parsed.placeholders:
        deployment.notes.append(Note(level="warning", loc=placeholder.loc, key=placeholder.flag, message=(
            f"{placeholder.text} is not defined in this file" + (f" (value of {placeholder.flag})" if placeholder.flag
                                                                 else "")
            + f"; its value is unknown, so the default is assumed. Supply it with --set {placeholder.name}=VALUE")))
    return deployment


def _positional_allowed(inv: Invocation, version: VersionChoice) -> bool:
    table = flag_table(version.tag)
    if inv.entry_point == "api_server":
        return table.positional.get("model_tag", {}).get("only") != "vllm serve"
    return True


def entries_to_tokens(entries: list[ConfigEntry], version: VersionChoice, notes: list[Note],
                      entry_point: str = "vllm serve") -> list[Token]:
    """Config-file entries become argument tokens the way this vLLM release converts its --config YAML."""
    table = flag_table(version.tag)
    v = version.tag
    tokens: list[Token] = []
    for entry in entries:
        key = entry.key
        option = "--" + key
        spelled = entry.spelling or key
        value = entry.value
        if isinstance(value, bool):
            tokens += _bool_entry(entry, option, spelled, table, v, notes, entry_point)
        elif isinstance(value, list):
            if value:
                tokens.append(Token(option, entry.loc, spelling=spelled))
                tokens += [Token(_scalar_text(item), entry.loc, typed_value=item) for item in value]
        elif isinstance(value, dict):
            if v < (0, 16, 0):
                notes.append(Note(level="warning", loc=entry.loc, key=spelled, message=(
                    f"vLLM {format_version(v)} passes a nested YAML mapping to its parser as Python text, which "
                    "is not valid JSON; write the value as a JSON string")))
            tokens += [Token(option, entry.loc, spelling=spelled), Token(json.dumps(value), entry.loc,
                                                                          typed_value=value)]
        else:
            tokens += [Token(option, entry.loc, spelling=spelled), Token(_scalar_text(value), entry.loc,
                                                                          typed_value=value)]
    return tokens


def _bool_entry(entry: ConfigEntry, option: str, spelled: str, table, v, notes: list[Note],
                entry_point: str) -> list[Token]:
    if entry.value:
        return [Token(option, entry.loc, spelling=spelled)]
    normalized = "--" + entry.key.replace("_", "-")
    negation = "--no-" + entry.key.replace("_", "-")
    matches = table.match(normalized)
    spec = matches[0].spec if len(matches) == 1 else None
    if spec is not None and spec.get("action") == "StoreBoolean":
        return [Token(option, entry.loc, spelling=spelled), Token("false", entry.loc)]
    # From 0.28.0 a false boolean becomes its --no- negation when the parser reading the file has one. `vllm serve`
    # reads the file with its top-level parser, which has no serve options, so there the value is still dropped
    # (vllm/utils/argparse_utils.py load_config_file @ v0.32.0, verified against the real vLLM 0.32.0).
    if v >= (0, 28, 0) and negation in table.spellings and entry_point != "vllm serve":
        return [Token(negation, entry.loc, spelling=spelled)]
    if negation in table.spellings or (option_history(negation) is not None):
        later = ("" if entry_point == "vllm serve" else f" (from 0.28.0 it passes {negation})")
        notes.append(Note(level="warning", loc=entry.loc, key=spelled, message=(
            f"'{spelled}: false' has no effect: vLLM {format_version(v)} drops false booleans from a `{entry_point}` "
            f"--config file{later}. Write '{negation[2:]}: true' to turn it off")))
    return []


def _scalar_text(value: Any) -> str:
    if value is None:
        return "None"
    return str(value)


def _model(inv: Invocation, positional: Optional[Token], flags: dict[str, GivenFlag],
           notes: list[Note]) -> tuple[Optional[str], Optional[SourceLoc]]:
    flagged = flags.get("model")
    if positional is not None:
        if flagged is not None:
            notes.append(Note(level="warning", loc=flagged.loc, key="model", message=(
                "the model is given both as the positional argument and as --model; vLLM uses the positional one")))
        if positional.unresolved:
            return None, positional.loc
        return positional.text, positional.loc
    if flagged is not None:
        return (flagged.value if isinstance(flagged.value, str) else None), flagged.loc
    if inv.model is not None:
        return str(inv.model.value), inv.model.loc
    return None, None


def _serving_config(flags: dict[str, GivenFlag], path: str) -> ServingConfig:
    known = ServingConfig.scheduling_fields()
    values: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for dest, flag in flags.items():
        if flag.value is None or not flag.in_version or flag.out_of_bounds is not None:
            continue  # a value vLLM refuses takes no part in what is resolved from the config
        target = values if dest in known else other
        target[dest] = _coerce(dest, flag.value)
    try:
        return ServingConfig.model_validate({**values, "other": other})
    except ValidationError as err:
        first = err.errors()[0]
        dest = str(first["loc"][0])
        flag = flags.get(dest)
        raise ReaderError(f"unexpected value {flag.raw if flag else ''!r} ({validation_words(first)}).",
                          file=path, line=flag.loc.line if flag and flag.loc else None, key=dest) from None


def _coerce(dest: str, value: Any) -> Any:
    if dest == "long_prefill_token_threshold" and isinstance(value, float) and value.is_integer():
        return int(value)  # v0.7.3-v0.8.0 typed it float; later releases int
    if dest == "optimization_level" and isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def _speculative(flags: dict[str, GivenFlag]) -> Optional[SpeculativeSpec]:
    def val(dest: str) -> Any:
        flag = flags.get(dest)
        return flag.value if flag is not None else None

    config = val("speculative_config")
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError:
            config = None
    if isinstance(config, dict):
        # a non-text method or model is reported by `check` (the release's key types, VR119), not guessed at here
        return SpeculativeSpec(
            method=_text_or_none(config.get("method")), model=_text_or_none(config.get("model")),
            num_speculative_tokens=_int_or_none(config.get("num_speculative_tokens")),
            draft_tensor_parallel_size=_int_or_none(config.get("draft_tensor_parallel_size")),
            spelled_as="speculative_config")
    if val("speculative_model") is not None or val("num_speculative_tokens") is not None:
        model = val("speculative_model")
        return SpeculativeSpec(
            method="ngram" if model == "[ngram]" else None, model=model,
            num_speculative_tokens=val("num_speculative_tokens"),
            draft_tensor_parallel_size=val("speculative_draft_tensor_parallel_size"), spelled_as="speculative_model")
    if val("spec_method") is not None or val("spec_model") is not None:
        return SpeculativeSpec(method=val("spec_method"), model=val("spec_model"),
                               num_speculative_tokens=val("spec_tokens"), spelled_as="spec_*")
    return None


def _text_or_none(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _int_or_none(value: Any) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _context(options: LoadOptions, origins: dict[str, str], inv: Invocation, version: VersionChoice) -> Context:
    ctx = Context(
        vllm_version=version.requested if version.origin != "default" else None,
        vllm_version_origin={"cli": "cli", "comment": "comment", "image": "image", "log": "log",
                             "profile": "profile"}.get(version.origin, "none"),
        usage_context="llm" if options.usage_context == "llm" else "serve",
        slo_ttft_p99_ms=options.slo.ttft_p99_ms, slo_itl_p99_ms=options.slo.itl_p99_ms,
    )
    if options.gpu:
        ctx.gpu, ctx.gpu_origin = options.gpu, origins.get("gpu", "cli")
    elif inv.gpu_name is not None:
        ctx.gpu, ctx.gpu_origin = str(inv.gpu_name.value), "manifest"
        line = inv.gpu_name.loc.line if inv.gpu_name.loc else None
        ctx.gpu_source = inv.gpu_name.origin + (f", line {line}" if line else "")
    if options.gpu_count:
        ctx.gpu_count, ctx.gpu_count_origin = options.gpu_count, origins.get("gpu_count", "cli")
    elif inv.gpu_count is not None:
        ctx.gpu_count, ctx.gpu_count_origin = int(inv.gpu_count.value), "manifest"
    if inv.num_nodes is not None:
        ctx.num_nodes = int(inv.num_nodes.value)
    if inv.replicas is not None:
        line = inv.replicas.loc.line if inv.replicas.loc else None
        ctx.replicas = int(inv.replicas.value)
        ctx.replicas_source = inv.replicas.origin + (f", line {line}" if line else "")
    if options.workload is not None:
        ctx.workload, ctx.workload_origin = options.workload, origins.get("workload", "cli")
    elif inv.workload is not None:
        ctx.workload, ctx.workload_origin = inv.workload, "file"
    if options.calibration is not None:
        ctx.calibration, ctx.calibration_origin = options.calibration, origins.get("calibration", "cli")
    return ctx
