"""A vLLM version outside the checked releases, said loudly: the nearest release's tables and rules
answer for it, and the rules whose version range does not reach it are named.

The rules are data with version ranges (rules/); a rule checked at the nearest release but whose range
excludes the user's release is applied beyond what its sources cover. Rules about how the input was read
(theme `input`) describe this tool, not vLLM, and are left out.
"""
from __future__ import annotations

from ..versions import VersionChoice
from .model import Note


def outside_tables_note(choice: VersionChoice) -> Note:
    return Note(level="warning", key="vllm_version", message=f"{choice.note()}. {_rules_sentence(choice)}")


def _rules_sentence(choice: VersionChoice) -> str:
    from ..rules_engine.loader import load_rules

    want = choice.requested_tuple
    active = [rule for rule in load_rules().active(choice.tag) if rule.theme != "input"]
    beyond = [rule.id for rule in active if want is None or not rule.active(want)]
    if not beyond:
        return (f"Every rule checked at {choice.tag_str} has a version range that includes {choice.requested}; "
                f"anything vLLM changed after {choice.tag_str} is unknown to them")
    return (f"{len(beyond)} of the {len(active)} rules checked at {choice.tag_str} have a version range that does "
            f"not include {choice.requested} and are applied beyond it: {', '.join(beyond)}")
