"""The step-time model against every measured point of the H200 (fixtures/gpu/h200-llama3-8b-steps.json,
copied from shared/reference/gpu/). Target: median |error| <= 10%, no point worse than 25%.

The coefficients come from the shipped calibration profile reader/calibration/profiles/h200-sxm.yaml,
written by `vllm-reader calibrate --steps fixtures/gpu/h200-llama3-8b-steps.json --gpu H200-SXM` (10 free
coefficients for 43 points, bounded so that efficiencies stay <= 1 and overheads >= 0). This test does not
refit (tests/calibration/test_calibration_steps.py does); it checks what is shipped.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from reader.fitting.fit_steps import FREE, load_steps, predict_all
from reader.calibration.profile import DEFAULT_PROFILE, load_profile
from reader.calibration.profile import default_calibration
from reader.catalog.load import get_gpu
from reader.render.calibration_view import step_table

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures/gpu/h200-llama3-8b-steps.json"


def test_model_vs_every_measured_point():
    rows = predict_all(load_steps(FIXTURE), get_gpu("H200-SXM"), default_calibration())
    print("\n" + step_table(rows))
    errs = np.abs([r["error"] for r in rows])
    kinds = {r["name"].split(" B=")[0].split(" T=")[0] for r in rows}
    assert kinds == {"decode graph", "decode eager", "prefill eager"} and len(rows) == 43
    assert np.median(errs) <= 0.10
    assert errs.max() <= 0.25
    # the worst point is the eager B=256 C=2048 decode: its median (32.1 ms) is 27% above the graph replay
    # of the same step (25.3 ms) while its fastest run took 23.9 ms, i.e. a noisy measurement, not a shape
    # the model misses (at B=256 the eager step is GPU-bound and equals the graph step elsewhere).
    worst = max(rows, key=lambda r: abs(r["error"]))
    print(f"worst: {worst['name']} {100 * worst['error']:+.1f}%")


def test_shipped_profile_is_physical_and_says_where_each_value_came_from():
    profile = load_profile(DEFAULT_PROFILE)
    cal = profile.coefficients().as_dict()
    assert profile.fitted_on.device == "H200-SXM" and profile.fit.evidence == "steps" and profile.fit.converged
    for name, coefficient in profile.step_time.items():
        assert coefficient.source, name
    for name in ("gemm_compute_eff", "gemm_memory_eff", "kv_read_eff", "attn_compute_eff", "link_eff"):
        assert 0 < cal[name] <= 1, name
    for free in FREE:
        assert free.low <= cal[free.name] <= free.high
        assert profile.step_time[free.name].fitted
        assert "fitted to fixtures/gpu/h200-llama3-8b-steps.json" in profile.step_time[free.name].source
    # the achievable fractions are the measured peaks of the same file over the datasheet
    data = load_steps(FIXTURE)
    assert abs(cal["achievable_matmul_fraction"] - data["peak"]["bf16_matmul_tflops"] / 989) < 1e-5
    assert abs(cal["achievable_copy_fraction"] - data["peak"]["copy_GBps_rw"] / 4800) < 1e-5
    # the profile's recorded error is the error of its coefficients on the file
    rows = predict_all(data, get_gpu("H200-SXM"), profile.coefficients())
    recorded = profile.fit.error_of("step_time")
    assert recorded is not None and recorded.points == 43
    assert abs(recorded.median_abs_pct - 100 * float(np.median(np.abs([r["error"] for r in rows])))) < 0.01
    print("\n" + "\n".join(f"{k:>32} = {v:.6g}" for k, v in cal.items()))
