"""Fit the step-time model's efficiency/overhead constants to the measured H200 steps.

    python -m reader.capacity.calibrate [fixtures/gpu/h200-llama3-8b-steps.json] [--write]

Prints the fitted constants and the error on every point; with --write, stores them in
reader/capacity/data/calibration.yaml with their provenance. The fit minimises the squared log
error (relative error) with a bounded Nelder-Mead search (numpy only): efficiencies are kept in
(0, 1], overheads >= 0, so the constants stay physical. Peaks come from the same file (8192^3
bf16 matmul 762 TFLOP/s, 4 GiB copy 4225 GB/s) as fractions of the H200 datasheet (989 / 4800).
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..batch import StepBatch
from ..catalog.types import GpuSpec, LayerKinds, ModelSpec
from .steptime import Calibration, StepTimeModel

FIXTURE = "fixtures/gpu/h200-llama3-8b-steps.json"
H200_DATASHEET = {"bf16_tflops": 989.0, "hbm_gbps": 4800.0}  # gpus.yaml H200-SXM (AIC)

# The free constants, their bounds, and a physical starting point.
FREE = {
    "gemm_compute_eff": (0.3, 1.0, 0.85),
    "gemm_memory_eff": (0.3, 1.0, 0.8),
    "knee_p": (1.0, 8.0, 2.0),
    "kv_read_eff": (0.3, 1.0, 0.9),
    "attn_compute_eff": (0.1, 1.0, 0.5),
    "graph_gap_s_per_layer": (0.0, 2e-4, 3e-5),
    "eager_cpu_s_per_layer_decode": (0.0, 1e-3, 3e-4),
    "eager_cpu_s_per_layer_prefill": (0.0, 1e-3, 4e-4),
    "overlap_p": (1.0, 16.0, 4.0),
    "attn_cta_gbps": (5.0, 500.0, 50.0),
}
FIXED = {
    # calib.py per layer: 2 RMSNorms (read+write h each = 4h), 2 residual adds (read 2h, write h = 6h)
    # -> 10 hidden-size tensors per token per layer; silu(a) * b: silu reads/writes I, mul reads 2I
    # writes I -> 5 intermediate-size tensors. (vLLM fuses these; our figure is an upper bound there.)
    "elementwise_h": 10.0,
    "elementwise_i": 5.0,
    # NOT measured here (one GPU): ~8 us per all-reduce call (vLLM custom all-reduce / NCCL small
    # messages on NVLink) and 70% of the per-direction link rate for ring traffic. Assumptions.
    "allreduce_latency_s": 8e-6,
    "link_eff": 0.7,
}


def load(path: str | Path = FIXTURE) -> dict:
    return json.loads(Path(path).read_text())


def shapes_from(data: dict) -> tuple[ModelSpec, GpuSpec]:
    s = data["meta"]["shape8b"]
    model = ModelSpec(id="llama3-8b-shaped (calib.py)", model_type="llama", num_hidden_layers=s["layers"],
                      hidden_size=s["h"], num_attention_heads=s["nh"], num_key_value_heads=s["nkv"], head_dim=s["hd"],
                      intermediate_size=s["inter"], vocab_size=s["vocab"], max_position_embeddings=131072,
                      layer_kinds=LayerKinds(full=s["layers"]), params_total=8_030_261_248,
                      params_source="calib.py shape", source="fixtures/gpu/h200-llama3-8b-steps.json meta.shape8b")
    gpu = GpuSpec(id="H200-SXM", vendor="NVIDIA", arch="Hopper (sm_90)", device_name=data["meta"]["gpu"],
                  memory_bytes=int(data["meta"]["mem_total_GiB"] * 2**30), memory_marketed_gb=141,
                  hbm_bandwidth_gbps=H200_DATASHEET["hbm_gbps"], bf16_tflops=H200_DATASHEET["bf16_tflops"],
                  fp8_tflops=1978.0, nvlink_gbps_per_direction=450.0, source="gpus.yaml H200-SXM (AIC; MEAS)",
                  verification="measured")
    return model, gpu


def achievable(data: dict) -> dict[str, float]:
    p = data["peak"]
    return {"achievable_matmul_fraction": p["bf16_matmul_tflops"] / H200_DATASHEET["bf16_tflops"],
            "achievable_copy_fraction": p["copy_GBps_rw"] / H200_DATASHEET["hbm_gbps"]}


def points(data: dict) -> list[dict]:
    """Every measured point: name, batch, mode (graph/eager), measured seconds."""
    out = []
    for r in data["decode"]:
        b, c = r["B"], r["C"]
        batch = StepBatch(np.ones(b, np.int64), np.full(b, c, np.int64), b)
        for mode in ("graph", "eager"):
            if isinstance(r.get(mode), dict) and "median_ms" in r[mode]:
                out.append({"name": f"decode {mode} B={b} C={c}", "batch": batch, "mode": mode,
                            "measured_s": r[mode]["median_ms"] / 1e3, "B": b})
    for r in data["prefill"]:
        t = r["T"]
        out.append({"name": f"prefill eager T={t}", "batch": StepBatch(np.array([t]), np.array([0]), 1),
                    "mode": "eager", "measured_s": r["eager"]["median_ms"] / 1e3, "B": 1})
    return out


def models_for(data: dict, cal: Calibration) -> dict[str, StepTimeModel]:
    model, gpu = shapes_from(data)
    sizes = sorted({r["B"] for r in data["decode"]})  # calib.py captures each batch exactly (no padding)
    # calib.py runs plain SDPA (no split-KV): split_kv=False turns the one-block-per-head floor on
    kw = dict(calibration=cal, split_kv=False, table_tokens=16384)
    return {"graph": StepTimeModel(model, gpu, cudagraph_capture_sizes=sizes, **kw),
            "eager": StepTimeModel(model, gpu, enforce_eager=True, **kw)}


def predict_all(data: dict, cal: Calibration) -> list[dict]:
    models = models_for(data, cal)
    rows = []
    for p in points(data):
        pred = models[p["mode"]](p["batch"])
        rows.append({**p, "predicted_s": pred, "error": pred / p["measured_s"] - 1})
    return rows


def _calibration(data: dict, free: dict[str, float]) -> Calibration:
    return Calibration(**{**FIXED, **achievable(data), **free})


def fit(data: dict, iters: int = 4000) -> Calibration:
    names = list(FREE)
    lo = np.array([FREE[n][0] for n in names])
    hi = np.array([FREE[n][1] for n in names])
    x0 = np.array([FREE[n][2] for n in names])
    pts = points(data)
    meas = np.array([p["measured_s"] for p in pts])

    def unpack(z):  # unconstrained -> bounded via a logistic map
        return lo + (hi - lo) / (1 + np.exp(-z))

    def loss(z):
        cal = _calibration(data, dict(zip(names, unpack(z))))
        models = models_for(data, cal)
        pred = np.array([models[p["mode"]](p["batch"]) for p in pts])
        return float(np.sum(np.log(pred / meas) ** 2))

    z0 = np.log((x0 - lo) / (hi - x0))
    best = _nelder_mead(loss, z0, iters)
    return _calibration(data, dict(zip(names, unpack(best))))


def _nelder_mead(f, x0: np.ndarray, iters: int) -> np.ndarray:
    n = x0.size
    simplex = [x0] + [x0 + np.eye(n)[i] * 0.5 for i in range(n)]
    vals = [f(x) for x in simplex]
    for _ in range(iters):
        order = np.argsort(vals)
        simplex = [simplex[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < 1e-10:
            break
        c = np.mean(simplex[:-1], axis=0)
        xr = c + (c - simplex[-1])
        fr = f(xr)
        if fr < vals[0]:
            xe = c + 2 * (c - simplex[-1])
            fe = f(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = c + 0.5 * (simplex[-1] - c)
            fc = f(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                simplex = [simplex[0]] + [simplex[0] + 0.5 * (s - simplex[0]) for s in simplex[1:]]
                vals = [vals[0]] + [f(s) for s in simplex[1:]]
    return simplex[int(np.argmin(vals))]


def table(rows: list[dict]) -> str:
    lines = [f"{'point':<30} {'measured ms':>11} {'predicted ms':>12} {'error %':>8}"]
    for r in rows:
        lines.append(f"{r['name']:<30} {r['measured_s'] * 1e3:>11.2f} {r['predicted_s'] * 1e3:>12.2f} "
                     f"{100 * r['error']:>+8.1f}")
    errs = np.abs([r["error"] for r in rows])
    lines.append(f"median |error| {100 * np.median(errs):.1f}%   max |error| {100 * errs.max():.1f}%   "
                 f"points {len(rows)}")
    return "\n".join(lines)


def to_yaml(cal: Calibration, source: str) -> str:
    prov = {n: f"fitted to {source} by `python -m reader.capacity.calibrate --write` (bounded Nelder-Mead on "
               f"log error, bounds {FREE[n][0]}..{FREE[n][1]})" for n in FREE}
    prov["elementwise_h"] = "counted from fixtures/gpu/calib.py: 2 RMSNorms (4h) + 2 residual adds (6h) per layer"
    prov["elementwise_i"] = "counted from fixtures/gpu/calib.py: silu(a) (2I) * b (3I) per layer"
    prov["achievable_matmul_fraction"] = f"{source} peak.bf16_matmul_tflops / 989 (H200 datasheet, gpus.yaml AIC)"
    prov["achievable_copy_fraction"] = f"{source} peak.copy_GBps_rw / 4800 (H200 datasheet, gpus.yaml AIC)"
    prov["allreduce_latency_s"] = "ASSUMPTION (not measured: one GPU): ~8 us per all-reduce call on NVLink"
    prov["link_eff"] = "ASSUMPTION (not measured): 70% of the per-direction NVLink/PCIe rate for ring all-reduce"
    lines = ["# Step-time model constants (reader/capacity/steptime.py). Regenerate with",
             "#   python -m reader.capacity.calibrate fixtures/gpu/h200-llama3-8b-steps.json --write",
             "# Efficiencies are fractions of the ACHIEVABLE peaks (datasheet x achievable_*_fraction).",
             "constants:"]
    for k, v in asdict(cal).items():
        lines.append(f"  {k}:")
        lines.append(f"    value: {v:.6g}")
        lines.append(f"    source: \"{prov[k]}\"")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    args = [a for a in argv if not a.startswith("--")]
    path = args[0] if args else FIXTURE
    data = load(path)
    cal = fit(data)
    print(table(predict_all(data, cal)))
    for k, v in asdict(cal).items():
        print(f"{k:>32} = {v:.6g}")
    if "--write" in argv:
        out = Path(__file__).parent / "data" / "calibration.yaml"
        out.write_text(to_yaml(cal, path))
        print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
