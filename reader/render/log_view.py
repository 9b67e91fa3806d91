"""Text, Markdown and JSON views of a `LogReport` (reader.logs.report): what the log says, the launch
rebuilt from it, each memory term logged beside predicted, the refusal, and what the stats lines saw.

    render_log_report(report: LogReport, fmt: "text" | "markdown" | "json") -> str
"""
from __future__ import annotations

import json
from typing import Optional

from ..errors import ReaderError
from ..logs.compare import MemoryComparison, TermRow
from ..logs.report import LogReport
from ..logs.stats import HIGH_KV_PCT, StatsSummary
from .markdown import code, md

FORMATS = ("text", "markdown", "json")


def render_log_report(report: LogReport, fmt: str = "text") -> str:
    fmt = (fmt or "text").lower()
    if fmt == "json":
        return json.dumps(_json(report), indent=2)
    if fmt not in ("text", "markdown"):
        raise ReaderError(f"unknown format '{fmt}': expected one of {', '.join(FORMATS)}", key="--format")
    markdown = fmt == "markdown"
    parts = [_head(report, markdown), _launch(report, markdown), _memory(report.memory, markdown),
             _kv(report, markdown), _refusal(report, markdown), _stats(report.stats, report, markdown),
             _notes(report, markdown)]
    return "\n\n".join(p for p in parts if p) + "\n"


def _json(report: LogReport) -> dict:
    data = report.model_dump(mode="json")
    if report.memory is not None:
        for row, dumped in zip(report.memory.rows, data["memory"]["rows"]):
            dumped["difference_pct"] = row.difference_pct
    return data


def _title(text: str, markdown: bool) -> str:
    return f"## {text}" if markdown else text + ":"


def _head(report: LogReport, markdown: bool) -> str:
    r = report.reading
    if r.release:
        release = f"vLLM {r.release_printed or r.release} (line {r.release_line})"
    else:
        release = "release not printed" + (f" (its message formats fit {r.release_range})" if r.release_range else "")
    engine = f"{r.engine.upper()} engine ({r.engine_how})" if r.engine else "engine not stated"
    procs = ", ".join(r.processes) if r.processes else "one process, untagged"
    first = f"# vLLM log: {md(r.source)}" if markdown else f"vLLM log: {r.source}"
    return "\n".join([first, "", f"{r.records:,} records, {r.recognised:,} recognised; {release}; {engine}; "
                                 f"processes: {procs}"])


def _launch(report: LogReport, markdown: bool) -> str:
    launch = report.launch
    if launch is None:
        return ""
    lines = [_title("Launch rebuilt from the log", markdown)]
    lines.append(code(launch.command) if markdown else "  " + launch.command)
    model = f"{launch.model} ({launch.model_how})" if launch.model else f"not resolved ({launch.model_how})"
    gpu = f"{launch.gpu} ({launch.gpu_how})" if launch.gpu else (launch.gpu_how or "unknown")
    for label, value in (("model", model), ("GPU", gpu), ("vLLM", f"{launch.vllm_version} ({launch.version_how})")):
        lines.append(f"- {label}: {md(value) if markdown else value}" if markdown else f"  {label}: {value}")
    for note in launch.notes:
        lines.append(f"- {md(note)}" if markdown else f"  note: {note}")
    return "\n".join(lines)


def _num(value: Optional[float], unit: str) -> str:
    if value is None:
        return "-"
    if unit == "GiB":
        return f"{value:.2f} GiB"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:,.0f}"


def _diff(row: TermRow) -> str:
    pct = row.difference_pct
    return "-" if pct is None else f"{pct:+.1f}%"


def _memory(memory: Optional[MemoryComparison], markdown: bool) -> str:
    if memory is None:
        return ""
    title = _title("Memory per GPU: logged by vLLM beside predicted by vllm-reader", markdown)
    rows = [r for r in memory.rows if r.logged is not None or r.term in ("available_kv", "kv_tokens")]
    if markdown:
        lines = [title, "", "| term | logged | predicted | difference | why |", "|---|---:|---:|---:|---|"]
        for r in rows:
            where = f" (line {r.logged_line})" if r.logged_line else ""
            lines.append(f"| {r.label} | {_num(r.logged, r.unit)}{where} | {_num(r.predicted, r.unit)} | {_diff(r)} | "
                         f"{md(r.why)} |")
    else:
        lines = [title, f"  {'term':<34}{'logged':>14}{'predicted':>14}{'difference':>12}  why"]
        for r in rows:
            lines.append(f"  {r.label:<34}{_num(r.logged, r.unit):>14}{_num(r.predicted, r.unit):>14}{_diff(r):>12}"
                         f"  {r.why}")
    if memory.kv_bytes_per_token_logged is not None:
        per = (f"KV bytes per token: logged {memory.kv_bytes_per_token_logged:,.0f} "
               f"(available memory / tokens), predicted {memory.kv_bytes_per_token_predicted or 0:,.0f}")
        lines.append(("" if markdown else "  ") + per)
    for note in memory.notes:
        lines.append(f"- {md(note)}" if markdown else f"  note: {note}")
    return "\n".join(lines)


