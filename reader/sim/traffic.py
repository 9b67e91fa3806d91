"""The traffic a service carries (a plan sizes for it; a diagnosis of several replicas splits it), and the share
of it one replica sees.

A workload's arrivals say what "load" means: a rate (Poisson or gamma arrivals, or a trace with
timestamps), a number of clients (a closed loop), or a batch (everything at t=0). Replicas behind a
load balancer split it: each of n replicas sees 1/n of the rate, of the clients or of the batch.
A random split of Poisson arrivals is again Poisson, so a replica's share of a Poisson workload is
the same workload at 1/n of the rate (a round-robin balancer gives each replica smoother arrivals,
so this errs on the safe side); a trace is split round robin, request by request.
"""
from __future__ import annotations

import math
from typing import Literal, Optional, Union

import numpy as np

from ..errors import ReaderError
from .workload import Workload, WorkloadSpec, generate

Kind = Literal["rate", "clients", "batch", "trace"]
UNITS = {"rate": "req/s", "clients": "clients", "batch": "requests", "trace": "req/s"}
Share = Union[WorkloadSpec, Workload]


class Traffic:
    """The whole deployment's load (`total`, in `unit`) and each replica's share of it."""

    def __init__(self, spec: WorkloadSpec, target_rate: Optional[float] = None) -> None:
        self.notes: list[str] = []
        self.spec = spec
        self.trace: Optional[Workload] = None
        if spec.trace:
            self._from_trace(generate(spec), target_rate)
        else:
            self._from_spec(spec, target_rate)

    @property
    def unit(self) -> str:
        return UNITS[self.kind]

    @property
    def integral(self) -> bool:
        """Whether a replica's share is a whole number (clients, requests)."""
        return self.kind in ("clients", "batch")

    def per_replica(self, replicas: int, headroom: float = 0.0) -> float:
        """The load one of `replicas` replicas must carry, sized `headroom` above its share."""
        load = self.total * (1.0 + headroom) / replicas
        return float(math.ceil(load - 1e-9)) if self.integral else load

    def share(self, replicas: int, load: float) -> Share:
        """The workload one replica of `replicas` sees when it carries `load` (in `unit`)."""
        if self.kind == "trace":
            return self._trace_share(replicas, load)
        spec = self.spec
        arrival = spec.arrival
        if self.kind == "rate":
            cap = arrival.concurrency
            update = {"rate": load}
            if cap is not None:  # a client-side cap on requests in flight is split with the rate
                update["concurrency"] = max(1, math.ceil(cap * load / self.total))
            return spec.model_copy(update={"arrival": arrival.model_copy(update=update)})
        if self.kind == "clients":
            return spec.model_copy(update={"arrival": arrival.model_copy(update={"concurrency": int(load)})})
        return spec.model_copy(update={"num_requests": int(load)})

    def most_in_flight(self, replicas: int, load: float) -> Optional[int]:
        """The most requests one of `replicas` replicas can hold at once when it carries `load`: its clients (a
        closed loop), its whole batch, or a rate's client-side cap; None where arrivals are not capped."""
        if self.kind in ("batch", "trace"):
            return int(load) if self.kind == "batch" else None
        cap = self.share(replicas, load).arrival.concurrency
        return int(cap) if cap is not None else None

    # ---- kinds of traffic -----------------------------------------------------------------------

    def _from_spec(self, spec: WorkloadSpec, target_rate: Optional[float]) -> None:
        a = spec.arrival
        if target_rate is not None:
            if a.process not in ("poisson", "gamma"):
                self.notes.append(f"--target-rate {target_rate:g} req/s replaces the workload's arrivals "
                                  f"({'a closed loop' if a.process == 'closed' else 'all requests at t=0'}) with "
                                  "Poisson arrivals at that rate")
                a = a.model_copy(update={"process": "poisson", "concurrency": None})
            self.spec = spec.model_copy(update={"arrival": a.model_copy(update={"rate": float(target_rate)})})
            self.kind, self.total = "rate", float(target_rate)
        elif a.process in ("poisson", "gamma"):
            self.kind, self.total = "rate", float(a.rate)
        elif a.process == "closed":
            self.kind, self.total = "clients", float(a.concurrency)
        else:
            self.kind, self.total = "batch", float(spec.num_requests)
            if a.concurrency is not None:
                raise ReaderError("a batch sent with a concurrency cap cannot be split between replicas; "
                                  "give the workload a rate (or --target-rate) or a closed loop (process: closed).",
                                  key="--workload")

    def _from_trace(self, full: Workload, target_rate: Optional[float]) -> None:
        if full.num_requests < 2:
            raise ReaderError("a trace needs at least two requests to be split between replicas.", key="--workload")
        span = float(full.arrival[-1] - full.arrival[0])
        if span <= 0 and target_rate is None:
            raise ReaderError("every request of the trace arrives at the same time, so it has no rate; give "
                              "--target-rate, or a workload spec with process: burst.", key="--workload")
        rate = (full.num_requests - 1) / span if span > 0 else float(target_rate)
        if target_rate is not None and span > 0:
            full = _scaled(full, rate / target_rate)
            self.notes.append(f"the trace's arrival times are scaled from {rate:.3g} to {target_rate:g} req/s "
                              "(--target-rate)")
            rate = float(target_rate)
        elif span <= 0:
            full = _scaled(_spread(full), 1.0 / rate)
        self.trace, self.kind, self.total = full, "trace", rate

    def _trace_share(self, replicas: int, load: float) -> Workload:
        assert self.trace is not None
        rows = np.arange(0, self.trace.num_requests, replicas)
        part = Workload(self.trace.arrival[rows], self.trace.prompt_len[rows], self.trace.output_len[rows],
                        self.trace.prefix_group[rows], self.trace.prefix_len[rows], self.trace.priority[rows],
                        self.trace.max_concurrency,
                        description=f"{self.trace.description}, every {replicas}th request" if replicas > 1
                        else self.trace.description)
        own = self.total / replicas
        return _scaled(part, own / load)


def _scaled(wl: Workload, factor: float) -> Workload:
    """The same requests with every arrival time multiplied by `factor` (the first stays at t=0)."""
    start = wl.arrival[0] if wl.arrival.size else 0.0
    return Workload((wl.arrival - start) * factor, wl.prompt_len, wl.output_len, wl.prefix_group, wl.prefix_len,
                    wl.priority, wl.max_concurrency, description=wl.description)


def _spread(wl: Workload) -> Workload:
    """Arrivals one second apart (a rate of 1 req/s), for a trace that gives no times."""
    return Workload(np.arange(wl.num_requests, dtype=float), wl.prompt_len, wl.output_len, wl.prefix_group,
                    wl.prefix_len, wl.priority, wl.max_concurrency, description=wl.description)
