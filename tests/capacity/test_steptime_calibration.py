"""The step-time model against every measured point of the H200 (fixtures/gpu/h200-llama3-8b-steps.json,
copied from shared/reference/gpu/). Target: median |error| <= 10%, no point worse than 25%.

The constants come from reader/capacity/data/calibration.yaml, fitted by
`python -m reader.capacity.calibrate --write` (9 free constants for 43 points, bounded so that
efficiencies stay <= 1 and overheads >= 0). This test does not refit; it checks what is stored.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import yaml

from reader.capacity.calibrate import FIXTURE, FREE, load, predict_all, table
from reader.capacity.steptime import default_calibration

ROOT = Path(__file__).resolve().parents[2]


def test_model_vs_every_measured_point():
    data = load(ROOT / FIXTURE)
    rows = predict_all(data, default_calibration())
    print("\n" + table(rows))
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


def test_constants_are_physical_and_have_provenance():
    cal = asdict(default_calibration())
    text = (ROOT / "reader/capacity/data/calibration.yaml").read_text()
    stored = yaml.safe_load(text)["constants"]
    for name in cal:
        assert stored[name]["source"], name
    for name in ("gemm_compute_eff", "gemm_memory_eff", "kv_read_eff", "attn_compute_eff", "link_eff"):
        assert 0 < cal[name] <= 1, name
    for name in FREE:
        lo, hi, _ = FREE[name]
        assert lo <= cal[name] <= hi and "fitted to fixtures/gpu/h200-llama3-8b-steps.json" in stored[name]["source"]
    # the achievable fractions are the measured peaks of the same file over the datasheet
    data = load(ROOT / FIXTURE)
    assert cal["achievable_matmul_fraction"] == np.float64(round(data["peak"]["bf16_matmul_tflops"] / 989, 6)) or \
        abs(cal["achievable_matmul_fraction"] - data["peak"]["bf16_matmul_tflops"] / 989) < 1e-5
    assert abs(cal["achievable_copy_fraction"] - data["peak"]["copy_GBps_rw"] / 4800) < 1e-5
    print("\n" + "\n".join(f"{k:>32} = {v:.6g}" for k, v in cal.items()))
