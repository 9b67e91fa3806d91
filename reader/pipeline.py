"""Glue between stages: a resolved deployment becomes the inputs of the capacity model, the
step-time model and the simulator. Each function maps typed outputs of one stage onto the typed
inputs of the next; none of them computes anything of its own.
"""
from __future__ import annotations

from typing import Any, Optional

from .config.resolve import ResolvedDeployment
from .errors import ReaderError


def workload_spec(r: ResolvedDeployment, override: Any = None) -> Any:
    """The workload to analyse: --workload, the comment block, the file's own (benchmark JSON), or the chat preset."""
    from .sim.workload import load_workload

    source = override if override is not None else r.deployment.context.workload
    if source is None:
        return load_workload({"preset": "chat"})
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return load_workload(_inline_mapping(source))
    if isinstance(source, str) and not source.endswith((".yaml", ".yml", ".json", ".jsonl", ".csv")):
        return load_workload({"preset": source})
    if isinstance(source, str):
        from pathlib import Path
        base = Path(r.deployment.source).parent if r.deployment.context.workload_origin == "comment" else Path.cwd()
        path = Path(source) if Path(source).is_absolute() else base / source
        return load_workload(str(path))
    return load_workload(source)


def _inline_mapping(text: str) -> dict:
    """`--workload '{preset: chat, num_requests: 200}'`: a YAML flow mapping given on the command line."""
    from .config.yamlsafe import load_yaml_documents

    docs = load_yaml_documents(text, "--workload")
    if not docs or not isinstance(docs[0].data, dict):
        raise ReaderError("--workload given inline must be a mapping, e.g. '{preset: chat, num_requests: 200}'.",
                          key="--workload")
    return docs[0].data


def context_stats(workload: Any) -> tuple[float, float, float]:
    """Mean, P99 and standard deviation of prompt+output length over the workload's requests."""
    import numpy as np

    total = (workload.prompt_len + workload.output_len).astype(float)
    return float(total.mean()), float(np.percentile(total, 99)), float(total.std())


def capacity_request(r: ResolvedDeployment, workload: Any = None, measured: bool = True,
                     kv_correction: tuple[float, str] = (0.0, "")) -> Any:
    """measured: a deployment read from a vLLM log uses what the log measured instead of estimates.
    kv_correction: bytes added to the estimated KV memory, and why (a what-if of a logged deployment)."""
    from .capacity.api import CapacityRequest

    model = r.require_model()
    v = r.value
    max_len = v("max_model_len")
    if max_len in (None, -1):
        max_len = model.max_position_embeddings
    partition = r.deployment.env.get("VLLM_PP_LAYER_PARTITION")
    mean = p99 = sd = None
    if workload is not None:
        mean, p99, sd = context_stats(workload)
    spec = r.speculative
    try:
        return CapacityRequest(
            model=model, gpu=r.require_gpu(), vllm_version=_release(r), engine=r.engine,
            tensor_parallel_size=v("tensor_parallel_size") or 1, pipeline_parallel_size=v("pipeline_parallel_size") or 1,
            data_parallel_size=v("data_parallel_size") or 1, enable_expert_parallel=bool(v("enable_expert_parallel")),
            redundant_experts=redundant_experts(r),
            pp_layer_partition=tuple(int(x) for x in partition.split(",")) if partition else None,
            dtype=v("dtype") or "auto",
            quantization=_user_quantization(r),
            kv_cache_dtype=v("kv_cache_dtype") or "auto", block_size=v("block_size") or 16, max_model_len=max_len,
            max_num_batched_tokens=v("max_num_batched_tokens"), max_num_seqs=v("max_num_seqs"),
            gpu_memory_utilization=v("gpu_memory_utilization"), kv_cache_memory_bytes=v("kv_cache_memory_bytes"),
            cpu_offload_gb=v("cpu_offload_gb") or 0, num_gpu_blocks_override=v("num_gpu_blocks_override"),
            enforce_eager=bool(v("enforce_eager")),
            cudagraph_capture_sizes=tuple(v("cudagraph_capture_sizes")) if v("cudagraph_capture_sizes") else None,
            max_cudagraph_capture_size=r.value("max_cudagraph_capture_size") or None,
            speculative_method=spec.method if spec else None,
            num_speculative_tokens=spec.num_speculative_tokens if spec else 0,
            disable_hybrid_kv_cache_manager=bool(r.deployment.serving.disable_hybrid_kv_cache_manager),
            enable_prefix_caching=bool(v("enable_prefix_caching")),
            decode_context_parallel_size=r.deployment.serving.decode_context_parallel_size or 1,
            workload_mean_context=mean, workload_p99_context=p99, workload_context_sd=sd,
            kv_correction_bytes=kv_correction[0], kv_correction_how=kv_correction[1],
            **{**_memory_terms(r), **(_logged_memory(r) if measured else {})},  # a log of this very run wins
        )
    except ValueError as err:  # a value our model cannot take (e.g. a non-positive size)
        raise ReaderError(f"cannot model this deployment: {err}", file=r.deployment.source) from None


