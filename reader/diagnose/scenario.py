"""A scenario: one resolved deployment with its capacity, step-time model and workload, ready to simulate.

Built from typed stage outputs only (resolve -> capacity -> sim settings). What-if changes and
sweeps build a new scenario from an edited deployment, so every derived default moves with the
change exactly as it does in vLLM.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..capacity.api import Capacity, compute_capacity
from ..config.edit import with_flags
from ..config.model import Deployment
from ..config.resolve import ResolvedDeployment, resolve
from ..pipeline import capacity_request, step_time_model, workload_spec
from ..sim.api import SchedulerSettings, SimResult, SpeculativeSettings, Workload, make_workload, simulate
from ..sim.traffic import Traffic

# Acceptance rate per drafted token when the workload does not say: a round middle-of-the-road figure
# per method family (published acceptance varies from ~0.3 to ~0.8 with model, data and k). Stated in
# every report that uses it.
ASSUMED_ACCEPTANCE = {"eagle": 0.7, "eagle3": 0.75, "mtp": 0.75, "draft_model": 0.6, "ngram": 0.35,
                      "suffix": 0.35, "medusa": 0.5}
_SIM_METHOD = {"eagle": "eagle", "eagle3": "eagle3", "mtp": "mtp", "draft_model": "draft_model", "ngram": "ngram",
               "suffix": "suffix", "medusa": "medusa"}


@dataclass
class Scenario:
    resolved: ResolvedDeployment
    capacity: Capacity
    spec: Any  # WorkloadSpec
    workload: Any  # Workload (concrete requests)
    step_time: Any  # StepTimeModel
    settings: Optional[SchedulerSettings]  # None when vLLM would not start
    slos_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seed: int = 0
    kv_correction: tuple[float, str] = (0.0, "")  # what a log measured beyond our estimate, for the what-ifs

    @property
    def starts(self) -> bool:
        return self.settings is not None

    def run(self, mode: str = "chunked", keep_requests: bool = False,
            stop_beyond_ms: Optional[dict[str, float]] = None) -> SimResult:
        assert self.settings is not None, "a deployment that does not start cannot be simulated"
        return simulate(self.settings, self.workload, self.step_time, mode=mode, seed=self.seed,
                        slos_ms=self.slos_ms or None, keep_requests=keep_requests, stop_beyond_ms=stop_beyond_ms,
                        **self.host_times)

    @property
    def host_times(self) -> dict[str, float]:
        """The simulator's host-side times from the step-time model's calibration: per engine step outside
        the model (overhead_s), per request and per streamed token in the server's front end (front_end_s,
        front_end_token_s), shared by --api-server-count servers (api_servers), and an idle engine's wake-up."""
        given = self.resolved.deployment.flags.get("api_server_count")
        servers = given.value if given is not None and isinstance(given.value, int) and given.value >= 1 else 1
        return {"overhead_s": self.step_time.host_overhead_s, "front_end_s": self.step_time.front_end_s,
                "front_end_token_s": self.step_time.front_end_token_s, "api_servers": servers,
                "response_latency_s": self.step_time.response_latency_s,
                "response_latency_per_request_s": self.step_time.response_latency_per_request_s,
                "idle_wake_s": self.step_time.idle_wake_s}


def slos_from(r: ResolvedDeployment) -> dict[str, float]:
    """The SLOs the deployment was given (--slo-* options win over the comment block when it is loaded)."""
    ctx = r.deployment.context
    ttft, itl = ctx.slo_ttft_p99_ms, ctx.slo_itl_p99_ms
    out = {}
    if ttft:
        out["ttft"] = float(ttft)
    if itl:
        out["itl"] = float(itl)
    return out


