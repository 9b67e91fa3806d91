"""Entry points of the simulator.

    from reader.sim.api import SchedulerSettings, load_workload, simulate, run_modes
    settings = SchedulerSettings(max_num_seqs=256, max_num_batched_tokens=8192, num_gpu_blocks=30000,
                                 vllm_version="0.32.0")
    result = simulate(settings, load_workload("chat"), step_time=lambda batch: 0.02, mode="chunked", seed=0)

`step_time(batch)` returns the seconds one engine step takes for a `reader.batch.StepBatch`; the
simulator knows nothing else about the hardware. It must be a deterministic function of the
batch: the value for a one-request decode batch may be reused for the same batch later (give the
callable an attribute `deterministic = False` to prevent that).
"""
from __future__ import annotations

import os
from typing import Any, Iterable

from ..errors import ReaderError
from .engine import DEFAULT_SCHEDULER_OVERHEAD_S, MODES, FrontEnd, ProgressFn, StepTimeFn, run_mode
from .far_miss import FarMiss
from .metrics import GOODPUT_KEYS, summarize
from .result import SimResult
from .settings import ResolvedSettings, SchedulerSettings, SpeculativeSettings, resolve
from .workload import PRESETS, Workload, WorkloadSpec, generate, load_workload

__all__ = ["SchedulerSettings", "SpeculativeSettings", "WorkloadSpec", "Workload", "SimResult", "MODES", "PRESETS",
           "DEFAULT_SCHEDULER_OVERHEAD_S", "load_workload", "make_workload", "resolve_settings", "simulate",
           "run_modes"]


def make_workload(workload: WorkloadSpec | Workload | dict[str, Any] | str | os.PathLike, seed: int | None = None
                  ) -> Workload:
    """Concrete requests from a spec, a dict, a file, a preset name, or an existing Workload."""
    if isinstance(workload, Workload):
        return workload
    return generate(load_workload(workload), seed)


def resolve_settings(settings: SchedulerSettings | dict[str, Any],
                     workload: Workload | None = None) -> ResolvedSettings:
    if isinstance(settings, dict):
        settings = SchedulerSettings.from_dict(settings)
    return resolve(settings, longest_request=workload.longest_request if workload is not None else 2048)


def _seed(workload: Any, seed: int | None) -> int:
    if seed is not None:
        return int(seed)
    if isinstance(workload, WorkloadSpec):
        return workload.seed
    return 0


