"""Simulation results side by side, one column per mode: text, Markdown or JSON; and the progress
bar a long simulation shows on stderr."""
from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable, Sequence, TextIO

from .markdown import md

MODE_TITLES = {"naive": "NAIVE", "static": "STATIC", "continuous": "CONTINUOUS", "chunked": "CONTINUOUS+CHUNKED"}


def _num(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def _get(result: Any, path: str) -> Any:
    obj = result
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# (label, attribute path, digits)
ROWS: tuple[tuple[str, str, int], ...] = (
    ("completed requests", "completed", 0),
    ("failed requests", "failed", 0),
    ("duration (s)", "duration_s", 1),
    ("request throughput (req/s)", "request_throughput", 2),
    ("output throughput (tok/s)", "output_throughput", 1),
    ("total token throughput (tok/s)", "total_token_throughput", 1),
    ("mean TTFT (ms)", "ttft_ms.mean", 1),
    ("P99 TTFT (ms)", "ttft_ms.p99", 1),
    ("mean TPOT (ms)", "tpot_ms.mean", 1),
    ("median ITL (ms)", "itl_ms.median", 1),
    ("P99 ITL (ms)", "itl_ms.p99", 1),
    ("mean E2E latency (ms)", "e2el_ms.mean", 1),
    ("P99 E2E latency (ms)", "e2el_ms.p99", 1),
    ("mean queueing time (ms)", "queue_ms.mean", 1),
    ("request goodput (req/s)", "goodput.request_goodput", 2),
    ("preemptions", "preemptions", 0),
    ("recomputed tokens", "recomputed_tokens", 0),
    ("prefix cache hit rate", "prefix_cache_hit_rate", 3),
    ("peak KV cache usage", "evidence.kv_usage_peak", 3),
    ("mean running requests", "evidence.running_mean", 1),
    ("peak waiting requests", "evidence.waiting_peak", 0),
    ("engine steps", "num_steps", 0),
)


def table_rows(results: Sequence[Any]) -> tuple[list[str], list[list[str]]]:
    header = ["metric"] + [MODE_TITLES.get(_get(r, "mode"), str(_get(r, "mode"))) for r in results]
    rows = []
    for label, path, digits in ROWS:
        values = [_get(r, path) for r in results]
        if path.startswith("goodput") and all(v is None for v in values):
            continue
        rows.append([label] + [_num(v, digits) for v in values])
    return header, rows


def render_text(results: Sequence[Any]) -> str:
    header, rows = table_rows(results)
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(h.ljust(widths[0]) if i == 0 else h.rjust(widths[i]) for i, h in enumerate(header))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)))
    lines.extend(_notes(results))
    return "\n".join(lines) + "\n"


def render_markdown(results: Sequence[Any]) -> str:
    header, rows = table_rows(results)
    out = ["| " + " | ".join(md(h) for h in header) + " |",
           "|" + "|".join([" --- "] + [" ---: "] * (len(header) - 1)) + "|"]
    out.extend("| " + " | ".join(md(c) for c in row) + " |" for row in rows)
    notes = _notes(results)
    if notes:
        out.append("")
        out.extend(f"- {md(n[len('note: '):])}" for n in notes)
    return "\n".join(out) + "\n"


def render_json(results: Sequence[Any]) -> str:
    data = [r.model_dump(mode="json") if hasattr(r, "model_dump") else r for r in results]
    return json.dumps(data, indent=1) + "\n"


def _notes(results: Sequence[Any]) -> list[str]:
    seen: list[str] = []
    for r in results:
        for n in _get(r, "notes") or []:
            if n not in seen:
                seen.append(n)
    return [f"note: {n}" for n in seen]


def render(results: Sequence[Any], fmt: str = "text") -> str:
    if fmt == "text":
        return render_text(results)
    if fmt == "markdown":
        return render_markdown(results)
    if fmt == "json":
        return render_json(results)
    raise ValueError(f"unknown format {fmt!r} (text, markdown, json)")


def progress_bar(stream: TextIO | None = None, label: str = "simulating", min_seconds: float = 0.5,
                 width: int = 30) -> Callable[[int, int], None]:
    """A progress(done, total) callback drawing a bar on stderr; silent for runs shorter than
    `min_seconds` and when the stream is not a terminal."""
    out = stream or sys.stderr
    started = time.monotonic()
    state = {"shown": False}
    tty = hasattr(out, "isatty") and out.isatty()

    def update(done: int, total: int) -> None:
        if not tty or (not state["shown"] and time.monotonic() - started < min_seconds):
            return
        state["shown"] = True
        frac = done / total if total else 1.0
        fill = int(frac * width)
        out.write(f"\r{label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total}")
        if done >= total:
            out.write("\n")
        out.flush()

    return update
