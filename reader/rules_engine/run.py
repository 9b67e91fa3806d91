"""`vllm-reader check` as a function: configs in, one CheckReport out (the CLI only renders it).

Exit codes (README): 0 passed; 1 a finding at or above --fail-on (default error); 2 bad input (a
config that cannot be read, a bad option, a malformed rule file). With several configs (pre-commit
passes every changed file) the exit code is the highest over the configs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, ReaderError, did_you_mean as suggest

FAIL_ON = ("error", "warning", "never")
FORMATS = ("text", "markdown", "json", "sarif")


@dataclass
class CheckOptions:
    vllm_version: Optional[str] = None
    gpu: Optional[str] = None
    gpus: Optional[int] = None
    model: Optional[str] = None
    set_values: list[str] = field(default_factory=list)
    pick: Optional[int] = None
    usage_context: str = "serve"
    fail_on: str = "error"
    ignore: list[str] = field(default_factory=list)
    only: list[str] = field(default_factory=list)


def exit_code_for(findings: list[Any], fail_on: str, bad_input: bool) -> int:
    if bad_input:
        return EXIT_BAD_INPUT
    if fail_on == "never":
        return EXIT_OK
    levels = {"error"} if fail_on == "error" else {"error", "warning"}
    return EXIT_FINDINGS if any(f.severity in levels for f in findings) else EXIT_OK


def resolve_rule_ids(ids: list[str], ruleset: Any, option: str) -> list[str]:
    out = []
    for raw in ids:
        for part in str(raw).split(","):
            part = part.strip()
            if not part:
                continue
            rule = ruleset.find(part)
            if rule is None:
                raise ReaderError(f"{option} {part}: no such rule.{did_you_mean(part, ruleset)} "
                                  "`vllm-reader rules` lists them.", key=option)
            out.append(rule.id)
    return out


def did_you_mean(text: str, ruleset: Any) -> str:
    import difflib

    probe = text.strip().upper() if text.strip()[:2].lower() == "vr" else text.strip().lower()
    candidates = [r.id for r in ruleset.rules] + [r.spec.name for r in ruleset.rules]

    def score(c: str) -> tuple[float, int]:
        same_place = sum(1 for a, b in zip(probe, c) if a == b)
        return (difflib.SequenceMatcher(None, probe, c).ratio(), same_place)

    ranked = sorted((c for c in candidates if score(c)[0] >= 0.5 or c.startswith(probe)), key=score, reverse=True)[:3]
    rules = [ruleset.find(c) for c in ranked]
    return suggest([r.id for r in rules], {r.id: r.spec.name for r in rules})


def check_files(configs: list[str], opts: CheckOptions, ruleset: Any = None) -> Any:
    from ..config.from_cli import load_and_resolve, load_options
    from .findings import ConfigResult
    from .loader import load_rules

    if opts.fail_on not in FAIL_ON:
        raise ReaderError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not '{opts.fail_on}'.", key="--fail-on")
    ruleset = ruleset or load_rules()
    ignored = set(resolve_rule_ids(opts.ignore, ruleset, "--ignore"))
    only = resolve_rule_ids(opts.only, ruleset, "--rule") or None
    results, findings, skipped = [], [], []
    for config in configs:
        try:
            options = load_options(opts.vllm_version, opts.gpu, opts.gpus, opts.model, None, opts.set_values or None,
                                   opts.pick, opts.usage_context)
            resolved = load_and_resolve(config, options)
        except ReaderError as err:
            results.append(ConfigResult.model_construct(config=config, status="bad-input", vllm_version=None,
                                                        vllm_version_origin=None, engine=None, form=None,
                                                        rules_evaluated=0, error=err.render()))
            continue
        result, mine, skips = _check_one(resolved, config, ruleset, only, ignored, startup_memory(resolved))
        results.append(result)
        findings += mine
        skipped += skips
    return _report(results, findings, skipped, opts.fail_on)


def check_deployment(resolved: Any, config: str, fail_on: str = "error") -> Any:
    """The CheckReport of one deployment another command has already loaded and resolved (`capacity`,
    `simulate` and `sweep` stop with it when vLLM would refuse the config)."""
    from .loader import load_rules

    result, findings, skipped = _check_one(resolved, config, load_rules(), None, set())
    return _report([result], findings, skipped, fail_on)


def startup_memory(resolved: Any) -> dict[str, Any]:
    """The capacity model's start-up verdict (`memory.*` facts), when the model and GPU are known and the values
    can be modelled; otherwise none, and the memory rules are skipped as undecided."""
    if resolved.model is None or resolved.gpu is None:
        return {}
    from ..capacity.api import compute_capacity
    from ..capacity.startup import memory_facts
    from ..pipeline import capacity_request

    try:
        return memory_facts(compute_capacity(capacity_request(resolved)))
    except (ReaderError, ValueError, ZeroDivisionError):
        return {}


def _check_one(resolved: Any, config: str, ruleset: Any, only: Optional[list[str]],
               ignored: set[str], extra_facts: Optional[dict[str, Any]] = None) -> tuple[Any, list[Any], list[Any]]:
    from .engine import check_resolved
    from .findings import ConfigResult

    evaluated = check_resolved(resolved, ruleset, config=config, only=only, extra_facts=extra_facts)
    d = resolved.deployment
    result = ConfigResult.model_construct(
        config=config, status="checked", vllm_version=resolved.version,
        vllm_version_origin=resolved.version_origin, engine=resolved.engine, form=d.form,
        rules_evaluated=evaluated.rules_evaluated, model=resolved.model_named,
        model_source=resolved.model_how if d.model or resolved.model else None, error=None,
        notes=[_reading_note(n) for n in resolved.reading_notes()])
    return (result, [f for f in evaluated.findings if f.rule_id not in ignored],
            [s for s in evaluated.skipped if s.rule_id not in ignored])


def _reading_note(note: Any) -> Any:
    from .findings import ReadingNote

    loc = note.loc
    return ReadingNote.model_construct(message=note.message, file=loc.file if loc else None,
                                       line=loc.line if loc and loc.line else None, key=note.key)


def _report(results: list[Any], findings: list[Any], skipped: list[Any], fail_on: str) -> Any:
    from .. import __version__
    from .findings import CheckReport, Summary, ToolInfo

    bad = sum(1 for r in results if r.status == "bad-input")
    code = exit_code_for(findings, fail_on, bad > 0)
    versions = {r.vllm_version for r in results if r.vllm_version}
    summary = Summary.model_construct(
        errors=sum(1 for f in findings if f.severity == "error"),
        warnings=sum(1 for f in findings if f.severity == "warning"),
        infos=sum(1 for f in findings if f.severity == "info"),
        configs=len(results), bad_input=bad, fail_on=fail_on, exit_code=code)
    return CheckReport.model_construct(
        schema_version=1, tool=ToolInfo.model_construct(name="vllm-reader", version=__version__),
        vllm_version=versions.pop() if len(versions) == 1 else None, configs=results, findings=findings,
        skipped=skipped, summary=summary)
