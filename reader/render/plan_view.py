"""A plan as Markdown (Jinja2, with a Mermaid Pareto chart), JSON (versioned schema) and the winner's files."""
from __future__ import annotations

import json
from typing import Any, Optional

from ..errors import ReaderError
from ..plan.result import Candidate, Plan, Point
from .calibration_view import calibration_line
from .charts import Chart, quadrant
from .launch import CONFIG_FILE, launch_files, serve_command
from .markdown import code, md, render
from .report import ms

FORMATS = ("markdown", "json")
OUTCOMES = {"planned": "planned", "refused_by_rules": "refused by the rules", "does_not_start": "does not start",
            "below_floor": "cannot meet an SLO", "needs_more_gpus": "needs more GPUs", "slos_missed": "misses the SLOs",
            "not_cheaper": "not cheaper", "skipped": "skipped (budget)"}
KNOB_NAMES = {"max_num_seqs": "max_num_seqs", "max_num_batched_tokens": "max_num_batched_tokens",
              "enable_chunked_prefill": "chunked prefill", "kv_cache_dtype": "KV cache dtype",
              "gpu_memory_utilization": "gpu_memory_utilization", "speculative": "speculative decoding",
              "max_model_len": "max_model_len"}


def render_plan(plan: Plan, fmt: str = "markdown") -> str:
    plan = with_files(plan)
    if fmt == "markdown":
        return markdown(plan)
    if fmt == "json":
        return json.dumps(plan.model_dump(mode="json"), indent=2) + "\n"
    raise ReaderError(f"unknown format '{fmt}': expected one of {', '.join(FORMATS)}.", key="--format")


def with_files(plan: Plan) -> Plan:
    """The plan with the winner's files filled in (what `plan --write DIR` writes)."""
    if plan.winner is None or plan.files:
        return plan
    return plan.model_copy(update={"files": launch_files(plan.winner.launch, file_header(plan))})


def file_header(plan: Plan) -> list[str]:
    w = plan.winner
    assert w is not None
    c = plan.candidates[w.candidate]
    lines = [f"Written by vllm-reader plan for {plan.model} (vLLM {plan.vllm_version}).",
             f"One replica of {w.replicas}: {c.gpus} x {c.gpu}{_parallel(c)}; run {w.replicas} behind a load balancer."
             if w.replicas > 1 else f"One replica: {c.gpus} x {c.gpu}{_parallel(c)}.",
             f"Planned for {_load(plan, plan.traffic.total)} in all ({_load(plan, w.sizing.target_load)} per replica), "
             f"{_slo_words(plan)}; the comment block below holds one replica's share."]
    return lines


def markdown(plan: Plan) -> str:
    w = plan.winner
    return render("plan.md.j2", p=plan, headline=headline(plan), winner_rows=_winner_rows(plan) if w else [],
                  command=serve_command(w.launch) if w else None, config=plan.files.get(CONFIG_FILE),
                  files=sorted(plan.files), sizing=_sizing_lines(plan) if w else [], per_gpu=_per_gpu_rows(plan),
                  pareto_chart=_pareto_chart(plan), pareto=_pareto_rows(plan), shapes=_shape_rows(plan),
                  closest=_closest_lines(plan), assumptions=_assumptions(plan), ms=ms)


def headline(plan: Plan) -> str:
    w = plan.winner
    if w is None:
        return (f"**No configuration searched meets {md(_slo_words(plan))} at {md(_load(plan, plan.traffic.total))} "
                f"within {plan.max_gpus} GPUs.** See what it would take below.")
    c = plan.candidates[w.candidate]
    cost = ""
    if w.cost_per_hour is not None:
        cost = f", **${w.cost_per_hour:,.2f} per hour**"
        if w.cost_per_million_output_tokens is not None:
            cost += f" (${w.cost_per_million_output_tokens:,.3f} per million output tokens at the target load)"
    replicas = f"{w.replicas} replica{'s' if w.replicas > 1 else ''} of {c.gpus} x {c.gpu}{_parallel(c)}"
    return (f"**Plan: {md(replicas)} = {w.gpus_total} GPU{'s' if w.gpus_total > 1 else ''}**{cost}. It meets "
            f"{md(_slo_words(plan))} at {md(_load(plan, plan.traffic.total))} (each replica sized for "
            f"{md(_load(plan, w.sizing.sized_load))}, {plan.traffic.headroom:.0%} headroom), with vLLM "
            f"{md(plan.vllm_version)}{_knob_words(c)}.")


# ---- sections ---------------------------------------------------------------------------------------

