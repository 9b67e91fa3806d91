"""`vllm-reader explain RULE_ID`: what a rule checks, why it matters, an example, the fix, the versions, the source."""
from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain(
        rule_id: Annotated[str, typer.Argument(help="Rule id (VR201, case-insensitive) or rule name.",
                                               show_default=False)],
        fmt: Annotated[str, typer.Option("--format", "-f", help="text, markdown or json.")] = "text",
        run_example: Annotated[bool, typer.Option("--run-example/--no-run-example",
                                                  help="Run the rule's example through the checker and show the "
                                                       "finding it produces.")] = True,
    ) -> None:
        """Explain one rule: what it checks, why, an example, the fix, the versions and vLLM's source."""
        from ..errors import ReaderError
        from ..render.rules_view import explain_markdown, explain_text
        from ..rules_engine.explain import explain_data
        from ..rules_engine.loader import load_rules
        from ..rules_engine.run import did_you_mean
        from .common import write_output

        if fmt not in ("text", "markdown", "json"):
            raise ReaderError(f"--format must be text, markdown or json, not '{fmt}'.", key="--format")
        ruleset = load_rules()
        text = rule_id.strip()
        rule = ruleset.find(text)
        if rule is None:
            raise ReaderError(f"no rule '{text}'.{did_you_mean(text, ruleset)} `vllm-reader rules` lists them all.",
                              key="rule_id")
        data = explain_data(rule, run_example=run_example)
        if fmt == "json":
            import json

            write_output(json.dumps(data, indent=2, ensure_ascii=False) + "\n", None)
        elif fmt == "markdown":
            write_output(explain_markdown(data), None)
        else:
            write_output(explain_text(data), None)