def _kv(report: LogReport, markdown: bool) -> str:
    """The logged figures, when there is no prediction to set them beside."""
    if report.memory is not None:
        return ""
    r = report.reading
    items = []
    for w in r.workers:
        for name in w.known():
            figure = getattr(w, name)
            items.append((f"{name.replace('_', ' ')}" + ("" if w.worker == "main" else f" [{w.worker}]"),
                          _num(figure.value, "GiB" if figure.unit == "GiB" else "x" if figure.unit == "x" else
                               "fraction") if figure.unit != "fraction" else f"{figure.value:g}", figure.line))
    kv = r.kv
    for label, figure, unit in (("KV blocks", kv.num_gpu_blocks, "blocks"), (f"{kv.device} KV cache size", kv.kv_tokens,
                                                                             "tokens"),
                                ("max concurrency" + (f" at {kv.concurrency_for_len:,} tokens"
                                                      if kv.concurrency_for_len else ""), kv.max_concurrency, "x")):
        if figure is not None:
            items.append((label, _num(figure.value, unit), figure.line))
    if not items:
        return ""
    lines = [_title("Memory vLLM logged", markdown)]
    for label, value, line in items:
        lines.append(f"- {md(label)}: {value} (line {line})" if markdown else f"  {label:<40}{value:>16}  (line {line})")
    return "\n".join(lines)


def _refusal(report: LogReport, markdown: bool) -> str:
    refusal = report.reading.refusal
    if refusal is None:
        return ""
    head = _title(f"vLLM refused to start (line {refusal.line})", markdown)
    return head + "\n" + (f"> {md(refusal.message)}" if markdown else f"  {refusal.message}")


def _stats(summary: Optional[StatsSummary], report: LogReport, markdown: bool) -> str:
    p = report.reading.preemptions
    if summary is None and not p.warnings:
        return ""
    lines = [_title("While serving (stats lines)", markdown)]
    bullet = "- " if markdown else "  "
    if summary is not None:
        span = f" over {summary.span_s:,.0f} s" if summary.span_s else ""
        lines += [
            f"{bullet}{summary.samples} stats lines{span}",
            f"{bullet}running: max {summary.running_max}, mean {summary.running_mean:.1f}; waiting: max "
            f"{summary.waiting_max}, mean {summary.waiting_mean:.1f} (requests waited in {summary.waiting_share:.0%} of "
            "the lines)",
            f"{bullet}KV cache usage: max {summary.kv_usage_max_pct:.1f}%, mean {summary.kv_usage_mean_pct:.1f}%; at or "
            f"above {HIGH_KV_PCT:.0f}% in {summary.high_kv_share:.0%} of the lines",
            f"{bullet}throughput: prompt {summary.prompt_tps_mean:,.1f} tok/s, generation {summary.generation_tps_mean:,.1f}"
            f" tok/s (mean over the lines; peak generation {summary.generation_tps_max:,.1f})"]
        if summary.prefix_hit_last_pct is not None:
            lines.append(f"{bullet}prefix cache hit rate (last line): {summary.prefix_hit_last_pct:.1f}%")
        if summary.swapped_max:
            lines.append(f"{bullet}swapped: max {summary.swapped_max}")
    if p.warnings:
        lines.append(f"{bullet}preemptions: {p.cumulative} by the last warning ({p.mode}; vLLM warns every 50th; first "
                     f"at line {p.first_line})")
    return "\n".join(lines)


def _notes(report: LogReport, markdown: bool) -> str:
    notes = report.reading.notes + report.notes
    if not notes:
        return ""
    lines = [_title("What the log does not say", markdown)]
    lines += [f"- {md(n)}" if markdown else f"  - {n}" for n in notes]
    return "\n".join(lines)
