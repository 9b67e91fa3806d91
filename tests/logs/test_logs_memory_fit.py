"""The shipped non-torch estimates are what the log fit gives today (tools/fit_memory_terms.py --write
rewrites them), and with them the predicted available KV memory of the public log corpus lands within 5%
of what vLLM logged (median), as the issue asks; the errors per log are printed beside the table."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.calibration.fit_memory import DEFAULT_FREE, corpus_cases, evaluate, fit, median_abs_error, prepare
from reader.capacity.behaviour import estimate

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "public"


@pytest.fixture(scope="module")
def cases():
    return [prepare(case, PUBLIC) for case in corpus_cases(PUBLIC / "INDEX.yaml")]


def test_the_corpus_covers_releases_from_0_6_to_0_19(cases):
    releases = {c.release for c in cases}
    assert len(cases) >= 8 and {"0.6.4", "0.7.1", "0.11.0", "0.19.0"} <= releases


def test_predicted_available_kv_is_within_5_percent_of_the_logs_median(cases):
    points = evaluate(cases)
    for p in points:
        print(f"{p.file:60} {p.release:8} logged {p.logged_available_gib:7.2f} GiB  predicted "
              f"{p.predicted_available_gib:7.2f} GiB  {p.error_pct:+6.1f}%")
    assert median_abs_error(points) <= 5.0


def test_the_shipped_values_are_the_fit_of_today(cases):
    fitted = fit(cases, DEFAULT_FREE).values
    for name, value in fitted.items():
        assert estimate(name).value == pytest.approx(value, rel=0.02, abs=2**24), (
            f"{name}: shipped {estimate(name).value}, the fit gives {value:.0f}; run tools/fit_memory_terms.py --write")
