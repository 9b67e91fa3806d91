"""`vllm-reader check --format sarif`: SARIF 2.1.0 for code-scanning UIs (GitHub, GitLab, Azure DevOps).

One run; the driver's rules are the rules that produced a result; each result points at the file
and line of the offending key when the loader knows it. Paths under the working directory are
written relative to it with uriBaseId %SRCROOT% (what GitHub code scanning expects); others as
absolute file: URIs. Validated against the official schema in tests (fixtures/sarif/).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = "https://github.com/vllm-project/vllm"


def artifact_uri(path: str, root: Path) -> dict[str, str]:
    """`path` relative to `root` (the resolved working directory) when under it, else an absolute URI."""
    p = Path(path)
    absolute = (p if p.is_absolute() else root / p).resolve()
    try:
        rel = absolute.relative_to(root)
        return {"uri": quote(rel.as_posix()), "uriBaseId": "%SRCROOT%"}
    except ValueError:
        return {"uri": absolute.as_uri()}


def _rule_descriptor(rule: Any) -> dict[str, Any]:
    spec = rule.spec
    words = "".join(part.capitalize() for part in spec.name.split("-"))
    help_text = f"{spec.fix}\n\nWhy: {spec.why}\nVersions: {rule.versions_text()}\nSource: {'; '.join(spec.source_list())}"
    return {
        "id": spec.id,
        "name": words,
        "shortDescription": {"text": spec.name.replace("-", " ")},
        "fullDescription": {"text": " ".join(spec.why.split())},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": LEVEL[spec.severity]},
        "properties": {"tags": [rule.theme, "vllm"], "versions": rule.versions_text(),
                       "source": spec.source_list()},
    }


def render_sarif(report: Any, ruleset: Any) -> str:
    import json

    from .. import __version__

    root = Path.cwd().resolve()
    used = list(dict.fromkeys(f.rule_id for f in report.findings))
    index = {rid: i for i, rid in enumerate(used)}
    results = []
    for f in report.findings:
        locations = []
        for loc in f.locations:
            physical: dict[str, Any] = {"artifactLocation": artifact_uri(loc.file, root)}
            if loc.line:
                physical["region"] = {"startLine": loc.line}
            entry: dict[str, Any] = {"physicalLocation": physical}
            if loc.key:
                entry["logicalLocations"] = [{"name": loc.key, "kind": "member"}]
            locations.append(entry)
        message = f.message + f" Fix: {f.fix}"
        if f.vllm_message:
            message += f" vLLM says: {f.vllm_message}"
        results.append({
            "ruleId": f.rule_id,
            "ruleIndex": index[f.rule_id],
            "level": LEVEL[f.severity],
            "message": {"text": message},
            "locations": locations,
            "partialFingerprints": {"vllmReader/v1": _fingerprint(f)},
            "properties": {"severity": f.severity, "theme": f.theme, "config": f.config, "source": f.source,
                           "facts": f.facts},
        })
    notifications = []
    for c in report.configs:
        if c.status == "bad-input":
            notifications.append({
                "level": "error",
                "message": {"text": f"{c.config}: {c.error}"},
                "locations": [{"physicalLocation": {"artifactLocation": artifact_uri(c.config, root)}}],
            })
        notifications += [_note(c, n, root) for n in c.notes]
    run = {
        "tool": {"driver": {
            "name": "vllm-reader",
            "version": __version__,
            "informationUri": INFO_URI,
            "rules": [_rule_descriptor(ruleset.get(rid)) for rid in used],
        }},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
        "invocations": [{
            "executionSuccessful": report.summary.bad_input == 0,
            "exitCode": report.summary.exit_code,
            "toolExecutionNotifications": notifications,
        }],
        "results": results,
        "properties": {"vllmVersions": sorted({c.vllm_version for c in report.configs if c.vllm_version}),
                       "failOn": report.summary.fail_on},
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _note(c: Any, note: Any, root: Path) -> dict[str, Any]:
    """A reading note (how the config was read, not a finding) as a tool notification of level note."""
    physical: dict[str, Any] = {"artifactLocation": artifact_uri(note.file or c.config, root)}
    if note.line:
        physical["region"] = {"startLine": note.line}
    return {"level": "note", "message": {"text": f"{c.config}: {note.message}"},
            "locations": [{"physicalLocation": physical}], "descriptor": {"id": "reading-note"}}


def _fingerprint(f: Any) -> str:
    import hashlib

    key = "|".join([f.rule_id, os.path.basename(f.config), ",".join(sorted(l.key or "" for l in f.locations))])
    return hashlib.sha256(key.encode()).hexdigest()[:32]
