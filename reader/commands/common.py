"""Options every config-reading command shares, and the load -> resolve step they all start with.

Only typer and the standard library are imported at module level (CLI start-up time).
"""
from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

ConfigArg = Annotated[str, typer.Argument(help="The config: vLLM --config YAML, a shell script, a Kubernetes/Helm/"
                                               "compose/SkyPilot manifest, or vLLM benchmark JSON.",
                                          show_default=False)]
VersionOpt = Annotated[Optional[str], typer.Option("--vllm-version", help="vLLM version to check against "
                                                   "(default: from the image tag, else the newest known).")]
GpuOpt = Annotated[Optional[str], typer.Option("--gpu", help="GPU type, e.g. H100-SXM (see `catalog gpus`).")]
GpusOpt = Annotated[Optional[int], typer.Option("--gpus", min=1, help="Number of GPUs available to the deployment.")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Catalog model id, or a local config.json, for a "
                                                 "model the config names by a local path.")]
WorkloadOpt = Annotated[Optional[str], typer.Option("--workload", help="Workload file (YAML/JSON spec, or a JSONL/CSV "
                                                    "trace) or a preset name (chat, rag, summarization, code).")]
SetOpt = Annotated[Optional[list[str]], typer.Option("--set", help="KEY=VALUE for a $(VAR)/${VAR} placeholder the "
                                                     "config leaves undefined (repeatable).")]
PickOpt = Annotated[Optional[int], typer.Option("--pick", min=1, help="Which vLLM launch to read when the file holds "
                                                "several (1-based).")]
UsageOpt = Annotated[str, typer.Option("--usage-context", help="serve (vllm serve / API server) or llm (offline "
                                       "LLM class): vLLM's defaults differ.")]


def parse_set(values: Optional[list[str]]) -> dict[str, str]:
    from ..errors import ReaderError

    out: dict[str, str] = {}
    for item in values or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ReaderError(f"--set expects KEY=VALUE, got '{item}'.", key="--set")
        out[key.strip().lstrip("$").strip("(){}")] = value
    return out


def load_options(vllm_version: Optional[str] = None, gpu: Optional[str] = None, gpus: Optional[int] = None,
                 model: Optional[str] = None, workload: Optional[str] = None, set_values: Optional[list[str]] = None,
                 pick: Optional[int] = None, usage_context: str = "serve", slo_ttft: Optional[float] = None,
                 slo_itl: Optional[float] = None) -> Any:
    from ..config.context import LoadOptions, SLO
    from ..errors import ReaderError

    if usage_context not in ("serve", "llm"):
        raise ReaderError(f"--usage-context must be 'serve' or 'llm', not '{usage_context}'.", key="--usage-context")
    return LoadOptions(vllm_version=vllm_version, gpu=gpu, gpu_count=gpus, model=model, workload=workload,
                       usage_context=usage_context if usage_context != "serve" else None,
                       slo=SLO(ttft_p99_ms=slo_ttft, itl_p99_ms=slo_itl), set=parse_set(set_values), pick=pick)


def load_and_resolve(config: str, options: Any) -> Any:
    """load -> resolve, the first two stages of every command that reads a config."""
    from ..config.load import load_deployment
    from ..config.resolve import resolve

    deployment = load_deployment(config, options)
    return resolve(deployment, model_override=options.model)


def write_output(text: str, output: Optional[str]) -> None:
    from pathlib import Path

    if output:
        Path(output).write_text(text)
    else:
        typer.echo(text, nl=not text.endswith("\n"))
