"""The oracle's formats: scenario YAML in, step trace (JSONL) and summary JSON out.

A scenario lists requests by arrival *step* (no clock). `replay()` drives the scheduler the way
fixtures/oracle/run_oracle.py drives vLLM's: arrivals, schedule(), one sampled token for every
request whose tokens are all computed, update; one trace line per step, field for field as the
oracle writes them (see fixtures/oracle/README.md).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import ReaderError
from .request import ExplicitTokens, RequestTable
from .scheduler import Scheduler
from .settings import ResolvedSettings, SchedulerSettings, derive_max_model_len, resolve

VOCAB_SIZE = 32000
TOKEN_BASE = 10

# Scenario `scheduler:` keys and their defaults when omitted (the oracle's own table).
SCENARIO_SCHEDULER_DEFAULTS: dict[str, Any] = {
    "max_num_batched_tokens": 2048,
    "max_num_seqs": 128,
    "enable_chunked_prefill": True,
    "long_prefill_token_threshold": 0,
    "max_num_partial_prefills": 1,
    "block_size": 16,
    "num_gpu_blocks": 10000,
    "enable_prefix_caching": False,
    "policy": "fcfs",
    "max_model_len": None,
    "scheduler_reserve_full_isl": None,
    "watermark": None,
    "long_prefill_token_threshold_adaptive": None,
    "max_num_active_seqs": None,
    "max_num_scheduled_tokens": None,
    "prefix_caching_hash_algo": "sha256",
}
_REQUEST_KEYS = {"id", "arrival_step", "max_tokens", "priority", "prompt_len", "prompt_segments", "prompt_token_ids"}


@dataclass
class Scenario:
    name: str
    path: str
    scheduler: dict[str, Any]
    requests: list[dict[str, Any]]  # sorted stably by arrival_step
    prompts: list[list[int]]
    max_steps: int
    sampled_token_id: int


def segment_tokens(tag: str, length: int) -> list[int]:
    """The oracle's deterministic tokens of a named segment (fixtures/oracle/README.md)."""
    out: list[int] = []
    counter = 0
    while len(out) < length:
        digest = hashlib.sha256(f"{tag}#{counter}".encode()).digest()
        out.extend(TOKEN_BASE + int.from_bytes(digest[i:i + 2], "little") % (VOCAB_SIZE - TOKEN_BASE)
                   for i in range(0, len(digest), 2))
        counter += 1
    return out[:length]


def _prompt(req: dict[str, Any], path: str, where: str) -> list[int]:
    try:
        if "prompt_token_ids" in req:
            toks = [int(t) for t in req["prompt_token_ids"]]
        elif "prompt_segments" in req:
            toks = []
            for seg in req["prompt_segments"]:
                toks.extend(segment_tokens(str(seg["tag"]), int(seg["len"])))
        elif "prompt_len" in req:
            toks = segment_tokens(f"unique:{req['id']}", int(req["prompt_len"]))
        else:
            raise ReaderError("a request needs prompt_len, prompt_segments or prompt_token_ids.", file=path, key=where)
    except (TypeError, ValueError, KeyError) as err:
        raise ReaderError(f"malformed prompt ({err}).", file=path, key=where) from None
    if not toks:
        raise ReaderError("empty prompt.", file=path, key=where)
    return toks


def load_scenario(path: str) -> Scenario:
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except OSError as err:
        raise ReaderError(f"cannot read the scenario: {err.strerror}.", file=path) from None
    except yaml.YAMLError as err:
        line = getattr(getattr(err, "problem_mark", None), "line", None)
        raise ReaderError(f"not valid YAML ({getattr(err, 'problem', err)}).", file=path,
                          line=line + 1 if line is not None else None) from None
    if not isinstance(data, dict) or not isinstance(data.get("requests"), list) or not data["requests"]:
        raise ReaderError("a scenario is a mapping with a non-empty 'requests' list.", file=path, key="requests")
    sched = dict(SCENARIO_SCHEDULER_DEFAULTS)
    given = data.get("scheduler") or {}
    if not isinstance(given, dict):
        raise ReaderError("'scheduler' must be a mapping.", file=path, key="scheduler")
    unknown = sorted(set(given) - set(SCENARIO_SCHEDULER_DEFAULTS))
    if unknown:
        raise ReaderError(f"unknown scheduler key(s): {', '.join(unknown)}.", file=path, key=f"scheduler.{unknown[0]}")
    sched.update(given)
    reqs = []
    for i, r in enumerate(data["requests"]):
        where = f"requests[{i}]"
        if not isinstance(r, dict) or "id" not in r:
            raise ReaderError("each request needs an 'id'.", file=path, key=where)
        extra = sorted(set(r) - _REQUEST_KEYS)
        if extra:
            raise ReaderError(f"unknown request key(s): {', '.join(extra)}.", file=path, key=f"{where}.{extra[0]}")
        for key in ("arrival_step", "max_tokens"):
            if not isinstance(r.get(key), int) or r[key] < (0 if key == "arrival_step" else 1):
                raise ReaderError(f"'{key}' must be an integer >= {0 if key == 'arrival_step' else 1}.",
                                  file=path, key=f"{where}.{key}")
        reqs.append(r)
    ids = [str(r["id"]) for r in reqs]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ReaderError(f"duplicate request id '{dup}'.", file=path, key="requests")
    order = sorted(range(len(reqs)), key=lambda i: reqs[i]["arrival_step"])
    reqs = [reqs[i] for i in order]
    prompts = [_prompt(r, path, f"requests[{order[i]}]") for i, r in enumerate(reqs)]
    name = data.get("name") or os.path.splitext(os.path.basename(path))[0]
    return Scenario(name=str(name), path=path, scheduler=sched, requests=reqs, prompts=prompts,
                    max_steps=int(data.get("max_steps", 20000)), sampled_token_id=int(data.get("sampled_token_id", 1)))


