"""Scheduler rules the oracle cannot check (speculative decoding, async scheduling) and the
version table, tested against properties stated in shared/reference/vllm/scheduler-v1.md."""
from __future__ import annotations

import numpy as np
import pytest

from reader.sim.block_pool import CachingBlockPool, CountingBlockPool
from reader.sim.request import RequestTable
from reader.sim.scheduler import STOP_FULL_SEQUENCE, STOP_NO_CHUNK, STOP_SEQS, Scheduler
from reader.sim.settings import SchedulerSettings, resolve
from reader.sim.versions import behaviour_for, table_rows, verification_note


def make(prompts, max_tokens, **settings):
    settings.setdefault("vllm_version", "0.32.0")
    settings.setdefault("enable_prefix_caching", False)
    settings.setdefault("async_scheduling", False)
    cfg = resolve(SchedulerSettings(**settings), longest_request=max(p + m for p, m in zip(prompts, max_tokens)))
    reqs = RequestTable([f"r{i}" for i in range(len(prompts))], prompts, max_tokens)
    sched = Scheduler.build(cfg, reqs, None)
    for r in range(len(prompts)):
        sched.add_request(r)
    return sched, reqs


def scheduled(plan):
    return dict(zip(plan.idx.tolist(), plan.n.tolist()))


# ---- speculative decoding -------------------------------------------------------------------------
SPEC = {"method": "ngram", "num_speculative_tokens": 3, "acceptance_rate": 0.5}


def test_a_decode_with_k_drafts_costs_1_plus_k_budget_tokens():
    sched, reqs = make([10, 10], [50, 50], speculative=SPEC)
    sched.update(sched.schedule())            # prefill; both sample a token and get 3 drafts
    assert reqs.num_spec.tolist() == [3, 3]
    plan = sched.schedule()
    assert scheduled(plan) == {0: 4, 1: 4}
    assert plan.spec.tolist() == [3, 3]


def test_a_budget_cut_verifies_only_the_drafts_that_fit():
    sched, reqs = make([2, 2], [50, 50], speculative=SPEC, max_num_batched_tokens=6)
    sched.update(sched.schedule())                       # both prompts in one step, both get 3 drafts
    plan = sched.schedule()
    assert scheduled(plan) == {0: 4, 1: 2}               # r1 is cut to 2 of its 1 + 3 tokens
    assert plan.spec.tolist() == [3, 1]
    upd = sched.update(plan, accepted=np.array([0, 1]))
    assert upd.generated.tolist() == [1, 2]


def test_rejected_drafts_are_uncomputed_and_accepted_ones_become_tokens():
    sched, reqs = make([10], [50], speculative=SPEC)
    sched.update(sched.schedule())
    plan = sched.schedule()
    before = int(reqs.num_tokens[0])
    assert int(reqs.num_computed[0]) == before + 3          # optimistic: all 4 tokens computed
    upd = sched.update(plan, accepted=np.array([1]))
    assert upd.generated.tolist() == [2]                     # the bonus token + 1 accepted draft
    assert int(reqs.num_tokens[0]) == before + 2
    assert int(reqs.num_computed[0]) == before + 1           # 2 rejected drafts un-computed
    assert int(reqs.num_tokens[0]) - int(reqs.num_computed[0]) == 1


def test_accepted_drafts_never_run_past_max_tokens():
    sched, reqs = make([10], [3], speculative=SPEC)
    sched.update(sched.schedule())
    upd = sched.update(sched.schedule(), accepted=np.array([3]))
    assert upd.generated.tolist() == [2] and upd.finished.tolist() == [0]
    assert int(reqs.num_output[0]) == 3


def test_draft_model_reserves_lookahead_slots_and_budget_by_version():
    spec = {"method": "draft_model", "num_speculative_tokens": 2, "acceptance_rate": 0.7}
    common = dict(max_num_seqs=8, max_num_batched_tokens=100, speculative=spec)
    old = resolve(SchedulerSettings(vllm_version="0.18.0", **common))
    new = resolve(SchedulerSettings(vllm_version="0.32.0", **common))
    assert old.max_num_scheduled_tokens == 100 - 8 and old.drafting_slots_per_request == 0
    assert new.max_num_scheduled_tokens == 100 and new.drafting_slots_per_request == 1
    assert old.num_lookahead_tokens == new.num_lookahead_tokens == 2
    assert not new.async_scheduling   # auto async scheduling stays off with a draft model


