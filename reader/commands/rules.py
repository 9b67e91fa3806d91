"""`vllm-reader rules`: the rule catalog (optionally only the rules active for one vLLM version), or the
feature compatibility matrix for a version (`--matrix`)."""
from __future__ import annotations

from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("rules")
    def rules(
        vllm_version: Annotated[Optional[str], typer.Option("--vllm-version", help="Only the rules active for this "
                                                            "vLLM version (the matrix at this version with --matrix).")]
        = None,
        fmt: Annotated[str, typer.Option("--format", "-f", help="text, markdown or json.")] = "text",
        matrix: Annotated[bool, typer.Option("--matrix", help="Print the feature compatibility matrix instead.")]
        = False,
        theme: Annotated[Optional[str], typer.Option("--theme", help="Only this theme (flags, scheduler, "
                                                     "speculative, memory, parallelism, compat, input).")] = None,
        severity: Annotated[Optional[str], typer.Option("--severity", help="Only this severity.")] = None,
    ) -> None:
        """List the rules (id, severity, theme, versions), or show the compatibility matrix."""
        from ..errors import ReaderError
        from ..rules_engine.loader import load_rules
        from .common import write_output

        if fmt not in ("text", "markdown", "json"):
            raise ReaderError(f"--format must be text, markdown or json, not '{fmt}'.", key="--format")
        ruleset = load_rules()
        version = None
        if vllm_version is not None:
            from ..versions import choose_version

            version = choose_version(vllm_version)
        if matrix:
            from ..render.matrix_view import render_matrix

            write_output(render_matrix(ruleset, version.tag_str if version else None, fmt), None)
            return
        from ..render.rules_view import catalog_markdown, catalog_text
        from ..rules_engine.explain import catalog_rows

        selected = ruleset.active(version.tag) if version else list(ruleset.rules)
        if theme:
            selected = [r for r in selected if r.theme == theme]
        if severity:
            selected = [r for r in selected if r.severity == severity]
        rows = catalog_rows(selected)
        header = (f"{len(rows)} rules active for vLLM {version.tag_str} (of {len(ruleset.rules)})" if version
                  else f"{len(rows)} rules")
        if version and not version.exact:
            header += f"; {version.note()}"
        if fmt == "json":
            import json

            doc = {"vllm_version": version.tag_str if version else None, "count": len(rows), "rules": rows}
            write_output(json.dumps(doc, indent=2) + "\n", None)
        elif fmt == "markdown":
            write_output(catalog_markdown(rows, header), None)
        else:
            write_output(catalog_text(rows, header), None)