def simulate(settings: SchedulerSettings | dict[str, Any], workload: WorkloadSpec | Workload | dict | str,
             step_time: StepTimeFn, mode: str = "chunked", seed: int | None = None,
             progress: ProgressFn | None = None, *, overhead_s: float | None = None,
             slos_ms: dict[str, float] | None = None, keep_requests: bool = False, fast_path: bool = True,
             leaps: bool = True, max_points: int = 500, front_end_s: float = 0.0,
             front_end_token_s: float = 0.0, api_servers: int = 1, response_latency_s: float = 0.0,
             response_latency_per_request_s: float = 0.0, idle_wake_s: float = 0.0, stop_beyond_ms: dict[str, float] | None = None) -> SimResult:
    """Simulate one serving mode ('naive', 'static', 'continuous' or 'chunked').

    seed: draws the workload (when it is a spec) and the speculative-decoding acceptances; the
    same seed gives the same result. overhead_s: CPU time per engine step outside the model
    (default DEFAULT_SCHEDULER_OVERHEAD_S). front_end_s: time the server's front end spends on each
    request, one at a time, before the scheduler sees it (latencies still count from the send);
    front_end_token_s: its time per streamed token, in the same queue, before the client reads the token;
    api_servers: how many API servers share that work (--api-server-count; engine.FrontEnd).
    idle_wake_s: the time an engine idle for engine.IDLE_WAKE_AFTER_S or more takes to start on a new request.
    response_latency_s: time from the engine emitting a token to the client reading it; every token reaches
    the client that much later (TTFT and end-to-end latency grow by it, TPOT and ITL do not);
    response_latency_per_request_s: as much again for each request in flight when a request's first token is
    emitted (engine.EngineRun.delay_responses). slos_ms: goodput SLOs, keys ttft/tpot/e2el/itl in ms.
    progress(done, total) is called as requests finish. fast_path=False walks the running batch one
    request at a time, as vLLM does; leaps=False runs every pure-decode step on its own (both give
    the same result: they are there for the tests). stop_beyond_ms: limits (keys ttft, itl, in ms) whose P99
    only matters as above or not: the run ends once one is certainly above (result.stopped says which; its
    figures then cover the part simulated only). step_time must be a deterministic function of
    the batch: the simulator may reuse its value for an identical batch (set an attribute
    `deterministic = False` on the callable to prevent that)."""
    if mode not in MODES:
        raise ReaderError(f"unknown mode '{mode}' (known: {', '.join(MODES)}).", key="mode")
    if slos_ms:
        bad = [k for k in slos_ms if k not in GOODPUT_KEYS]
        if bad:
            raise ReaderError(f"unknown goodput SLO '{bad[0]}' (known: {', '.join(GOODPUT_KEYS)}).", key="goodput")
    s = _seed(workload, seed)
    wl = make_workload(workload, s if seed is not None else None)
    cfg = resolve_settings(settings, wl)
    overhead = DEFAULT_SCHEDULER_OVERHEAD_S if overhead_s is None else float(overhead_s)
    if overhead < 0:
        raise ReaderError("the scheduler overhead must be >= 0 seconds.", key="overhead_s")
    if front_end_s < 0 or front_end_token_s < 0:
        raise ReaderError("the front end's times per request and per streamed token must be >= 0 seconds.",
                          key="front_end_s" if front_end_s < 0 else "front_end_token_s")
    if idle_wake_s < 0:
        raise ReaderError("an idle engine's wake-up time must be >= 0 seconds.", key="idle_wake_s")
    if api_servers < 1:
        raise ReaderError(f"the API server count must be at least 1, not {api_servers}.", key="api_server_count")
    if response_latency_s < 0 or response_latency_per_request_s < 0:
        raise ReaderError("the response latency must be >= 0 seconds.",
                          key="response_latency_s" if response_latency_s < 0 else "response_latency_per_request_s")
    far_miss = FarMiss(stop_beyond_ms, wl.num_requests, wl.output_len) if stop_beyond_ms else None
    run = run_mode(cfg, wl, step_time, mode, overhead_s=overhead, seed=s, fast_path=fast_path, leaps=leaps,
                   progress=progress, front_end=FrontEnd(front_end_s, front_end_token_s, api_servers),
                   idle_wake_s=idle_wake_s, far_miss=far_miss)
    run.delay_responses(response_latency_s, response_latency_per_request_s)
    return summarize(run, seed=s, slos_ms=slos_ms, max_points=max_points, keep_requests=keep_requests)


def run_modes(settings: SchedulerSettings | dict[str, Any], workload: WorkloadSpec | Workload | dict | str,
              step_time: StepTimeFn, modes: Iterable[str] | str = "all", seed: int | None = None,
              progress: ProgressFn | None = None, **kwargs: Any) -> list[SimResult]:
    """simulate() for several modes on the same requests; modes='all' runs all four."""
    chosen = list(MODES) if modes == "all" else ([modes] if isinstance(modes, str) else list(modes))
    s = _seed(workload, seed)
    wl = make_workload(workload, s if seed is not None else None)
    total = wl.num_requests * len(chosen)
    results = []
    for i, mode in enumerate(chosen):
        offset = i * wl.num_requests
        sub = (lambda done, _n, off=offset: progress(off + done, total)) if progress else None
        results.append(simulate(settings, wl, step_time, mode, s, sub, **kwargs))
    return results
