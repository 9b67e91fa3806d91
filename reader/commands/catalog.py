"""`vllm-reader catalog models|gpus|versions`: what the tool knows, and how sure it is of each figure."""
from __future__ import annotations

import typer

SUBJECTS = ("models", "gpus", "versions")
FORMATS = ("text", "json")


def register(app: typer.Typer) -> None:
    @app.command("catalog")
    def catalog(
        subject: str = typer.Argument(..., metavar="models|gpus|versions", help="What to list."),
        fmt: str = typer.Option("text", "--format", "-f", metavar="text|json", help="Output format."),
    ) -> None:
        """List the models, GPUs or vLLM versions vllm-reader knows, with sources and verification."""
        typer.echo(render(subject, fmt))


def render(subject: str, fmt: str) -> str:
    subject, fmt = _choice("subject", subject, SUBJECTS), _choice("--format", fmt, FORMATS)
    if subject == "models":
        return _models_json() if fmt == "json" else _models_text()
    if subject == "gpus":
        return _gpus_json() if fmt == "json" else _gpus_text()
    return _versions_json() if fmt == "json" else _versions_text()


def _choice(what: str, value: str, allowed: tuple[str, ...]) -> str:
    import difflib

    from reader.errors import ReaderError, did_you_mean

    text = (value or "").strip().lower()
    if text in allowed:
        return text
    guess = did_you_mean(difflib.get_close_matches(text, allowed, n=1, cutoff=0.5))
    raise ReaderError(f"unknown {what} '{value}': expected one of {', '.join(allowed)}.{guess}",
                      hint="Example: vllm-reader catalog models --format json")


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _billions(count: int | None) -> str:
    if count is None:
        return ""
    return f"{count / 1e12:.2f}T" if count >= 1e12 else f"{count / 1e9:.2f}B"


def _verified(spec) -> str:
    return spec.verification + ("*" if spec.unverified else "")


# ---------------------------------------------------------------------------------------------
# Models


def _attention(spec) -> str:
    if spec.mla is not None:
        return f"MLA latent {spec.mla.kv_lora_rank}+{spec.mla.qk_rope_head_dim}"
    kinds = spec.layer_kinds
    parts = [f"{kinds.full} full"] if kinds.full else []
    if kinds.sliding:
        parts.append(f"{kinds.sliding} sliding/{spec.sliding_window}")
    if kinds.chunked:
        parts.append(f"{kinds.chunked} chunked/{spec.attention_chunk_size}")
    if kinds.linear:
        parts.append(f"{kinds.linear} linear")
    return ", ".join(parts)


def _quant(spec) -> str:
    q = spec.quantization
    if q is None:
        return spec.torch_dtype
    scope = " experts" if set(q.formats) == {"experts"} else ""
    kv = f", kv {q.kv_cache_dtype}" if q.kv_cache_dtype else ""
    return f"{q.method}{scope}{kv}"


def _models_text() -> str:
    from reader.catalog.load import list_models

    models = list_models()
    header = ["MODEL", "TYPE", "LAYERS", "HEADS Q/KV", "HEAD", "PARAMS", "ACTIVE", "ATTENTION", "MAX POS",
              "WEIGHTS", "VERIFIED"]
    rows = [[m.id, m.model_type, str(m.num_hidden_layers), f"{m.num_attention_heads}/{m.num_key_value_heads}",
             str(m.head_dim), _billions(m.params_total), _billions(m.params_active), _attention(m),
             str(m.max_position_embeddings), _quant(m), _verified(m)] for m in models]
    lines = _table(header, rows, right={2, 4, 5, 6, 8})
    lines += ["", f"{len(models)} models (reader/catalog/models/<org>/<name>/: config.json and its source.yaml). "
                  "Look them up by id, alias or bare repo name (any case); any other model resolves through a "
                  "model folder, the Hugging Face cache or the Hub.",
              "VERIFIED: primary = exact config.json copy; secondary = second-hand copy; unverified = no "
              "primary copy; * = some figures unverified.",
              "Aliases, sources and the unverified figures: vllm-reader catalog models --format json"]
    return "\n".join(lines)


def _models_json() -> str:
    import json

    from reader.catalog.load import list_models

    models = [m.model_dump(mode="json") for m in list_models()]
    return json.dumps({"count": len(models), "models": models}, indent=2)


# ---------------------------------------------------------------------------------------------
# GPUs


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}"


def _gpus_text() -> str:
    from reader.catalog.load import ambiguous_gpu_aliases, list_gpus

    gpus = list_gpus()
    header = ["GPU", "VENDOR", "MEMORY GiB", "MARKETED GB", "HBM GB/s", "BF16 TF", "FP8 TF", "INT8 TOPS",
              "NVLINK GB/s/dir", "VERIFIED"]
    rows = [[g.id, g.vendor, f"{g.memory_gib:.2f}", _num(g.memory_marketed_gb), _num(g.hbm_bandwidth_gbps),
             _num(g.bf16_tflops), _num(g.fp8_tflops), _num(g.int8_tops), _num(g.nvlink_gbps_per_direction),
             _verified(g)] for g in gpus]
    lines = _table(header, rows, right={2, 3, 4, 5, 6, 7, 8})
    lines += ["", f"{len(gpus)} GPUs. TFLOP/s are dense (no 2:4 sparsity); MEMORY GiB is what torch reports as "
                  "total_memory; NVLink is per direction.",
              "VERIFIED: measured / primary (vendor or NVIDIA-authored data) / secondary / unverified; "
              "* = some figures unverified (see --format json).",
              "Family names that resolve by convention:"]
    for name, (gpu_id, _note) in ambiguous_gpu_aliases().items():
        lines.append(f"  {name} -> {gpu_id}")
    return "\n".join(lines)


def _gpus_json() -> str:
    import json

    from reader.catalog.load import ambiguous_gpu_aliases, list_gpus

    gpus = []
    for g in list_gpus():
        data = g.model_dump(mode="json")
        data["memory_gib"] = round(g.memory_gib, 3)
        gpus.append(data)
    ambiguous = {name: {"gpu": gpu_id, "note": note} for name, (gpu_id, note) in ambiguous_gpu_aliases().items()}
    return json.dumps({"count": len(gpus), "gpus": gpus, "ambiguous_aliases": ambiguous}, indent=2)


# ---------------------------------------------------------------------------------------------
# Versions


def _versions() -> tuple[list[str], str]:
    from reader.versions import format_version, known_versions, newest_version

    newest_first = [format_version(v) for v in reversed(known_versions())]
    return newest_first, format_version(newest_version())


def _versions_text() -> str:
    versions, default = _versions()
    lines = [f"{v}  (default: the newest version this tool knows)" if v == default else v for v in versions]
    lines += ["", f"{len(versions)} vLLM releases with checked facts. A version between two of them is answered "
                  "with the nearest one at or below it."]
    return "\n".join(lines)


def _versions_json() -> str:
    import json

    versions, default = _versions()
    return json.dumps({"count": len(versions), "default": default, "versions": versions}, indent=2)
