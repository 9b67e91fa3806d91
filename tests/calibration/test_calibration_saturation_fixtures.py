"""Issue 25 on a real engine, offline: `vllm bench serve` results recorded against the CPU vLLM 0.32.0 serving
the tiny Llama under the served name `tiny` with 32 sequences and a 1,024-token budget
(fixtures/calibration/cpu-tiny-saturation, its README says when and at what host load), including open loops
past what the server delivers with 256-token outputs, and the profile `calibrate` fitted on the FIT loads
with the HELD_OUT ones held out (tests/live/bench_loads.py SATURATION).

The issue's bar: on every held-out load (not only their median) output throughput and median TPOT within 10%
and TTFT P50 within 25%, each load compared with the median of its rounds; the held-out loads include the
issue's 30 requests/s of 256-token outputs, past what the server delivers. What the shipped recording reaches
is also asserted as it stands (HELD_OUT_BOUNDS), a guard against a replay or fit that gets worse. The fitted
loads include an open loop past the server's limit (45 requests/s): fitted with only a closed loop kept full,
the same recording predicted the issue's load +30% in TTFT P50 (coverage.open_loop_warnings says why and
asks for one). Each run met an empty prefix cache (the recorder emptied it before each run): the random dataset
sends the same prompts for the same seed, and the recording before this one, which let each run meet the
prompts of the runs before it, measured TTFTs no replay of a run alone could reach.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reader.fitting.bench import read_bench
from reader.fitting.coverage import saturating
from reader.fitting.fit_bench import check_model, predict, replays
from reader.calibration.profile import load_profile

from live.bench_loads import SATURATION

from ._recorded import profile_setup
FOLDER = SATURATION.folder
FIT, HELD_OUT = SATURATION.fit, SATURATION.held_out  # the split the recorder ran (tests/live/bench_loads.py)
ROUNDS = sorted(p.name for p in (FOLDER / "bench").glob("round-*"))
ISSUE = {"output_throughput": 10.0, "median_tpot_ms": 10.0, "median_ttft_ms": 25.0}
# What the shipped profile reaches on each held-out load (|error| %, rounded up to the next point; measured
# 2026-12-03 on the recording of 14:51 UTC, the prefix cache emptied before each run, five rounds, fitted with
# 45 requests/s among the fitted loads: r10 +1.6 / -2.4 / +3.8, c16 -0.9 / +0.9 / +8.7, r15 +2.5 / -8.2 / -7.4,
# r30-out256 -1.5 / +5.1 / +16.2, r30-mixed +1.7 / +0.0 / -2.8 for throughput / median TPOT / TTFT P50).
HELD_OUT_BOUNDS = {
    "r10-out128": {"output_throughput": 2.0, "median_tpot_ms": 3.0, "median_ttft_ms": 4.0},
    "c16-out128": {"output_throughput": 1.0, "median_tpot_ms": 1.0, "median_ttft_ms": 9.0},
    "r15-out256": {"output_throughput": 3.0, "median_tpot_ms": 9.0, "median_ttft_ms": 8.0},
    "r30-out256": {"output_throughput": 2.0, "median_tpot_ms": 6.0, "median_ttft_ms": 17.0},
    "r30-mixed": {"output_throughput": 2.0, "median_tpot_ms": 1.0, "median_ttft_ms": 3.0},
}


@pytest.fixture(scope="module")
def profile():
    return load_profile(FOLDER / "profile.yaml")


@pytest.fixture(scope="module")
def fitted_setup(profile):
    return profile_setup(FOLDER, profile, fitted=[run for group in runs(FIT).values() for run in group])


@pytest.fixture(scope="module")
def resolved(fitted_setup):
    return fitted_setup[0].resolved


def runs(names):
    return {name: [read_bench(FOLDER / "bench" / rd / f"{name}.json") for rd in ROUNDS] for name in names}


@pytest.fixture(scope="module")
def held_out_errors(fitted_setup, resolved):
    """Per held-out load and metric: the prediction's error against the median of the rounds, in percent."""
    s, values = fitted_setup
    loads = runs(HELD_OUT)
    grouped = replays(resolved, [run for group in loads.values() for run in group])
    out = {}
    for name, predicted in zip(loads, predict(grouped, s, values)):
        for metric in ISSUE:
            measured = float(np.median([r.fit_metrics[metric] for r in loads[name] if metric in r.fit_metrics]))
            out[name, metric] = 100.0 * (predicted[metric] / measured - 1.0)
    print("\n" + "\n".join(f"{n:12} {m:18} {e:+6.1f}%" for (n, m), e in out.items()))
    return out


def test_the_results_name_the_served_model_and_calibrate_matches_it(resolved):
    assert {r.model_id for group in runs(FIT + HELD_OUT).values() for r in group} == {"tiny"}
    assert check_model(resolved, runs(["c32-out256"])["c32-out256"]) == ("the benchmarks ran against 'tiny', "
                                                                         "--served-model-name.")


def test_the_profile_was_fitted_on_the_fit_half_and_says_which_name_it_matched(profile):
    fitted = {Path(s.path).stem for s in profile.sources if "held out" not in s.description}
    held = {Path(s.path).stem for s in profile.sources if "held out" in s.description}
    assert fitted == set(FIT) and held == set(HELD_OUT)
    assert profile.fit.converged and profile.fit.model_match.startswith("the benchmarks ran against 'tiny'")
    assert not any("only in closed loops" in w for w in profile.fit.warnings)


def test_the_saturating_loads_are_told_from_the_others_and_the_token_cost_is_fitted(profile):
    loads = {name: group[0] for name, group in runs(FIT + HELD_OUT).items()}
    full = {name for name, r in loads.items() if saturating(r, 32)}
    # with every prompt computed (no run meets the one before it in the prefix cache), 30 requests/s of 256
    # tokens (7,680 tok/s asked) is past what this host delivers
    assert full == {"c32-out256", "r30-out256", "r30-mixed", "r45-out256"}
    assert profile.step_time["front_end_token_s"].fitted


def test_the_recorded_held_out_errors_are_the_profiles_own(profile, held_out_errors):
    for point in (p for p in profile.fit.points if p.held_out and p.metric in ISSUE):
        name = point.source.split(".json")[0]
        assert point.error_pct == pytest.approx(held_out_errors[name, point.metric], abs=0.05)


def test_held_out_loads_stay_within_what_the_shipped_recording_reaches(held_out_errors):
    """A guard against a replay or fit that gets worse: the bounds are this recording's errors, rounded up."""
    for (name, metric), error in held_out_errors.items():
        assert abs(error) <= HELD_OUT_BOUNDS[name][metric], (name, metric, error)


def test_every_held_out_load_is_within_the_issues_bounds(held_out_errors):
    """The issue's bar on each held-out load, the issue's two saturating open loops of 256-token outputs among
    them (30 requests/s of 256-token prompts and of mixed ones)."""
    for (name, metric), error in held_out_errors.items():
        assert abs(error) <= ISSUE[metric], (name, metric, error)
