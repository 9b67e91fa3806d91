"""diagnose: check + capacity + simulation -> the limiting default, evidence, and tested recommendations."""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from .. import __version__
from ..capacity.figures import GiB
from ..calibration.select import describe_use
from ..config.resolve import ResolvedDeployment
from ..errors import ReaderError
from ..evidence.from_sim import from_simulation
from ..evidence.verdict import Verdict, decide, note_overload, startup_verdict
from ..observe.evidence import Observation
from ..sim.api import SimResult
from ..sim.workload import describe
from .checks import findings_for, rule_errors
from .logged import refusal_verdict, started_disagreements
from .metrics import Metrics
from .observed import comparison, observed_verdict, observed_workload, with_capacity
from .report import (CapacitySummary, Diagnosis, FindingRef, ModeRow, Series, SettingRow, WorkloadSummary)
from .scenario import Scenario, build_scenario, slos_from
from .loadcurve import load_curve
from .trials import Trial
from .whatif import WhatIf, candidates, evaluate_all, refuted_limits

# Where a release not given with --vllm-version came from (the order: README, "Without a version").
_VERSION_FROM = {"cli": "version given", "comment": "version given in the comment block",
                 "image": "from the image tag", "profile": "from the calibration profile", "log": "from the log"}
MODE_LABELS = {"naive": "NAIVE (one request at a time)", "static": "STATIC (fixed batches)",
               "continuous": "CONTINUOUS (chunked prefill off)", "chunked": "CONTINUOUS+CHUNKED (as configured)"}
# The settings a reader of a scheduling diagnosis cares about, in reading order.
ROW_ORDER = (
    "max_model_len", "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill",
    "long_prefill_token_threshold", "enable_prefix_caching", "scheduling_policy", "async_scheduling",
    "gpu_memory_utilization", "kv_cache_memory_bytes", "num_gpu_blocks_override", "block_size", "kv_cache_dtype",
    "dtype", "quantization", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
    "enable_expert_parallel", "enforce_eager", "cpu_offload_gb", "swap_space", "scheduler_reserve_full_isl",
    "watermark", "max_num_active_seqs", "performance_mode", "max_num_partial_prefills", "num_scheduler_steps",
)


def diagnose(resolved: ResolvedDeployment, slos_ms: Optional[dict[str, float]] = None, modes: Iterable[str] = (),
             whatifs: bool = True, workers: Optional[int] = None, observed: Optional[Observation] = None,
             curve: bool = True) -> Diagnosis:
    """slos_ms: default, the deployment's own (slos_from). observed: a running server's metrics; the simulation then
    runs the load they show, and the report sets the two side by side. curve: also the load curve (the workload's
    shape at rising load: the capacity within the SLOs and the order in which the defaults bind)."""
    findings = findings_for(resolved)
    slos_ms = slos_from(resolved) if slos_ms is None else slos_ms
    errors = [f for f in findings if f.severity == "error"]
    spec = generated = None
    if observed is not None:
        spec, generated = observed_workload(observed, resolved)
    try:
        scenario = build_scenario(resolved, slos_ms, spec=spec, generated=generated)
    except ReaderError:
        log = resolved.deployment.log
        if not errors or (log is not None and (log.started or log.refusal is not None)):
            raise
        # a value vLLM refuses may be one the capacity model cannot take either: the refusal is the answer
        return _refused(resolved, findings, errors, slos_ms)
    base_result: Optional[SimResult] = None
    log = resolved.deployment.log
    refused = log is not None and log.refusal is not None
    if log is not None and log.started and errors:
        scenario.notes.extend(started_disagreements(log, errors))
        errors = []  # the log shows vLLM serving this config: the rules are wrong here, not the config
    if refused:
        verdict = refusal_verdict(resolved.version, log, errors, scenario.capacity, resolved.gpu_assumed)
    elif errors:
        verdict = _refusal_verdict(resolved, errors)
    elif not scenario.starts:
        err = scenario.capacity.startup_error
        verdict = startup_verdict(f"vLLM {resolved.version} would fail at start-up: {err.message}",
                                  [err.message] + ([f"longest max_model_len that fits: {err.estimated_max_model_len:,}"]
                                                   if err.estimated_max_model_len else []))
    else:
        base_result = scenario.run()
        verdict = decide(from_simulation(base_result), scenario.slos_ms, compute_ridge(resolved))
        note_overload(verdict, base_result.request_throughput, base_result.offered_rate)
    starts = not errors and scenario.starts and not refused
    if refused and scenario.starts:
        errors = errors or [FindingRef(rule="LOG", severity="error", message=log.refusal.message)]
    diagnosis = _assemble(resolved, scenario, findings, verdict, base_result, starts)
    if whatifs and not errors:
        baseline = diagnosis.baseline or _null_metrics()
        diagnosis.whatifs = evaluate_all(scenario, candidates(scenario, verdict), baseline, rule_errors, workers)
        if base_result is not None:
            diagnosis.verdict = _consistent(diagnosis, scenario, base_result, diagnosis.whatifs)
    if curve and base_result is not None:
        diagnosis.load_curve = load_curve(scenario, rule_errors, compute_ridge(resolved), workers,
                                          replicas=resolved.deployment.context.replicas or 1,
                                          given=observed is not None or not diagnosis.workload.default_used,
                                          own=_own_trial(scenario, base_result))
    for mode in modes if starts else ():
        result = base_result if mode == "chunked" else scenario.run(mode)
        diagnosis.modes.append(ModeRow(mode=mode, label=MODE_LABELS[mode], metrics=Metrics.of(result)))
    if observed is not None:
        _set_observed(diagnosis, scenario, observed)
    return diagnosis


