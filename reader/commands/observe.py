"""`vllm-reader observe SOURCE`: what a running vLLM did, from its Prometheus metrics, and what limited it."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import SloItlOpt, SloTtftOpt, write_output

FailOnOpt = Annotated[str, typer.Option("--fail-on", metavar="error|warning|never",
                                        help="Exit 1 when a finding is at least this severe (a missed SLO is a "
                                             "warning).")]


def register(app: typer.Typer) -> None:
    @app.command("observe")
    def observe(
        source: Annotated[Optional[list[str]], typer.Argument(
            help="A vLLM server's /metrics URL (scraped over --window), or saved scrapes (files or a folder; "
                 "several scrapes in one file are fine, .gz too).", show_default=False)] = None,
        window: Annotated[str, typer.Option("--window", help="How long to scrape a live URL (90, 90s, 5m).")] = "60s",
        interval: Annotated[str, typer.Option("--interval", help="Time between scrapes of a live URL.")] = "5s",
        until_idle: Annotated[bool, typer.Option("--until-idle", help="Stop scraping once traffic was seen and the "
                                                 "server is idle again: two scrapes in a row find it empty, its "
                                                 "counters unchanged (at most --window).")] = False,
        timeout: Annotated[str, typer.Option("--timeout", help="How long one HTTP request may take.")] = "10s",
        save: Annotated[Optional[str], typer.Option("--save", help="Keep the live scrapes in this file (.gz to "
                                                    "compress); observe reads it back later.")] = None,
        prometheus: Annotated[Optional[str], typer.Option("--prometheus", help="A Prometheus server that scrapes "
                                                          "vLLM (its base URL): read the series from it.")] = None,
        range_: Annotated[str, typer.Option("--range", help="With --prometheus: how far back from --end.")] = "15m",
        end: Annotated[str, typer.Option("--end", help="With --prometheus: the end of the range (unix seconds, "
                                         "RFC 3339, or now).")] = "now",
        step: Annotated[Optional[str], typer.Option("--step", help="With --prometheus: the query resolution "
                                                    "(default: the range over ~500 points, at least 1 s).")] = None,
        selector: Annotated[Optional[str], typer.Option(
            "--selector", help="With --prometheus: label matchers for one server, e.g. "
                               "'job=\"vllm\",instance=\"10.0.0.5:8000\"'.")] = None,
        served_model: Annotated[Optional[str], typer.Option("--served-model", help="The model_name label to read "
                                                            "when the endpoint serves several.")] = None,
        max_num_seqs: Annotated[Optional[int], typer.Option("--max-num-seqs", min=1, help="The server's "
                                                            "max_num_seqs (metrics do not say it).")] = None,
        max_num_batched_tokens: Annotated[Optional[int], typer.Option("--max-num-batched-tokens", min=1,
                                                                      help="The server's token budget.")] = None,
        slo_ttft_p99: SloTtftOpt = None,
        slo_itl_p99: SloItlOpt = None,
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="markdown|json|sarif")] = "markdown",
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write the report to a file.")] = None,
        fail_on: FailOnOpt = "never",
        progress: Annotated[Optional[bool], typer.Option(
            "--progress/--no-progress", help="A progress line on stderr while scraping a live URL (default: on a "
                                             "terminal outside CI; --progress elsewhere prints a line per "
                                             "scrape).", show_default=False)] = None,
    ) -> None:
        """Observe a running vLLM: its metrics over a window, the limiting default, and the evidence."""
        from ..errors import ReaderError
        from ..observe.durations import moment, seconds
        from ..observe.evidence import Settings
        from ..observe.report import build_report
        from ..observe.sources import LiveWindow, PrometheusRange, collect, save_scrapes
        from ..render.progress import ProgressLine
        from ..render.observe_view import render_observation

        if fail_on not in ("error", "warning", "never"):
            raise ReaderError(f"--fail-on must be error, warning or never, not '{fail_on}'.", key="--fail-on")
        if fmt not in ("markdown", "json", "sarif"):
            raise ReaderError(f"unknown format '{fmt}': expected one of markdown, json, sarif.", key="--format")
        plan = LiveWindow(window_s=seconds(window, "--window"), interval_s=seconds(interval, "--interval"),
                          until_idle=until_idle, timeout_s=seconds(timeout, "--timeout"))
        prom = None
        if prometheus:
            prom = PrometheusRange(url=prometheus, range_s=seconds(range_, "--range"), end=moment(end, "--end"),
                                   step_s=seconds(step, "--step") if step else None, selector=selector,
                                   timeout_s=plan.timeout_s)
        line = ProgressLine("observe", show=progress)
        try:
            collected = collect(list(source or []), plan, prom, line.say)
        finally:
            line.close()
        if save:
            save_scrapes(collected, save)
        slos = {k: v for k, v in (("ttft", slo_ttft_p99), ("itl", slo_itl_p99)) if v}
        report = build_report(collected, Settings(max_num_seqs=max_num_seqs,
                                                  max_num_batched_tokens=max_num_batched_tokens), slos, served_model)
        write_output(render_observation(report, fmt), output)
        missed = report.verdict is not None and any(not c.met for c in report.verdict.slo)
        raise typer.Exit(1 if missed and fail_on == "warning" else 0)