def test_per_request_drafting_slots_are_charged_to_the_batch_budget():
    spec = {"method": "draft_model", "num_speculative_tokens": 1, "acceptance_rate": 0.0}
    sched, _ = make([30, 30, 30], [5, 5, 5], speculative=spec, max_num_batched_tokens=64)
    plan = sched.schedule()
    # 30 + 1 slot, then 30 + 1, then 64 - 62 = 2 left: 2 <= 1 slot + ... the third gets 1 token
    assert scheduled(plan) == {0: 30, 1: 30, 2: 1}


# ---- running / waiting rules --------------------------------------------------------------------
def test_running_requests_are_served_before_waiting_ones_and_a_long_prefill_takes_the_budget():
    sched, _ = make([3000, 40], [4, 4], max_num_batched_tokens=512)
    assert scheduled(sched.schedule()) == {0: 512}
    assert scheduled(sched.schedule()) == {0: 512}


def test_without_chunking_a_prompt_that_does_not_fit_ends_admission():
    sched, _ = make([1500, 1200, 100], [4, 4, 4], max_num_batched_tokens=2048, enable_chunked_prefill=False,
                    max_model_len=2048)
    plan = sched.schedule()
    assert scheduled(plan) == {0: 1500} and plan.stop == STOP_NO_CHUNK


def test_max_num_seqs_stops_admission():
    sched, _ = make([10] * 5, [4] * 5, max_num_seqs=3)
    plan = sched.schedule()
    assert len(plan.idx) == 3 and plan.stop == STOP_SEQS


def test_the_full_sequence_gate_waits_for_room_for_the_whole_prompt():
    sched, _ = make([600, 600], [4, 4], max_num_batched_tokens=256, num_gpu_blocks=64)
    for _ in range(2):
        assert scheduled(plan := sched.schedule()) == {0: 256}
        sched.update(plan)
    plan = sched.schedule()
    # r0 finishes its prompt with 88 tokens, leaving 168 of budget, but r1's whole prompt needs 38
    # blocks and r0 holds 38 of the 63: r1 is not admitted on a first chunk.
    assert scheduled(plan) == {0: 88} and plan.stop == STOP_FULL_SEQUENCE


@pytest.mark.parametrize("version,first_step", [("0.18.0", 256), ("0.32.0", 1000)])
def test_a_lone_request_is_exempt_from_the_long_prefill_threshold_from_0_31(version, first_step):
    sched, _ = make([1000], [4], long_prefill_token_threshold=256, vllm_version=version)
    assert scheduled(sched.schedule()) == {0: first_step}


# ---- async scheduling ---------------------------------------------------------------------------
def test_async_scheduling_frees_a_finished_request_one_schedule_later():
    sched, reqs = make([10, 10], [1, 5], max_num_seqs=2, async_scheduling=True)
    sched.add_request  # noqa: B018 - both queued by make()
    plan = sched.schedule()
    upd = sched.update(plan, defer_finish=True)
    assert upd.finished.tolist() == [0]
    assert sched.num_running == 2                      # r0 still holds its slot and blocks
    held = int(sched.kv.held[0])
    plan = sched.schedule()
    assert scheduled(plan) == {1: 1}                   # r0 is skipped, not decoded again
    assert sched.release_lingering() == [0]
    assert sched.num_running == 1 and int(sched.kv.held[0]) == 0 and held > 0


# ---- block pool -----------------------------------------------------------------------------------
def test_the_null_block_is_never_usable():
    assert CountingBlockPool(48).num_free == 47
    pool = CachingBlockPool(48, unhashed_to_front=True)
    assert pool.num_free == 47 and 0 not in pool.get_new_blocks(47)


@pytest.mark.parametrize("to_front,expected_head", [(True, 3), (False, 4)])
def test_freed_blocks_without_a_hash_go_to_the_front_from_0_24(to_front, expected_head):
    pool = CachingBlockPool(8, unhashed_to_front=to_front)
    blocks = pool.get_new_blocks(3)                    # 1, 2, 3
    pool.cache_blocks(blocks[:2], ["h1", "h2"])        # block 3 stays partly filled (no hash)
    pool.free_blocks(list(reversed(blocks)))
    assert next(iter(pool.free_queue)) == expected_head
    assert pool.num_free == 7                          # cached free blocks count as free


def test_reusing_a_cached_free_block_evicts_its_hash():
    pool = CachingBlockPool(3, unhashed_to_front=True)
    (b,) = pool.get_new_blocks(1)
    pool.cache_blocks([b], ["h"])
    pool.free_blocks([b])
    assert pool.get_cached_block("h") == b
    pool.get_new_blocks(2)                             # the never-used block, then b
    assert pool.get_cached_block("h") is None


