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
SloTtftOpt = Annotated[Optional[float], typer.Option("--slo-ttft-p99", min=0.001, help="TTFT P99 target, ms.")]
SloItlOpt = Annotated[Optional[float], typer.Option("--slo-itl-p99", min=0.001, help="ITL P99 target, ms.")]


def write_output(text: str, output: Optional[str]) -> None:
    from pathlib import Path

    if output:
        Path(output).write_text(text)
    else:
        typer.echo(text, nl=not text.endswith("\n"))


@contextmanager
def bad_input_exits() -> Iterator[None]:
    """A ReaderError raised inside becomes its one-paragraph message and exit 2 within the app itself, as
    reader.cli.main makes it: a caller of the typer app (CliRunner, embedding) gets the same exit code."""
    from ..errors import EXIT_BAD_INPUT, ReaderError

    try:
        yield
    except ReaderError as err:
        from ..cli import debug_enabled

        if debug_enabled():
            raise
        typer.echo(err.render(), err=True)
        raise typer.Exit(EXIT_BAD_INPUT)
