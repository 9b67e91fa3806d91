"""The proof on a real engine, offline: `vllm bench serve` results recorded against the CPU vLLM 0.32.0 serving the
dummy-weight tiny Llama (fixtures/calibration/cpu-tiny-llama/bench/, three rounds of ten loads on a host with
nothing else running, see its README), and the profile `vllm-reader calibrate` fitted on half of the loads
(profile.yaml there).

The issue's bar: the profile predicts the held-out loads' median TPOT and output throughput within 10% and
TTFT P50 within 25% (median over the held-out loads). Each held-out load is compared with the median of its
three rounds: throughput 2.4%, TPOT 4.0%, TTFT P50 10.1% (refitted for issue 25 with the idle engine's
wake-up and the front end's cost per streamed token; 2.4%, 3.5%, 10.8% before). The fitted half includes one request at a time at
both prompt lengths (bench_loads.py says why; a fit without the long one came to 25.2%).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reader.fitting.bench import read_bench
from reader.fitting.fit_bench import predict, replays
from reader.calibration.profile import load_profile

from live.bench_loads import STEPS

from ._recorded import profile_setup

FOLDER = STEPS.folder
ROUNDS = sorted(p.name for p in (FOLDER / "bench").glob("round-*"))
FIT, HELD_OUT = STEPS.fit, STEPS.held_out  # the split the recorder ran (tests/live/bench_loads.py)
KEY = {"output_throughput": 10.0, "median_tpot_ms": 10.0, "median_ttft_ms": 25.0}  # the issue's bounds


@pytest.fixture(scope="module")
def profile():
    return load_profile(FOLDER / "profile.yaml")


@pytest.fixture(scope="module")
def predicted(profile):
    """The profile's predictions for every held-out load (one replay per load: the rounds ran the same requests)."""
    s, values = profile_setup(FOLDER, profile)
    r = s.resolved
    loads = {name: [read_bench(FOLDER / "bench" / rd / f"{name}.json") for rd in ROUNDS] for name in HELD_OUT}
    grouped = replays(r, [run for runs in loads.values() for run in runs])
    assert [rp.results[0].label for rp in grouped] == [f"{n}.json" for n in HELD_OUT]  # one replay per load
    return loads, dict(zip(HELD_OUT, predict(grouped, s, values)))


def test_the_profile_was_fitted_on_the_fit_half_and_holds_out_the_rest(profile):
    fitted = {Path(s.path).stem for s in profile.sources if "held out" not in s.description}
    held = {Path(s.path).stem for s in profile.sources if "held out" in s.description}
    assert fitted == set(FIT) and held == set(HELD_OUT) and len(profile.sources) == 10 * len(ROUNDS)
    assert profile.fit.converged and profile.device.kind == "cpu" and profile.fitted_on.device == "cpu-xeon-2c"


def test_the_recorded_held_out_errors_are_the_profiles_own(profile, predicted):
    loads, pred = predicted
    for point in (p for p in profile.fit.points if p.held_out and p.metric in KEY):
        name = point.source.split(".json")[0]
        assert point.predicted == pytest.approx(pred[name][point.metric], rel=1e-6)  # stored to 6 decimals
        assert point.source == f"{name}.json (median of {len(ROUNDS)} runs)"


def test_held_out_loads_are_predicted_within_the_issues_bounds(predicted):
    """Latencies are compared over the requests the client received as a stream (bench.py); the benchmark's own
    figures, which count the requests delivered in one read, are printed beside them."""
    loads, pred = predicted
    errors = {m: [] for m in KEY}
    raw = {m: [] for m in KEY}
    lines = []
    for name, runs in loads.items():
        for metric in KEY:
            measured = float(np.median([r.fit_metrics[metric] for r in runs if metric in r.fit_metrics]))
            as_bench = float(np.median([r.metrics[metric] for r in runs]))
            error = 100 * (pred[name][metric] / measured - 1)
            errors[metric].append(abs(error))
            raw[metric].append(abs(100 * (pred[name][metric] / as_bench - 1)))
            lines.append(f"{name:10} {metric:18} measured {measured:9.2f} (all requests {as_bench:9.2f})  "
                         f"predicted {pred[name][metric]:9.2f}  {error:+6.1f}%")
    print("\n" + "\n".join(lines))
    for metric in KEY:
        print(f"{metric}: median |error| over the held-out loads {np.median(errors[metric]):.1f}% "
              f"(against the benchmark's own all-request figures {np.median(raw[metric]):.1f}%; "
              f"the issue's bound {KEY[metric]}%)")
    for metric, bound in KEY.items():
        assert np.median(errors[metric]) <= bound, metric


def _ttft_p50(run) -> float:
    return run.fit_metrics["median_ttft_ms"]


def test_the_recordings_agree_with_themselves_and_the_lone_prompts_set_the_prefill_cost(profile, predicted):
    """The held-out errors are the model's, not the recordings' noise: each held-out load's rounds agree with
    their median within 10% (median over the runs). What the fitted lone prompts measured: a 1,024-token prompt
    alone takes 2.2 times as long to its first token as a 256-token one, where a prefill cost linear in tokens
    from nothing would say 4; the profile, fitted on both, predicts a ratio near the measured one (2.5)."""
    loads, _ = predicted
    spread = [abs(_ttft_p50(r) / np.median([_ttft_p50(x) for x in runs if "median_ttft_ms" in x.fit_metrics]) - 1)
              for runs in loads.values() for r in runs if "median_ttft_ms" in r.fit_metrics]
    assert np.median(spread) < 0.10
    alone = {n: [read_bench(FOLDER / "bench" / rd / f"{n}.json") for rd in ROUNDS] for n in ("c1-short", "c1-long")}
    measured = {n: np.median([_ttft_p50(r) for r in runs if "median_ttft_ms" in r.fit_metrics])
                for n, runs in alone.items()}
    fitted = {n: next(p.predicted for p in profile.fit.points if p.source.startswith(f"{n}.json")
                      and p.metric == "median_ttft_ms" and not p.held_out) for n in alone}
    assert 2.0 < measured["c1-long"] / measured["c1-short"] < 2.4
    assert fitted["c1-long"] / fitted["c1-short"] < 2.7
    assert not any("one request at a time" in w for w in profile.fit.warnings)  # the bench set has no gap
