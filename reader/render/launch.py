"""A plan's winner as files: a `vllm serve --config` YAML, a shell script, and (for a trace) the replica's
share of the requests. Both launch files carry a `# vllm-reader:` comment block (vLLM ignores comments),
so `vllm-reader check` and `diagnose` read them back with the version, GPU, traffic and SLOs planned for.
"""
from __future__ import annotations

import json
import shlex
from typing import Any

import yaml

from ..plan.launch import TRACE_FILE, Launch, LaunchArg

CONFIG_FILE = "vllm-config.yaml"
SCRIPT_FILE = "serve.sh"


def launch_files(launch: Launch, header: list[str]) -> dict[str, str]:
    """{file name: text}: the config YAML, the script, and the trace when there is one."""
    files = {CONFIG_FILE: config_yaml(launch, header), SCRIPT_FILE: serve_script(launch, header)}
    if launch.trace is not None:
        files[TRACE_FILE] = "".join(json.dumps(row) + "\n" for row in launch.trace)
    return files


def config_yaml(launch: Launch, header: list[str]) -> str:
    body: dict[str, Any] = {"model": launch.model}
    for arg in launch.args:
        body[arg.option[2:]] = _yaml_value(arg)
    return _comments(header) + _context_block(launch) + yaml.safe_dump(body, sort_keys=False, width=1000)


def serve_command(launch: Launch) -> str:
    """`vllm serve MODEL --flag value ...`, one option per line."""
    parts = [f"vllm serve {shlex.quote(launch.model)}"] + [_shell(arg) for arg in launch.args]
    return " \\\n  ".join(parts)


def serve_script(launch: Launch, header: list[str]) -> str:
    return "#!/usr/bin/env bash\n" + _comments(header) + _context_block(launch) + serve_command(launch) + "\n"


def _yaml_value(arg: LaunchArg) -> Any:
    if arg.form == "json":
        return json.dumps(arg.value)
    return arg.value


def _shell(arg: LaunchArg) -> str:
    if arg.form in ("switch", "negated"):
        return arg.option
    if arg.form == "json":
        return f"{arg.option} {shlex.quote(json.dumps(arg.value))}"
    if arg.form == "list":
        return arg.option + "".join(f" {shlex.quote(str(v))}" for v in arg.value)
    value = str(arg.value).lower() if isinstance(arg.value, bool) else str(arg.value)
    return f"{arg.option} {shlex.quote(value)}"


def _comments(lines: list[str]) -> str:
    return "".join(f"# {' '.join(str(line).split())}\n" for line in lines)


def _context_block(launch: Launch) -> str:
    text = yaml.safe_dump(launch.context, sort_keys=False, default_flow_style=None, width=1000)
    return "# vllm-reader:\n" + "".join(f"#   {line}\n" for line in text.splitlines())
