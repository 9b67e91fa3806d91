"""The resolved deployment as Markdown: user values beside defaults, with reasons."""
from __future__ import annotations

from ..config.resolve import ResolvedDeployment
from .markdown import render

# The settings a reader of a scheduling diagnosis cares about, in reading order.
ROW_ORDER = (
    "max_model_len", "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill",
    "long_prefill_token_threshold", "enable_prefix_caching", "scheduling_policy", "async_scheduling",
    "gpu_memory_utilization", "kv_cache_memory_bytes", "num_gpu_blocks_override", "block_size", "kv_cache_dtype",
    "dtype", "quantization", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
    "enable_expert_parallel", "enforce_eager", "cpu_offload_gb", "swap_space", "scheduler_reserve_full_isl",
    "watermark", "max_num_active_seqs", "performance_mode", "max_num_partial_prefills", "num_scheduler_steps",
)


def rows(r: ResolvedDeployment) -> list[tuple[str, object]]:
    ordered = [(dest, r.values[dest]) for dest in ROW_ORDER if dest in r.values]
    ordered += [(name, item) for name, item in r.derived.items()
                if name in ("max_num_scheduled_tokens", "max_cudagraph_capture_size")]
    ordered = [(f"effective {d}" if d in r.derived and d not in r.values else d, item) for d, item in ordered]
    return ordered


def version_words(r: ResolvedDeployment) -> str:
    origin = r.version_origin
    if origin == "none":
        return "not given: the newest release this tool knows"
    return {"cli": "given with --vllm-version", "comment": "from the vllm-reader comment block",
            "image": "from the image tag"}.get(origin, origin)


def resolved_markdown(r: ResolvedDeployment, title: bool = False) -> str:
    known = set(ROW_ORDER)
    other = [(dest, flag.value) for dest, flag in r.deployment.flags.items()
             if dest not in known and dest != "model" and flag.in_version]
    absent = [flag for flag in r.deployment.flags.values() if not flag.in_version]
    body = render("resolved.md.j2", r=r, rows=rows(r), other_flags=other, notes=r.deployment.notes + r.notes,
                  absent_flags=absent,
                  version_words=version_words(r))
    if title:
        return "# vllm-reader: " + _title(r) + "\n\n" + body
    return body


def _title(r: ResolvedDeployment) -> str:
    from .markdown import md

    return md(r.deployment.model or (r.model.id if r.model else "deployment"))
