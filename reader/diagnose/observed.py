"""diagnose --metrics: the simulation driven by the load a server's metrics show, set beside what they show.

The observed load (request count, length histograms, arrivals per interval) becomes the scenario's
workload; the prediction is the simulation of it with the config's own settings, capacity and step-time
model, and that is what the verdict, the latencies and the throughputs compare.

How the load meets the scheduler (engine steps, preemptions, queues, time averages) depends on how fast
the server works through it: a step-time model that is off (a GPU assumed, say) would change those counts
for reasons that are not the scheduler's. So they are compared on simulations whose step times are scaled
to the server's own (its observed inter-token latency over the predicted one). What the metrics cannot tell
(which prompt went with which output, the order inside an interval) is drawn: those rows show the median
over several draws, and their range.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Optional

from ..config.resolve import ResolvedDeployment
from ..errors import ReaderError
from ..evidence.compare import KV_SIZE, STEP_TIME, WORKLOAD, Comparison, compare
from ..evidence.model import Evidence
from ..observe.evidence import Observation, Settings
from ..observe.load import workload
from .scenario import Scenario

# Predicted counts are the median over this many draws of the observed load, fewer for large loads.
MAX_DRAWS = 9
DRAW_BUDGET_REQUESTS = 20_000
# The rows compared on the simulations at the server's own speed.
PACED_KEYS = ("kv.usage_mean", "kv.time_full", "sched.steps", "sched.preemptions", "sched.tokens_per_step",
              "sched.budget_fill", "sched.running_mean", "sched.running_peak", "sched.waiting_peak")


NO_STEP_TIME = "no step time on both sides"


class ScaledStepTime:
    """A step-time model whose every step takes `factor` times as long (decode shortcut included)."""

    def __init__(self, model: Any, factor: float):
        self.model, self.factor = model, factor
        self.deterministic = getattr(model, "deterministic", True)
        inner = getattr(model, "decode_time", None)
        self.decode_time = (lambda n, past, sampled: factor * inner(n, past, sampled)) if inner is not None else None

    def __call__(self, batch: Any) -> float:
        return self.factor * self.model(batch)

    @property
    def host_overhead_s(self) -> float:  # host times stay the calibration's: the factor scales model steps
        return self.model.host_overhead_s

    @property
    def front_end_s(self) -> float:
        return self.model.front_end_s

    @property
    def front_end_token_s(self) -> float:
        return self.model.front_end_token_s

    @property
    def idle_wake_s(self) -> float:
        return self.model.idle_wake_s

    @property
    def response_latency_s(self) -> float:
        return self.model.response_latency_s

    @property
    def response_latency_per_request_s(self) -> float:
        return self.model.response_latency_per_request_s


def settings_of(r: ResolvedDeployment) -> Settings:
    return Settings(max_num_seqs=r.value("max_num_seqs"), max_num_batched_tokens=r.value("max_num_batched_tokens"))


def observe_for(r: ResolvedDeployment, sources: list[str], progress: Any = None) -> Observation:
    """The metrics behind --metrics: a live URL (scraped over the default window), saved scrapes, or the JSON
    report of `vllm-reader observe` (which is how a Prometheus range comes in)."""
    from ..observe.report import observation
    from ..observe.sources import LiveWindow, collect

    if len(sources) == 1 and sources[0].endswith(".json"):
        return _from_report(sources[0])
    return observation(collect(sources, LiveWindow(), None, progress), settings_of(r))


def _from_report(path: str) -> Observation:
    from ..observe.report import ObserveReport

    try:
        data = json.loads(Path(path).read_text())
        report = ObserveReport.model_validate(data)
    except OSError as err:
        raise ReaderError(f"cannot read the file: {err.strerror}.", file=path, key="--metrics") from None
    except ValueError:
        raise ReaderError("not a JSON report of `vllm-reader observe --format json`.", file=path,
                          key="--metrics") from None
    return Observation(evidence=report.evidence, load=report.load, source=report.source, snapshots=report.snapshots,
                       window_s=report.window_s, busy_s=report.busy_s, traffic=report.traffic,
                       engines=report.engines, model_name=report.model_name, names_used=report.names_used,
                       missing=report.missing, unread=report.unread, settings=report.settings)


def observed_workload(obs: Observation, r: ResolvedDeployment, seed: int = 0) -> tuple[Any, Any]:
    if "finished" in obs.unread:
        raise ReaderError(f"the metrics ({obs.source}) do not say how many requests finished: "
                          "vllm:request_success_total is not in both the first and the last scrape (a page cut "
                          "short?), so the observed load is unknown.", key="--metrics",
                          hint="Scrape the server again and keep whole pages.")
    if not obs.traffic or obs.load.num_requests <= 0:
        raise ReaderError(f"the metrics ({obs.source}) show no finished request: there is no observed load to "
                          "simulate.", key="--metrics", hint="Observe the server while it serves traffic.")
    max_len = r.value("max_model_len")
    return workload(obs.load, seed=seed, max_model_len=max_len if max_len and max_len > 0 else None)


def speed_factor(predicted: Evidence, observed: Evidence) -> tuple[float, str]:
    """How much longer the server's steps took than predicted, and from what: the mean step while busy, else
    the inter-token latency's median (about one decode step)."""
    for what, p, o in (("mean step while busy", predicted.step_ms_mean, observed.step_ms_mean),
                       ("inter-token latency median", predicted.itl_ms.median, observed.itl_ms.median)):
        if p and o:
            return min(max(o / p, 1e-3), 1e3), what
    return 1.0, NO_STEP_TIME


