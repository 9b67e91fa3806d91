"""The rules stage as the diagnosis needs it: findings for a deployment, and whether a what-if is refused."""
from __future__ import annotations

from typing import Any

from .report import FindingRef


def findings_for(resolved: Any) -> list[FindingRef]:
    from ..rules_engine.engine import check_resolved
    from ..rules_engine.loader import load_rules  # cached

    out = []
    for finding in check_resolved(resolved, load_rules()).findings:
        loc = finding.locations[0] if finding.locations else None
        out.append(FindingRef(rule=finding.rule_id, severity=finding.severity, message=finding.message,
                              fix=finding.fix, file=loc.file if loc else None, line=loc.line if loc else None))
    return out


def rule_errors(resolved: Any) -> list[str]:
    """Messages of the error-level findings: a change that triggers one is never recommended."""
    return [f"{f.rule} {f.message}" for f in findings_for(resolved) if f.severity == "error"]
