"""Text, Markdown and JSON views of a `Capacity` (reader.capacity.api): every result next to the
formula inputs that produced it, vLLM's start-up log lines, and the start-up error if it would fail.

    render_capacity(cap: Capacity, fmt: "text" | "markdown" | "json", model_source: str = "") -> str

`model_source` is the resolver's "model shape from: ..." line (where the model's config.json came from).
"""
from __future__ import annotations

import json
from typing import Optional

from ..capacity.api import Capacity
from ..capacity.figures import Figure, GiB, gib
from ..diagnose.loadcurve import LoadCurve
from ..errors import ReaderError
from .loadcurve_view import section as curve_section
from .markdown import code, md

FORMATS = ("text", "markdown", "json")


def render_capacity(cap: Capacity, fmt: str = "text", model_source: str = "", curve: Optional[LoadCurve] = None,
                    slos_ms: Optional[dict[str, float]] = None) -> str:
    """curve: the load curve (--load-curve), after the memory figures; in JSON under `load_curve`."""
    fmt = (fmt or "text").lower()
    if fmt == "json":
        data = cap.model_dump(mode="json")
        if model_source:
            data["model_source"] = model_source
        if curve is not None:
            data["load_curve"] = curve.model_dump(mode="json")
        return json.dumps(data, indent=2)
    if fmt not in ("markdown", "text"):
        raise ReaderError(f"unknown format '{fmt}': expected one of {', '.join(FORMATS)}", key="--format")
    text = _markdown(cap, model_source) if fmt == "markdown" else _text(cap, model_source)
    if curve is not None:
        text = text.rstrip("\n") + "\n\n" + curve_section(curve, slos_ms or {}) + "\n"
    return text


def _value(f: Figure) -> str:
    if f.unit == "bytes":
        if abs(f.value) < 1 << 20:
            return f"{f.value:,.0f} B"
        if abs(f.value) < GiB:
            return f"{f.value / 2**20:.1f} MiB"
        return gib(f.value)
    if f.unit == "x":
        return f"{f.value:.2f}x"
    if f.unit in ("tokens", "blocks"):
        return f"{f.value:,.0f} {f.unit}"
    if f.unit == "requests":
        return f"{f.value:,.1f} requests"
    return f"{f.value:g} {f.unit}"


def _rows(cap: Capacity) -> list[tuple[str, Figure]]:
    rows: list[tuple[str, Figure]] = [("KV bytes per token (this GPU)", cap.kv_bytes_per_token),
                                      ("page (one block, one layer)", cap.page_bytes)]
    for w in cap.workers:
        tag = f"[stage {w.stage}, {w.gpu}] " if len(cap.workers) > 1 else ""
        rows += [(tag + "GPU memory", w.total), (tag + "requested (utilization)", w.requested),
                 (tag + "weights", w.weights), (tag + "activation peak (profile run)", w.activation_peak),
                 (tag + "non-torch", w.non_torch), (tag + "CUDA graphs (subtracted)", w.cudagraph)]
        if w.other_processes.value:
            rows.append((tag + "other processes", w.other_processes))
        rows += [(tag + "available for KV", w.available_kv), (tag + "KV blocks", w.num_blocks),
                 (tag + "one max-length request", w.kv_request_bytes)]
    rows += [("num_gpu_blocks", cap.num_gpu_blocks), ("GPU KV cache size", cap.gpu_kv_cache_tokens),
             (f"max concurrency at {cap.max_model_len:,} tokens", cap.max_concurrency)]
    if cap.concurrency_at_mean:
        rows.append(("requests at mean context", cap.concurrency_at_mean))
    if cap.concurrency_at_p99:
        rows.append(("requests at p99 context", cap.concurrency_at_p99))
    return rows


def _header(cap: Capacity, model_source: str = "") -> list[str]:
    return [f"model {cap.model} on {cap.gpu}, vLLM {cap.vllm_version} ({cap.engine.upper()} engine), {cap.parallel}",
            f"weights: {cap.weight_format}; KV cache dtype {cap.kv_cache_dtype}; block size {cap.block_size}; "
            f"max_model_len {cap.max_model_len:,}", f"KV-cache groups: {cap.kv_groups}"] \
        + ([model_source] if model_source else [])


def _text(cap: Capacity, model_source: str = "") -> str:
    out = _header(cap, model_source) + [""]
    rows = _rows(cap)
    width = max(len(n) for n, _ in rows)
    for name, f in rows:
        flag = " (estimate)" if f.estimated else ""
        out.append(f"{name.ljust(width)}  {_value(f):>16}{flag}")
        out.append(f"{'':{width}}    = {f.how}")
    if cap.fragmentation:
        fr = cap.fragmentation
        out += ["", f"fragmentation ({fr.num_requests} requests, mean {fr.mean_tokens:,.0f} tokens): contiguous at "
                f"{fr.reserve_tokens:,} wastes {100 * fr.contiguous_waste:.1f}%, paged {fr.block_size}-token blocks waste "
                f"{100 * fr.paged_waste:.2f}%"]
    out += ["", "vLLM would log:"] + [f"  {line}" for line in cap.log_lines]
    if cap.startup_error:
        e = cap.startup_error
        out += ["", f"START-UP FAILS (stage {e.stage}): {e.message}"]
        if e.estimated_max_model_len:
            out.append(f"  longest max_model_len that fits: {e.estimated_max_model_len:,}")
    for wmsg in cap.warnings:
        out.append(f"warning: {wmsg}")
    return "\n".join(out)


def _markdown(cap: Capacity, model_source: str = "") -> str:
    out = ["## KV-cache capacity", ""] + [f"- {md(h)}" for h in _header(cap, model_source)] + [""]
    out += ["| figure | value | how |", "|---|---:|---|"]
    for name, f in _rows(cap):
        est = " (estimate)" if f.estimated else ""
        out.append(f"| {md(name)} | {md(_value(f))}{est} | {md(f.how)} |")
    if cap.fragmentation:
        fr = cap.fragmentation
        out += ["", f"Fragmentation: contiguous reservation at {fr.reserve_tokens:,} tokens wastes "
                f"**{100 * fr.contiguous_waste:.1f}%**; paged {fr.block_size}-token blocks waste "
                f"**{100 * fr.paged_waste:.2f}%** ({md(fr.how)})."]
    out += ["", "vLLM start-up log:", ""] + [f"    {line}" for line in cap.log_lines]
    if cap.startup_error:
        out += ["", f"**Start-up fails** (stage {cap.startup_error.stage}): {code(cap.startup_error.message)}"]
    for wmsg in cap.warnings:
        out.append(f"\n> warning: {md(wmsg)}")
    return "\n".join(out)
