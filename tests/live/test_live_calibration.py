"""The calibration proof on a real engine: `vllm bench serve` at several loads against the CPU vLLM 0.32.0 serving
the dummy-weight tiny Llama, `vllm-reader calibrate` on half of the results, predictions for the other half.
Twice: on the step-time loads (bench_loads.STEPS), and on the issue-25 deployment served as `tiny` with a
saturating open loop of 256-token outputs among the held-out loads (bench_loads.SATURATION).

A shorter version of what tools/record_bench_fixtures.py records for the offline suite (seven loads, one round;
the fitted ones include one request at a time at both prompt lengths, as bench_loads.py explains):
a few minutes in CI. The machine running it may be shared, so step times drift while it runs; the bounds here
are loose enough to hold under that, and catch a replay or fit that is wrong rather than noisy. The figures
are printed; the issue's bounds (10% / 10% / 25%) are checked on the recorded fixtures, with several rounds
(tests/calibration/test_calibration_cpu_fixtures.py).

Every load runs in ROUNDS rounds, and calibrate takes each load's median round (fit_bench.Replay), as the
fixture tests do. The server's engine and its API server run on CPUs of their own (_server.front_end_apart): on
shared cores the busy engine starved the API server, whole responses came in one burst, and rounds of one load
differed up to 3x (c16-out128 2,991 / 1,239 / 984 tok/s on an otherwise idle host); apart, within 9%.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from reader.calibration.profile import load_profile

from . import bench_loads
from ._server import DEV_MODE_ENV, TINY_LLAMA, bench_serve, live_server

KEY = ("output_throughput", "median_tpot_ms", "median_ttft_ms")
LOOSE = {"output_throughput": 25.0, "median_tpot_ms": 35.0, "median_ttft_ms": 60.0}
ROUNDS = 3


def runs_per_load(sources) -> dict[str, int]:
    """Rounds per load among the points' sources ("x.json" or "x.json (median of N runs)"). A round in which the
    saturated server dropped a request ran other requests, so calibrate keeps it as a load of its own (seen in CI:
    'r30-out256.json' beside 'r30-out256.json (median of 2 runs)'); every round must still be there."""
    out: dict[str, int] = {}
    for source in sources:
        name, _, rest = source.partition(" (median of ")
        out[name] = out.get(name, 0) + (int(rest.split()[0]) if rest else 1)
    return out


def fit_and_predict(vllm, load_set: bench_loads.LoadSet, fit: tuple[str, ...], held_out: tuple[str, ...], tmp_path):
    """Run the loads against a live server, ROUNDS rounds of each, calibrate on every round of `fit` with every
    round of `held_out` held out, and return the profile and its held-out points."""
    print(f"\nload average before: {os.getloadavg()}")
    rounds = [tmp_path / f"round-{r}" for r in range(1, ROUNDS + 1)]
    runs = [(rd / f"{name}.json", load_set.bench_args(name)) for rd in rounds for name in fit + held_out]
    with live_server(vllm, load_set.server_flags(TINY_LLAMA), tmp_path / "server.log", front_apart=True,
                     env=DEV_MODE_ENV) as server:
        bench_serve(vllm, server, runs, served_name=load_set.served_name, cold_cache=True)
    print(f"load average after the benchmarks: {os.getloadavg()}")
    profile_path = tmp_path / "cpu.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "reader", "calibrate", str(load_set.deployment), "--model", str(TINY_LLAMA),
         "--device-kind", "cpu", "--bench", *[str(rd / f"{n}.json") for rd in rounds for n in fit],
         "--hold-out", ",".join(str(rd / f"{n}.json") for rd in rounds for n in held_out), "-o", str(profile_path)],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=600)
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    profile = load_profile(profile_path)
    assert profile.fit.converged and profile.device is not None and profile.device.kind == "cpu"
    held = [p for p in profile.fit.points if p.held_out and p.metric in KEY]
    # calibrate takes the rounds of one load as one point, their median
    assert runs_per_load(p.source for p in held if p.metric == KEY[0]) == {f"{n}.json": ROUNDS for n in held_out}
    return profile, held


def assert_loosely_predicted(held) -> None:
    for metric, bound in LOOSE.items():
        points = [p for p in held if p.metric == metric]
        errors = [abs(p.error_pct) for p in points]
        each = ", ".join(f"{p.source.split(' (')[0]} {p.error_pct:+.1f}%" for p in points)
        print(f"held-out {metric}: median |error| {np.median(errors):.1f}% (each: {each})")
        assert np.median(errors) <= bound, metric


def test_a_profile_fitted_on_three_loads_predicts_four_others(vllm_032, tmp_path):
    _, held = fit_and_predict(vllm_032, bench_loads.STEPS, ("c1-short", "c1-long", "c16-short"),
                              ("c4-short", "r4-short", "c4-long", "r2-long"), tmp_path)
    assert_loosely_predicted(held)


def test_a_saturating_open_loop_with_long_outputs_is_predicted_by_a_fit_that_did_not_see_it(vllm_032, tmp_path):
    """The served name is `tiny` (the results carry it; calibrate must take them), and the held-out loads are the
    issue's 30 requests/s of 256-token outputs (past what the server delivers), 15 requests/s below it and 16 in
    flight. The fitted loads include one request at a time at 256- and 1,024-token prompts (without the second
    length the fit put a prefill's cost on its prompt tokens) and 45 requests/s, an open loop past the server's
    limit (without one the fit has seen no backlog grow while the front end streams: README, "At saturation").

    c16-out128 was left out of the held-out loads while the engine and the API server shared the CPUs: in CI its
    rounds measured 1,039 / 2,173 / 753 tok/s at a median TPOT of 3.9-4.7 ms, the starved API server sending no
    first token for about 4 s in two rounds of three. With them apart (_server.front_end_apart) it is back."""
    profile, held = fit_and_predict(vllm_032, bench_loads.SATURATION, ("c1-out128", "c1-in1024", "c8-out128",
                                                                       "c32-out256", "r45-out256"),
                                    ("c16-out128", "r15-out256", "r30-out256"), tmp_path)
    assert profile.fit.model_match == "the benchmarks ran against 'tiny', --served-model-name."
    assert_loosely_predicted(held)
