"""The body of `vllm-reader check`, apart from its typer signature (reader/commands/check.py, imported at every
start of `check`): what it needs is imported inside run_check(), once the arguments are known to be good."""
from __future__ import annotations

import sys
from typing import Optional


def run_check(configs: list[str], vllm_version: Optional[str] = None, fmt: str = "text", fail_on: str = "error",
              gpu: Optional[str] = None, gpus: Optional[int] = None, model: Optional[str] = None,
              set_values: Optional[list[str]] = None, pick: Optional[int] = None, usage_context: str = "serve",
              ignore: Optional[list[str]] = None, rule: Optional[list[str]] = None, verbose: bool = False,
              output: Optional[str] = None) -> int:
    """Check the configs, write the report (stdout or `output`), and return the exit code."""
    from ..errors import ReaderError
    from ..rules_engine.run import FORMATS, CheckOptions, check_files

    if fmt not in FORMATS:
        raise ReaderError(f"--format must be one of {', '.join(FORMATS)}, not '{fmt}'.", key="--format")
    opts = CheckOptions(vllm_version=vllm_version, gpu=gpu, gpus=gpus, model=model, set_values=set_values or [],
                        pick=pick, usage_context=usage_context, fail_on=fail_on, ignore=ignore or [],
                        only=rule or [])
    report = check_files(configs, opts)
    text = _render(report, fmt, verbose)
    if output:
        from pathlib import Path

        Path(output).write_text(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    for c in report.configs:
        if c.status == "bad-input":
            print(c.error, file=sys.stderr)
    return report.summary.exit_code


def _render(report, fmt: str, verbose: bool) -> str:
    if fmt == "text":
        from ..render.findings import render_text

        return render_text(report, verbose=verbose)
    if fmt == "markdown":
        from ..render.findings import render_markdown

        return render_markdown(report)
    if fmt == "json":
        from ..render.findings import render_json

        return render_json(report)
    from ..render.sarif import render_sarif
    from ..rules_engine.loader import load_rules

    return render_sarif(report, load_rules())
