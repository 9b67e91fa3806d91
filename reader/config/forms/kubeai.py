"""KubeAI `Model` resources (apiVersion kubeai.org/v1) served by the vLLM engine.

KubeAI builds the vLLM command itself: the model from `spec.url` (a storage URI: hf://, s3://, gs://, pvc://,
oss://), then `spec.args`, with `spec.env`; the GPUs come from `spec.resourceProfile`, `<profile>:<count>`,
whose profile names the chart maps to node selectors (accelerators.yaml, kubeai_profiles).
Source: https://www.kubeai.org/reference/kubernetes-api/ (Model spec: url, engine, args, env, resourceProfile).
"""
from __future__ import annotations

from typing import Any, Optional

from ..invocation import Hint, Invocation
from ..model import Note, SourceLoc
from ..tokens import Token
from ..yamlsafe import YamlDoc
from .gpu_hints import gpu_from_accelerator


# The chart's CPU profile: imageName "cpu" (a vLLM CPU image) and, per unit, requests of 1 CPU and 2Gi of memory
# (charts/kubeai/values.yaml resourceProfiles.cpu, substratusai/kubeai @ 00218190ccce).
CPU_PROFILE = "cpu"


def is_kubeai_model(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == "Model" and "kubeai" in str(data.get("apiVersion", ""))


def kubeai_model(doc: YamlDoc, file: Optional[str]) -> list[Invocation]:
    data = doc.data
    spec = data.get("spec") or {}
    name = str((data.get("metadata") or {}).get("name", "?"))

    def loc(*path: Any) -> SourceLoc:
        return SourceLoc(file=file, line=doc.line(("spec",) + path))

    engine = str(spec.get("engine", ""))
    if engine and engine.lower() != "vllm":
        return []  # OLlama, Infinity, FasterWhisper: not vLLM
    inv = Invocation(form="kubeai-model", label=f"Model/{name}", line=doc.line(("spec",)))
    if spec.get("url"):
        inv.model = Hint(str(spec["url"]), "spec.url", loc("url"))
    inv.tokens = [Token(str(arg), loc("args", i)) for i, arg in enumerate(spec.get("args") or [])]
    inv.env = {str(k): str(v) for k, v in (spec.get("env") or {}).items()} if isinstance(spec.get("env"), dict) else {}
    profile = str(spec.get("resourceProfile") or "")
    if profile.partition(":")[0].strip() == CPU_PROFILE:
        inv.notes.append(Note(level="info", loc=loc("resourceProfile"), message=(
            f"spec.resourceProfile {profile} is KubeAI's CPU profile: its count multiplies the profile's CPU and "
            "memory requests and names no GPU; KubeAI runs it on vLLM's CPU image")))
    elif profile:
        gpu, _, count = profile.partition(":")
        inv.gpu_name = Hint(gpu_from_accelerator(gpu, "kubeai_profiles"), f"spec.resourceProfile {profile}",
                            loc("resourceProfile"))
        if count.isdigit():
            inv.gpu_count = Hint(int(count), f"spec.resourceProfile {profile}", loc("resourceProfile"))
    inv.notes.append(Note(level="info", loc=loc(), message=(
        "KubeAI builds the vLLM command from spec.url and spec.args; they are read as the model and its flags")))
    return [inv]