def redundant_experts(r: ResolvedDeployment) -> int:
    """EPLB's redundant experts: `--eplb-config '{"num_redundant_experts": N}'` (or `--num-redundant-experts N`
    up to 0.11.2), counted only with --enable-eplb, as vLLM refuses them otherwise (vllm/config/parallel.py
    ParallelConfig.__post_init__ @ v0.32.0)."""
    other = r.deployment.serving.other
    if not other.get("enable_eplb"):
        return 0
    config = other.get("eplb_config")
    value = config.get("num_redundant_experts") if isinstance(config, dict) else other.get("num_redundant_experts")
    try:
        return max(int(str(value)), 0) if value is not None else 0
    except ValueError:
        return 0


def _memory_terms(r: ResolvedDeployment) -> dict[str, Any]:
    """Memory overheads the calibration profile measured (from start-up logs): they replace our estimates,
    carried by the capacity model to this deployment's settings where those differ from the logs'."""
    if r.calibration is None:
        return {}
    from .capacity.profile_terms import ProfileTerm

    profile = f"'{r.calibration.name}'" + (f" ({r.calibration_path})" if r.calibration_path else "")
    terms = {key: ProfileTerm(value=term.value, at=term.at.model_dump() if term.at else {}, estimate=term.estimate,
                              profile=profile)
             for key, term in r.calibration.memory.terms().items()}
    return {"profile_terms": terms} if terms else {}


def _logged_memory(r: ResolvedDeployment) -> dict:
    if r.deployment.log is None:
        return {}
    from .logs.terms import measured_terms
    return measured_terms(r.deployment.log).capacity_fields()


def step_time_model(r: ResolvedDeployment, coefficients: Any = None, gpu: Any = None, table_tokens: Any = None) -> Any:
    """The step-time model of the deployment, with its calibration profile's coefficients (or the given
    ones: a fit tries many). A CPU has no CUDA graphs: its steps are costed as eager ones."""
    from .capacity.steptime import StepTimeModel

    v = r.value
    from .calibration.select import is_cpu

    gpu = gpu or r.require_gpu()
    if coefficients is None:
        from .calibration.profile import default_calibration

        coefficients = r.calibration.coefficients() if r.calibration is not None else default_calibration(gpu.id)
    extra = {"table_tokens": table_tokens} if table_tokens else {}
    return StepTimeModel(
        r.require_model(), gpu, tp=v("tensor_parallel_size") or 1,
        pp=v("pipeline_parallel_size") or 1, quantization=_user_quantization(r),
        dtype=v("dtype") or "auto", kv_cache_dtype=v("kv_cache_dtype") or "auto",
        enforce_eager=bool(v("enforce_eager")) or is_cpu(gpu), calibration=coefficients, **extra,
        cudagraph_capture_sizes=v("cudagraph_capture_sizes") or None,
        max_num_seqs=v("max_num_seqs"), max_num_batched_tokens=v("max_num_batched_tokens"),
        ep=(v("tensor_parallel_size") or 1) * (v("data_parallel_size") or 1) if v("enable_expert_parallel") else 1,
        dp=v("data_parallel_size") or 1,
    )


def _user_quantization(r: ResolvedDeployment) -> Optional[str]:
    """--quantization as the user gave it; None when it only echoes the checkpoint's own (in the ModelSpec)."""
    item = r.values.get("quantization")
    return item.value if item is not None and item.origin == "user" else None


def optional_workload(r: ResolvedDeployment, override: Optional[str]) -> Any:
    """The generated workload when one is given (capacity shows concurrency at its lengths), else None."""
    if override is None and r.deployment.context.workload is None:
        return None
    from .sim.workload import generate
    return generate(workload_spec(r, override))


def _release(r: ResolvedDeployment) -> str:
    """The release the memory behaviour follows: the one asked for when it is a release inside the tables' span
    (its flag table may be an older checked tag: 0.6.5 reads with 0.6.3's, but profiles memory as 0.6.5 did,
    tests/logs/test_logs_memory_fit.py), else the checked tag."""
    from .versions import format_version, known_versions, parse_version

    asked = r.deployment.context.vllm_version
    try:
        parsed = parse_version(asked) if asked else None
    except ValueError:
        parsed = None
    if parsed is None or parsed < known_versions()[0]:
        return r.version
    return format_version(parsed)

