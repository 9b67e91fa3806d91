"""The vLLM V1 scheduling policy, one `schedule()` per engine step.

Mirrors `Scheduler.schedule()` / `update_from_output()` of vllm/v1/core/sched/scheduler.py
(v0.32.0; v0.18.0 through the version table). Per step:

A. RUNNING requests, in running order: each gets min(remaining, threshold, budget, room before
   max_model_len) tokens; a request with 0 is skipped, not a stop. If its KV slots cannot be
   allocated, the scheduler preempts (FCFS: the last running request; priority: the largest
   (priority, arrival)) until they can, or until it preempted the request itself, and then stops
   the running scan.
B. WAITING requests, only if nothing was preempted in A: in queue order while there is budget and
   running has room (max_num_seqs / max_num_active_seqs); prefix-cache hits first (they cost no
   budget); without chunked prefill a prompt that does not fit the remaining budget ends
   admission; a failed allocation (or the full-sequence gate) ends admission; no preemption.

Two ways to run phase A make the same decisions: `_running_exact` walks the running list one
request at a time, as vLLM does; the fast path computes the whole running batch with numpy
(budget split by a cumulative sum, block needs per request) and is used while it provably agrees:
when every allocation fits, which it checks first. At the first request whose blocks would not
fit, it hands over to `_running_exact` from that request on. `fast_path=False` forces the exact
walk for every step (the tests run both and compare).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kv_manager import ALLOC_FULL_SEQUENCE, ALLOC_OK, KVCacheManager
from .request import FINISHED, PREEMPTED, RUNNING, WAITING, RequestTable
from .request_queue import make_queue
from .settings import ResolvedSettings

_EMPTY = np.empty(0, dtype=np.int64)
_ONES = np.ones(4096, dtype=np.int64)


def _ones(n: int) -> np.ndarray:
    return _ONES[:n] if n <= _ONES.size else np.ones(n, dtype=np.int64)
_UNBOUNDED = 1 << 62
_SMALL_BATCH = 4
# Drafters that need the last prefix-cache hit block recomputed (find_longest_cache_hit).
EAGLE_METHODS = frozenset({"eagle", "eagle3", "mtp"})

# Why admission of waiting requests ended in a step (evidence for the diagnosis).
STOP_EMPTY = "queue_empty"
STOP_BUDGET = "token_budget"
STOP_SEQS = "max_num_seqs"
STOP_BLOCKS = "kv_blocks"
STOP_FULL_SEQUENCE = "kv_full_sequence"
STOP_NO_CHUNK = "prompt_exceeds_budget"
STOP_PREEMPTED = "preemption"
# The engine records a step's stop reason as its index here (compact per-step records).
STOP_NAMES = (STOP_EMPTY, STOP_BUDGET, STOP_SEQS, STOP_BLOCKS, STOP_FULL_SEQUENCE, STOP_NO_CHUNK, STOP_PREEMPTED)
STOP_CODE = {name: i for i, name in enumerate(STOP_NAMES)}


@dataclass(slots=True)
class StepPlan:
    """One schedule(): who computes how many tokens, in vLLM's order (running, then admitted)."""

    idx: np.ndarray            # request rows scheduled
    n: np.ndarray              # tokens each
    past: np.ndarray           # tokens already in the KV cache before this step (incl. prefix hits)
    spec: np.ndarray | None = None     # draft tokens scheduled per entry (speculative decoding only)
    num_from_running: int = 0          # the first entries were already running
    after: np.ndarray | None = None    # num_computed after this step's schedule
    ntok: np.ndarray | None = None     # num_tokens when scheduled (prompt + output so far)
    admitted: list[int] = field(default_factory=list)
    admitted_resumed: list[bool] = field(default_factory=list)
    admitted_hits: list[int] = field(default_factory=list)
    preempted: list[int] = field(default_factory=list)
    padded: list[int] = field(default_factory=list)
    stop: str = STOP_EMPTY


@dataclass(slots=True)
class StepUpdate:
    sampled: np.ndarray        # rows that produced tokens this step
    generated: np.ndarray      # tokens each of them produced (1, or 1 + accepted drafts)
    finished: np.ndarray       # rows that finished (freed now, or lingering under async scheduling)