def _own_trial(scenario: Scenario, result: SimResult) -> Optional[Trial]:
    """The diagnosis's own run as a point of the load curve, where its load is one the curve can name (a batch, or
    a trace split by replicas, is not)."""
    if scenario.spec.arrival.process == "burst" or scenario.spec.trace:
        return None
    return Trial(status="simulated", metrics=Metrics.of(result, int(scenario.capacity.gpu_kv_cache_tokens.value)),
                 evidence=from_simulation(result))


def _consistent(d: Diagnosis, scenario: Scenario, result: SimResult, tried: list[WhatIf]) -> Verdict:
    """The verdict held to its own what-ifs: a default whose relaxations, re-simulated at this load, all fail to
    improve goodput or throughput is not named; the next default the evidence points at is, or else what the
    evidence shows instead (the GPU, or a load below capacity)."""
    refuted = refuted_limits(d.verdict, tried, d.baseline or _null_metrics(), scenario.slos_ms)
    if not refuted:
        return d.verdict
    verdict = decide(from_simulation(result), scenario.slos_ms, compute_ridge(scenario.resolved), refuted)
    note_overload(verdict, result.request_throughput, result.offered_rate)
    return verdict


def _refusal_verdict(r: ResolvedDeployment, errors: list[FindingRef]) -> Verdict:
    return startup_verdict(f"vLLM {r.version} would refuse this config: {errors[0].message}",
                           [f"{f.rule}: {f.message}" for f in errors])


def _refused(r: ResolvedDeployment, findings: list[FindingRef], errors: list[FindingRef],
             slos_ms: dict[str, float]) -> Diagnosis:
    """The diagnosis of a config vLLM refuses and the capacity model cannot size: the refusal alone."""
    return Diagnosis(
        tool_version=__version__, source=r.deployment.source, form=r.deployment.form, vllm_version=r.version,
        vllm_version_origin=r.version_origin, engine=r.engine, model=r.model.id if r.model else None,
        model_given=r.deployment.model, gpu=r.gpu.id if r.gpu else None, gpu_count=r.gpu_count,
        starts=False, verdict=_refusal_verdict(r, errors), findings=findings, slos_ms=slos_ms, settings=_settings(r),
        assumptions=_assumptions(r),
        notes=[n.message for n in r.deployment.notes + r.notes])


