"""Generate outputs/skill-vllm-scheduler-reader.md from the rules, the defaults table and a worked diagnosis."""
from __future__ import annotations

import re

from .. import __version__
from ..versions import format_version, known_versions, newest_version

SKILL_NAME = "skill-vllm-scheduler-reader.md"
WORKED_EXAMPLE = "fixtures/examples/llama-3.3-70b-fp8-h100-128-clients.yaml"
CATALOG_VERSIONS = ("0.6.3", "0.8.5", "0.10.0", "0.14.0", "0.18.0", "0.24.0", "0.28.0", "0.33.0")


def generate(example: str = WORKED_EXAMPLE) -> str:
    """The document; the worked example's path is read relative to the current directory (the repository)."""
    from ..config.context import LoadOptions
    from ..config.load import load_deployment
    from ..config.resolve import resolve
    from .markdown import render
    from .report import render_diagnosis
    from ..rules_engine.loader import load_rules
    from ..versions import parse_version
    from ..diagnose.run import diagnose
    from ..diagnose.scenario import slos_from
    from ..evidence.verdict import MIN_SCORE

    ruleset = load_rules()
    rules = sorted(ruleset.rules, key=lambda r: r.id)
    rows = [{"id": r.id, "severity": r.severity, "theme": r.theme, "versions": r.versions_text(),
             "name": r.spec.name, "message": r.spec.message} for r in rules]
    per_version = [(v, [r.id for r in rules if r.active(parse_version(v))]) for v in CATALOG_VERSIONS]
    resolved = resolve(load_deployment(example, LoadOptions()))
    worked = render_diagnosis(diagnose(resolved, slos_ms=slos_from(resolved), modes=("naive", "continuous",
                                                                                     "chunked")), "markdown")
    counts = {s: sum(1 for r in rules if r.severity == s) for s in ("error", "warning", "info")}
    return render("skill.md.j2", newest=format_version(newest_version()), tool_version=__version__,
                  util_default="0.9 up to 0.19.x, 0.92 from 0.20.0",
                  seqs_default="1024 on >= 70 GiB GPUs (not A100), else 256 (V1, `vllm serve`)",
                  tokens_default="8192 on >= 70 GiB GPUs (not A100; 16384 on >= 160 GiB from 0.28.0), else 2048",
                  rule_count=len(rules), errors=counts["error"], warnings=counts["warning"], infos=counts["info"],
                  min_score=MIN_SCORE, per_version=per_version, rules=rows, example=example,
                  worked=_demote(worked), known=len(known_versions()))


def _demote(markdown: str) -> str:
    """The worked report sits under a level-2 heading: its headings move down two levels."""
    return re.sub(r"^(#{1,4}) ", lambda m: "#" * min(len(m.group(1)) + 2, 6) + " ", markdown, flags=re.M)