def _winner_rows(plan: Plan) -> list[list[str]]:
    w = plan.winner
    c = plan.candidates[w.candidate]
    rows = [["GPUs per replica", md(f"{c.gpus} x {c.gpu}"), md(f"tensor parallel {c.tp}, pipeline parallel {c.pp}"
                                                              + (", expert parallel" if c.ep else ""))]]
    for key, value in c.settings.items():
        if key == "kv_cache_tokens":
            rows.append(["KV cache", md(f"{value:,} tokens per replica"), "capacity model"])
            continue
        pinned = key in plan.pinned or (key == "speculative" and "speculative_config" in plan.pinned)
        moved = key in c.changes or (key == "speculative" and "speculative_config" in c.changes)
        how = "kept from the config" if pinned else ("set by the search" if moved else
                                                      ("the workload's longest request, rounded up"
                                                       if key == "max_model_len" else "vLLM's default"))
        shown = "off" if key == "speculative" and value is None else _text(value)
        rows.append([md(KNOB_NAMES.get(key, key)), code(shown), how])
    return rows


def _sizing_lines(plan: Plan) -> list[str]:
    w = plan.winner
    s = w.sizing
    unit = plan.traffic.unit
    each = f": {_load(plan, s.target_load)} each" if w.replicas > 1 else ""
    lines = [f"{_replicas(w.replicas)} {'carry' if w.replicas > 1 else 'carries'} {_load(plan, plan.traffic.total)}"
             f"{each}, sized for {_load(plan, s.sized_load)}{' each' if w.replicas > 1 else ''} "
             f"({plan.traffic.headroom:.0%} headroom)."]
    if s.capacity is not None:
        bound = "at least " if s.capacity_is_lower_bound else "up to about "
        lines.append(f"One replica meets the SLOs {bound}{_load(plan, s.capacity)} (the highest load simulated "
                     f"that meets them), {s.headroom_pct:,.0f}% above its share of the target.")
        if w.replicas > 1:
            lines.append(f"The {w.replicas} replicas carry about {_load(plan, w.replicas * s.capacity)} in all "
                         "before the SLOs give way.")
    if s.above is not None and s.above_load is not None:
        a = s.above
        text = (f"Above that, at {_load(plan, s.above_load)} per replica: TTFT P99 {ms(a.ttft_p99_ms)}, ITL P99 "
                f"{ms(a.itl_p99_ms)}, {a.preemptions:,} preemptions")
        if s.above_overload:
            text += (f"; requests arrive {s.above_overload:.2f}x faster than they complete, so the queue (and TTFT) "
                     "grows for as long as the load lasts")
        lines.append(text + ".")
    if plan.traffic.kind in ("rate", "trace") and w.replicas > 1:
        c = plan.candidates[w.candidate]
        if w.replicas * c.gpus <= plan.gpus_per_node:
            lines.append(f"On one node, --data-parallel-size {w.replicas} runs the replicas in one server; vLLM "
                         "then balances requests between them itself (the plan assumes an even split).")
    return [line for line in lines if line] + ([f"Loads are in {unit}."] if unit != "req/s" else [])


def _per_gpu_rows(plan: Plan) -> list[list[str]]:
    rows = []
    for choice in plan.best_per_gpu:
        c = plan.candidates[choice.candidate]
        m = choice.metrics
        rows.append([md(c.gpu), md(_shape(c)), str(choice.replicas), str(choice.gpus_total),
                     f"${choice.cost_per_hour:,.2f}" if choice.cost_per_hour is not None else "-",
                     _changes(c), ms(m.ttft_p99_ms) if m else "n/a", ms(m.itl_p99_ms) if m else "n/a",
                     f"{m.output_throughput / c.gpus:,.0f}" if m else "n/a",
                     f"{choice.margin:.2f}" if choice.margin is not None else "n/a",
                     "**winner**" if plan.winner and choice.candidate == plan.winner.candidate else ""])
    return rows


def _pareto_points(plan: Plan) -> list[Point]:
    points = [p for p in plan.points if p.pareto]
    return sorted(points, key=lambda p: (p.metrics.itl_p99_ms or 0.0, -(p.output_per_gpu or 0.0)))


def _pareto_rows(plan: Plan) -> list[list[str]]:
    rows = []
    for i, p in enumerate(_pareto_points(plan), start=1):
        c = plan.candidates[p.candidate]
        rows.append([f"P{i}", md(_shape(c)), _changes(c), md(_load(plan, p.load)), str(p.replicas),
                     f"{p.output_per_gpu:,.0f}", ms(p.metrics.itl_p99_ms), ms(p.metrics.ttft_p99_ms),
                     "yes" if p.meets_slos else "no"])
    return rows