def _set_observed(d: Diagnosis, scenario: Scenario, obs: Observation) -> None:
    d.observed = obs.evidence
    d.observed_verdict = observed_verdict(obs, scenario.slos_ms)
    if d.evidence is not None:
        d.comparison = comparison(scenario, obs, d.evidence)
    if d.workload is not None:
        d.workload.description = scenario.workload.description
    d.assumptions = [a if not a.startswith("workload: ") else f"workload: {scenario.workload.description}"
                     for a in d.assumptions]


def compute_ridge(r: ResolvedDeployment) -> Optional[float]:
    """Tokens per step above which the linear layers are compute-bound: peak FLOP/s x weight bytes / (2 x bandwidth)."""
    if r.gpu is None or r.model is None:
        return None
    quant = r.model.quantization
    user_quant = r.values.get("quantization")
    if user_quant is not None and user_quant.origin == "user" and user_quant.value in ("fp8", "fbgemm_fp8"):
        bytes_per_weight, flops = 1.0, r.gpu.fp8_tflops or r.gpu.bf16_tflops
    elif quant is not None:
        bytes_per_weight = quant.weight_bits / 8
        flops = (r.gpu.fp8_tflops or r.gpu.bf16_tflops) if quant.weight_bits <= 8 and quant.method == "fp8" \
            else r.gpu.bf16_tflops
    else:
        bytes_per_weight, flops = 2.0, r.gpu.bf16_tflops
    return flops * 1e12 * bytes_per_weight / (2 * r.gpu.hbm_bandwidth_gbps * 1e9)


def _assemble(r: ResolvedDeployment, sc: Scenario, findings: list[FindingRef], verdict: Verdict,
              result: Optional[SimResult], starts: bool) -> Diagnosis:
    return Diagnosis(
        tool_version=__version__, source=r.deployment.source, form=r.deployment.form, vllm_version=r.version,
        vllm_version_origin=r.version_origin, engine=r.engine, model=r.model.id if r.model else None,
        model_given=r.deployment.model, gpu=r.gpu.id if r.gpu else None, gpu_count=r.gpu_count,
        starts=starts, verdict=verdict, findings=findings,
        capacity=_capacity_summary(sc), workload=_workload_summary(r, sc), slos_ms=sc.slos_ms,
        baseline=Metrics.of(result, int(sc.capacity.gpu_kv_cache_tokens.value)) if result is not None else None,
        evidence=with_capacity(from_simulation(result), sc) if result is not None else None,
        series=_series(result) if result is not None else None, settings=_settings(r),
        assumptions=_assumptions(r, sc), calibration=describe_use(r), notes=[n.message for n in r.deployment.notes + r.notes] + sc.notes,
    )


def _capacity_summary(sc: Scenario) -> CapacitySummary:
    cap = sc.capacity
    worker = cap.workers[0]
    err = cap.startup_error
    return CapacitySummary(
        weights_gib=worker.weights.value / GiB, available_kv_gib=worker.available_kv.value / GiB,
        kv_bytes_per_token=cap.kv_bytes_per_token.value, num_gpu_blocks=int(cap.num_gpu_blocks.value),
        kv_cache_tokens=int(cap.gpu_kv_cache_tokens.value), max_concurrency_at_max_len=cap.max_concurrency.value,
        requests_at_mean_context=cap.concurrency_at_mean.value if cap.concurrency_at_mean else None,
        requests_at_p99_context=cap.concurrency_at_p99.value if cap.concurrency_at_p99 else None,
        startup_error=err.message if err else None,
        estimated_max_model_len=err.estimated_max_model_len if err else None, log_lines=cap.log_lines)


def _workload_summary(r: ResolvedDeployment, sc: Scenario) -> WorkloadSummary:
    wl = sc.workload
    return WorkloadSummary(
        description=describe(sc.spec), num_requests=wl.num_requests,
        prompt_mean=float(wl.prompt_len.mean()), prompt_p99=float(np.percentile(wl.prompt_len, 99)),
        output_mean=float(wl.output_len.mean()), output_p99=float(np.percentile(wl.output_len, 99)),
        default_used=r.deployment.context.workload is None and sc.spec.preset == "chat")


