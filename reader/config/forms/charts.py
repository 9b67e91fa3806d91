"""Helm values files whose chart turns keys into vLLM flags.

vLLM production-stack: the mapping follows the chart's template
(vllm-project/production-stack helm/templates/deployment-vllm-multi.yaml @ f1f98227): the model
URL is the positional model; `enableChunkedPrefill` (when present) becomes
`--[no-]enable-chunked-prefill`; `enablePrefixCaching` always becomes `--enable-prefix-caching` or,
when absent or false, `--no-enable-prefix-caching`; `maxModelLen`, `dtype`, `tensorParallelSize`,
`maxNumSeqs`, `gpuMemoryUtilization`, `maxLoras` become their flags; `extraArgs` are appended; `v0: 1`
sets VLLM_USE_V1=0. Models with `raySpec` use the chart's Ray template, which also passes
`pipelineParallelSize`.

AWS ai-on-eks inference charts: `model` plus camelCase `modelParameters`, read as the vLLM flags of
the same names.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ...errors import ReaderError
from ..invocation import ConfigEntry, Hint, Invocation
from ..model import Note, SourceLoc
from ..tokens import Token
from ..yamlsafe import YamlDoc
from .images import version_hint
from .gpu_hints import gpu_from_instance_type
from .storage_uri import model_mapping_uri

_PRODSTACK_SOURCE = "vllm-project/production-stack helm/templates/deployment-vllm-multi.yaml @ f1f98227"


def camel_to_flag(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def is_production_stack(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("servingEngineSpec"), dict)


def is_ai_on_eks(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("modelParameters"), dict) and "model" in data


def production_stack(doc: YamlDoc, file: Optional[str]) -> list[Invocation]:
    specs = doc.data["servingEngineSpec"].get("modelSpec") or []
    found = []
    for i, spec in enumerate(specs):
        if isinstance(spec, dict):
            found.append(_prodstack_model(spec, ("servingEngineSpec", "modelSpec", i), doc, file))
    return found


def _prodstack_model(spec: dict[str, Any], base: tuple, doc: YamlDoc, file: Optional[str]) -> Invocation:
    def loc(*path: Any) -> SourceLoc:
        return SourceLoc(file=file, line=doc.line(base + path))

    inv = Invocation(form="helm-production-stack", label=f"modelSpec '{spec.get('name', '?')}'", line=doc.line(base))
    if spec.get("modelURL"):
        inv.tokens.append(Token(str(spec["modelURL"]), loc("modelURL"), spelling="modelURL"))
    if spec.get("enableLoRA"):
        inv.tokens.append(Token("--enable-lora", loc("enableLoRA"), spelling="enableLoRA"))
    config = spec.get("vllmConfig") or {}
    if "enableChunkedPrefill" in config:
        flag = "--enable-chunked-prefill" if config["enableChunkedPrefill"] else "--no-enable-chunked-prefill"
        inv.tokens.append(Token(flag, loc("vllmConfig", "enableChunkedPrefill"), spelling="enableChunkedPrefill"))
    caching = "--enable-prefix-caching" if config.get("enablePrefixCaching") else "--no-enable-prefix-caching"
    inv.tokens.append(Token(caching, loc("vllmConfig", "enablePrefixCaching") if "enablePrefixCaching" in config
                            else loc("vllmConfig"), spelling="enablePrefixCaching"))
    if "enablePrefixCaching" not in config:
        inv.notes.append(Note(level="info", loc=loc("vllmConfig"), key="enablePrefixCaching", message=(
            "the production-stack chart passes --no-enable-prefix-caching unless vllmConfig.enablePrefixCaching "
            f"is true ({_PRODSTACK_SOURCE})")))
    for key, flag in (("maxModelLen", "--max-model-len"), ("dtype", "--dtype"),
                      ("tensorParallelSize", "--tensor-parallel-size"), ("maxNumSeqs", "--max-num-seqs"),
                      ("gpuMemoryUtilization", "--gpu-memory-utilization"), ("maxLoras", "--max-loras")):
        if key in config:
            inv.tokens += [Token(flag, loc("vllmConfig", key), spelling=key),
                           Token(str(config[key]), loc("vllmConfig", key))]
    if "raySpec" in spec and "pipelineParallelSize" in config:
        inv.tokens += [Token("--pipeline-parallel-size", loc("vllmConfig", "pipelineParallelSize"),
                             spelling="pipelineParallelSize"),
                       Token(str(config["pipelineParallelSize"]), loc("vllmConfig", "pipelineParallelSize"))]
    for j, arg in enumerate(config.get("extraArgs") or []):
        inv.tokens.append(Token(str(arg), loc("vllmConfig", "extraArgs", j)))
    if str(config.get("v0", "")) == "1":
        inv.env["VLLM_USE_V1"] = "0"
    for item in spec.get("env") or []:
        if isinstance(item, dict) and "name" in item and "value" in item:
            inv.env[str(item["name"])] = str(item["value"])
    image = f"{spec.get('repository', '')}:{spec.get('tag', '')}"
    inv.image = image
    inv.version = version_hint(image, loc("tag"))
    ray = spec.get("raySpec")
    if isinstance(ray, dict):
        # The chart's Ray template (helm/templates/ray-cluster.yaml @ d6eece8a): a head pod with
        # raySpec.headNode resources plus replicaCount worker pods with the model's resources; it sets
        # VLLM_USE_V1 to vllmConfig.v1, or "0" when that key is absent.
        head = int((ray.get("headNode") or {}).get("requestGPU", 0) or 0)
        workers = int(spec.get("replicaCount", 1) or 1) * int(spec.get("requestGPU", 0) or 0)
        inv.gpu_count = Hint(head + workers, f"Ray head ({head}) + {spec.get('replicaCount', 1)} worker pod(s)",
                             loc("raySpec"))
        inv.env["VLLM_USE_V1"] = str(config.get("v1", "0"))
    elif "requestGPU" in spec:
        inv.gpu_count = Hint(int(spec["requestGPU"]), "modelSpec.requestGPU", loc("requestGPU"))
    handled = {"enableChunkedPrefill", "enablePrefixCaching", "maxModelLen", "dtype", "tensorParallelSize",
               "maxNumSeqs", "gpuMemoryUtilization", "maxLoras", "extraArgs", "v0", "pipelineParallelSize",
               "prometheusMultiprocDir"}
    ignored = [k for k in config if k not in handled]
    if ignored:
        inv.notes.append(Note(level="warning", loc=loc("vllmConfig"), message=(
            "the production-stack chart does not pass vllmConfig keys " + ", ".join(ignored)
            + f" to vLLM ({_PRODSTACK_SOURCE}); use extraArgs")))
    return inv


def ai_on_eks(doc: YamlDoc, file: Optional[str]) -> list[Invocation]:
    data = doc.data
    inv = Invocation(form="helm-ai-on-eks", label="modelParameters", line=doc.line(("modelParameters",)))
    model = data["model"]
    where = SourceLoc(file=file, line=doc.line(("model",)))
    if isinstance(model, dict):
        model = model_mapping_uri(model)
        if model is None:
            raise ReaderError("'model' is a mapping without a storage URI (`mode: uri` with `uri: oci://...`, "
                              "`s3://`, `pvc://`, `hf://`): the model it names cannot be read.", file=file,
                              line=where.line, key="model", hint="Give the model as an id or a storage URI.")
        inv.notes.append(Note(level="info", loc=where, key="model", message=f"'model' is a mapping: its URI {model} "
                              "names the model"))
    inv.tokens.append(Token(str(model), where, spelling="model"))
    for key, value in data["modelParameters"].items():
        inv.entries.append(ConfigEntry(camel_to_flag(key), value,
                                       SourceLoc(file=file, line=doc.line(("modelParameters", key))), spelling=key))
    server = ((data.get("inference") or {}).get("modelServer")) or {}
    image = server.get("image") or {}
    if image:
        ref = f"{image.get('repository', '')}:{image.get('tag', '')}"
        inv.image = ref
        inv.version = version_hint(ref, SourceLoc(file=file, line=doc.line(("inference", "modelServer", "image",
                                                                            "tag"))))
    deployment = server.get("deployment") or {}
    gpu = ((deployment.get("resources") or {}).get("gpu") or {})
    multi_pod = "lws" in str((data.get("inference") or {}).get("framework", ""))
    for section in ("limits", "requests"):
        value = (gpu.get(section) or {}).get("nvidia.com/gpu")
        if value is None:
            continue
        where = SourceLoc(file=file, line=doc.line(("inference", "modelServer", "deployment", "resources", "gpu")))
        if multi_pod:
            # A LeaderWorkerSet spans several pods; the chart, not this file, sets how many.
            inv.notes.append(Note(level="info", loc=where, message=(
                f"{value} GPUs per pod; the LeaderWorkerSet group size is set by the chart, so the total is "
                "not known from this file (give it with --gpus)")))
        else:
            inv.gpu_count = Hint(int(value), "GPUs per pod (modelServer.deployment.resources.gpu)", where)
        break
    instance = deployment.get("instanceType")
    if instance:
        found = gpu_from_instance_type(str(instance))
        if found:
            inv.gpu_name = Hint(found[0], f"instance type {instance}", SourceLoc(
                file=file, line=doc.line(("inference", "modelServer", "deployment", "instanceType"))))
    inv.notes.append(Note(level="info", loc=SourceLoc(file=file, line=doc.line(("modelParameters",))), message=(
        "ai-on-eks inference chart: modelParameters keys are read as the vLLM flags of the same names "
        "(camelCase to snake_case)")))
    return [inv]