def build_scenario(resolved: ResolvedDeployment, slos_ms: Optional[dict[str, float]] = None,
                   spec: Any = None, generated: Any = None,
                   kv_correction: Optional[tuple[float, str]] = None) -> Scenario:
    """From a resolved deployment: capacity, step-time model, workload and scheduler settings. The workload is
    the deployment's own (--workload or the comment block; loading put it in its context) unless given."""
    shared: list[str] = []
    if spec is None:  # the deployment's own workload; requests given by the caller are taken as they are
        spec, share = replica_share(resolved, workload_spec(resolved), shared)
        generated = generated if generated is not None else share
    generated = generated if generated is not None else make_workload(spec, spec.seed)
    measured = kv_correction is None
    cap = compute_capacity(capacity_request(resolved, generated, measured=measured,
                                            kv_correction=kv_correction or (0.0, "")))
    notes: list[str] = shared + list(cap.warnings)  # parts of the model the memory figures leave out, said plainly
    settings = None if cap.startup_error is not None else scheduler_settings(resolved, cap, notes)
    correction = kv_correction or _logged_correction(resolved, generated, cap)
    return Scenario(resolved=resolved, capacity=cap, spec=spec, workload=generated,
                    step_time=step_time_model(resolved), settings=settings, slos_ms=dict(slos_ms or {}),
                    notes=notes, seed=spec.seed, kv_correction=correction)


def replica_share(resolved: ResolvedDeployment, spec: Any, notes: list[str]) -> tuple[Any, Optional[Workload]]:
    """The load one replica carries: a workload given for the whole service (`scope: service`) is split between
    the replicas the file runs, as a load balancer would (sim/traffic.py); either way the notes say whose it is."""
    ctx = resolved.deployment.context
    count = ctx.replicas or 1
    if spec.scope != "service":
        if count > 1:
            notes.append(f"the workload is read as one replica's load; the file runs {count} replicas "
                         f"({ctx.replicas_source}): give it `scope: service` to split a whole service's load")
        return spec, None
    if count == 1:
        notes.append("the workload is the whole service's (scope: service) and the file runs one replica"
                     + ("" if ctx.replicas else " (it gives no replica count)") + ", which carries all of it")
        return spec, None
    traffic = Traffic(spec)
    own = traffic.total / count
    share = traffic.share(count, own)
    notes.append(f"the workload is the whole service's (scope: service): each of the {count} replicas "
                 f"({ctx.replicas_source}) is simulated with 1/{count} of it, {own:.3g} of {traffic.total:.3g} "
                 f"{traffic.unit}")
    return (spec, share) if isinstance(share, Workload) else (share, None)


@dataclass(frozen=True)
class Change:
    """What one trial changes: vLLM flags, and (for a plan) the GPU type and count and the traffic one
    replica sees. None keeps the base's."""

    flags: dict[str, Any] = field(default_factory=dict)
    gpu: Optional[str] = None
    gpu_count: Optional[int] = None
    workload: Any = None  # a WorkloadSpec (drawn with its own seed) or a Workload (concrete requests)
    # P99 limits (ttft, itl; ms) the trial only needs to know it is under: the simulation ends once one is certainly
    # over (the trial is then "stopped", without figures)
    stop_beyond_ms: Optional[dict[str, float]] = None


def rebuild(base: Scenario, changes: "dict[str, Any] | Change") -> Scenario:
    """The same scenario with some vLLM flags changed (same workload, same seed, same SLOs unless the
    Change gives another GPU or workload). A deployment read from a log is estimated again, moved by what the
    log measured beyond the estimate at its own settings."""
    change = changes if isinstance(changes, Change) else Change(flags=changes)
    deployment: Deployment = with_flags(base.resolved.deployment, change.flags)
    if change.gpu is not None or change.gpu_count is not None:
        context = deployment.context.model_copy(update=_hardware(change))
        deployment = deployment.model_copy(update={"context": context})
    b = base.resolved
    # the calibration travels with every trial; a device it stands in for stays, unless the trial changes GPU
    device = b.gpu if b.gpu is not None and b.gpu.vendor == "other" and change.gpu is None else None
    resolved = resolve(deployment, calibration=b.calibration,
                       calibration_path=b.calibration_path, device=device,
                       model_resolution=b.model_resolution)
    spec, generated = base.spec, base.workload
    if isinstance(change.workload, Workload):
        generated = change.workload
    elif change.workload is not None:
        spec, generated = change.workload, make_workload(change.workload, change.workload.seed)
    same_hardware = change.gpu is None and change.gpu_count is None  # else the log's measurements do not apply
    return build_scenario(resolved, slos_ms=base.slos_ms, spec=spec, generated=generated,
                          kv_correction=base.kv_correction if same_hardware else (0.0, ""))