def scenario_settings(sc: Scenario, vllm_version: str | None) -> ResolvedSettings:
    s = sc.scheduler
    longest = max(len(p) + int(r["max_tokens"]) for p, r in zip(sc.prompts, sc.requests))
    mml = s["max_model_len"]
    if mml is None:
        mml = derive_max_model_len(longest, bool(s["enable_chunked_prefill"]), int(s["max_num_batched_tokens"]))
    data = {
        "vllm_version": vllm_version,
        "max_num_seqs": s["max_num_seqs"],
        "max_num_batched_tokens": s["max_num_batched_tokens"],
        "max_num_scheduled_tokens": s["max_num_scheduled_tokens"],
        "enable_chunked_prefill": s["enable_chunked_prefill"],
        "long_prefill_token_threshold": s["long_prefill_token_threshold"],
        "long_prefill_token_threshold_adaptive": s["long_prefill_token_threshold_adaptive"],
        "max_num_active_seqs": s["max_num_active_seqs"],
        "block_size": s["block_size"],
        "num_gpu_blocks": s["num_gpu_blocks"],
        "enable_prefix_caching": s["enable_prefix_caching"],
        "scheduling_policy": s["policy"],
        "max_model_len": mml,
        "scheduler_reserve_full_isl": s["scheduler_reserve_full_isl"],
        "watermark": float(s["watermark"]) if s["watermark"] is not None else None,
        "async_scheduling": False,  # the oracle drives the synchronous Scheduler
    }
    settings = SchedulerSettings.from_dict(data, file=sc.path)
    cfg = resolve(settings)
    for r, p in zip(sc.requests, sc.prompts):
        if len(p) >= cfg.max_model_len:
            raise ReaderError(f"request {r['id']}: prompt length {len(p)} >= max_model_len {cfg.max_model_len} "
                              "(vLLM's input processor would reject it).", file=sc.path, key="requests")
    return cfg


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def replay(sc: Scenario, vllm_version: str | None, *, fast_path: bool = True) -> tuple[list[str], dict[str, Any]]:
    """Run a scenario; returns the trace lines (JSON text, no newline) and the summary."""
    cfg = scenario_settings(sc, vllm_version)
    ids = [str(r["id"]) for r in sc.requests]
    k = len(ids)
    reqs = RequestTable(ids, [len(p) for p in sc.prompts], [int(r["max_tokens"]) for r in sc.requests],
                        priority=[int(r.get("priority", 0)) for r in sc.requests],
                        # arrival_time = arrival_step + (global add order) * 1e-6, as the oracle sets it
                        arrival=[int(r["arrival_step"]) + i * 1e-6 for i, r in enumerate(sc.requests)])
    content = ExplicitTokens(sc.prompts, cfg.block_size, sc.sampled_token_id) if cfg.enable_prefix_caching else None
    sched = Scheduler.build(cfg, reqs, content, fast_path=fast_path, content_tracks_tokens=True)
    kv = sched.kv
    info = {rid: {"arrival_step": int(r["arrival_step"]), "prompt_len": len(p), "max_tokens": int(r["max_tokens"]),
                  "first_scheduled_step": None, "first_token_step": None, "finish_step": None, "finish_reason": None,
                  "num_output_tokens": 0, "num_preemptions": 0, "prefix_hit_tokens": None, "resume_hit_tokens": [],
                  "total_scheduled_tokens": 0}
            for rid, r, p in zip(ids, sc.requests, sc.prompts)}
    lines: list[str] = []
    initial_free = kv.num_free

    def kv_snapshot() -> dict[str, Any]:
        return {"free_blocks": kv.num_free, "usage": round(kv.usage(), 6)}

    nxt = 0
    step = 0
    while step < sc.max_steps:
        arrived = []
        while nxt < k and sc.requests[nxt]["arrival_step"] <= step:
            sched.add_request(nxt)
            arrived.append(ids[nxt])
            nxt += 1
        if not sched.has_unfinished():
            if nxt >= k:
                break
            lines.append(_dumps({"step": step, "idle": True, "arrived": arrived}))
            step += 1
            continue
        plan = sched.schedule()
        kv_sched = kv_snapshot()
        idx = plan.idx.tolist()
        counts = plan.n.tolist()
        nst = {ids[r]: c for r, c in zip(idx, counts)}
        running_ids = [ids[r] for r in idx[:plan.num_from_running]]
        new_ids, resumed_ids, hits = [], [], {}
        for r, resumed, hit in zip(plan.admitted, plan.admitted_resumed, plan.admitted_hits):
            rid = ids[r]
            (resumed_ids if resumed else new_ids).append(rid)
            hits[rid] = hit
            if resumed:
                info[rid]["resume_hit_tokens"].append(hit)
            else:
                info[rid]["prefix_hit_tokens"] = hit
                info[rid]["first_scheduled_step"] = step
        # The oracle lists new and resumed ids in scheduling order; hits: new ones first, then resumed.
        new_ids = [rid for rid in nst if rid in new_ids]
        resumed_ids = [rid for rid in nst if rid in resumed_ids]
        hits = {rid: hits[rid] for rid in new_ids + resumed_ids}
        for r in plan.preempted:
            info[ids[r]]["num_preemptions"] += 1
        blocks_held = {ids[r]: int(kv.held[r]) for r in sched.running.tolist()}
        computed_after = {ids[r]: int(reqs.num_computed[r]) for r in idx}
        for rid, c in nst.items():
            info[rid]["total_scheduled_tokens"] += c
        upd = sched.update(plan)
        sampled_ids = [ids[r] for r in upd.sampled.tolist()]
        finished = {ids[r]: "length" for r in upd.finished.tolist()}
        for r in upd.sampled.tolist():
            rec = info[ids[r]]
            if rec["first_token_step"] is None:
                rec["first_token_step"] = step
            rec["num_output_tokens"] = int(reqs.num_output[r])
        for rid in finished:
            info[rid]["finish_step"] = step
            info[rid]["finish_reason"] = "length"
        lines.append(_dumps({
            "step": step,
            "arrived": arrived,
            "num_scheduled_tokens": nst,
            "total_scheduled_tokens": sum(counts),
            "new": new_ids,
            "resumed": resumed_ids,
            "running_scheduled": running_ids,
            "preempted": [ids[r] for r in plan.preempted],
            "prefix_hit_tokens": hits,
            "computed_after": computed_after,
            "sampled": sampled_ids,
            "finished": finished,
            "kv_after_schedule": kv_sched,
            "kv_after_update": kv_snapshot(),
            "blocks_held": blocks_held,
            "running": [ids[r] for r in sched.running.tolist()],
            "waiting": [ids[r] for r in sched.waiting.order()],
        }))
        step += 1
    unfinished = sorted(rid for rid in info if info[rid]["finish_step"] is None and ids.index(rid) < nxt)
    unfinished += ids[nxt:]
    summary = {
        "scenario": sc.name,
        "vllm_version": cfg.vllm_version,
        "scheduler_class": "reader.sim.scheduler.Scheduler (vllm-reader's simulator)",
        "num_steps": step,
        "hit_step_cap": bool(unfinished),
        "unfinished": unfinished,
        "effective_config": {
            "max_num_batched_tokens": cfg.max_num_batched_tokens,
            "max_num_seqs": cfg.max_num_seqs,
            "enable_chunked_prefill": cfg.enable_chunked_prefill,
            "long_prefill_token_threshold": cfg.long_prefill_token_threshold,
            "long_prefill_token_threshold_adaptive":
                cfg.long_prefill_token_threshold_adaptive if cfg.behaviour.adaptive_threshold_exists else None,
            "scheduler_reserve_full_isl":
                cfg.scheduler_reserve_full_isl if cfg.behaviour.full_isl_gate_exists else None,
            "watermark": cfg.watermark if cfg.behaviour.watermark_exists else None,
            "policy": cfg.scheduling_policy,
            "max_model_len": cfg.max_model_len,
            "block_size": cfg.block_size,
            "num_gpu_blocks": cfg.num_gpu_blocks,
            "initial_free_blocks": initial_free,
            "enable_prefix_caching": cfg.enable_prefix_caching,
            "sampled_token_id": sc.sampled_token_id,
        },
        "notes": list(cfg.notes),
        "requests": {rid: info[rid] for rid in sorted(info, key=lambda x: (info[x]["arrival_step"], x))},
    }
    return lines, summary


def first_difference(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> str | None:
    """The first step and field where two traces differ, in words; None if identical."""
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            step = e.get("step", i)
            for key in list(e) + [k for k in a if k not in e]:
                if e.get(key, "<absent>") != a.get(key, "<absent>"):
                    want, got = e.get(key, "<absent>"), a.get(key, "<absent>")
                    return f"step {step}, field '{key}': expected {want!r}, got {got!r}"
    if len(expected) != len(actual):
        return f"trace length: expected {len(expected)} steps, got {len(actual)}"
    return None


__all__ = ["Scenario", "load_scenario", "replay", "scenario_settings", "segment_tokens", "first_difference"]
