"""Ray Serve LLM configs (`ray.serve.llm` `LLMConfig` entries under `llm_configs`, in a Serve config file or a
RayService's serveConfigV2): each one starts a vLLM engine with `engine_kwargs` as its engine arguments.

The model is `model_loading_config.model_source` (where the weights come from) or its `model_id`; the GPU type is
`accelerator_type` (Ray's accelerator names, accelerators.yaml `ray_accelerators`); the engine spans
tensor_parallel_size x pipeline_parallel_size GPUs; `runtime_env.env_vars` reach the engine.
Source: https://docs.ray.io/en/latest/serve/llm/ (LLMConfig: model_loading_config, engine_kwargs,
accelerator_type, runtime_env) and ray python/ray/util/accelerators/accelerators.py (accelerator names).
"""
from __future__ import annotations

from typing import Any, Optional

from ..invocation import ConfigEntry, Hint, Invocation
from ..model import Note, SourceLoc
from ..yamlsafe import Path, YamlDoc
from .gpu_hints import gpu_from_accelerator


def llm_config_launches(configs: list[Any], path: Path, doc: YamlDoc, file: Optional[str]) -> list[Invocation]:
    found = []
    for i, config in enumerate(configs):
        if isinstance(config, dict) and isinstance(config.get("engine_kwargs", {}), dict):
            found.append(_launch(config, path + (i,), doc, file))
    return found


def _launch(config: dict[str, Any], base: Path, doc: YamlDoc, file: Optional[str]) -> Invocation:
    def loc(*path: Any) -> SourceLoc:
        return SourceLoc(file=file, line=doc.line(base + path))

    loading = config.get("model_loading_config") or {}
    model_id = loading.get("model_id")
    inv = Invocation(form="ray-serve-llm", label=f"llm_configs[{base[-1]}] {model_id or ''} (line {loc().line})",
                     line=loc().line)
    source = loading.get("model_source")
    model = source if isinstance(source, str) and source else model_id
    if model:
        inv.model = Hint(str(model), "model_loading_config", loc("model_loading_config"))
    kwargs = config.get("engine_kwargs") or {}
    for key, value in kwargs.items():
        inv.entries.append(ConfigEntry(str(key), value, loc("engine_kwargs", key), spelling=f"engine_kwargs.{key}"))
    accelerator = config.get("accelerator_type")
    if accelerator:
        inv.gpu_name = Hint(gpu_from_accelerator(str(accelerator), "ray_accelerators"),
                            f"accelerator_type {accelerator}", loc("accelerator_type"))
    gpus = int(kwargs.get("tensor_parallel_size", 1) or 1) * int(kwargs.get("pipeline_parallel_size", 1) or 1)
    inv.gpu_count = Hint(gpus, "tensor_parallel_size x pipeline_parallel_size of engine_kwargs", loc("engine_kwargs"))
    env = ((config.get("runtime_env") or {}).get("env_vars")) or {}
    inv.env = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    inv.notes.append(Note(level="info", loc=loc(), message=(
        "Ray Serve LLM starts a vLLM engine per replica with engine_kwargs as its engine arguments; they are read as "
        "the vLLM flags of the same names")))
    return inv