def _hardware(change: Change) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if change.gpu is not None:
        out.update(gpu=change.gpu, gpu_origin="cli")
    if change.gpu_count is not None:
        out.update(gpu_count=change.gpu_count, gpu_count_origin="cli")
    return out


def _logged_correction(resolved: ResolvedDeployment, generated: Any, measured: Capacity) -> tuple[float, str]:
    if resolved.deployment.log is None or not measured.workers:
        return 0.0, ""
    estimated = compute_capacity(capacity_request(resolved, generated, measured=False))
    delta = measured.workers[0].available_kv.value - estimated.workers[0].available_kv.value
    return delta, "what the log measured beyond the estimate at its own settings"


def scheduler_settings(r: ResolvedDeployment, cap: Capacity, notes: list[str]) -> SchedulerSettings:
    v = r.value
    # The block size vLLM ends up with (hybrid Mamba models raise it, see Capacity.block_size). The
    # simulator keeps one KV-cache group; vLLM's own token capacity (its "GPU KV cache size" log line)
    # already divides hybrid models' blocks among their groups.
    block_size = cap.block_size
    blocks = int(cap.gpu_kv_cache_tokens.value) // block_size
    configured = v("block_size") or 16
    if block_size != configured:
        notes.append(f"KV blocks of {block_size} tokens, not {configured}: vLLM raises the attention block size of a "
                     "hybrid model so that one page holds a layer's recurrent state (the capacity command shows the sum)")
    if r.engine == "v0":
        notes.append("this release runs the V0 engine; it is simulated with the V1 scheduler, whose decisions differ "
                     "(V0 scheduled prefills and decodes in separate steps)")
    spec = None
    if r.speculative is not None and r.speculative.num_speculative_tokens > 0:
        family = r.speculative.family
        method = _SIM_METHOD.get(family)
        if method is None:
            notes.append(f"speculative method {r.speculative.method} is not simulated; decoding is modelled without it")
        else:
            rate = ASSUMED_ACCEPTANCE[method]
            spec = SpeculativeSettings(method=method, num_speculative_tokens=r.speculative.num_speculative_tokens,
                                       acceptance_rate=rate)
            notes.append(f"speculative decoding ({r.speculative.method}, k={r.speculative.num_speculative_tokens}) "
                         f"simulated with an assumed acceptance rate of {rate:.2f} per drafted token")
    max_len = v("max_model_len")
    if max_len in (None, -1):
        max_len = cap.max_model_len
    return SchedulerSettings(
        vllm_version=r.version, max_num_seqs=v("max_num_seqs"), max_num_batched_tokens=v("max_num_batched_tokens"),
        max_num_scheduled_tokens=r.derived["max_num_scheduled_tokens"].value,
        enable_chunked_prefill=bool(v("enable_chunked_prefill")),
        long_prefill_token_threshold=int(v("long_prefill_token_threshold") or 0),
        long_prefill_token_threshold_adaptive=v("long_prefill_token_threshold_adaptive"),
        max_num_active_seqs=v("max_num_active_seqs"), block_size=block_size, num_gpu_blocks=max(blocks, 2),
        enable_prefix_caching=bool(v("enable_prefix_caching")), scheduling_policy=v("scheduling_policy") or "fcfs",
        max_model_len=max_len, scheduler_reserve_full_isl=v("scheduler_reserve_full_isl"), watermark=v("watermark"),
        async_scheduling=v("async_scheduling"), speculative=spec,
    )
