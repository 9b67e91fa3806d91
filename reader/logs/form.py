"""A vLLM log as a config source: its arguments and the engine config it resolved become a launch.

What the user gave comes from the argument line (`non-default args: {...}`, or the `args:
Namespace(...)` of older releases, less the release's defaults). What vLLM resolved on its own comes
from the engine config line and a few others (max model len, token budget, block override, the
utilization the memory profiler quotes); those are added where the arguments are silent, each
noted, so the rebuilt deployment is the one that ran. The release is the one the log prints.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from ..config.flagtable import FlagTable, flag_table, option_history
from ..config.invocation import Hint, Invocation
from ..config.model import Note, SourceLoc
from ..config.tokens import Token
from ..errors import ReaderError
from ..versions import choose_version
from ..config.platforms import CPU_DEFAULTS
from .read import read_log
from .reading import LogReading

FORM = "vllm-log"
# Engine config line keys -> the flag they resolve (vllm/config EngineConfig __str__ at each release).
_CONFIG_KEYS = {
    "max_seq_len": "max_model_len", "tensor_parallel_size": "tensor_parallel_size",
    "pipeline_parallel_size": "pipeline_parallel_size", "data_parallel_size": "data_parallel_size",
    "dtype": "dtype", "quantization": "quantization", "enforce_eager": "enforce_eager",
    "kv_cache_dtype": "kv_cache_dtype", "enable_prefix_caching": "enable_prefix_caching",
    "chunked_prefill_enabled": "enable_chunked_prefill", "enable_chunked_prefill": "enable_chunked_prefill",
}
# What vLLM's non-GPU platforms default on their own (the engine config line does not print them).
_PLATFORM_DEFAULTS = {"cpu": CPU_DEFAULTS}
# Argument-line keys that are not flags of `vllm serve`.
_NOT_FLAGS = {"model_tag", "subparser", "dispatch_function", "api_server_count"}


def log_invocations(path: str, text: str) -> list[Invocation]:
    reading = read_log(text, path)
    if reading.engine_config is None and reading.args is None and reading.command is None:
        raise ReaderError(
            "this vLLM log has no engine config line ('Initializing ... LLM engine ... with config:') and no argument "
            "line ('non-default args:' or 'args: Namespace(...)'): it was cut before them, so the deployment cannot be "
            "rebuilt from it. `vllm-reader read-log` shows what it does say; `vllm-reader diagnose CONFIG --log LOG` "
            "sets it beside the config it came from.", file=path)
    return [_invocation(path, reading)]


def _invocation(path: str, reading: LogReading) -> Invocation:
    inv = Invocation(form=FORM, label=_label(reading), entry_point=_entry_point(reading), line=_first_line(reading))
    inv.log = reading
    version = choose_version(reading.release, "log") if reading.release else None
    if reading.release:
        inv.version = Hint(reading.release, f"the log (line {reading.release_line})",
                           SourceLoc(file=path, line=reading.release_line))
    table = flag_table(version.tag) if version else None
    given = _argument_tokens(reading, table, path, inv.notes)
    command = _command_tokens(reading, table, path, inv) if not given else []
    resolved = _resolved_tokens(reading, table, path, set(given) | _dests(command, table), inv.notes)
    model = _model(reading)
    if model is not None and not command:
        inv.model = Hint(model[0], "the log", SourceLoc(file=path, line=model[1]))
    inv.tokens = command + [token for tokens in list(given.values()) + list(resolved.values()) for token in tokens]
    _environment(reading, inv)
    _gpu_hints(reading, inv, path)
    return inv


def _label(reading: LogReading) -> str:
    parts = [f"vLLM {reading.release_printed or reading.release or '(release not printed)'}"]
    if reading.engine:
        parts.append(f"{reading.engine.upper()} engine")
    return "log: " + ", ".join(parts)


def _entry_point(reading: LogReading) -> str:
    args = reading.args.values if reading.args else {}
    if "model_tag" in args or args.get("subparser") == "serve":
        return "vllm serve"
    return "api_server" if reading.args is not None and reading.args.form == "args Namespace" else "vllm serve"


def _first_line(reading: LogReading) -> Optional[int]:
    lines = [part.line for part in (reading.args, reading.engine_config) if part is not None]
    return min(lines) if lines else None


def _model(reading: LogReading) -> Optional[tuple[str, int]]:
    for part, keys in ((reading.args, ("model", "model_tag")), (reading.engine_config, ("model",))):
        if part is None:
            continue
        for key in keys:
            value = part.values.get(key)
            if isinstance(value, str) and value:
                return value, part.line
    return None


# ---- what the user gave ---------------------------------------------------------------------------

def _argument_tokens(reading: LogReading, table: Optional[FlagTable], path: str,
                     notes: list[Note]) -> dict[str, list[Token]]:
    if reading.args is None:
        return {}
    loc = SourceLoc(file=path, line=reading.args.line)
    namespace = reading.args.form == "args Namespace"
    out: dict[str, list[Token]] = {}
    skipped: list[str] = []
    for dest, value in reading.args.values.items():
        if dest in _NOT_FLAGS or dest == "model":
            continue
        spec = table.spec_for_dest(dest) if table else None
        if namespace and (spec is None or _same(value, spec.get("default"))):
            continue  # a Namespace lists every argument; only what differs from the release's default was given
        tokens = _tokens_for(dest, value, spec, table, loc, "the log's " + reading.args.form)
        if tokens is None:
            skipped.append(f"{dest}={_short(value)}")
            continue
        out[dest] = tokens
    if skipped:
        notes.append(Note(level="info", loc=loc, message=(
            "arguments in the log that cannot be given back as flags are left out: " + ", ".join(skipped))))
    return out


def _tokens_for(dest: str, value: Any, spec: Optional[dict], table: Optional[FlagTable], loc: SourceLoc,
                spelling: str) -> Optional[list[Token]]:
    option = (table.by_dest.get(dest) if table else None) or _any_release_option(dest)
    if option is None or value is None:
        return None
    if isinstance(value, bool):
        if value:
            return [Token(option, loc, spelling=f"{dest} ({spelling})")]
        negation = [n for n in (spec or {}).get("neg", [])]
        if negation:
            return [Token(negation[0], loc, spelling=f"{dest}=False ({spelling})")]
        if (spec or {}).get("action") == "StoreBoolean":
            return [Token(option, loc, spelling=f"{dest} ({spelling})"), Token("false", loc)]
        return None
    if isinstance(value, str) and _is_object_repr(value):
        return None  # e.g. KVTransferConfig(...): the log shows the object, not the text that built it
    choices = (spec or {}).get("choices")
    if choices and not isinstance(value, (list, dict)) and value not in choices and str(value) not in map(str, choices):
        return None
    head = Token(option, loc, spelling=f"{dest} ({spelling})")
    if isinstance(value, list):
        return [head] + [Token(_text(item), loc, typed_value=item) for item in value] if value else None
    return [head, Token(_text(value), loc, typed_value=value)]


def _any_release_option(dest: str) -> Optional[str]:
    option = "--" + dest.replace("_", "-")
    return option if option_history(option) is not None else None


def _same(value: Any, default: Any) -> bool:
    if value == default:
        return True
    return isinstance(default, (int, float)) and isinstance(value, (int, float)) and float(value) == float(default)


def _is_object_repr(text: str) -> bool:
    head = text.split("(", 1)[0]
    return "(" in text and text.endswith(")") and head.isidentifier() and head[:1].isupper()


def _text(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _command_tokens(reading: LogReading, table: Optional[FlagTable], path: str, inv: Invocation) -> list[Token]:
    """A terminal paste's own `vllm serve ...` line: the arguments as typed, when the log has no argument line."""
    if reading.command is None:
        return []
    from ..config.forms.commands import find_launch
    from ..config.shell import run_script

    for command in run_script(reading.command, path, {}):
        launch = find_launch(command.tokens, dict(command.env), FORM, inv.label, path)
        if launch is not None:
            inv.env.update(launch.env)
            inv.entry_point = launch.entry_point
            line = reading.command_line
            inv.notes.append(Note(level="info", loc=SourceLoc(file=path, line=line), message=(
                f"arguments read from the command line pasted with the log (line {line})")))
            return [Token(t.text, SourceLoc(file=path, line=line), spelling=t.spelling, typed_value=t.typed_value)
                    for t in launch.tokens]
    return []