class Scheduler:
    @classmethod
    def build(cls, cfg: ResolvedSettings, reqs: RequestTable, content, *, fast_path: bool = True,
              content_tracks_tokens: bool = False) -> "Scheduler":
        """A scheduler with its own KV cache manager and block pool."""
        kv = KVCacheManager(
            reqs, num_gpu_blocks=cfg.num_gpu_blocks, block_size=cfg.block_size, max_model_len=cfg.max_model_len,
            enable_caching=cfg.enable_prefix_caching,
            unhashed_to_front=cfg.behaviour.unhashed_blocks_freed_to_front, content=content,
            drop_last_hit_block=cfg.spec_method in EAGLE_METHODS)
        return cls(cfg, reqs, kv, fast_path=fast_path, content_tracks_tokens=content_tracks_tokens)

    def __init__(self, cfg: ResolvedSettings, reqs: RequestTable, kv: KVCacheManager, *,
                 fast_path: bool = True, content_tracks_tokens: bool = False) -> None:
        self.cfg = cfg
        self.beh = cfg.behaviour
        self.reqs = reqs
        self.kv = kv
        self.fast_path = fast_path
        self.running: np.ndarray = _EMPTY
        self.waiting = make_queue(cfg.scheduling_policy, reqs)
        self.priority = cfg.scheduling_policy == "priority"
        self._lingering: list[int] = []
        self._content_tracks_tokens = content_tracks_tokens and kv.caching
        self.recomputed_tokens = 0
        self.num_preemptions = 0
        # vLLM 0.28+ also charges each scheduled request's drafting slots to max_num_batched_tokens
        # (the input budget); earlier releases have no such second budget.
        self.input_budget = (cfg.max_num_batched_tokens if self.beh.draft_slot_accounting == "per_request"
                             else _UNBOUNDED)
        # A request is done when num_tokens reaches min(prompt + max_tokens, max_model_len).
        self._limit = np.minimum(reqs.prompt_len + reqs.max_tokens, cfg.max_model_len)

    # ---- queue ----------------------------------------------------------------------------
    def add_request(self, r: int) -> None:
        self.reqs.status[r] = WAITING
        self.waiting.add(r)

    def has_unfinished(self) -> bool:
        return bool(self.running.size) or bool(self.waiting)

    @property
    def num_running(self) -> int:
        return int(self.running.size)

    @property
    def num_waiting(self) -> int:
        return len(self.waiting)

    # ---- one step ---------------------------------------------------------------------------
    def schedule(self) -> StepPlan:
        cfg = self.cfg
        threshold = self.prefill_threshold()
        run_idx, run_n, budget, input_budget, preempted = self._schedule_running(
            cfg.max_num_scheduled_tokens, self.input_budget, threshold)
        plan = StepPlan(idx=run_idx, n=run_n, past=_EMPTY, spec=None, num_from_running=int(run_idx.size),
                        preempted=preempted)
        if preempted:
            plan.stop = STOP_PREEMPTED
        else:
            self._schedule_waiting(plan, budget, input_budget, threshold)
        self._after_schedule(plan)
        return plan

    def prefill_threshold(self) -> int:
        """long_prefill_token_threshold as this step's schedule() applies it."""
        cfg = self.cfg
        threshold = cfg.long_prefill_token_threshold
        num_eligible = int(self.running.size) + len(self.waiting)
        if self.beh.lone_request_threshold_exempt and num_eligible <= 1:
            threshold = 0  # nobody to starve (scheduler.py schedule() @ v0.32.0)
        if threshold > 0 and cfg.long_prefill_token_threshold_adaptive:
            threshold = max(threshold, cfg.max_num_batched_tokens // num_eligible)
        return threshold

    # ---- phase A ------------------------------------------------------------------------------
    def _schedule_running(self, budget: int, input_budget: int, threshold: int):
        run = self.running
        if run.size == 0 or budget <= 0:
            return _EMPTY, _EMPTY, budget, input_budget, []
        reqs = self.reqs
        cfg = self.cfg
        slots = cfg.drafting_slots_per_request
        computed = reqs.num_computed[run]
        want = reqs.num_tokens[run] + reqs.num_spec[run] - computed
        if self._lingering:
            want[reqs.lingering[run]] = 0
        if threshold > 0:
            np.minimum(want, threshold, out=want)
        # Never schedule past max_model_len - 1 (the position of the token to be sampled).
        np.minimum(want, cfg.max_model_len - 1 - computed, out=want)
        np.maximum(want, 0, out=want)

        start = 0
        prefix: dict[int, int] = {}
        # For a handful of requests, walking them one by one costs less than the numpy set-up.
        if self.fast_path and slots == 0 and run.size > _SMALL_BATCH:
            limit = min(budget, input_budget)
            before = np.cumsum(want) - want
            n = np.minimum(want, np.maximum(limit - before, 0))
            need = self.kv.blocks_needed(run, computed, n, cfg.num_lookahead_tokens)
            cum = np.cumsum(need)
            free = self.kv.num_free
            if cum[-1] <= free:
                self.kv.commit_running(run, computed, n, need)
                used = int(n.sum())
                mask = n > 0
                return run[mask], n[mask], budget - used, input_budget - used, []
            # The first request whose blocks would not fit: exact from there on.
            start = int(np.searchsorted(cum, free, side="right"))
            self.kv.commit_running(run[:start], computed[:start], n[:start], need[:start])
            used = int(n[:start].sum())
            budget -= used
            input_budget -= used
            prefix = {r: k for r, k in zip(run[:start].tolist(), n[:start].tolist()) if k > 0}
        return self._running_exact(run.tolist(), start, prefix, want, budget, input_budget)

    def _running_exact(self, run: list[int], start: int, scheduled: dict[int, int], want: np.ndarray,
                       budget: int, input_budget: int):
        """vLLM's running loop, one request at a time, from position `start` (the requests before
        it are already in `scheduled`). `want` holds each request's demand before the budget cap."""
        cfg = self.cfg
        kv = self.kv
        slots = cfg.drafting_slots_per_request
        lookahead = cfg.num_lookahead_tokens
        demand = dict(zip(run, want.tolist()))
        preempted: list[int] = []
        i = start
        while i < len(run) and budget > 0:
            if input_budget <= slots:
                break
            r = run[i]
            n = min(demand[r], budget, input_budget - slots)
            if n <= 0:
                i += 1  # nothing to do for it now: skip, not stop
                continue
            while True:
                code = kv.allocate_slots(r, n, lookahead=lookahead)
                if code == ALLOC_OK:
                    break
                if self.priority:
                    victim = self._priority_victim(run)
                    pos = run.index(victim)
                    del run[pos]
                    if pos < i:
                        i -= 1
                    if victim in scheduled:  # un-schedule it: its tokens go back to the budget
                        back = scheduled.pop(victim)
                        budget += back
                        input_budget += back + slots
                else:
                    victim = run.pop()
                self._preempt(victim)
                preempted.append(victim)
                if victim == r:
                    break
            if code != ALLOC_OK:
                break
            scheduled[r] = n
            budget -= n
            input_budget -= n + slots
            i += 1
        self.running = np.array(run, dtype=np.int64)
        idx = np.fromiter(scheduled.keys(), dtype=np.int64, count=len(scheduled))
        n_arr = np.fromiter(scheduled.values(), dtype=np.int64, count=len(scheduled))
        return idx, n_arr, budget, input_budget, preempted

    def _priority_victim(self, run: list[int]) -> int:
        """The running request with the largest (priority, arrival_time); the first one on ties."""
        prio = self.reqs.priority
        arrival = self.reqs.arrival
        best = run[0]
        best_key = (prio[best], arrival[best])
        for r in run[1:]:
            key = (prio[r], arrival[r])
            if key > best_key:
                best, best_key = r, key
        return best

    def _preempt(self, r: int) -> None:
        """Recompute preemption: free all blocks, forget computed tokens (keep generated ones),
        back to the front of the waiting queue."""
        reqs = self.reqs
        self.kv.free(r, preempting=True)
        # Tokens it computed so far will be computed again: remember how far it got.
        reqs.high_water[r] = max(int(reqs.high_water[r]), int(reqs.num_computed[r]))
        reqs.status[r] = PREEMPTED
        reqs.num_computed[r] = 0
        reqs.num_spec[r] = 0
        reqs.num_preemptions[r] += 1
        self.num_preemptions += 1
        self.waiting.prepend(r)

    # ---- phase B ------------------------------------------------------------------------------
    def _schedule_waiting(self, plan: StepPlan, budget: int, input_budget: int, threshold: int) -> None:
        cfg = self.cfg
        beh = self.beh
        reqs = self.reqs
        kv = self.kv
        waiting = self.waiting
        slots = cfg.drafting_slots_per_request
        k = cfg.num_spec_tokens
        mml = cfg.max_model_len
        running_count = int(self.running.size)
        prefill_scheduled = bool(plan.idx.size) and bool(reqs.is_prefill_chunk[plan.idx].any()) if k else False
        admitted, counts = [], []
        stop = STOP_EMPTY
        while budget > 0:
            if not waiting:
                stop = STOP_EMPTY
                break
            if input_budget <= slots:
                stop = STOP_BUDGET
                break
            if running_count >= cfg.max_num_active_seqs:
                stop = STOP_SEQS
                break
            r = waiting.peek()
            hit_blocks, hit = kv.get_computed_blocks(r)
            allowed = min(budget, input_budget - slots)
            n = int(reqs.num_tokens[r]) - hit
            pad = False
            if (k and beh.pad_one_token_admission_to_spec and n == 1 and not prefill_scheduled
                    and (plan.idx.size or hit > 0) and hit + 1 + k + 1 <= mml):
                if 1 + k > allowed:
                    stop = STOP_BUDGET
                    break
                n, pad = 1 + k, True
            if 0 < threshold < n:
                n = threshold
            if not cfg.enable_chunked_prefill and n > allowed:
                stop = STOP_NO_CHUNK
                break
            n = min(n, allowed)
            lookahead = cfg.num_lookahead_tokens if beh.lookahead_on_first_admission else 0
            code = kv.allocate_slots(
                r, n, hit_tokens=hit, hit_blocks=hit_blocks, lookahead=lookahead,
                full_sequence_must_fit=cfg.scheduler_reserve_full_isl,
                watermark_blocks=cfg.watermark_blocks if running_count > 0 else 0)
            if code != ALLOC_OK:
                stop = STOP_FULL_SEQUENCE if code == ALLOC_FULL_SEQUENCE else STOP_BLOCKS
                break
            waiting.pop()
            kv.record_prefix_lookup(r, hit)
            plan.admitted_resumed.append(bool(reqs.status[r] == PREEMPTED))
            reqs.status[r] = RUNNING
            reqs.num_computed[r] = hit
            admitted.append(r)
            counts.append(n)
            if pad:
                plan.padded.append(r)
            plan.admitted_hits.append(hit)
            running_count += 1
            budget -= n
            input_budget -= n + slots
        else:
            stop = STOP_BUDGET if waiting else STOP_EMPTY
        plan.stop = stop
        if admitted:
            plan.admitted = admitted
            adm = np.array(admitted, dtype=np.int64)
            self.running = np.concatenate((self.running, adm))
            n_adm = np.array(counts, dtype=np.int64)
            plan.idx = np.concatenate((plan.idx, adm)) if plan.idx.size else adm
            plan.n = np.concatenate((plan.n, n_adm)) if plan.n.size else n_adm

    # ---- bookkeeping after schedule() ------------------------------------------------------------

    def _after_schedule(self, plan: StepPlan) -> None:
        """Advance num_computed by the scheduled tokens (vLLM's _update_after_schedule) and note
        which draft tokens were scheduled."""
        reqs = self.reqs
        idx = plan.idx
        if idx.size == 0:
            plan.past = plan.after = plan.ntok = _EMPTY
            return
        past = reqs.num_computed[idx]
        ntok = reqs.num_tokens[idx]
        plan.past = past
        plan.ntok = ntok
        if self.cfg.num_spec_tokens:
            attached = reqs.num_spec[idx]
            if plan.padded:
                # Padding slots of a one-token admission count as (always rejected) drafts.
                attached[np.isin(idx, plan.padded)] = self.cfg.num_spec_tokens
            # Drafts inside the scheduled tokens (a budget cut verifies only the first ones).
            spec = np.clip(plan.n + past - ntok, 0, None)
            np.minimum(spec, attached, out=spec)
            plan.spec = spec
            reqs.num_spec[idx] = 0
        after = past + plan.n
        plan.after = after
        reqs.num_computed[idx] = after
        if self.cfg.num_spec_tokens:
            reqs.is_prefill_chunk[idx] = after < ntok
        if self.num_preemptions:
            # Tokens below a request's high-water mark are being computed a second time.
            redo = np.minimum(after, reqs.high_water[idx]) - past
            self.recomputed_tokens += int(redo[redo > 0].sum())

    def update(self, plan: StepPlan, accepted: np.ndarray | None = None, *, defer_finish: bool = False) -> StepUpdate:
        """Apply the step's model output: every scheduled request whose tokens are all computed
        samples one token (plus accepted drafts); rejected drafts are un-computed; requests reaching
        max_tokens or max_model_len finish and free their blocks (async: after the next schedule).

        `accepted[j]` = drafts accepted for the j-th sampled request (speculative decoding)."""
        reqs = self.reqs
        idx = plan.idx
        if idx.size == 0:
            return StepUpdate(_EMPTY, _EMPTY, _EMPTY)
        mask = plan.after >= plan.ntok
        sampled = idx[mask] if not mask.all() else idx
        if sampled.size == 0:
            return StepUpdate(_EMPTY, _EMPTY, _EMPTY)
        ntok = plan.ntok[mask] if sampled is not idx else plan.ntok
        if plan.spec is None:
            generated = _ones(sampled.size)
        else:
            drafts = plan.spec[mask]
            acc = np.zeros(sampled.size, dtype=np.int64) if accepted is None else np.minimum(accepted, drafts)
            if plan.padded:
                acc[np.isin(sampled, plan.padded)] = 0
            reqs.num_computed[sampled] -= drafts - acc
            # Stop checks run token by token: never past max_tokens or max_model_len.
            generated = np.minimum(1 + acc, self._limit[sampled] - ntok)
        ntok = ntok + generated
        reqs.num_tokens[sampled] = ntok
        reqs.num_output[sampled] += generated
        if self._content_tracks_tokens:
            for r, g in zip(sampled.tolist(), generated.tolist()):
                self.kv.content.on_tokens_generated(r, g)
        # num_tokens >= min(prompt + max_tokens, max_model_len): finished (length)
        done_mask = ntok >= self._limit[sampled]
        finished = sampled[done_mask] if done_mask.any() else _EMPTY
        if self.cfg.num_spec_tokens:
            reqs.num_spec[sampled[~done_mask]] = self.cfg.num_spec_tokens
        if finished.size:
            if defer_finish:
                reqs.lingering[finished] = True
                self._lingering.extend(finished.tolist())
            else:
                self._finish(finished)
        return StepUpdate(sampled, generated, finished)

    def _finish(self, rows: np.ndarray) -> None:
        self.reqs.status[rows] = FINISHED
        self.kv.free_many(rows)
        run = self.running
        self.running = run[self.reqs.status[run] == RUNNING]

    def release_lingering(self) -> list[int]:
        """Async scheduling: the previous step's output is processed now; its finished requests
        leave running and free their blocks (one schedule() later than with sync scheduling)."""
        if not self._lingering:
            return []
        rows = self._lingering
        self._lingering = []
        reqs = self.reqs
        still_running = []
        for r in rows:
            reqs.lingering[r] = False
            if reqs.status[r] == PREEMPTED:
                # Preempted while its last token was in flight: it is done all the same.
                self.waiting.remove(r)
                reqs.status[r] = FINISHED
            else:
                still_running.append(r)
        if still_running:
            self._finish(np.array(still_running, dtype=np.int64))
        return rows