def _pareto_chart(plan: Plan) -> Optional[str]:
    points = _pareto_points(plan)
    if len(points) < 2:
        return None
    itl_top = max(p.metrics.itl_p99_ms or 0.0 for p in points) or 1.0
    tput_top = max(p.output_per_gpu or 0.0 for p in points) or 1.0
    chart = Chart(title="Pareto front: output tok/s per GPU against ITL P99", x_label="ITL P99",
                  y_label="output tok/s per GPU", x=[])
    dots = [(f"P{i}", (p.metrics.itl_p99_ms or 0.0) / itl_top, (p.output_per_gpu or 0.0) / tput_top)
            for i, p in enumerate(points, start=1)]
    return quadrant(chart, dots, x_range=(0.0, itl_top), y_range=(0.0, tput_top), x_unit="ms", y_unit="tok/s")


def _shape_rows(plan: Plan) -> list[list[str]]:
    rows = []
    for s in plan.shapes:
        b = s.bounds
        rows.append([md(s.gpu), md(s.layout), OUTCOMES[s.outcome],
                     f"{b.itl_floor_ms:,.1f} ms" if b else "-", f"{b.ttft_floor_ms:,.0f} ms" if b else "-",
                     str(s.min_replicas) if s.min_replicas else "-", str(s.replicas) if s.replicas else "-",
                     md(s.reason)])
    return rows


def _closest_lines(plan: Plan) -> list[str]:
    c = plan.closest
    if c is None:
        return []
    lines = []
    if c.point is not None:
        p = plan.points[c.point]
        cand = plan.candidates[p.candidate]
        lines.append(f"Nearest miss: {md(_shape(cand))}{' with ' + _changes(cand) if cand.changes else ''}, "
                     f"{p.replicas} replica(s) at {md(_load(plan, p.load))} each: TTFT P99 {ms(p.metrics.ttft_p99_ms)}, "
                     f"ITL P99 {ms(p.metrics.itl_p99_ms)}.")
    if c.closest_metric is not None:
        lines.append(f"Closest SLO: {c.closest_metric.upper()} P99.")
    for g in c.gaps:
        if g.best_p99_ms is None and g.floor_ms is None:
            continue  # nothing was simulated or sized: the reason is below
        lines.append(f"{g.metric.upper()} P99 target {g.target_ms:g} ms: lowest simulated {ms(g.best_p99_ms)}"
                     + (f", lowest floor of any shape {ms(g.floor_ms)}" if g.floor_ms is not None else "")
                     + (" (met by some configuration)" if g.met_somewhere else "") + ".")
    lines += [f"It would take: {md(n)}." for n in c.needs]
    return lines


def _assumptions(plan: Plan) -> list[str]:
    out = []
    if plan.prices:
        out.append("prices (USD per GPU-hour, as given with --price): "
                   + ", ".join(f"{g} ${p:g}" for g, p in plan.prices.items()))
    else:
        out.append("no prices given: plans are ranked by the number of GPUs, then by their margin to the SLOs (give "
                   "--price GPU=USD_PER_HOUR for each GPU type to rank by cost; vllm-reader ships no prices)")
    out.append(f"traffic: {plan.workload}; split evenly between replicas (a Poisson stream split at random stays "
               "Poisson; a trace is split round robin)")
    out.append(f"simulated with seed {plan.seed}; the same seed gives the same plan")
    if plan.calibration is not None:
        out.append(calibration_line(plan.calibration))
    else:
        out.append("step times: the roofline model calibrated on H200 measurements (fixtures/gpu/), extrapolated to "
                   "other GPUs from datasheet peaks; memory: the capacity model")
    if any(c.changes.get("kv_cache_dtype") == "fp8" for c in plan.candidates):
        out.append("an fp8 KV cache halves KV memory and bytes read; check the model's accuracy with it")
    return out + list(plan.notes)


# ---- words ---------------------------------------------------------------------------------------------

def _load(plan: Plan, value: float) -> str:
    unit = plan.traffic.unit
    return f"{value:,.0f} {unit}" if unit != "req/s" else f"{value:,.3g} req/s"


def _slo_words(plan: Plan) -> str:
    if not plan.slos_ms:
        return "the target load (no SLOs given)"
    return " and ".join(f"{k.upper()} P99 <= {v:g} ms" for k, v in plan.slos_ms.items())


def _replicas(n: int) -> str:
    return f"{n} replica{'s' if n != 1 else ''}"


def _parallel(c: Candidate) -> str:
    parts = ([f"TP{c.tp}"] if c.tp > 1 else []) + ([f"PP{c.pp}"] if c.pp > 1 else []) + (["EP"] if c.ep else [])
    return f" ({', '.join(parts)})" if parts else ""


def _shape(c: Candidate) -> str:
    return c.label


def _changes(c: Candidate) -> str:
    return ", ".join(code(f"{k}={_text(v)}") for k, v in c.changes.items()) or "defaults"


def _knob_words(c: Candidate) -> str:
    return f" and {_changes(c)}" if c.changes else " and vLLM's default scheduler knobs"


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, dict):
        return json.dumps(v)
    return str(v)
