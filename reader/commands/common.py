"""Options every config-reading command shares, and the load -> resolve step they all start with.

Only typer and the standard library are imported at module level (CLI start-up time).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Annotated, Iterator, Optional

import typer

from ..config.from_cli import load_and_resolve, load_options, parse_set  # noqa: F401  (the commands' imports)

ConfigArg = Annotated[str, typer.Argument(help="The config: vLLM --config YAML, a shell script, a Kubernetes/Helm/"
                                               "compose/SkyPilot manifest, or vLLM benchmark JSON.",
                                          show_default=False)]
VersionOpt = Annotated[Optional[str], typer.Option("--vllm-version", help="vLLM version to check against "
                                                   "(default: from the image tag, else the newest known).")]
GpuOpt = Annotated[Optional[str], typer.Option("--gpu", help="GPU type, e.g. H100-SXM (see `catalog gpus`).")]
GpusOpt = Annotated[Optional[int], typer.Option("--gpus", min=1, help="Number of GPUs available to the deployment.")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", help="The model's shape, in place of what the config "
                                                 "names: a Hugging Face id (local cache, shipped catalog, Hub), a model "
                                                 "folder or a config.json.")]
WorkloadOpt = Annotated[Optional[str], typer.Option("--workload", help="Workload file (YAML/JSON spec, or a JSONL/CSV "
                                                    "trace) or a preset name (chat, rag, summarization, code).")]
SetOpt = Annotated[Optional[list[str]], typer.Option("--set", help="KEY=VALUE for a $(VAR)/${VAR} placeholder the "
                                                     "config leaves undefined (repeatable).")]
PickOpt = Annotated[Optional[int], typer.Option("--pick", min=1, help="Which vLLM launch to read when the file holds "
                                                "several (1-based).")]
UsageOpt = Annotated[str, typer.Option("--usage-context", help="serve (vllm serve / API server) or llm (offline "
                                       "LLM class): vLLM's defaults differ.")]
CalibrationOpt = Annotated[Optional[str], typer.Option("--calibration", help="A calibration profile from "
                                                       "`vllm-reader calibrate` (default: the shipped H200 profile).")]
SloTtftOpt = Annotated[Optional[float], typer.Option("--slo-ttft-p99", min=0.001, help="TTFT P99 target, ms.")]
RayOpt = Annotated[Optional[str], typer.Option("--ray", help="Run the trials on an existing Ray cluster: its address, "
                                              "or 'auto' (needs pip install 'vllm-reader[ray]'; default: local "
                                              "processes).")]
SloItlOpt = Annotated[Optional[float], typer.Option("--slo-itl-p99", min=0.001, help="ITL P99 target, ms.")]


def write_output(text: str, output: Optional[str]) -> None:
    from pathlib import Path

    if output:
        from ..files import write_whole

        write_whole(Path(output), text)
    else:
        typer.echo(text, nl=not text.endswith("\n"))


def stop_if_vllm_refuses(resolved, config: str) -> None:
    """A config vLLM would refuse gets check's findings and exit 1, as `check` itself gives them: no figure is
    computed for a deployment that never starts."""
    from ..rules_engine.run import check_deployment

    report = check_deployment(resolved, config)
    if report.summary.errors:
        from ..render.findings import render_text

        text = render_text(report)
        typer.echo(text, nl=not text.endswith("\n"))
        raise typer.Exit(1)


@contextmanager
def located_in(resolved) -> Iterator[None]:
    """Bad input found after loading (a capacity or simulation stage refusing a value) names the setting; this
    adds the file and line where the config sets it, so the message points at the user's line."""
    from ..errors import ReaderError

    try:
        yield
    except ReaderError as err:
        flag = resolved.deployment.flags.get(err.key or "")
        if err.line is None and flag is not None and flag.loc is not None:
            err.file, err.line = flag.loc.file or resolved.deployment.source, flag.loc.line
        raise