def draws_of(scenario: Scenario, obs: Observation, factor: float) -> dict[str, list[float]]:
    """The paced rows' values over draws of the observed load, simulated at the server's speed."""
    from ..evidence.compare import figures
    from ..evidence.from_sim import from_simulation

    n = max(obs.load.num_requests, 1)
    count = max(1, min(MAX_DRAWS, DRAW_BUDGET_REQUESTS // n))
    paced = dataclasses.replace(scenario, step_time=ScaledStepTime(scenario.step_time, factor))
    values: dict[str, list[float]] = {key: [] for key in PACED_KEYS}
    for seed in range(count):
        spec, generated = observed_workload(obs, scenario.resolved, seed)
        ev = from_simulation(dataclasses.replace(paced, spec=spec, workload=generated).run())
        for f in figures(ev):
            if f.key in values and f.value is not None:
                values[f.key].append(f.value)
    return {key: v for key, v in values.items() if v}


def comparison(scenario: Scenario, obs: Observation, predicted: Evidence) -> Comparison:
    r = scenario.resolved
    factor, basis = speed_factor(predicted, obs.evidence)
    draws = draws_of(scenario, obs, factor)
    reasons = {}
    if r.gpu_assumed:
        reasons["latency"] = reasons["throughput"] = (
            f"{STEP_TIME}; here the GPU was not given and {r.gpu.id if r.gpu else 'a GPU'} was assumed")
    if r.calibration is not None:
        name = getattr(r.calibration, "name", "given")
        reasons["latency"] = reasons["throughput"] = (
            f"{WORKLOAD}; or the step times of the calibration profile {name} (given, so no GPU was assumed) differ "
            "from this server's now (a busier host, another load)")
    if r.model_guessed:
        reasons["kv"] = f"{KV_SIZE}; the model's shape was inferred or assumed ({r.model_how})"
    n_draws = max((len(v) for v in draws.values()), default=1)
    notes = [f"Predicted: the simulation of {scenario.workload.description}.",
             (f"Steps, preemptions, queues and time averages: simulated with every step {factor:.3g} times as long "
              f"as predicted (the server's {basis} over the predicted one), so that how the load meets the "
              "scheduler does not hang on the step-time model; " if basis != NO_STEP_TIME else
              "Steps, preemptions, queues and time averages: simulated at the predicted speed (neither side has a "
              "step time to pace it by); ")
             + (f"the median of {n_draws} simulations drawing what the metrics do not say (which prompt went with "
                "which output, their order)." if n_draws > 1 else "one simulation (the load is large)."),
             "Latencies and throughputs: the prediction as configured.",
             "Engine steps are counted as vLLM counts them (vllm:iteration_tokens_total): steps in which a request "
             "got a token."]
    return compare(predicted, obs.evidence, draws=draws, reasons=reasons, notes=notes)


def with_capacity(ev: Evidence, scenario: Scenario) -> Evidence:
    """The predicted KV-cache figures the simulation does not carry, from the capacity model."""
    cap = scenario.capacity
    return ev.model_copy(update={"num_gpu_blocks": int(cap.num_gpu_blocks.value),
                                 "block_size": scenario.settings.block_size if scenario.settings else None,
                                 "kv_cache_tokens": int(cap.gpu_kv_cache_tokens.value)})


def observed_verdict(obs: Observation, slos_ms: dict[str, float]) -> Optional[Any]:
    from ..evidence.verdict import decide

    return decide(obs.evidence, slos_ms, None) if obs.traffic and not obs.unjudged else None
