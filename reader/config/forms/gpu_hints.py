"""What a deployment file says about its GPU type: node labels (nodeSelector, node affinity, Karpenter
requirements), cloud instance types, SkyPilot and KubeAI accelerator names, GPU resource names.

The tables are data (accelerators.yaml, each with its source). A name is returned as the catalog's id
where a table maps it, else as written; the resolver looks it up, and a GPU the catalog lacks falls back
to the assumed one, loudly.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Optional

import yaml

_MIG_RESOURCE = re.compile(r"^nvidia\.com/mig-(\d+g\.\d+gb)$")


@dataclass
class GpuHint:
    name: str  # a catalog id, or the name as the file wrote it
    origin: str  # words: "node selector cloud.google.com/gke-accelerator=nvidia-l4"
    per_machine: Optional[int] = None  # GPUs of the machine type, when the hint is one
    alternatives: list[str] = field(default_factory=list)  # other values the file allows ("In: [a, b]")


@lru_cache(maxsize=1)
def tables() -> dict[str, Any]:
    return yaml.safe_load((Path(__file__).parent / "accelerators.yaml").read_text(encoding="utf-8"))


def gpu_from_instance_type(value: str) -> Optional[tuple[str, int]]:
    found = tables()["instance_types"].get(str(value).strip())
    return (found[0], int(found[1])) if found else None


def gpu_from_label(key: str, value: str) -> Optional[tuple[str, Optional[int]]]:
    """(GPU, GPUs per machine or None) for one node label, or None when the key names no GPU."""
    spec = tables()["label_keys"].get(key)
    value = str(value).strip()
    if spec is None or not value:
        return None
    if spec["values"] == "instance_types":
        return gpu_from_instance_type(value)
    if spec["values"] == "as-is":
        return _product_name(value), None
    return tables()[spec["values"]].get(value, value), None


def gpu_from_accelerator(name: str, table: str) -> str:
    """A SkyPilot (`skypilot`) or KubeAI (`kubeai_profiles`) accelerator name as a catalog id, else as written."""
    return tables()[table].get(name.strip(), name.strip())


def gpu_from_labels(data: Any) -> Optional[GpuHint]:
    """The most specific GPU-naming node label in the object (label keys in the table's order)."""
    found = list(_label_hints(data))
    if not found:
        return None
    order = list(tables()["label_keys"])
    found.sort(key=lambda item: order.index(item[0]))
    hint = found[0][1]
    if hint.name.startswith("A100-40GB") and _gpu_memory_mib(data) >= 80_000:
        hint.name, hint.origin = "A100-80GB-SXM", hint.origin + " with karpenter.k8s.aws/instance-gpu-memory"
    return hint


def mig_slice(resources: Any) -> Optional[tuple[str, int]]:
    """A MIG slice asked for as a resource (`nvidia.com/mig-3g.40gb: 1`): (profile, count)."""
    if not isinstance(resources, dict):
        return None
    for section in ("limits", "requests"):
        block = resources.get(section) or {}
        for key, count in block.items():
            m = _MIG_RESOURCE.match(str(key))
            if m:
                return m.group(1), int(str(count).strip() or 1)
    return None


def _label_hints(data: Any) -> Iterator[tuple[str, GpuHint]]:
    keys = tables()["label_keys"]
    for key, value in _walk_pairs(data):
        if key in keys and isinstance(value, (str, int)):
            found = gpu_from_label(key, str(value))
            if found:
                yield key, GpuHint(found[0], f"node selector {key}={value}", found[1])
        if isinstance(value, dict) and value.get("key") in keys and _selects(value):
            values = [str(v) for v in value.get("values") or []]
            found = gpu_from_label(str(value["key"]), values[0])
            if found:
                yield str(value["key"]), GpuHint(found[0], f"node affinity {value['key']}={values[0]}", found[1],
                                                 values[1:])


def _selects(expression: dict[str, Any]) -> bool:
    """A node-affinity / Karpenter requirement that picks nodes with one of its values."""
    return str(expression.get("operator", "In")) in ("In", "Equals") and bool(expression.get("values"))


def _product_name(value: str) -> str:
    """GPU feature discovery's product label, less the suffixes time-slicing and MIG add."""
    return re.sub(r"-(SHARED|MIG-.*)$", "", value)


def _gpu_memory_mib(data: Any) -> int:
    for key, value in _walk_pairs(data):
        if key == "karpenter.k8s.aws/instance-gpu-memory" and str(value).isdigit():
            return int(value)
        if isinstance(value, dict) and value.get("key") == "karpenter.k8s.aws/instance-gpu-memory":
            numbers = [int(v) for v in value.get("values") or [] if str(v).isdigit()]
            if numbers:
                return max(numbers)
    return 0


def _walk_pairs(node: Any, depth: int = 0) -> Iterator[tuple[str, Any]]:
    if depth > 40:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key), value
            yield from _walk_pairs(value, depth + 1)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, dict):
                yield "", item
            yield from _walk_pairs(item, depth + 1)
