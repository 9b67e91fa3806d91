"""Multi-step leaps: stretches of decode steps run in a tight loop, with step-by-step results.

Between events, every step of the V1 scheduler on an all-decode running batch makes the same
decisions: each running request computes exactly one token and samples it, nobody is preempted,
and admission stops for the same reason. `DecodeLeaps.leap()` checks that at the top of the engine
loop, then runs steps in a loop that does only what changes per step (the clock, the step time,
block hand-outs at block boundaries, requests finishing, arrivals) and applies the rest in bulk at
the end. Admission stays inside the leap: in a step where the scheduler would look at the waiting
queue, phase B is the scheduler's own `_schedule_waiting()` (after the decodes' blocks are handed
out, as in schedule()), and requests whose whole prompt is computed in that step join the
decoding batch from the next step on. Every record the step-by-step engine keeps comes out
identical: token times and ITL gaps (in the same order), finish times, per-step start/end,
tokens, prefill tokens, decodes, KV usage, free blocks, running, waiting, admission stop reason,
the prefix-cache counters. tests/sim/test_sim_leaps.py compares whole runs with and without.

A leap starts only if, at time t (the next schedule()):
- there is no speculative decoding (acceptances are random per step; the engine never asks);
- the running requests that are not lingering (async scheduling: finished in the step in flight)
  all have every token computed but the last and at least one output token, so each step is a
  decode that samples one token, and they fit the token budget (nobody is cut; a decode never
  meets long_prefill_token_threshold, which is >= 1 when set);
- the lingering requests are all still in the running list (their release after the next
  schedule() then only frees their blocks and slots, as in the step path).

Step j of the leap is run only if, at its schedule() (time t_j):
- some request decodes and the decoding requests fit the token budget;
- the new blocks of the decodes (requests crossing a block boundary, counted per step in running
  order) fit the free blocks: otherwise the step runs the normal way, which preempts.
A step ends the leap (it is the leap's last) when a request it admits does not finish its prompt
in it. Requests finish exactly where update() finishes them (max_tokens or max_model_len): freed
at once, or with async scheduling marked lingering and released after the next schedule().
Blocks are popped in the order the fast path pops them, and blocks that fill up are registered in
the prefix cache exactly where commit_running() registers them (requests already preempted once,
or shared-prefix blocks not yet registered; other blocks are private, see
KVCacheManager._register).

Step times: one step_time() call per step with that step's StepBatch (decodes: new tokens 1, past
tokens one more each step; admitted prompts after them). A decode batch of one request is first
looked up in a memo keyed by its past tokens (naive mode decodes one request at a time through the
same contexts over and over): step_time must be a deterministic function of the batch; a callable
with an attribute `deterministic = False` is never memoised.
"""
from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

from ..batch import StepBatch
from .clock import step_clock
from .scheduler import _EMPTY as _NO_ROWS
from .scheduler import (STOP_BLOCKS, STOP_BUDGET, STOP_CODE, STOP_EMPTY, STOP_FULL_SEQUENCE, STOP_SEQS, Scheduler,
                        StepPlan, _ones)

_EMPTY = STOP_CODE[STOP_EMPTY]
_BUDGET = STOP_CODE[STOP_BUDGET]
_SEQS = STOP_CODE[STOP_SEQS]
_KV_STOPS = (STOP_CODE[STOP_BLOCKS], STOP_CODE[STOP_FULL_SEQUENCE])