def _series(result: SimResult) -> Series:
    ts = result.timeseries
    return Series(t_s=ts.t_s, kv_usage_pct=[100 * x for x in ts.kv_usage], running=ts.running, waiting=ts.waiting)


def _settings(r: ResolvedDeployment) -> list[SettingRow]:
    rows = [SettingRow(setting=dest, value=r.values[dest].value, origin=r.values[dest].origin, why=r.values[dest].why,
                       source=r.values[dest].source) for dest in ROW_ORDER if dest in r.values]
    rows += [SettingRow(setting=f"effective {name}", value=item.value, origin=item.origin, why=item.why,
                        source=item.source) for name, item in r.derived.items()]
    return rows


def _assumptions(r: ResolvedDeployment, sc: Optional[Scenario] = None) -> list[str]:
    out = [f"model: {r.model.id if r.model else r.deployment.model}; {r.model_how}",
           f"GPU: {r.gpu_count} x {r.gpu.id if r.gpu else '?'} (type: {r.gpu_how}; count: {r.gpu_count_how})",
           f"vLLM {r.version}, {r.engine.upper()} engine ({_VERSION_FROM.get(r.version_origin, 'version given') if r.version_origin != 'none' else 'newest known release, version not given'})",
           "defaults used: " + ", ".join(f"{d}={r.values[d].value}" for d in ROW_ORDER
                                         if d in r.values and r.values[d].origin == "default"
                                         and d in ("max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill",
                                                   "enable_prefix_caching", "gpu_memory_utilization", "max_model_len",
                                                   "block_size", "kv_cache_dtype", "async_scheduling")),
           (f"workload: {describe(sc.spec)}"
            + (" (no workload given: the chat preset is assumed)" if r.deployment.context.workload is None
               and sc.spec.preset == "chat" else "")) if sc is not None
           else "workload: not simulated (vLLM would refuse the config)",
           (f"scheduler CPU time {sc.host_times['overhead_s'] * 1000:.1f} ms per step"
            + (", hidden behind the GPU step by async scheduling" if r.value("async_scheduling") else "")
            + _front_end_note(sc.host_times)) if sc is not None
           else "scheduler CPU time: not simulated",
           _memory_assumption(r)]
    return out


def _front_end_note(host: dict) -> str:
    """The front end's costs where the calibration gives any, per API server."""
    parts = [f"{host['front_end_s'] * 1000:.1f} ms per request"] if host["front_end_s"] else []
    if host["front_end_token_s"]:
        parts.append(f"{host['front_end_token_s'] * 1e6:.0f} us per streamed token")
    if not parts:
        return ""
    servers = host["api_servers"]
    return f"; front end {' and '.join(parts)}" + (f", shared by {servers} API servers" if servers > 1 else "")


def _memory_assumption(r: ResolvedDeployment) -> str:
    from ..calibration.select import memory_settings_moved
    from ..capacity.profile_terms import LABELS

    terms = r.calibration.memory.terms() if r.calibration is not None else {}
    if not terms:
        return "memory: activation peak, non-torch and CUDA-graph memory are estimates (the capacity command shows them)"
    logs = sum(1 for s in r.calibration.sources if s.kind == "log")
    moved = memory_settings_moved(r.calibration, r)
    rest = [label for name, label in LABELS.items() if name not in terms]
    return (f"memory: {', '.join(LABELS[n] for n in terms)} from the calibration profile '{r.calibration.name}' "
            f"(measured in {logs} start-up log{'s' if logs != 1 else ''} of this deployment"
            + (", scaled to this deployment's " + ", ".join(f"{k} {now} (measured at {then})"
                                                            for k, (then, now) in moved.items())
               + " with the capacity model's estimate" if moved else "") + ")"
            + (f"; {', '.join(rest)} estimated" if rest else ""))


def _null_metrics() -> Metrics:
    return Metrics(output_throughput=0.0, total_token_throughput=0.0, request_throughput=0.0, ttft_mean_ms=None,
                   ttft_p99_ms=None, itl_median_ms=None, itl_p99_ms=None, tpot_mean_ms=None, e2el_p99_ms=None,
                   preemptions=0, completed=0, goodput_rps=0.0)
