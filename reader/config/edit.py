"""What-if edits: the same deployment with some flags set to other values.

The diagnosis and the sweep change a few flags and resolve again, so every default that depends
on the changed flag (a clamp, a tier, a derived budget) moves exactly as vLLM would move it.
"""
from __future__ import annotations

from typing import Any

from ..errors import ReaderError
from ..versions import parse_version
from .flagtable import flag_table
from .load import _serving_config, _speculative
from .model import Deployment, GivenFlag


def with_flags(deployment: Deployment, changes: dict[str, Any]) -> Deployment:
    """A copy of the deployment with `changes` ({dest: value}) given as if the user had written them."""
    table = flag_table(parse_version(deployment.vllm_version_tag))
    flags = {dest: flag.model_copy() for dest, flag in deployment.flags.items()}
    for dest, value in changes.items():
        option = table.by_dest.get(dest)
        if option is None:
            raise ReaderError(f"vLLM {deployment.vllm_version_tag} has no setting '{dest}'.", key=dest)
        if value is None:
            flags.pop(dest, None)
            continue
        flags[dest] = GivenFlag(dest=dest, option=option, spelling=option, value=value, raw=str(value),
                                notes=["what-if change"])
    edited = deployment.model_copy(update={"flags": flags})
    edited.serving = _serving_config(flags, deployment.source)
    edited.speculative = _speculative(flags)
    return edited
