"""docker-compose files and vLLM's CI benchmark JSON."""
from __future__ import annotations

from typing import Any, Optional

from ...errors import ReaderError
from ..invocation import ConfigEntry, Hint, Invocation
from ..model import Note, SourceLoc
from ..shell import run_script
from ..tokens import Token
from ..yamlsafe import YamlDoc
from .commands import find_launch
from .images import is_vllm_image, version_hint
from .scripts import shift as _shift


# ---- docker compose ------------------------------------------------------------------------

def is_compose(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("services"), dict) and any(
        isinstance(s, dict) and ("image" in s or "build" in s) for s in data["services"].values())


def compose(doc: YamlDoc, file: Optional[str]) -> list[Invocation]:
    found = []
    for name, service in doc.data["services"].items():
        if not isinstance(service, dict):
            continue
        image = str(service.get("image", ""))
        base = ("services", name)
        env = _compose_env(service.get("environment"))
        tokens = _compose_command(service.get("entrypoint"), base + ("entrypoint",), doc, file, env) + \
            _compose_command(service.get("command"), base + ("command",), doc, file, env)
        if not (is_vllm_image(image) or any("vllm" in t.text for t in tokens)):
            continue
        inv = find_launch(list(tokens), dict(env), "docker-compose", f"service '{name}'", file)
        if inv is None and is_vllm_image(image) and service.get("entrypoint") is None:
            inv = Invocation(form="docker-compose", label=f"service '{name}'", tokens=tokens, env=env,
                             line=doc.line(base))
        if inv is None:
            continue
        inv.form = "docker-compose"
        inv.image = image or None
        inv.version = version_hint(image, SourceLoc(file=file, line=doc.line(base + ("image",))))
        count = _compose_gpus(service)
        if count is not None:
            inv.gpu_count = Hint(count, "deploy.resources.reservations.devices", SourceLoc(
                file=file, line=doc.line(base + ("deploy",))))
        found.append(inv)
    return found


def _compose_command(value: Any, path: tuple, doc: YamlDoc, file: Optional[str], env: dict[str, str]) -> list[Token]:
    if value is None:
        return []
    if isinstance(value, list):
        return [Token(str(v), SourceLoc(file=file, line=doc.line(path + (i,)))) for i, v in enumerate(value)]
    commands = run_script(str(value), file, dict(env))
    line = doc.line(path) or 1
    return [_shift(t, line - 1) for c in commands for t in c.tokens]


def _compose_env(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items() if v is not None}
    env = {}
    for item in value or []:
        key, _, val = str(item).partition("=")
        env[key] = val
    return env


def _compose_gpus(service: dict[str, Any]) -> Optional[int]:
    devices = (((service.get("deploy") or {}).get("resources") or {}).get("reservations") or {}).get("devices") or []
    for device in devices:
        if isinstance(device, dict):
            if isinstance(device.get("count"), int):
                return device["count"]
            if device.get("device_ids"):
                return len(device["device_ids"])
    return None


# ---- vLLM CI benchmark JSON ------------------------------------------------------------------

def is_benchmark_json(data: Any) -> bool:
    if isinstance(data, list):
        return bool(data) and all(isinstance(t, dict) and "server_parameters" in t for t in data)
    return isinstance(data, dict) and "tests" in data and isinstance(data["tests"], list)


def benchmark_json(data: Any, file: Optional[str], text: str) -> list[Invocation]:
    defaults = data.get("defaults", {}) if isinstance(data, dict) else {}
    tests = data["tests"] if isinstance(data, dict) else data
    found = []
    for test in tests:
        params = {**defaults.get("server_parameters", {}), **test.get("server_parameters", {})}
        env = {**defaults.get("server_environment_variables", {}), **test.get("server_environment_variables", {})}
        client = {**defaults.get("client_parameters", {}), **test.get("client_parameters", {})}
        name = test.get("test_name", "?")
        line = _json_line(text, f'"{name}"')
        inv = Invocation(form="vllm-benchmark-json", label=f"test '{name}'", env={k: str(v) for k, v in env.items()},
                         line=line)
        for key, value in params.items():
            # The benchmark runner turns "" into a bare flag.
            inv.entries.append(ConfigEntry(key, True if value == "" else value, SourceLoc(file=file, line=line)))
        concurrency = test.get("max_concurrency_list") or defaults.get("max_concurrency_list")
        inv.workload = _benchmark_workload(client, concurrency)
        found.append(inv)
    if not found:
        raise ReaderError("the benchmark JSON has no tests.", file=file)
    return found


def _json_line(text: str, needle: str) -> Optional[int]:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _benchmark_workload(client: dict[str, Any], concurrency: Any) -> Optional[dict[str, Any]]:
    get = lambda *keys: next((client[k] for k in keys if k in client), None)  # noqa: E731
    prompt = get("random-input-len", "random_input_len")
    output = get("random-output-len", "random_output_len")
    if prompt is None or output is None:
        return None
    spec: dict[str, Any] = {"prompt_len": int(prompt), "output_len": int(output),
                            "num_requests": int(get("num_prompts", "num-prompts") or 200)}
    if isinstance(concurrency, list) and concurrency:
        spec["arrival"] = {"process": "closed", "concurrency": int(max(concurrency))}
    return spec


def notes_for_multiple(invocations: list[Invocation], chosen: int) -> Note:
    others = ", ".join(f"#{i + 1} ({inv.label}" + (f", line {inv.line})" if inv.line and f"line {inv.line}" not in
                                                     inv.label else ")")
                       for i, inv in enumerate(invocations) if i != chosen)
    return Note(level="info", message=(
        f"the file holds {len(invocations)} vLLM launches; reading #{chosen + 1} ({invocations[chosen].label}). "
        f"Others: {others}. Choose one with --pick N."))