class DecodeLeaps:
    def __init__(self, sched: Scheduler, run, client, receive: Callable[[float], int], step_time,
                 overhead_s: float, progress, report_every: int) -> None:
        cfg = sched.cfg
        self.sched = sched
        self.reqs = sched.reqs
        self.kv = sched.kv
        self.run = run
        self.client = client
        self.receive = receive
        self.step_time = step_time
        self.overhead = overhead_s
        self.async_mode = cfg.async_scheduling
        self.progress = progress
        self.n = sched.reqs.n
        self.report_every = report_every
        self.budget = cfg.max_num_scheduled_tokens
        self.input_budget = sched.input_budget
        self.cap = min(self.budget, self.input_budget)
        self.max_active = cfg.max_num_active_seqs
        self.bs = cfg.block_size
        self.total_blocks = cfg.usable_blocks
        self.memo: dict[int, float] | None = {} if getattr(step_time, "deterministic", True) else None
        # decode_time(n, sum of past tokens, sampled), when the step-time model offers it: the time of a
        # decode-only step without building the batch (it must equal step_time() on that batch).
        self.decode_time = getattr(step_time, "decode_time", None)
        # update() also tells the prompt contents of new tokens (the oracle replay's explicit
        # tokens); the engine's synthetic contents do not track them, which _update_admitted needs.
        assert not sched._content_tracks_tokens
        self.num_leaps = 0
        self.num_steps = 0
        self.num_blocked_skips = 0  # steps whose admission was known to stop for KV blocks

    def _stop(self, n: int, count: int) -> int | None:
        """Why admission stops at once (its STOP_CODE) when n decodes are scheduled and `count`
        requests are in the running list (requests waiting); None: it looks at the queue."""
        if self.budget - n <= 0 or self.input_budget - n <= 0:
            return _BUDGET
        if count >= self.max_active:
            return _SEQS
        return None

    def _decode_only(self, j: int, ones: np.ndarray, live_cb: np.ndarray, memo: dict[int, float] | None,
                     memo_base: int) -> float:
        """Step j's time when it only decodes (requests' past tokens: live_cb + j), through the memo
        for a lone request."""
        if memo is not None:
            key = memo_base + j
            gpu = memo.get(key)
            if gpu is None:
                gpu = memo[key] = float(self.step_time(_batch(ones, np.array([key], dtype=np.int64), 1)))
            return gpu
        return float(self.step_time(_batch(ones, live_cb + j, int(ones.size))))

    def _blocked_key(self, n: int, in_running: int, wlen: int) -> tuple:
        """Everything the queue head's admission reads, but the free blocks: the head, the budget
        left by n decodes, the running and waiting counts (seats, watermark, the adaptive chunk
        threshold), and the prefix cache's registrations (its hits)."""
        pool = self.kv.pool
        return (self.sched.waiting.peek(), n, in_running, wlen, getattr(pool, "registrations", 0))

    def _still_blocked(self, blocked: tuple, n: int, in_running: int, wlen: int, free: int) -> bool:
        """Whether the queue head still cannot have its blocks, without asking the scheduler: it
        could not at the last look, nothing it reads has changed, and there are no more free blocks
        than then. Its need cannot have shrunk: its cache hits are the same run (no registration
        since, none of its hit blocks evicted) and a hit block only leaves the free queue by a hit
        (an admission, which has not happened) or by eviction."""
        key, free_then, _ = blocked
        if free > free_then or key != self._blocked_key(n, in_running, wlen):
            return False
        return key[0] not in getattr(self.kv.pool, "stale_watchers", ())

    def leap(self, t: float, prev_end: float | None, done: int, next_report: int):
        """Run a leap from the top of the engine loop at time t (arrivals up to t received).
        Returns the new (t, prev_end, done, next_report), or None, having changed nothing, when
        the next step is not one a leap runs."""
        sched = self.sched
        reqs = self.reqs
        running = sched.running
        count = int(running.size)
        if count == 0:
            return None
        lingering = sched._lingering
        if lingering:
            R = running[~reqs.lingering[running]]
            if count - R.size != len(lingering):
                return None  # a lingering request was preempted: its release edits the waiting queue
        else:
            R = running
        n = int(R.size)
        if n == 0 or n > self.cap:
            return None
        # Per-request state as Python lists (cheaper than numpy per operation for small batches).
        # Positions p index these lists: the requests decoding at the start in running order, then
        # the ones admitted during the leap, in admission order (their running order).
        cbl = reqs.num_computed[R].tolist()
        ntl = reqs.num_tokens[R].tolist()
        if ntl != [c + 1 for c in cbl] or not reqs.num_output[R].all():
            return None
        kv = self.kv
        bs = self.bs
        waiting = sched.waiting
        # Request p's past tokens in leap step j are cbl[p] + j ("virtual" for requests admitted
        # during the leap); it decodes in steps startl[p] .. finl[p] - 1 and finishes in the last.
        finl = [a - b for a, b in zip(sched._limit[R].tolist(), ntl)]
        # It needs a new block in steps j0l[p], j0l[p] + bs, ...: phase[j % bs] lists them.
        j0l = [h * bs - c for h, c in zip(kv.held[R].tolist(), cbl)]
        if min(j0l) < 0:
            return None
        Rl = R.tolist()
        startl = [0] * n
        phase: list[list[int]] = [[] for _ in range(bs)]
        for p, (a, f) in enumerate(zip(j0l, finl)):
            if a < f:
                phase[a % bs].append(p)
        caching = kv.caching
        regs: dict[int, list[int]] = {}   # step -> positions with blocks to register in it
        cached_at: dict[int, int] = {}
        ncl: list[int] = []
        if caching:
            ncl = kv.num_cached[R].tolist()
            for p, (pre, uf, c) in enumerate(zip(reqs.num_preemptions[R].tolist(), kv.unique_from[R].tolist(), ncl)):
                if pre or uf > c:
                    self._plan_registrations(regs, cached_at, p, c, cbl[p], 0, finl[p])
        alive = [True] * n
        alive_pos = list(range(n))    # the positions decoding, in running order
        live_cbl = list(cbl)          # and their cbl
        finishes = [(f, p) for p, f in enumerate(finl)]   # heap: the next finishes
        heapq.heapify(finishes)
        fin_step = finishes[0][0] - 1  # the next step in which a request finishes
        last_step = max(finl)         # by then every request has finished
        extras: list[tuple[int, np.ndarray]] = []   # irregular ITL gaps (resumed requests), by step

        run = self.run
        client = self.client
        step_time = self.step_time
        o = self.overhead
        async_mode = self.async_mode
        progress = self.progress
        memo = self.memo if n == 1 else None
        memo_base = cbl[0]
        cap = self.cap
        live_cb = np.array(cbl, dtype=np.int64)   # past tokens at step 0 of the decoding requests
        decode_time = self.decode_time
        sum_cb = int(sum(cbl))
        ones = _ones(n)
        front_end = client.front_end
        streaming = bool(front_end.token_s)
        next_send = client.next_send_time()
        free = kv.num_free
        got: list[int] = []           # positions given a block in steps run since the last hand-out
        wlen = len(waiting)
        release = bool(lingering)     # lingering requests to release after this step's schedule
        in_running = count
        stop = self._stop(n, count)
        dirty = False                 # the running list changed: recompute the admission stop
        starts: list[float] = []
        ends: list[float] = []
        frees: list[int] = []
        # The other per-step records change rarely: runs of (decoding, scheduled requests, tokens,
        # prefill tokens, decodes, running, waiting, admission stop, requests given a token), each starting at step
        # runs_at[i].
        runs: list[tuple] = []
        runs_at: list[int] = []
        rec = None
        end_after = False
        blocked = None                # the last admission that stopped for want of KV blocks, see _still_blocked
        j = 0
        while j < last_step:
            if j:
                if n == 0 or n > cap:
                    break
                if dirty:
                    stop = self._stop(n, in_running)
                    dirty = False
                if next_send is not None and t >= next_send:
                    done += self.receive(t)
                    next_send = client.next_send_time()
                    wlen = len(waiting)
            admit = bool(wlen) and stop is None
            # Phase A: the decodes' new blocks.
            cross = phase[j % bs]
            if cross:
                new = [p for p in cross if alive[p] and j0l[p] <= j]
                if new:
                    if len(new) > free:
                        if j == 0:
                            return None
                        break  # the normal step preempts
                    free -= len(new)
                    got += new
            if got and (release or admit or j in regs):
                self._hand_out(got, Rl)
                got = []
            if j in regs:
                self._register(Rl, cbl, j, regs[j], cached_at)
            # Phase B: admission, by the scheduler itself.
            plan = None
            if admit and blocked is not None and self._still_blocked(blocked, n, in_running, wlen, free):
                stop_j = blocked[2]
                self.num_blocked_skips += 1
            elif admit:
                plan = StepPlan(idx=_NO_ROWS, n=_NO_ROWS, past=_NO_ROWS)
                sched._schedule_waiting(plan, self.budget - n, self.input_budget - n, sched.prefill_threshold())
                stop_j = STOP_CODE[plan.stop]
                wlen = len(waiting)
                blocked = (self._blocked_key(n, in_running, wlen), free, stop_j) \
                    if stop_j in _KV_STOPS and not plan.admitted else None
                if plan.admitted:
                    sched._after_schedule(plan)
                    for r, resumed in zip(plan.admitted, plan.admitted_resumed):
                        if not resumed:
                            run.first_scheduled[r] = t
                    free = kv.num_free
                    in_running = int(sched.running.size)
                    dirty = True
                else:
                    plan = None
            else:
                stop_j = stop if wlen else _EMPTY
            if release:
                sched.release_lingering()
                free = kv.num_free
                in_running = int(sched.running.size)
                release = False
                dirty = True
            # The step's time.
            if plan is not None:
                adm_n = plan.n.tolist()
                adm_ntok = plan.ntok.tolist()
                adm_sampled = [a >= b for a, b in zip(plan.after.tolist(), adm_ntok)]
                dec_past = live_cb + j
                batch = _batch(np.concatenate((ones, plan.n)), np.concatenate((dec_past, plan.past)),
                               n + sum(adm_sampled))
                gpu = float(step_time(batch))
            elif decode_time is not None and memo is None:
                gpu = decode_time(n, sum_cb + n * j, n)
            else:
                gpu = self._decode_only(j, ones, live_cb, memo, memo_base)
            start, end, t, prev_end = step_clock(t, prev_end, gpu, o, async_mode)
            starts.append(start)
            ends.append(end)
            if streaming:  # the stream's share of the front end moves when the next request gets in
                front_end.streamed(batch.sampled if plan is not None else n, end)
                next_send = client.next_send_time()
            n_step = n
            changed = False
            # update(): the decodes that finish ...
            if j == fin_step:
                if got:
                    self._hand_out(got, Rl)
                    got = []
                ps = []
                while finishes and finishes[0][0] == j + 1:
                    ps.append(heapq.heappop(finishes)[1])
                ps.sort()
                rows = [Rl[p] for p in ps]
                for p, r in zip(ps, rows):
                    alive[p] = False
                    i = alive_pos.index(p)
                    del alive_pos[i]
                    del live_cbl[i]
                    if j0l[p] < finl[p]:
                        phase[j0l[p] % bs].remove(p)
                    self._advance_one(r, cbl[p], startl[p], j0l[p], ncl[p] if caching else 0, j + 1)
                arr = np.array(rows, dtype=np.int64)
                run.finish_time[arr] = end
                for _ in ps:
                    client.done(end)
                done += len(ps)
                if async_mode:
                    reqs.lingering[arr] = True
                    sched._lingering.extend(rows)
                    release = True
                else:
                    sched._finish(arr)
                    free = kv.num_free
                    in_running = int(sched.running.size)
                changed = True
            # ... and the admitted requests (first tokens; those done with their prompt join).
            if plan is not None:
                if got:
                    self._hand_out(got, Rl)
                    got = []
                adm = plan.admitted
                k = len(adm)
                is_decode = [a + 1 >= b for a, b in zip(plan.past.tolist(), adm_ntok)]
                fin_now = self._update_admitted(adm, adm_ntok, adm_sampled, j, end, extras)
                if fin_now:
                    run.finish_time[fin_now] = end
                    for _ in fin_now:
                        client.done(end)
                    done += len(fin_now)
                    next_send = client.next_send_time()  # closed loop: the next request is sent now
                    if async_mode:
                        release = True
                    else:
                        free = kv.num_free
                        in_running = int(sched.running.size)
                if not all(adm_sampled):
                    end_after = True  # a prompt goes on in the next step: the leap ends with this one
                for r, s in zip(adm, adm_sampled):
                    if not s or r in fin_now:
                        continue
                    p = len(Rl)
                    c_v = int(reqs.num_computed[r]) - (j + 1)
                    Rl.append(r)
                    cbl.append(c_v)
                    startl.append(j + 1)
                    f = int(sched._limit[r]) - c_v - 1
                    finl.append(f)
                    a = int(kv.held[r]) * bs - c_v
                    j0l.append(a)
                    if a < f:
                        phase[a % bs].append(p)
                    if caching:
                        c = int(kv.num_cached[r])
                        ncl.append(c)
                        if reqs.num_preemptions[r] or kv.unique_from[r] > c:
                            self._plan_registrations(regs, cached_at, p, c, c_v, j + 1, f)
                    alive.append(True)
                    alive_pos.append(p)
                    live_cbl.append(c_v)
                    heapq.heappush(finishes, (f, p))
                    last_step = max(last_step, f)
                    changed = True
                tokens = n_step + sum(adm_n)
                prefill = sum(x for x, dec in zip(adm_n, is_decode) if not dec)
                now = (n_step, n_step + k, tokens, prefill, n_step + sum(is_decode), in_running, wlen, stop_j,
                       n_step + sum(adm_sampled))
            else:
                now = (n_step, n_step, n_step, 0, n_step, in_running, wlen, stop_j, n_step)
            frees.append(free)
            if changed:
                n = len(alive_pos)
                if n:
                    live_cb = np.array(live_cbl, dtype=np.int64)
                    sum_cb = int(sum(live_cbl))
                    ones = _ones(n)
                    fin_step = finishes[0][0] - 1
                    memo = self.memo if n == 1 else None
                    memo_base = live_cbl[0]
                dirty = True
                next_send = client.next_send_time()
            if now != rec:
                runs.append(now)
                runs_at.append(j)
                rec = now
            j += 1
            if progress is not None and done >= next_report:
                progress(done, self.n)
                next_report = done + self.report_every
            if end_after:
                break
            if dirty or release or n == 0 or n > cap or (wlen and stop is None):
                continue
            # The steps up to the next event are plain: decodes, and blocks at block boundaries.
            now = (n, n, n, 0, n, in_running, wlen, stop if wlen else _EMPTY, n)
            if now != rec:
                runs.append(now)
                runs_at.append(j)
                rec = now
            while j < last_step and j != fin_step and (next_send is None or t < next_send) and j not in regs:
                cross = phase[j % bs]
                if cross:
                    new = [p for p in cross if alive[p] and j0l[p] <= j]
                    if new:
                        if len(new) > free:
                            end_after = True  # the normal step preempts
                            break
                        free -= len(new)
                        got += new
                frees.append(free)
                if decode_time is not None and memo is None:
                    gpu = decode_time(n, sum_cb + n * j, n)
                else:
                    gpu = self._decode_only(j, ones, live_cb, memo, memo_base)
                if async_mode:
                    start = t + o
                    if prev_end > start:
                        start = prev_end
                    t = start
                    prev_end = start + gpu
                    ends.append(prev_end)
                else:
                    start = t + o
                    t = start + gpu
                    ends.append(t)
                starts.append(start)
                if streaming:
                    front_end.streamed(n, ends[-1])
                    next_send = client.next_send_time()
                j += 1
            if end_after:
                break
        steps = j
        if got:
            self._hand_out(got, Rl)
        self._finish_leap(Rl, cbl, startl, j0l, ncl, finl, alive_pos, steps, starts, ends, frees, runs, runs_at,
                          extras, len(R))
        return t, prev_end, done, next_report

    def _plan_registrations(self, regs: dict[int, list[int]], cached_at: dict[int, int], p: int, c: int, cb: int,
                            first: int, fin: int) -> None:
        """The steps in which request p (past tokens cb + j in step j, num_cached c) fills a block
        that commit_running() registers."""
        bs = self.bs
        cached_at[p] = c
        j = max(first, (c + 1) * bs - cb - 1)
        while j < fin:
            regs.setdefault(j, []).append(p)
            j = ((cb + j + 1) // bs + 1) * bs - cb - 1

    def _update_admitted(self, adm: list[int], ntok: list[int], sampled: list[bool], j: int, end: float,
                         extras: list) -> list[int]:
        """update() and _record_tokens() for the requests admitted in step j (no speculative
        decoding): those with every prompt token computed sample one token, a first token or (a
        resumed request) a gap after the decodes' gaps of the step; those reaching max_tokens or
        max_model_len finish (freed, or lingering with async scheduling). Returns the finished."""
        sched = self.sched
        reqs = self.reqs
        run = self.run
        limit = sched._limit
        finished = []
        gaps = []
        for r, t, s in zip(adm, ntok, sampled):
            if not s:
                continue
            reqs.num_tokens[r] = t + 1
            out = int(reqs.num_output[r]) + 1
            reqs.num_output[r] = out
            if out == 1:
                run.first_tokens_out(r, end)
            else:
                gap = end - run.last_token[r]
                gaps.append(gap)
                if gap > run.max_itl[r]:
                    run.max_itl[r] = gap
            run.last_token[r] = end
            if t + 1 >= limit[r]:
                finished.append(r)
        if gaps:
            extras.append((j, np.array(gaps)))
        if finished:
            if self.async_mode:
                reqs.lingering[finished] = True
                sched._lingering.extend(finished)
            else:
                sched._finish(np.array(finished, dtype=np.int64))
        return finished

    def _finish_leap(self, Rl, cbl, startl, j0l, ncl, finl, alive_pos, steps, starts, ends, frees, runs,
                     runs_at, extras, n0) -> None:
        """The bulk of a leap of `steps` steps: the state of the requests still decoding, token
        times and ITL gaps, and the per-step records."""
        reqs = self.reqs
        kv = self.kv
        run = self.run
        bs = self.bs
        R = np.array(Rl, dtype=np.int64)
        if alive_pos:
            pos = np.array(alive_pos, dtype=np.int64)
            Rs = R[pos]
            cbs = np.array(cbl, dtype=np.int64)[pos]
            reqs.num_computed[Rs] = cbs + steps
            reqs.num_tokens[Rs] = cbs + 1 + steps
            reqs.num_output[Rs] += steps - np.array(startl, dtype=np.int64)[pos]
            kv.held[Rs] += np.array([(steps - 1 - j0l[p]) // bs + 1 if j0l[p] < steps else 0 for p in alive_pos],
                                    dtype=np.int64)
            if kv.caching:
                num_cached = kv.num_cached
                for p in alive_pos:
                    u = (cbl[p] + steps) // bs
                    if u > ncl[p]:
                        num_cached[Rl[p]] = u
            if self.sched.num_preemptions:
                hw = reqs.high_water[Rs].tolist()
                self.sched.recomputed_tokens += sum(max(0, min(steps, h - cbl[p]) - startl[p])
                                                    for h, p in zip(hw, alive_pos))
        # The run-length records, one value per step.
        if len(runs) == 1:
            cols = None
            n_dec = runs[0][0]
        else:
            lengths = np.diff(np.array(runs_at + [steps], dtype=np.int64))
            cols = [np.repeat(c, lengths) for c in np.array(runs, dtype=np.int64).T]
            n_dec = cols[0]
        # Token times: step 0's gaps from each first request's last token, then in each step one gap
        # per decoding request (the same for all: they all sampled in the step before), with the
        # resumed requests' gaps after them (the step path's chunks, concatenated).
        ends_arr = np.array(ends)
        R0 = R[:n0]
        gaps0 = ends[0] - run.last_token[R0]
        d = np.diff(ends_arr)
        regular = np.repeat(d, n_dec[1:] if cols is not None else n_dec)
        chunks = run.itl_chunks
        chunks.append(gaps0)
        if extras:
            cum = np.cumsum(n_dec[1:]) if cols is not None else n_dec * np.arange(1, steps)
            at = 0
            for j, gaps in extras:
                if j:
                    upto = int(cum[j - 1])
                    chunks.append(regular[at:upto])
                    at = upto
                chunks.append(gaps)
            chunks.append(regular[at:])
        elif regular.size:
            chunks.append(regular)
        # Each request's last step in the leap and its largest gap; when the leap's first requests all
        # decoded to its end (none finished, none joined), that is the same for all.
        last = np.minimum(np.array(finl, dtype=np.int64), steps) - 1
        if R.size == n0 and len(alive_pos) == n0:
            top = np.maximum(gaps0, d.max()) if steps > 1 else gaps0
            run.max_itl[R0] = np.maximum(run.max_itl[R0], top)
            run.last_token[R0] = ends[-1]
        else:
            start = np.array(startl, dtype=np.int64)
            decoded = last >= start
            top = np.full(R.size, -np.inf)
            top[:n0] = gaps0
            lo = np.maximum(start, 1) - 1   # gaps d[lo:hi] are the requests' gaps in steps >= 1
            hi = last
            has = decoded & (hi > lo)
            if has.any():
                top[has] = np.maximum(top[has], _range_max(d, lo[has], hi[has]))
            rows = R[decoded]
            run.max_itl[rows] = np.maximum(run.max_itl[rows], top[decoded])
            run.last_token[rows] = ends_arr[last[decoded]]
        run.step_start.extend(starts)
        run.step_end.extend(ends_arr)
        total = self.total_blocks
        free = np.array(frees, dtype=np.int64)
        run.step_kv_usage.extend(1.0 - free / total if total else np.zeros(steps))
        run.step_free_blocks.extend(free)
        # The columns of a run's fields after the first (the decoding count is not recorded).
        targets = (run.step_seqs, run.step_tokens, run.step_prefill_tokens, run.step_decodes, run.step_running,
                   run.step_waiting, run.step_stop, run.step_sampled)
        if cols is None:
            for col, value in zip(targets, runs[0][1:]):
                col.extend_const(value, steps)
        else:
            for col, values in zip(targets, cols[1:]):
                col.extend(values)
        run.step_preempted.extend_const(0, steps)
        self.num_leaps += 1
        self.num_steps += steps

    def _advance_one(self, r: int, cb: int, start: int, j0: int, nc: int, k: int) -> None:
        """Request r's state after leap step k - 1, its last (it finishes in it)."""
        reqs = self.reqs
        kv = self.kv
        bs = self.bs
        reqs.num_computed[r] = cb + k
        reqs.num_tokens[r] = cb + 1 + k
        reqs.num_output[r] += k - start
        if j0 < k:
            kv.held[r] += (k - 1 - j0) // bs + 1
        if kv.caching and (cb + k) // bs > nc:
            kv.num_cached[r] = (cb + k) // bs
        if self.sched.num_preemptions:
            self.sched.recomputed_tokens += max(0, min(k, int(reqs.high_water[r]) - cb) - start)

    def _hand_out(self, got: list[int], Rl: list[int]) -> None:
        """The new blocks of the steps run since the last hand-out: one pop, handed out in step
        order and running order within a step, as each step's commit_running() pops them."""
        pool = self.kv.pool
        if not self.kv.caching:
            pool.num_free -= len(got)
            return
        blocks = self.kv.blocks
        for p, b in zip(got, pool.get_new_blocks(len(got))):
            blocks[Rl[p]].append(b)

    def _register(self, Rl: list[int], cbl: list[int], j: int, positions: list[int], cached_at: dict[int, int]) -> None:
        """commit_running()'s registration of the blocks that fill up in step j, in running order."""
        kv = self.kv
        bs = self.bs
        for p in sorted(positions):
            r = Rl[p]
            u = (cbl[p] + j + 1) // bs
            c = cached_at[p]
            if u <= c:
                continue
            kv._register(r, kv.blocks[r], c, u, int(kv.unique_from[r]), int(kv.reqs.num_preemptions[r]))
            cached_at[p] = u


def _make_batch_factory():
    """StepBatch(new_tokens, past_tokens, sampled) without the frozen dataclass's __init__ (half
    the cost), when StepBatch is the plain slots dataclass it is; else the constructor."""
    fields = ("new_tokens", "past_tokens", "sampled")
    try:
        setters = [getattr(StepBatch, f).__set__ for f in fields]
    except AttributeError:
        return StepBatch
    if (getattr(StepBatch, "__slots__", None) != fields or hasattr(StepBatch, "__post_init__")
            or list(StepBatch.__dataclass_fields__) != list(fields)):
        return StepBatch
    set_new, set_past, set_sampled = setters
    new = object.__new__

    def make(new_tokens, past_tokens, sampled) -> StepBatch:
        b = new(StepBatch)
        set_new(b, new_tokens)
        set_past(b, past_tokens)
        set_sampled(b, sampled)
        return b

    return make


_batch = _make_batch_factory()


def _range_max(d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(d[lo[i]:hi[i]]) for each i (all ranges non-empty), with a sparse table."""
    table = [d]
    width = 1
    longest = int((hi - lo).max())
    while width * 2 <= longest:
        prev = table[-1]
        table.append(np.maximum(prev[:-width], prev[width:]))
        width *= 2
    length = hi - lo
    level = np.floor(np.log2(length)).astype(np.int64)
    # Guard the floating-point log: 2**level <= length < 2**(level + 1).
    level -= (1 << level) > length
    level += (1 << (level + 1)) <= length
    out = np.empty(lo.size)
    for k in np.unique(level).tolist():
        sel = level == k
        row = table[k]
        out[sel] = np.maximum(row[lo[sel]], row[hi[sel] - (1 << k)])
    return out
