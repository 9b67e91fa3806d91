"""What a result says about how its client received the engine's output: streams read at once, and closed
loops whose completions arrived in bunches (reader/calibration/delivery.py), said in the profile."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.calibration.bench import read_bench
from reader.calibration.delivery import bunched_waves, delivery_warnings
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


def test_the_recorded_cpu_benchmarks_show_both_signs_and_only_c8_mixed_has_bunched_waves():
    """On the shipped recordings (2 CPUs: vLLM's worker holds one, the engine core, the API server and the
    benchmark client share the other), every file has requests read in one go, and the mixed-length closed
    loop finished 12 of its 15 waves in bunches: requests whose outputs differ by 32-83 tokens (190-590 ms of
    decoding) ended within 14 ms of each other."""
    results = [read_bench(p) for p in sorted((FIXTURES / "bench").glob("round-*/*.json"))]
    bunched = {r.path: (r.bunched_waves, r.closed_waves) for r in results if r.bunched_waves}
    assert {Path(p).name for p in bunched} == {"c8-mixed.json"}
    assert sum(b for b, _ in bunched.values()) == 12 and sum(w for _, w in bunched.values()) == 15
    warnings = delivery_warnings(results)
    assert len(warnings) == 3 and "in 30 of 30 files" in warnings[0]
    assert "round-1/c8-mixed.json (5 of 5)" in warnings[1] and "predicted low" in warnings[1]


def test_the_shipped_profile_carries_the_warnings_and_reports_say_so():
    profile = load_profile(FIXTURES / "profile.yaml")
    assert len(profile.fit.warnings) == 3
    line = calibration_line(use_of(profile, str(FIXTURES / "profile.yaml"), "given with --calibration", "cpu"))
    assert "the fit left 3 warning(s) about its own results" in line
    assert "warning" not in calibration_line(use_of(None, None, "", "H200-SXM"))  # the shipped H200 fit has none