# ---- the version table ------------------------------------------------------------------------------
def test_version_dependent_behaviour_comes_from_one_table():
    old, new = behaviour_for("0.18.0"), behaviour_for("0.32.0")
    assert not old.full_isl_gate_exists and new.full_isl_gate_exists
    assert not old.lone_request_threshold_exempt and new.lone_request_threshold_exempt
    assert not old.unhashed_blocks_freed_to_front and new.unhashed_blocks_freed_to_front
    assert behaviour_for("0.19.0").full_isl_gate_exists and not behaviour_for("0.30.0").lone_request_threshold_exempt
    assert behaviour_for("0.24.0").watermark_exists and not behaviour_for("0.23.0").watermark_exists
    assert {r["feature"] for r in table_rows()} >= {"full_isl_gate_exists", "draft_slot_accounting"}
    assert all(r["evidence"] for r in table_rows())


def test_unverified_versions_get_a_note_and_settings_they_lack_are_ignored_with_one():
    assert verification_note("0.32.0") is None and verification_note("0.18.0") is None
    assert "0.33.0" in verification_note("0.33.0")
    cfg = resolve(SchedulerSettings(vllm_version="0.18.0", watermark=0.2, scheduler_reserve_full_isl=True))
    assert cfg.watermark == 0.0 and not cfg.scheduler_reserve_full_isl
    assert any("watermark" in n for n in cfg.notes) and any("reserve_full_isl" in n for n in cfg.notes)
    default = resolve(SchedulerSettings())
    assert default.vllm_version == "0.33.0" and default.enable_prefix_caching and default.async_scheduling


@pytest.mark.parametrize("setting, value, arrived", [
    ("watermark", 0.2, "0.24.0"),
    ("scheduler_reserve_full_isl", True, "0.19.0"),
    ("long_prefill_token_threshold_adaptive", True, "0.31.0"),
    ("max_num_active_seqs", 4, "0.31.0"),
])
def test_a_setting_newer_than_the_release_is_ignored_naming_the_release_it_arrived_in(setting, value, arrived):
    cfg = resolve(SchedulerSettings(vllm_version="0.18.0", **{setting: value}))
    assert [n for n in cfg.notes if n.startswith(f"{setting}={value!r} ignored")] == [
        f"{setting}={value!r} ignored: vLLM 0.18.0 has no such setting (it arrived in {arrived})."]
    assert resolve(SchedulerSettings(vllm_version="0.32.0", **{setting: value})).notes == ()


def test_settings_errors_name_the_key():
    from reader.errors import ReaderError

    with pytest.raises(ReaderError) as err:
        SchedulerSettings.from_dict({"max_num_seqs": 0})
    assert err.value.key == "max_num_seqs"
    with pytest.raises(ReaderError) as err:
        SchedulerSettings.from_dict({"speculative": {"num_speculative_tokens": 2, "acceptance_rate": 2.0}})
    assert err.value.key == "speculative.acceptance_rate"


def test_recomputed_tokens_are_the_tokens_computed_again_after_preemptions():
    """In the oracle's 07_kv_preemption (no prefix caching), every token a request was scheduled
    beyond prompt + outputs - 1 was computed a second time after a preemption."""
    import json
    from pathlib import Path

    from reader.sim.oracle_format import load_scenario, scenario_settings

    oracle = Path(__file__).resolve().parents[2] / "fixtures" / "oracle"
    sc = load_scenario(str(oracle / "scenarios" / "07_kv_preemption.yaml"))
    cfg = scenario_settings(sc, "0.32.0")
    reqs = RequestTable([r["id"] for r in sc.requests], [len(p) for p in sc.prompts],
                        [r["max_tokens"] for r in sc.requests])
    sched = Scheduler.build(cfg, reqs, None)
    pending = list(range(len(sc.requests)))
    step = 0
    while pending or sched.has_unfinished():
        while pending and sc.requests[pending[0]]["arrival_step"] <= step:
            sched.add_request(pending.pop(0))
        if sched.has_unfinished():
            sched.update(sched.schedule())
        step += 1
    golden = json.loads((oracle / "golden" / "07_kv_preemption.summary.json").read_text())["requests"]
    expected = sum(g["total_scheduled_tokens"] - (g["prompt_len"] + g["num_output_tokens"] - 1)
                   for g in golden.values())
    assert expected > 0 and sched.recomputed_tokens == expected
