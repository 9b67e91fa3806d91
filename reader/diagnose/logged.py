"""A deployment read from a vLLM log that says how start-up ended: the log's word is the verdict, and
vllm-reader's own prediction (its rules, then its memory model with the log's measurements) is set
against it. Where they disagree the report says which side is missing: a rule to add, or a rule
that refuses what vLLM ran.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ..capacity.api import Capacity
from ..logs.reading import LogReading, Refusal
from .report import FindingRef
from ..evidence.verdict import Verdict, startup_verdict

_PLACEHOLDER = re.compile(r"\{[^}]*\}|\.\.\.")


def refusal_verdict(version: str, log: LogReading, errors: list[FindingRef], capacity: Capacity,
                    gpu_assumed: bool = False) -> Verdict:
    """vLLM refused to start: its own message is the verdict; the evidence says whether check foresaw it."""
    refusal = log.refusal
    assert refusal is not None
    verdict = agreement(refusal, errors, capacity)
    if gpu_assumed and not verdict.startswith("check agrees"):
        verdict += f" (the GPU was not given and {capacity.gpu} was assumed: give --gpu before reading this as a gap)"
    evidence = [f"vLLM {log.release or version} printed at line {refusal.line}: {refusal.message}", verdict]
    if refusal.estimated_max_model_len:
        evidence.append(f"longest max_model_len that fits, by vLLM's own estimate: {refusal.estimated_max_model_len:,}")
    return startup_verdict(f"vLLM {log.release or version} refused to start (the log, line {refusal.line}): "
                           f"{refusal.message}", evidence)


def agreement(refusal: Refusal, errors: list[FindingRef], capacity: Capacity) -> str:
    rule = _matching_rule(refusal, errors)
    if rule is not None:
        return f"check agrees: rule {rule.rule} predicts this refusal ({rule.message})"
    predicted = capacity.startup_error
    if predicted is not None and predicted.kind == refusal.kind:
        return (f"check agrees: with the log's measured memory the capacity model predicts the same failure "
                f"({predicted.kind.replace('_', ' ')}: {predicted.message})")
    if errors:
        names = ", ".join(f"{e.rule}" for e in errors)
        return (f"check predicts a refusal for another reason ({names}: {errors[0].message}), not the one vLLM "
                f"printed: a rule to add for '{_gist(refusal)}'")
    if predicted is not None:
        return (f"the capacity model predicts a different failure ({predicted.kind.replace('_', ' ')}) from the one "
                f"vLLM printed ({refusal.kind.replace('_', ' ')}): a rule to add for '{_gist(refusal)}'")
    return (f"check does not predict this refusal: no rule and no memory figure explains it, so it is a rule to add "
            f"('{_gist(refusal)}', vLLM {refusal.error_type})")


def started_disagreements(log: LogReading, errors: list[FindingRef]) -> list[str]:
    """Rules that refuse a configuration the log shows vLLM running."""
    return [f"vLLM started with this configuration (the log shows it serving), but rule {e.rule} says it refuses it: "
            f"{e.message}; the rule is wrong here" for e in errors]


def _matching_rule(refusal: Refusal, errors: list[FindingRef]) -> Optional[FindingRef]:
    if not errors:
        return None
    from ..rules_engine.loader import load_rules

    rules = load_rules()
    for error in errors:
        rule = rules.find(error.rule)
        texts = [text for _, text in rule.vllm_messages] if rule is not None else []
        if any(_same_message(text, refusal.message) for text in texts):
            return error
    if refusal.kind == "other" and len(errors) == 1 and "cause is not in this part" in refusal.message:
        return errors[0]  # the log lost the cause; the one refusal check predicts is the likely one
    return None


def _same_message(template: str, message: str) -> bool:
    """vLLM's message with its placeholders filled: its longest literal piece appears in what was printed."""
    pieces = sorted((p.strip(" .,()") for p in _PLACEHOLDER.split(template)), key=len, reverse=True)
    longest = pieces[0] if pieces else ""
    return len(longest) >= 16 and _norm(longest) in _norm(message)


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("`", "").split())


def _gist(refusal: Refusal) -> str:
    text = refusal.message
    return text if len(text) <= 120 else text[:117] + "..."


def logged(resolved: Any) -> Optional[LogReading]:
    return resolved.deployment.log
