"""What a result says about how its client received the engine's output: streams read at once, and closed
loops whose completions arrived in bunches (reader/fitting/delivery.py), said in the profile."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.fitting.bench import read_bench
from reader.fitting.delivery import bunched_waves, delivery_warnings
from reader.calibration.profile import load_profile
from reader.calibration.select import use_of
from reader.render.calibration_view import calibration_line

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "calibration" / "cpu-tiny-llama"


def _wave(outputs, finish_spread_s, tpot_ms=5.0, concurrency=4):
    """One wave of requests sent together; they finish `finish_spread_s` apart in all."""
    n = len(outputs)
    ends = [1.0 + finish_spread_s * i / max(n - 1, 1) for i in range(n)]
    return {"start_times": [0.0] * n, "latencies": ends, "output_lens": list(outputs),
            "median_tpot_ms": tpot_ms, "max_concurrency": concurrency}


def test_a_wave_of_different_lengths_finishing_together_was_delivered_in_a_bunch():
    # 10 to 60 tokens at 5 ms a token should spread the finishes over ~250 ms; these land within 2 ms
    assert bunched_waves(_wave([10, 25, 40, 60], finish_spread_s=0.002)) == (1, 1)


def test_a_wave_finishing_as_its_lengths_imply_was_streamed():
    assert bunched_waves(_wave([10, 25, 40, 60], finish_spread_s=0.25)) == (0, 1)


@pytest.mark.parametrize("data", [
    _wave([64, 64, 64, 64], finish_spread_s=0.001),  # equal lengths finish together anyway: no evidence
    _wave([10, 60], finish_spread_s=0.001),  # too few to be a wave
    {**_wave([10, 25, 40, 60], finish_spread_s=0.002), "max_concurrency": None},  # open loop: sends do not wait
    {"completed": 3},  # no per-request details
])
def test_nothing_is_claimed_without_evidence(data):
    assert bunched_waves(data) == (0, 0)


def test_on_a_busy_host_the_mixed_closed_loop_finished_its_waves_in_bunches():
    """The same c8-mixed load recorded while other work shared the host's 2 CPUs (load average 5-8; vLLM's
    worker holds one CPU, the engine core, the API server and the benchmark client share the other): 12 of its
    15 waves finished in bunches, requests whose outputs differ by 32-83 tokens (190-590 ms of decoding) ending
    within 14 ms of each other, and each round is named."""
    results = [read_bench(p) for p in sorted((FIXTURES / "busy-host").glob("round-*/c8-mixed.json"))]
    assert [(r.bunched_waves, r.closed_waves) for r in results] == [(5, 5), (2, 4), (5, 6)]
    warnings = delivery_warnings(results)
    assert len(warnings) == 3 and "in 3 of 3 files" in warnings[0]
    assert "round-1/c8-mixed.json (5 of 5), round-2/c8-mixed.json (2 of 4), round-3/c8-mixed.json (5 of 6)" \
        in warnings[1] and "predicted low" in warnings[1]


def test_on_a_quiet_host_the_same_loads_show_the_signs_far_less():
    """The shipped recordings (nothing else running; load average 0.5-3.4): a tenth of the requests read in one
    go, in half the files, and one bunched wave of four."""
    results = [read_bench(p) for p in sorted((FIXTURES / "bench").glob("round-*/*.json"))]
    assert sum(r.burst_requests for r in results) == 103 and sum(r.completed for r in results) == 1032
    assert sum(1 for r in results if r.burst_requests) == 16
    mixed = [r for r in results if r.label == "c8-mixed.json"]
    assert sum(r.bunched_waves for r in mixed) == 1 and sum(r.closed_waves for r in mixed) == 4


def test_the_shipped_profile_carries_the_warnings_and_reports_say_so():
    profile = load_profile(FIXTURES / "profile.yaml")
    assert len(profile.fit.warnings) == 3 and "round-2/c8-mixed.json (1 of 2)" in profile.fit.warnings[1]
    line = calibration_line(use_of(profile, str(FIXTURES / "profile.yaml"), "given with --calibration", "cpu"))
    assert "the fit left 3 warning(s) about its own results" in line
    # the shipped H200 profile (published runs) lists only the runs it could not replay, not doubts about its fit
    assert "warning(s) about its own results" not in calibration_line(use_of(None, None, "", "H200-SXM"))
