"""What the fitted loads can tell apart (reader/fitting/coverage.py): the profile says when the bench set
cannot split a prefill's fixed cost from its cost per prompt token, or cannot see batching at all."""
from __future__ import annotations

import math
from pathlib import Path

from reader.fitting.bench import read_bench
from reader.fitting.coverage import coverage_warnings, open_loop_warnings, repeated_prompt_warnings
from reader.calibration.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "fixtures" / "calibration" / "cpu-tiny-llama"


def _loads(*names: str):
    return [read_bench(FOLDER / "bench" / "round-1" / f"{n}.json") for n in names]


def test_one_request_at_a_time_at_two_prompt_lengths_and_a_loaded_run_leave_nothing_to_say():
    assert coverage_warnings(_loads("c1-short", "c1-long", "c16-short")) == []


def test_one_prompt_length_alone_cannot_split_a_prefills_fixed_cost_from_its_per_token_cost():
    # the split the CPU fixtures were first fitted on: 256-token prompts alone, 1,024-token ones only four at a time
    (warning,) = coverage_warnings(_loads("c1-short", "c16-short", "r12-short", "c4-long", "c8-mixed"))
    assert "only at 256-token prompts" in warning and "--max-concurrency 1" in warning
    assert "--random-input-len 1024" in warning


def test_without_any_one_at_a_time_run_the_warning_asks_for_two_lengths():
    (warning,) = coverage_warnings(_loads("c16-short", "c4-long"))
    assert "none at all" in warning and "`--random-input-len 256` and `--random-input-len 1024`" in warning


def test_prompt_lengths_closer_than_twice_apart_do_not_count_as_two():
    short = _loads("c1-short")[0]
    near = short.model_copy(update={"total_input_tokens": int(1.5 * short.total_input_tokens)})
    (warning,) = coverage_warnings([short, near, *_loads("c16-short")])
    assert "only at 256, 384-token prompts" in warning


def test_results_that_all_ran_alone_cannot_see_batching():
    warnings = coverage_warnings(_loads("c1-short", "c1-long"))
    assert len(warnings) == 1 and "batching" in warnings[0]


def test_the_shipped_cpu_profile_was_fitted_on_a_bench_set_with_no_gap():
    profile = load_profile(FOLDER / "profile.yaml")
    assert not any("one request at a time" in w for w in profile.fit.warnings)


def test_runs_that_repeat_each_others_prompts_on_a_prefix_caching_server_are_named():
    # the steps set's rounds repeat each load under one seed: the same prompts, so the same lengths in order
    first, again = read_bench(FOLDER / "bench" / "round-1" / "c1-short.json"), read_bench(
        FOLDER / "bench" / "round-2" / "c1-short.json")
    (warning,) = repeated_prompt_warnings([first, again, *_loads("c4-long")], prefix_caching=True)
    assert "round-1/c1-short.json and round-2/c1-short.json" in warning
    assert "--seed" in warning and "/reset_prefix_cache" in warning and "VLLM_SERVER_DEV_MODE=1" in warning


def test_repeated_prompts_say_nothing_without_prefix_caching_or_without_a_repeat():
    first, again = (read_bench(FOLDER / "bench" / f"round-{i}" / "c1-short.json") for i in (1, 2))
    assert repeated_prompt_warnings([first, again], prefix_caching=False) == []
    assert repeated_prompt_warnings(_loads("c1-short", "c4-long", "c8-mixed"), prefix_caching=True) == []


SATURATION = ROOT / "fixtures" / "calibration" / "cpu-tiny-saturation"


def _saturation(*names: str):
    return [read_bench(SATURATION / "bench" / "round-1" / f"{n}.json") for n in names]


def test_a_server_kept_full_only_by_closed_loops_asks_for_an_open_loop_past_its_limit():
    # 32 clients fill the 32 sequences but never send faster than the server delivers: no backlog grows
    (warning,) = open_loop_warnings(_saturation("c1-out128", "c8-out128", "c32-out256"), max_num_seqs=32)
    assert "only in closed loops (e.g. c32-out256.json)" in warning
    delivered = 96 / read_bench(SATURATION / "bench" / "round-1" / "c32-out256.json").duration_s
    assert f"delivered {delivered:.1f} requests/s" in warning and f"--request-rate {math.ceil(1.5 * delivered)}" in warning


def test_an_open_loop_past_the_servers_limit_among_the_fitted_results_leaves_nothing_to_say():
    assert open_loop_warnings(_saturation("c32-out256", "r45-out256"), max_num_seqs=32) == []


def test_no_full_server_at_all_is_the_front_end_warnings_to_give_not_this_one():
    assert open_loop_warnings(_saturation("c1-out128", "c8-out128", "r15-out256"), max_num_seqs=32) == []
