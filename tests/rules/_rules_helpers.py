"""Shared helpers for the rules/check tests (no test functions here)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "fixtures" / "corpus"
RULE_FIXTURES = REPO / "fixtures" / "rules"
SARIF_SCHEMA = REPO / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
FINDINGS_SCHEMA = REPO / "reader" / "render" / "schemas" / "findings.schema.json"


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def check_text(tmp_path: Path, text: str, name: str = "serve.sh", version: Optional[str] = None,
               **options: Any) -> Any:
    """Run the checker on a config snippet; returns the CheckReport."""
    from reader.rules_engine.run import CheckOptions, check_files

    path = write(tmp_path, name, text)
    return check_files([path], CheckOptions(vllm_version=version, **options))


def fired(report: Any, severity: Optional[str] = None) -> set[str]:
    return {f.rule_id for f in report.findings if severity is None or f.severity == severity}


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """The CLI in-process, as `vllm-reader ARGS` (exit code, stdout, stderr)."""
    import contextlib
    import io

    from reader.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue(), err.getvalue()
