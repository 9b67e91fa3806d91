"""The engine loop on a virtual clock, and the four serving modes.

Clock model (per step k; g_k = step_time(batch), o = scheduler overhead per step):

- synchronous scheduling: schedule(k) runs when step k-1's output has been processed (time c_k);
  the GPU step starts at s_k = c_k + o and ends at e_k = s_k + g_k; its tokens reach the client at
  e_k; c_{k+1} = e_k. Requests that arrived by c_k can be scheduled in step k.
- asynchronous scheduling (vLLM's AsyncScheduler with a batch queue of 2): the CPU schedules step
  k+1 while step k runs, right after processing step k-1's output, so c_{k+1} = s_k and
  s_{k+1} = max(e_k, s_k + o): the overhead is hidden unless it exceeds the GPU time. A request
  arriving during step k is first seen by schedule(k+2). The scheduler treats step k's tokens as
  already there (output placeholders), so its decisions are the synchronous ones except that a
  request finishing in step k still holds its blocks and its max_num_seqs slot during schedule(k+1)
  (it is skipped there) and is released after it.

A step that schedules no tokens runs no model: it costs only o.

Stretches of steps in which every running request decodes are run by leap.py (multi-step leaps,
admission included) with the same results as step by step; `leaps=False` turns them off, and so
does `fast_path=False` (the tests compare all three). Per-step records are `Column`s: appended to
one step at a time, or many steps at once by a leap.

Modes:
- chunked (CONTINUOUS+CHUNKED, the V1 default): the settings as given.
- continuous: iteration-level admission, whole prompts in one step (chunked prefill off, no
  long-prefill cap; the token budget is raised to max_model_len as vLLM does without chunking).
- naive: one request at a time (continuous with max_num_seqs = 1).
- static: fixed batches padded to the longest prompt and the longest output of the batch; the
  next batch starts when the whole batch is done (see run_static()).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Optional

import numpy as np

from ..batch import StepBatch
from .clock import step_clock
from .far_miss import FarMiss
from .leap import DecodeLeaps
from .request import FINISHED, REJECTED, RequestTable, SharedPrefixContent
from .scheduler import STOP_CODE, STOP_EMPTY, Scheduler
from .settings import ResolvedSettings
from .workload import Workload

# CPU time per engine step outside the model (scheduling, input preparation, output processing).
# A round figure for vLLM V1 on a server CPU; override per call (simulate(..., overhead_s=...)).
DEFAULT_SCHEDULER_OVERHEAD_S = 0.0005
# Loop turns between looks for a P99 already certainly missed. A look is O(1) now (EngineRun.ttft_over); 8 stays so
# that a stopped run ends at the turn it always did (its message counts the samples seen by then).
FAR_MISS_EVERY = 8

MODES = ("naive", "static", "continuous", "chunked")
StepTimeFn = Callable[[StepBatch], float]
# An engine idle this long has gone to sleep (issue 12 on the CPU build of vLLM 0.32.0: requests reaching an engine
# idle for 10 ms or more took ~3.5 ms longer to their first token; README, "What the model still misses on F").
IDLE_WAKE_AFTER_S = 0.010
ProgressFn = Callable[[int, int], None]
# The front end's stream never takes all of its loop: when it would, the front end paces the steps (FrontEnd.paced).
BUSY_MAX = 0.9



def settings_for_mode(cfg: ResolvedSettings, mode: str) -> ResolvedSettings:
    """The scheduler settings a mode runs with."""
    if mode == "chunked":
        return cfg
    if mode in ("continuous", "naive", "static"):
        budget = max(cfg.max_num_batched_tokens, cfg.max_model_len)
        changes = dict(enable_chunked_prefill=False, long_prefill_token_threshold=0,
                       max_num_batched_tokens=budget,
                       max_num_scheduled_tokens=max(cfg.max_num_scheduled_tokens, budget))
        if mode == "naive":
            changes.update(max_num_seqs=1, max_num_active_seqs=1)
        return replace(cfg, **changes)
    raise ValueError(f"unknown mode {mode!r}")


class Column:
    """One per-step record of a run: values appended one step at a time (a Python list, cheap to
    append to), or many steps at once (a leap adds numpy runs); `array()` joins them in order."""

    __slots__ = ("dtype", "_chunks", "_buf", "_len", "append")

    def __init__(self, dtype) -> None:
        self.dtype = np.dtype(dtype)
        self._chunks: list[np.ndarray] = []
        self._buf: list = []
        self._len = 0
        self.append = self._buf.append

    def _flush(self) -> None:
        if self._buf:
            self._chunks.append(np.array(self._buf, dtype=self.dtype))
            self._len += len(self._buf)
            self._buf = []
            self.append = self._buf.append

    def extend(self, values) -> None:
        """Add steps: a list or an array of values."""
        self._flush()
        a = np.asarray(values, dtype=self.dtype)
        self._chunks.append(a)
        self._len += a.size

    def extend_const(self, value, count: int) -> None:
        """Add `count` steps with the same value."""
        self._flush()
        self._chunks.append(np.full(count, value, dtype=self.dtype))
        self._len += count

    def array(self) -> np.ndarray:
        self._flush()
        if len(self._chunks) != 1:
            self._chunks = [np.concatenate(self._chunks) if self._chunks else np.empty(0, dtype=self.dtype)]
        return self._chunks[0]

    def __len__(self) -> int:
        return self._len + len(self._buf)


@dataclass
class EngineRun:
    """What happened, per request and per step (input to metrics.py)."""

    mode: str
    cfg: ResolvedSettings
    workload: Workload
    reqs: RequestTable
    send_time: np.ndarray
    first_scheduled: np.ndarray
    first_token: np.ndarray
    last_token: np.ndarray
    finish_time: np.ndarray
    max_itl: np.ndarray
    itl_chunks: list[np.ndarray]
    # per step
    step_start: Column = field(default_factory=lambda: Column(np.float64))
    step_end: Column = field(default_factory=lambda: Column(np.float64))
    step_tokens: Column = field(default_factory=lambda: Column(np.int64))
    step_seqs: Column = field(default_factory=lambda: Column(np.int64))
    step_prefill_tokens: Column = field(default_factory=lambda: Column(np.int64))
    step_decodes: Column = field(default_factory=lambda: Column(np.int64))
    step_sampled: Column = field(default_factory=lambda: Column(np.int64))  # requests that got a token
    step_kv_usage: Column = field(default_factory=lambda: Column(np.float64))
    step_free_blocks: Column = field(default_factory=lambda: Column(np.int64))
    step_running: Column = field(default_factory=lambda: Column(np.int64))
    step_waiting: Column = field(default_factory=lambda: Column(np.int64))
    step_stop: Column = field(default_factory=lambda: Column(np.int8))    # scheduler.STOP_CODE of the reason
    step_preempted: Column = field(default_factory=lambda: Column(np.int64))
    budget: int = 0
    recomputed_tokens: int = 0
    num_preemptions: int = 0
    prefix_queries: int = 0
    prefix_hits: int = 0
    spec_drafts: int = 0
    spec_accepted: int = 0
    leaps: int = 0          # multi-step leaps run (leap.py), and the steps they covered
    leap_steps: int = 0
    blocked_skips: int = 0  # leap steps whose admission was known to stop for KV blocks without a look
    notes: list[str] = field(default_factory=list)
    stopped: Optional[str] = None  # why the run ended before every request finished (far_miss.py)
    # TTFT samples above ttft_limit_s so far, counted as first tokens come out so that far_miss.py's look is O(1)
    # rather than a scan of every request (a first token is recorded once per request, so the count never goes back)
    ttft_limit_s: float = math.inf
    ttft_over: int = 0

    def first_tokens_out(self, rows: np.ndarray, t: float) -> None:
        """Requests `rows` emit their first token at t."""
        self.first_token[rows] = t
        if self.ttft_limit_s != math.inf:
            self.ttft_over += int(np.count_nonzero(t - self.send_time[rows] > self.ttft_limit_s))

    def delay_responses(self, seconds: float, per_request_s: float = 0.0) -> None:
        """Every token reaches the client `seconds` after the engine emits it, plus per_request_s for each request
        in flight (sent, not finished) when the request's first token is emitted; the engine's steps are
        unchanged."""
        delay = np.full(self.first_token.shape, float(seconds))
        if per_request_s:
            delay += per_request_s * self.in_flight_at(self.first_token)
        if delay.any():
            for times in (self.first_token, self.last_token, self.finish_time):
                times += delay

    def in_flight_at(self, when: np.ndarray) -> np.ndarray:
        """Requests sent by each time and not finished before it (NaN times count as never)."""
        sent = np.sort(self.send_time[~np.isnan(self.send_time)])
        finished = np.sort(self.finish_time[~np.isnan(self.finish_time)])
        t = np.where(np.isnan(when), -np.inf, when)
        return np.searchsorted(sent, t, side="right") - np.searchsorted(finished, t, side="left")


def _new_run(mode: str, cfg: ResolvedSettings, wl: Workload) -> EngineRun:
    """A run with a request table of the workload (request i is row i, id "i")."""
    n = wl.num_requests
    reqs = RequestTable([str(i) for i in range(n)], wl.prompt_len, wl.output_len, priority=wl.priority,
                        arrival=wl.arrival)
    nan = np.full(n, np.nan)
    return EngineRun(mode, cfg, wl, reqs, send_time=nan.copy(), first_scheduled=nan.copy(), first_token=nan.copy(),
                     last_token=nan.copy(), finish_time=nan.copy(), max_itl=np.zeros(n), itl_chunks=[],
                     budget=cfg.max_num_scheduled_tokens)


class FrontEnd:
    """The server's front end (API server: HTTP, tokenization, detokenization, the stream).

    Requests: one at a time, request_s each, before the scheduler sees them. Streamed tokens: token_s
    apiece, for one step's tokens while the engine runs the next; when a step's tokens take the front end
    longer than the next step and its host time take the engine, the front end sets the pace (paced): a saturated server
    streams no faster than its front end, wherever the engine could go (on a CPU host they share the cores).
    The two share one event loop, so a request taken in while tokens stream gets only the share of the loop
    the stream leaves (busy, the last step's token work over its length): request_s / (1 - busy). On the CPU
    build of vLLM 0.32.0 (issue 25) the time from the API server to the engine's queue grew from 5 ms with one
    request in flight to 12, 16 and 25 ms with 8, 16 and 32 streaming (the server's own histograms).
    With `servers` API servers (--api-server-count) the work is shared out, each cost divided by their
    number."""

    def __init__(self, request_s: float = 0.0, token_s: float = 0.0, servers: int = 1) -> None:
        self.request_s = request_s / servers
        self.token_s = token_s / servers
        self.free = 0.0  # when the front end has taken in the last request sent
        self.busy = 0.0  # the share of its time the last step's streamed tokens took
        self.last_end = 0.0  # when the last step that ran the model ended

    def receive(self, sent: float) -> float:
        """When a request sent at `sent` reaches the scheduler (its turn, then its cost in what the stream leaves)."""
        return max(sent, self.free) + self.request_s / (1.0 - self.busy)

    def streamed(self, tokens: int, end: float) -> None:
        """A step that ended at `end` gave `tokens` requests a token, streamed since the step before it ended."""
        if self.token_s:
            interval = end - self.last_end
            self.busy = min(BUSY_MAX, tokens * self.token_s / interval) if interval > 0 else BUSY_MAX
        self.last_end = end

    def paced(self, step_time: StepTimeFn, overhead_s: float) -> StepTimeFn:
        """The step times as the client sees them: a step and the host time before it (overhead_s) last no
        shorter than the front end's time for the step's tokens."""
        return step_time if not self.token_s else _Paced(step_time, self.token_s, overhead_s)


class _Paced:
    def __init__(self, step_time: StepTimeFn, token_s: float, overhead_s: float) -> None:
        self.step_time, self.token_s, self.overhead_s = step_time, token_s, overhead_s
        self.deterministic = getattr(step_time, "deterministic", True)
        inner = getattr(step_time, "decode_time", None)
        self.decode_time = (None if inner is None else
                            lambda n, past, sampled: max(inner(n, past, sampled), sampled * token_s - overhead_s))

    def __call__(self, batch: StepBatch) -> float:
        return max(float(self.step_time(batch)), batch.sampled * self.token_s - self.overhead_s)


class _Client:
    """Sends requests: at their arrival time, and only while fewer than max_concurrency are in flight.

    A request reaches the scheduler when the front end (FrontEnd) has taken it in; its latencies still count
    from its send."""

    def __init__(self, wl: Workload, front_end: FrontEnd | None = None) -> None:
        self.arrival = wl.arrival
        self.n = wl.num_requests
        self.next = 0
        self.front_end = front_end or FrontEnd()
        self.slots: list[float] | None = None
        if wl.max_concurrency is not None:
            self.slots = [0.0] * min(wl.max_concurrency, self.n)
            heapq.heapify(self.slots)

    def _next_send(self) -> float | None:
        if self.next >= self.n:
            return None
        a = float(self.arrival[self.next])
        if self.slots is None:
            return a
        if not self.slots:
            return None
        return max(a, self.slots[0])

    def next_send_time(self) -> float | None:
        """When the next request reaches the scheduler (its send time without a front-end delay)."""
        sent = self._next_send()
        return None if sent is None else self.front_end.receive(sent)

    def send_until(self, t: float) -> list[tuple[int, float]]:
        """The requests that reach the scheduler by t, with their send times."""
        out = []
        while True:
            sent = self._next_send()
            when = self.next_send_time()
            if when is None or when > t:
                return out
            if self.slots is not None:
                heapq.heappop(self.slots)
            self.front_end.free = when
            out.append((self.next, sent))
            self.next += 1

    def done(self, t: float) -> None:
        if self.slots is not None:
            heapq.heappush(self.slots, t)


def _receive(client: _Client, run: EngineRun, until: float, *, refuse: np.ndarray, accept: Callable[[int], None]
             ) -> int:
    """Requests sent by `until` go to `accept`, but those marked in `refuse`, which fail at once;
    returns how many were refused."""
    refused = 0
    for r, when in client.send_until(until):
        run.send_time[r] = when
        if refuse[r]:
            run.reqs.status[r] = REJECTED
            client.done(when)
            refused += 1
        else:
            accept(r)
    return refused


def _acceptance(rng: np.random.Generator, drafts: np.ndarray, rate: float) -> np.ndarray:
    """Accepted drafts per request: each draft is accepted with probability `rate` given the
    ones before it were, so P(accepted >= j) = rate**j."""
    if rate >= 1.0:
        return drafts.copy()
    if rate <= 0.0:
        return np.zeros_like(drafts)
    u = rng.random(drafts.size)
    runs = np.floor(np.log(np.maximum(u, 1e-300)) / math.log(rate)).astype(np.int64)
    return np.minimum(runs, drafts)


def run_v1(cfg: ResolvedSettings, wl: Workload, step_time: StepTimeFn, *, mode: str = "chunked",
           overhead_s: float = DEFAULT_SCHEDULER_OVERHEAD_S, seed: int = 0, fast_path: bool = True,
           leaps: bool = True, progress: ProgressFn | None = None, front_end: FrontEnd | None = None,
           idle_wake_s: float = 0.0, far_miss: FarMiss | None = None) -> EngineRun:
    """Continuous batching with vLLM's V1 scheduler (modes chunked, continuous, naive).

    idle_wake_s: an engine left without requests for IDLE_WAKE_AFTER_S or more takes this long to start its
    next step once one arrives (the engine core's busy loop has gone to sleep on its input queue).

    leaps: run stretches of pure-decode steps at once (leap.py; same results). fast_path=False
    (the one-request-at-a-time reference walk) turns them off too. far_miss: end the run (run.stopped
    says why) once a latency P99 is certainly above its limit."""
    n = wl.num_requests
    run = _new_run(mode, cfg, wl)
    reqs = run.reqs
    content = SharedPrefixContent(wl.prefix_group, wl.prefix_len, cfg.block_size) if cfg.enable_prefix_caching else None
    sched = Scheduler.build(cfg, reqs, content, fast_path=fast_path)
    client = _Client(wl, front_end)
    step_time = client.front_end.paced(step_time, overhead_s)
    rng = np.random.default_rng(seed)
    async_mode = cfg.async_scheduling
    mml = cfg.max_model_len
    t = 0.0            # when the next schedule() runs
    prev_end = None    # end of the GPU step in flight (async)
    done = 0
    report_every = max(1, n // 100)
    next_report = report_every

    # vLLM's input processor refuses a prompt of max_model_len tokens or more (HTTP 400).
    receive = partial(_receive, client, run, refuse=reqs.prompt_len >= mml, accept=sched.add_request)
    leaper = (DecodeLeaps(sched, run, client, receive, step_time, overhead_s, progress, report_every)
              if leaps and fast_path and not cfg.num_spec_tokens else None)
    if far_miss is not None:
        far_miss.watch(run)
    looked = 0
    while done < n:
        looked += 1
        if far_miss is not None and looked % FAR_MISS_EVERY == 0 and (why := far_miss.reason(run)) is not None:
            run.stopped = why
            break
        done += receive(t)
        if not sched.has_unfinished():
            when = client.next_send_time()
            if when is None:
                break
            idle_from = t if prev_end is None else prev_end
            t = max(t, when) + (idle_wake_s if when - idle_from >= IDLE_WAKE_AFTER_S else 0.0)
            prev_end = None
            continue
        if leaper is not None:
            jumped = leaper.leap(t, prev_end, done, next_report)
            if jumped is not None:
                t, prev_end, done, next_report = jumped
                continue
        plan = sched.schedule()
        released = sched.release_lingering() if async_mode else []
        c = t
        for r, resumed in zip(plan.admitted, plan.admitted_resumed):
            if not resumed:
                run.first_scheduled[r] = c
        idx = plan.idx
        if idx.size == 0:
            # No model run. With nothing preempted or released, nothing will ever change.
            if not plan.preempted and not released:
                dropped = _drop_unschedulable(sched, run, c)
                if not dropped:
                    raise RuntimeError("simulation stalled: a step scheduled nothing and changed nothing")
                done += dropped
            start = c + overhead_s if prev_end is None else max(prev_end, c + overhead_s)
            t = start
            if async_mode:
                prev_end = start
            _record_step(run, sched, plan, c, start)
            continue
        batch_sampled = plan.after >= plan.ntok
        batch = StepBatch(plan.n, plan.past, int(batch_sampled.sum()))
        gpu = float(step_time(batch))
        start, end, t, prev_end = step_clock(c, prev_end, gpu, overhead_s, async_mode)
        accepted = None
        if plan.spec is not None:
            drafts = plan.spec[batch_sampled]
            accepted = _acceptance(rng, drafts, cfg.acceptance_rate)
            run.spec_drafts += int(drafts.sum())
            run.spec_accepted += int(accepted.sum())
        upd = sched.update(plan, accepted, defer_finish=async_mode)
        _record_tokens(run, upd.sampled, upd.generated, end)
        client.front_end.streamed(upd.sampled.size, end)
        if upd.finished.size:
            run.finish_time[upd.finished] = end
            for _ in range(upd.finished.size):
                client.done(end)
            done += int(upd.finished.size)
        _record_step(run, sched, plan, start, end)
        if progress is not None and done >= next_report:
            progress(done, n)
            next_report = done + report_every
    if async_mode:
        sched.release_lingering()
    run.recomputed_tokens = sched.recomputed_tokens
    run.num_preemptions = sched.num_preemptions
    run.prefix_queries = sched.kv.prefix_queries
    run.prefix_hits = sched.kv.prefix_hits
    if leaper is not None:
        run.leaps, run.leap_steps = leaper.num_leaps, leaper.num_steps
        run.blocked_skips = leaper.num_blocked_skips
    if progress is not None:
        progress(done, n)
    return run


def _drop_unschedulable(sched: Scheduler, run: EngineRun, t: float) -> int:
    """Nothing ran and nothing changed: the head of the waiting queue can never be admitted (its
    prompt needs more KV blocks than the pool has). vLLM would wait forever; we fail it."""
    if not sched.waiting:
        return 0
    r = sched.waiting.pop()
    sched.reqs.status[r] = REJECTED
    run.finish_time[r] = np.nan
    run.notes.append(f"request {r} (prompt {int(sched.reqs.prompt_len[r])} tokens) can never fit the KV cache "
                     f"({sched.cfg.usable_blocks} usable blocks of {sched.cfg.block_size} tokens): counted as failed")
    return 1


def _record_tokens(run: EngineRun, sampled: np.ndarray, generated: np.ndarray, t: float) -> None:
    """Token times as a streaming client sees them: one chunk per request per step."""
    if sampled.size == 0:
        return
    first = run.reqs.num_output[sampled] == generated
    if first.all():
        run.first_tokens_out(sampled, t)
    else:
        later = sampled[~first]
        gaps = t - run.last_token[later]
        run.itl_chunks.append(gaps)
        run.max_itl[later] = np.maximum(run.max_itl[later], gaps)
        if first.any():
            run.first_tokens_out(sampled[first], t)
    run.last_token[sampled] = t


def _record_step(run: EngineRun, sched: Scheduler, plan, start: float, end: float) -> None:
    """The per-step records of a V1 step (one that ran no model too: its plan is empty)."""
    is_decode = plan.past + 1 >= plan.ntok
    total = int(plan.n.sum())
    decode_tokens = int(plan.n[is_decode].sum())
    sampled = int((plan.after >= plan.ntok).sum()) if plan.n.size else 0
    _append_step(run, start, end, total, int(plan.n.size), total - decode_tokens, int(is_decode.sum()), sampled,
                 sched.kv.usage(), sched.kv.num_free, sched.num_running, sched.num_waiting, STOP_CODE[plan.stop],
                 len(plan.preempted))


def _append_step(run: EngineRun, start: float, end: float, tokens: int, seqs: int, prefill: int, decodes: int,
                 sampled: int, kv_usage: float, free_blocks: int, running: int, waiting: int, stop: int,
                 preempted: int) -> None:
    run.step_start.append(start)
    run.step_end.append(end)
    run.step_tokens.append(tokens)
    run.step_seqs.append(seqs)
    run.step_prefill_tokens.append(prefill)
    run.step_decodes.append(decodes)
    run.step_sampled.append(sampled)
    run.step_kv_usage.append(kv_usage)
    run.step_free_blocks.append(free_blocks)
    run.step_running.append(running)
    run.step_waiting.append(waiting)
    run.step_stop.append(stop)
    run.step_preempted.append(preempted)


# ---- static batching ------------------------------------------------------------------------------
def run_static(cfg: ResolvedSettings, wl: Workload, step_time: StepTimeFn, *,
               overhead_s: float = DEFAULT_SCHEDULER_OVERHEAD_S, progress: ProgressFn | None = None,
               front_end: FrontEnd | None = None) -> EngineRun:
    """Static batching. When the engine is free it takes up to max_num_seqs waiting requests (FCFS)
    whose padded footprint, batch size x blocks(longest prompt + longest output), fits the KV cache.
    One step prefills every member padded to the longest prompt; then longest-output - 1 decode steps
    run for the whole batch. Each request's own tokens stream as produced; it completes, and frees its
    slot, only when the batch does (the batch waits for its slowest member)."""
    n = wl.num_requests
    run = _new_run("static", cfg, wl)
    reqs = run.reqs
    client = _Client(wl, front_end)
    step_time = client.front_end.paced(step_time, overhead_s)
    bs = cfg.block_size
    usable = cfg.usable_blocks
    mml = cfg.max_model_len
    queue: list[int] = []
    t = 0.0
    done = 0
    prompt = wl.prompt_len
    output = np.minimum(wl.output_len, np.maximum(mml - wl.prompt_len, 1))

    refuse = (prompt >= mml) | (-(-(prompt + output) // bs) > usable)
    receive = partial(_receive, client, run, refuse=refuse, accept=queue.append)
    while done < n:
        done += receive(t)
        if not queue:
            when = client.next_send_time()
            if when is None:
                break
            t = max(t, when)
            continue
        batch, p_max, o_max = _form_static_batch(queue, prompt, output, cfg.max_num_seqs, usable, bs)
        del queue[:len(batch)]
        members = np.array(batch, dtype=np.int64)
        size = members.size
        run.first_scheduled[members] = t
        blocks_per_seq = -(-(p_max + o_max) // bs)
        kv_usage = size * blocks_per_seq / usable
        # prefill: every member padded to the longest prompt
        start = t + overhead_s
        gpu = float(step_time(StepBatch(np.full(size, p_max, dtype=np.int64), np.zeros(size, dtype=np.int64), size)))
        end = start + gpu
        _static_step(run, start, end, size * p_max, size, size * p_max, 0, kv_usage, usable - size * blocks_per_seq,
                     len(queue))
        run.first_tokens_out(members, end)
        run.last_token[members] = end
        t = end
        for j in range(1, o_max):
            start = t + overhead_s
            past = np.full(size, p_max + j - 1, dtype=np.int64)
            gpu = float(step_time(StepBatch(np.ones(size, dtype=np.int64), past, size)))
            end = start + gpu
            live = members[output[members] > j]
            if live.size:
                gaps = end - run.last_token[live]
                run.itl_chunks.append(gaps)
                run.max_itl[live] = np.maximum(run.max_itl[live], gaps)
                run.last_token[live] = end
            done += receive(end)
            _static_step(run, start, end, size, size, 0, size, kv_usage, usable - size * blocks_per_seq, len(queue))
            t = end
        reqs.num_output[members] = output[members]
        reqs.status[members] = FINISHED
        run.finish_time[members] = t
        for _ in range(size):
            client.done(t)
        done += size
        if progress is not None:
            progress(done, n)
    return run


def _form_static_batch(queue: list[int], prompt: np.ndarray, output: np.ndarray, max_seqs: int, usable: int,
                       bs: int) -> tuple[list[int], int, int]:
    batch: list[int] = []
    p_max = o_max = 0
    for r in queue:
        p = max(p_max, int(prompt[r]))
        o = max(o_max, int(output[r]))
        if batch and (len(batch) + 1 > max_seqs or (len(batch) + 1) * -(-(p + o) // bs) > usable):
            break
        batch.append(r)
        p_max, o_max = p, o
    return batch, p_max, o_max


def _static_step(run: EngineRun, start: float, end: float, tokens: int, seqs: int, prefill: int, decodes: int,
                 kv_usage: float, free_blocks: int, waiting: int) -> None:
    # every member of a static batch gets a token in every step (padding included)
    _append_step(run, start, end, tokens, seqs, prefill, decodes, seqs, kv_usage, free_blocks, seqs, waiting,
                 STOP_CODE[STOP_EMPTY], 0)


def run_mode(cfg: ResolvedSettings, wl: Workload, step_time: StepTimeFn, mode: str, *,
             overhead_s: float = DEFAULT_SCHEDULER_OVERHEAD_S, seed: int = 0, fast_path: bool = True,
             leaps: bool = True, progress: ProgressFn | None = None, front_end: FrontEnd | None = None,
             idle_wake_s: float = 0.0, far_miss: FarMiss | None = None) -> EngineRun:
    mode_cfg = settings_for_mode(cfg, mode)
    if mode == "static":
        return run_static(mode_cfg, wl, step_time, overhead_s=overhead_s, progress=progress, front_end=front_end)
    return run_v1(mode_cfg, wl, step_time, mode=mode, overhead_s=overhead_s, seed=seed, fast_path=fast_path,
                  leaps=leaps, progress=progress, front_end=front_end, idle_wake_s=idle_wake_s, far_miss=far_miss)
