"""`calibrate --published` judges each round of its search by the full replay, and the shipped profile it starts
from is a candidate too: a refit that replays worse than where it started keeps the start (a refit of H100 once
came back at 7.58% / 11.32% against the start's 7.44% / 10.91%). The search and the replay are stood in for here;
what is specified is which candidate wins."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from reader.fitting import run_published
from reader.fitting.fit_published import RESPONSE_PER_REQUEST

DEV = Path(__file__).resolve().parents[2] / "fixtures" / "gpu" / "silicon" / "vllm_silicon_dev.csv"
NAME = RESPONSE_PER_REQUEST.name
SHIPPED, SEARCHED = 2e-4, 4e-3


def refit(monkeypatch, errors: dict[float, float]):
    """from_published with the search always landing on SEARCHED and each value replaying at errors[value]."""
    def replayed(cases, draft):
        error = errors[draft.step_time[NAME].value]
        return cases, [("run", {"mean_tpot_ms": 10.0, "mean_ttft_ms": 100.0},
                        {"mean_tpot_ms": 10.0 * (1 + error), "mean_ttft_ms": 100.0 * (1 + error)})], []

    found = SimpleNamespace(values={NAME: SEARCHED}, iterations=5, converged=True, loss=0.1)
    monkeypatch.setattr(run_published, "_cases", lambda runs: ([], []))
    monkeypatch.setattr(run_published, "free_terms", lambda cases, measured: [RESPONSE_PER_REQUEST])
    monkeypatch.setattr(run_published, "_shipped_values", lambda gpu: {NAME: SHIPPED})
    monkeypatch.setattr(run_published, "fit", lambda cases, base, free, model_for: ({NAME: SEARCHED}, found))
    monkeypatch.setattr(run_published, "_replayed", replayed)
    monkeypatch.setattr(run_published, "unfitted", lambda cases, measured: [])
    return run_published.from_published(str(DEV), "H100-SXM", None)


def test_a_search_that_replays_worse_than_its_start_keeps_the_shipped_values(monkeypatch):
    profile = refit(monkeypatch, {SHIPPED: 0.05, SEARCHED: 0.20})
    assert profile.step_time[NAME].value == pytest.approx(SHIPPED)
    assert any("no round of the search replayed better" in w for w in profile.fit.warnings)
    assert profile.fit.errors[0].median_abs_pct == pytest.approx(5.0)


def test_a_search_that_replays_better_keeps_its_own_values(monkeypatch):
    profile = refit(monkeypatch, {SHIPPED: 0.20, SEARCHED: 0.05})
    assert profile.step_time[NAME].value == pytest.approx(SEARCHED)
    assert not any("no round of the search replayed better" in w for w in profile.fit.warnings)


def test_a_round_is_judged_with_ttft_weighing_twice_tpot():
    def points(tpot, ttft):
        return [("run", {"mean_tpot_ms": 1.0, "mean_ttft_ms": 1.0}, {"mean_tpot_ms": 1 + tpot, "mean_ttft_ms": 1 + ttft})]
    assert run_published._replay_error(points(0.10, 0.0)) < run_published._replay_error(points(0.0, 0.10))
    assert run_published._replay_error(points(0.10, 0.05)) == pytest.approx(0.20)