def _dests(tokens: list[Token], table: Optional[FlagTable]) -> set[str]:
    if table is None:
        return set()
    found = set()
    for token in tokens:
        if token.text.startswith("-"):
            matches = table.match(token.text.split("=", 1)[0])
            if len(matches) == 1:
                found.add(matches[0].spec["dest"])
    return found


# ---- what vLLM resolved ---------------------------------------------------------------------------

def _resolved_tokens(reading: LogReading, table: Optional[FlagTable], path: str, given: set[str],
                     notes: list[Note]) -> dict[str, list[Token]]:
    found: dict[str, tuple[Any, int, str]] = {}
    config = reading.engine_config
    if config is not None:
        for key, dest in _CONFIG_KEYS.items():
            if key in config.values and dest not in found:
                found[dest] = (config.values[key], config.line, "engine config line")
    for dest, figure in reading.resolved.items():
        if dest == "kv_cache_memory_bytes":
            found.setdefault(dest, (figure.bytes, figure.line, "KV memory line"))
        else:
            found.setdefault(dest, (int(figure.value), figure.line, "log line"))
    util = reading.memory.utilization
    if util is not None:
        found.setdefault("gpu_memory_utilization", (util.value, util.line, "memory profiling line"))
    device = str(config.values.get("device_config", "")) if config is not None else ""
    for dest, (value, why) in _PLATFORM_DEFAULTS.get(device, {}).items():
        if dest not in found and dest not in given:
            found[dest] = (value, config.line, f"{device} platform default: {why}")
    out: dict[str, list[Token]] = {}
    used: list[str] = []
    for dest, (value, line, where) in found.items():
        if dest in given or value is None:
            continue
        spec = table.spec_for_dest(dest) if table else None
        if spec is not None and _same(value, spec.get("default")) and not isinstance(value, bool):
            continue
        tokens = _tokens_for(dest, value, spec, table, SourceLoc(file=path, line=line), f"vLLM's {where}")
        if tokens:
            out[dest] = tokens
            used.append(f"{dest}={_short(value)} (line {line})")
    if used:
        notes.append(Note(level="info", loc=SourceLoc(file=path, line=config.line if config else None), message=(
            "values vLLM resolved and logged, used as given: " + ", ".join(used))))
    return out


