"""The winner as a launch: the `vllm serve` arguments of one replica and the context vllm-reader needs to
read it back (version, GPU, the replica's share of the traffic, the SLOs).

How each value must be spelled for the release (a false boolean as its `--no-` form, a JSON option as
one string) is decided here, from the release's flag table; the renderers only lay the text out.
"""
from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel

from ..config.flagtable import flag_table
from ..sim.workload import Workload, WorkloadSpec

TRACE_FILE = "workload.jsonl"


class LaunchArg(BaseModel):
    option: str  # the canonical long option at the release, e.g. "--max-num-seqs"
    value: Any = None
    form: str = "value"  # value, switch (no value), negated (the --no- form), json (one JSON string), list


class Launch(BaseModel):
    model: str
    vllm_version: str
    gpu: str
    gpu_count: int  # GPUs of one replica
    replicas: int
    args: list[LaunchArg]
    context: dict[str, Any]  # the `# vllm-reader:` comment block
    trace: Optional[list[dict[str, Any]]] = None  # the replica's requests, when the workload is a trace


def build_launch(resolved: Any, share: "WorkloadSpec | Workload", slos_ms: dict[str, float],
                 replicas: int) -> Launch:
    """One replica's launch from its resolved deployment (the flags it was given, in order)."""
    table = flag_table(resolved.version_tuple)
    args = []
    for dest, flag in resolved.deployment.flags.items():
        if dest == "model" or flag.value is None:
            continue
        args.append(_arg(flag.option, flag.value, table.options.get(flag.option, {})))
    trace = None
    if isinstance(share, Workload):
        trace = _trace_rows(share)
        workload: Any = TRACE_FILE
    else:
        workload = share.model_dump(mode="json", exclude_none=True, exclude={"preset"})
    slo = {f"{k}_p99_ms": v for k, v in slos_ms.items()}
    context = {"vllm_version": resolved.version, "gpu": resolved.gpu.id, "gpu_count": resolved.gpu_count,
               "workload": workload}
    if slo:
        context["slo"] = slo
    model = resolved.deployment.model or resolved.require_model().id
    return Launch(model=model, vllm_version=resolved.version, gpu=resolved.gpu.id, gpu_count=resolved.gpu_count,
                  replicas=replicas, args=args, context=context, trace=trace)


def _arg(option: str, value: Any, spec: dict[str, Any]) -> LaunchArg:
    if isinstance(value, bool):
        if value:
            return LaunchArg(option=option, value=True, form="switch" if spec.get("action") != "StoreBoolean"
                             else "value")
        if spec.get("neg"):
            return LaunchArg(option=spec["neg"][0], value=True, form="negated")
        return LaunchArg(option=option, value=False)
    if isinstance(value, dict):
        return LaunchArg(option=option, value=value, form="json")
    if isinstance(value, (list, tuple)):
        return LaunchArg(option=option, value=list(value), form="list")
    return LaunchArg(option=option, value=value)


def _trace_rows(wl: Workload) -> list[dict[str, Any]]:
    rows = []
    for i in range(wl.num_requests):
        row: dict[str, Any] = {"arrival_time": float(wl.arrival[i]), "prompt_len": int(wl.prompt_len[i]),
                               "output_len": int(wl.output_len[i])}
        if wl.prefix_group[i] >= 0:
            row.update(prefix_group=int(wl.prefix_group[i]), prefix_len=int(wl.prefix_len[i]))
        if wl.priority[i]:
            row["priority"] = int(wl.priority[i])
        rows.append(row)
    return rows
