"""`vllm-reader read-log LOG`: what a vLLM log says, the launch rebuilt from it, its memory beside the prediction."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import GpuOpt, GpusOpt, ModelOpt, VersionOpt, load_options, write_output


def register(app: typer.Typer) -> None:
    @app.command("read-log")
    def read_log(
        log: Annotated[str, typer.Argument(help="A vLLM log file (`vllm serve` output, `kubectl logs`, `docker logs`), "
                                                "or - for standard input.", show_default=False)],
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        gpus: GpusOpt = None,
        model: ModelOpt = None,
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="text|markdown|json")] = "text",
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write the report to a file.")] = None,
    ) -> None:
        """Read a vLLM log: release, arguments, engine config, measured memory, refusal, stats lines."""
        from ..logs.report import log_report, read_text_arg
        from ..render.log_view import render_log_report

        text, source = read_text_arg(log)
        report = log_report(text, source, load_options(vllm_version, gpu, gpus, model))
        write_output(render_log_report(report, fmt), output)