# ---- environment and hardware -----------------------------------------------------------------------

def _environment(reading: LogReading, inv: Invocation) -> None:
    if reading.engine is None or reading.release is None:
        return
    from ..versions import parse_version
    version = parse_version(reading.release)
    if reading.engine == "v0" and version >= (0, 8, 0):
        inv.env["VLLM_USE_V1"] = "0"  # the log shows the V0 engine where V1 was the default
    elif reading.engine == "v1" and version < (0, 8, 0):
        inv.env["VLLM_USE_V1"] = "1"


def _gpu_hints(reading: LogReading, inv: Invocation, path: str) -> None:
    config = reading.engine_config.values if reading.engine_config else {}
    args = reading.args.values if reading.args else {}
    sizes = [_int(args.get(k, config.get(k))) for k in ("tensor_parallel_size", "pipeline_parallel_size",
                                                           "data_parallel_size")]
    count = 1
    for size in sizes:
        count *= size or 1
    if count > 1:
        inv.gpu_count = Hint(count, "the log's parallel sizes (TP x PP x DP)",
                             SourceLoc(file=path, line=_first_line(reading)))
    if reading.gpu_name:
        from ..catalog import load as catalog
        for candidate in _gpu_candidates(reading.gpu_name):
            if catalog.find_gpu(candidate) is not None:
                inv.gpu_name = Hint(candidate, f"device name '{reading.gpu_name}' in the log",
                                    SourceLoc(file=path, line=reading.gpu_name_line))
                return


def _gpu_candidates(name: str) -> list[str]:
    words = name.replace("-", " ").split()
    out = ["-".join(words[:i]) for i in range(len(words), 0, -1)]
    return out + [w for w in words if any(ch.isdigit() for ch in w)]


def _int(value: Any) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
