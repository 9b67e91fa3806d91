"""SkyPilot task files: the `run` script, with the GPUs of `resources` (accelerators or an instance type)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..invocation import Hint, Invocation
from ..model import Note, SourceLoc
from ..shell import run_script
from ..yamlsafe import YamlDoc
from .commands import find_launch
from .gpu_hints import gpu_from_accelerator, gpu_from_instance_type
from .manifests import script_first_line
from .scripts import shift as _shift


@dataclass
class SkyGpus:
    name: Optional[str]
    per_node: Optional[int]
    origin: str
    path: tuple
    alternatives: list[str] = field(default_factory=list)


def is_skypilot(data: Any) -> bool:
    return isinstance(data, dict) and "run" in data and isinstance(data.get("run"), str) and (
        "resources" in data or "envs" in data or "setup" in data)


def skypilot(doc: YamlDoc, file: Optional[str], text_lines: list[str], overrides: dict[str, str]) -> list[Invocation]:
    data = doc.data
    envs = {str(k): str(v) for k, v in (data.get("envs") or {}).items() if v is not None}
    gpus = sky_gpus(data.get("resources") or {})
    nodes = int(data.get("num_nodes", 1) or 1)
    # SkyPilot exports these to `run`; we know them from the task's own resources.
    known = dict(envs)
    if gpus.per_node:
        known.setdefault("SKYPILOT_NUM_GPUS_PER_NODE", str(gpus.per_node))
    known.setdefault("SKYPILOT_NUM_NODES", str(nodes))
    known.update(overrides)
    first_line = script_first_line(doc.line(("run",)), text_lines)
    found = []
    for command in run_script(data["run"], file, known):
        tokens = [_shift(t, first_line - 1) for t in command.tokens]
        inv = find_launch(tokens, {**envs, **command.env}, "skypilot", "run", file)
        if inv is None:
            continue
        loc = SourceLoc(file=file, line=doc.line(("resources",) + gpus.path))
        if gpus.name:
            inv.gpu_name = Hint(gpus.name, gpus.origin, loc)
        if gpus.per_node:
            inv.gpu_count = Hint(gpus.per_node * nodes, f"{gpus.origin} x num_nodes ({gpus.per_node} x {nodes})", loc)
        if gpus.alternatives:
            inv.notes.append(Note(level="info", loc=loc, message=(
                f"SkyPilot may also place this task on {', '.join(gpus.alternatives)}; read as the first choice, "
                f"{gpus.origin} ({gpus.name}). Give --gpu for another")))
        inv.num_nodes = Hint(nodes, "num_nodes", SourceLoc(file=file, line=doc.line(("num_nodes",))))
        inv.notes.append(Note(level="info", loc=loc, message=(
            "SkyPilot's SKYPILOT_NUM_GPUS_PER_NODE and SKYPILOT_NUM_NODES are taken from this task's resources")))
        found.append(inv)
    return found


def sky_gpus(resources: dict[str, Any]) -> SkyGpus:
    """The GPUs of a task's resources: `accelerators` (a name, `name:count`, a mapping, a list or set of
    candidates), else `instance_type`, else the first of `ordered` / `any_of`."""
    choices = _accelerator_choices(resources.get("accelerators"))
    if choices:
        (name, count), rest = choices[0], choices[1:]
        return SkyGpus(gpu_from_accelerator(name, "skypilot"), count, f"resources.accelerators {name}:{count}",
                       ("accelerators",), [f"{n}:{c}" for n, c in rest])
    instance = resources.get("instance_type")
    if instance:
        found = gpu_from_instance_type(str(instance))
        if found:
            return SkyGpus(found[0], found[1], f"resources.instance_type {instance}", ("instance_type",))
    for key in ("ordered", "any_of"):
        options = resources.get(key)
        if isinstance(options, list) and options and isinstance(options[0], dict):
            first = sky_gpus(options[0])
            if first.name:
                first.path = (key, 0) + first.path
                first.alternatives += [str(o.get("accelerators") or o.get("instance_type")) for o in options[1:]
                                       if isinstance(o, dict)]
                return first
    return SkyGpus(None, None, "", ("accelerators",))


def _accelerator_choices(value: Any) -> list[tuple[str, int]]:
    if isinstance(value, dict):
        return [(str(name), int(count or 1)) for name, count in value.items()]
    if isinstance(value, list):
        return [choice for item in value for choice in _accelerator_choices(item)]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{") and text.endswith("}"):  # a set of candidates: {A10G:1, L4:1}
            return [choice for part in text[1:-1].split(",") for choice in _accelerator_choices(part)]
        m = re.fullmatch(r"\s*([^:{}]+?)\s*(?::\s*(\d+))?\s*", text)
        if m:
            return [(m.group(1), int(m.group(2) or 1))]
    return []
