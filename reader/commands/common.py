"""Options every config-reading command shares, and the load -> resolve step they all start with.

Only typer and the standard library are imported at module level (CLI start-up time).
"""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..config.from_cli import load_and_resolve, load_options, parse_set  # noqa: F401  (the commands' imports)

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


def write_output(text: str, output: Optional[str]) -> None:
    from pathlib import Path

    if output:
        Path(output).write_text(text)
    else:
        typer.echo(text, nl=not text.endswith("\n"))
