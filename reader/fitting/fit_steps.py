"""Fit the step-time model to measured step times (fixtures/gpu/calib.py output), as a calibration profile.

    vllm-reader calibrate --steps fixtures/gpu/h200-llama3-8b-steps.json -o reader/calibration/profiles/h200-sxm.yaml

The file holds forward-step times of one model shape on one GPU (decode batches replayed as CUDA
graphs and eagerly, single prefills) and the GPU's measured matmul and copy peaks. Step-level points
pin down more of the model's structure than a serving benchmark can (the roofline knee, the overlap
of launch and device time, the one-block attention floor), so this fit frees more coefficients than a
bench fit; the search, the profile and its consumers are the same. The fit minimises the squared log
error (relative error) over every point.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..batch import StepBatch
from ..capacity.coefficients import StepTimeCoefficients
from ..catalog.types import GpuSpec, LayerKinds, ModelSpec
from ..errors import ReaderError
from .optimize import Free, SearchResult, minimize
from ..calibration.profile import CalibrationProfile, Coefficient, FitPoint, FitReport, FittedOn, MetricError, read_input

FREE = (
    Free("gemm_compute_eff", 0.3, 1.0, 0.85),
    Free("gemm_memory_eff", 0.3, 1.0, 0.8),
    Free("knee_p", 1.0, 8.0, 2.0),
    Free("kv_read_eff", 0.3, 1.0, 0.9),
    Free("attn_compute_eff", 0.1, 1.0, 0.5),
    Free("graph_gap_s_per_layer", 0.0, 2e-4, 3e-5),
    Free("eager_cpu_s_per_layer_decode", 0.0, 1e-3, 3e-4),
    Free("eager_cpu_s_per_layer_prefill", 0.0, 1e-3, 4e-4),
    Free("overlap_p", 1.0, 16.0, 4.0),
    Free("attn_cta_gbps", 5.0, 500.0, 50.0),
)

# Not measurable from single-GPU forward steps: fixed, each with why.
FIXED = {
    # calib.py per layer: 2 RMSNorms (read+write h each = 4h), 2 residual adds (read 2h, write h = 6h)
    # -> 10 hidden-size tensors per token per layer; silu(a) * b: silu reads/writes I, mul reads 2I
    # writes I -> 5 intermediate-size tensors. (vLLM fuses these; our figure is an upper bound there.)
    "elementwise_h": (10.0, "counted from fixtures/gpu/calib.py: 2 RMSNorms (4h) + 2 residual adds (6h) per layer"),
    "elementwise_i": (5.0, "counted from fixtures/gpu/calib.py: silu(a) (2I) * b (3I) per layer"),
    "allreduce_latency_s": (8e-6, "ASSUMPTION (not measured: one GPU): ~8 us per all-reduce call on NVLink"),
    "link_eff": (0.7, "ASSUMPTION (not measured): 70% of the per-direction NVLink/PCIe rate for ring all-reduce"),
    "host_overhead_s": (0.0005, "ASSUMPTION (calib.py runs no scheduler): a round figure for vLLM V1's scheduler "
                                "on a server CPU; a bench fit measures it"),
    "per_sampled_row_s": (0.0, "not measured (calib.py does not sample); a bench fit measures it"),
    "front_end_s": (0.0, "not measured (calib.py runs no server); a bench fit measures it"),
    "allreduce_latency_per_peer_s": (0.0, "neutral (one GPU measured; fitted on published multi-GPU runs where a "
                                          "profile says so)"),
    "moe_gemm_eff": (1.0, "neutral (the measured model is dense)"),
    "lowbit_memory_eff": (1.0, "neutral (the measured weights are bf16)"),
    "lowbit_compute_eff": (1.0, "neutral (the measured GEMMs are bf16); a published-runs fit with fp8 or fp4 runs "
                                "measures it"),
    "alltoall_latency_s": (0.0, "neutral (one GPU measured: no expert parallelism)"),
    "moe_layer_latency_s": (0.0, "neutral (the measured model is dense)"),
    "response_latency_s": (0.0, "not measured (calib.py runs no server); a published-runs fit measures it"),
    "gemm_shape_dim": (0.0, "neutral (one model measured at TP1); a published-runs fit with several TP sizes "
                            "measures it"),
    "response_latency_per_request_s": (0.0, "not measured (calib.py runs no server); a published-runs fit "
                                            "measures it"),
    "front_end_token_s": (0.0, "not measured (calib.py runs no server); a bench fit with a saturating load "
                               "measures it"),
    "idle_wake_s": (0.0, "not measured (calib.py keeps the GPU busy); a bench fit on a CPU measures it"),
}


def load_steps(path: str | Path) -> dict[str, Any]:
    """A calib.py result file; anything else is refused in one sentence."""
    name = str(path)
    try:
        data = json.loads(read_input(path, "the step-time file"))
    except json.JSONDecodeError as err:
        raise ReaderError(f"not a step-time measurement file: not valid JSON ({err.msg}).", file=name,
                          line=err.lineno) from None
    keys = ("meta", "peak", "decode", "prefill")
    if not isinstance(data, dict) or any(k not in data for k in keys) or "shape8b" not in (data.get("meta") or {}):
        raise ReaderError("not a step-time measurement file (fixtures/gpu/calib.py writes one with meta.shape8b, "
                          "peak, decode and prefill).", file=name)
    return data


def shape_model(data: dict[str, Any]) -> ModelSpec:
    s = data["meta"]["shape8b"]
    return ModelSpec(id="llama3-8b-shaped (calib.py)", model_type="llama", num_hidden_layers=s["layers"],
                     hidden_size=s["h"], num_attention_heads=s["nh"], num_key_value_heads=s["nkv"], head_dim=s["hd"],
                     intermediate_size=s["inter"], vocab_size=s["vocab"], max_position_embeddings=131072,
                     layer_kinds=LayerKinds(full=s["layers"]), params_total=8_030_261_248,
                     params_source="calib.py shape", source="calib.py meta.shape8b")


def achievable(data: dict[str, Any], gpu: GpuSpec) -> dict[str, float]:
    p = data["peak"]
    return {"achievable_matmul_fraction": p["bf16_matmul_tflops"] / gpu.bf16_tflops,
            "achievable_copy_fraction": p["copy_GBps_rw"] / gpu.hbm_bandwidth_gbps}


def points(data: dict[str, Any]) -> list[dict[str, Any]]:
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


def models_for(data: dict[str, Any], gpu: GpuSpec, cal: StepTimeCoefficients) -> dict[str, Any]:
    from ..capacity.steptime import StepTimeModel

    model = shape_model(data)
    sizes = sorted({r["B"] for r in data["decode"]})  # calib.py captures each batch exactly (no padding)
    # calib.py runs plain SDPA (no split-KV): split_kv=False turns the one-block-per-head floor on
    kw = dict(calibration=cal, split_kv=False, table_tokens=16384)
    return {"graph": StepTimeModel(model, gpu, cudagraph_capture_sizes=sizes, **kw),
            "eager": StepTimeModel(model, gpu, enforce_eager=True, **kw)}


def predict_all(data: dict[str, Any], gpu: GpuSpec, cal: StepTimeCoefficients) -> list[dict[str, Any]]:
    models = models_for(data, gpu, cal)
    rows = []
    for p in points(data):
        pred = models[p["mode"]](p["batch"])
        rows.append({**p, "predicted_s": pred, "error": pred / p["measured_s"] - 1})
    return rows


def coefficients(data: dict[str, Any], gpu: GpuSpec, free: dict[str, float]) -> StepTimeCoefficients:
    return StepTimeCoefficients(**{**{k: v for k, (v, _) in FIXED.items()}, **achievable(data, gpu), **free})


def fit(data: dict[str, Any], gpu: GpuSpec, max_iterations: int = 4000) -> tuple[StepTimeCoefficients, SearchResult]:
    pts = points(data)
    meas = np.array([p["measured_s"] for p in pts])

    def loss(free: dict[str, float]) -> float:
        models = models_for(data, gpu, coefficients(data, gpu, free))
        pred = np.array([models[p["mode"]](p["batch"]) for p in pts])
        return float(np.sum(np.log(pred / meas) ** 2))

    result = minimize(loss, FREE, max_iterations)
    return coefficients(data, gpu, result.values), result


def step_coefficients(data: dict[str, Any], gpu: GpuSpec, cal: StepTimeCoefficients, source: str
                      ) -> dict[str, Coefficient]:
    free = {f.name: f for f in FREE}
    out = {}
    for name, value in cal.as_dict().items():
        if name in free:
            f = free[name]
            how = f"fitted to {source} (bounds {f.low:g}..{f.high:g})"
        elif name in FIXED:
            how = FIXED[name][1]
        else:
            datasheet = gpu.bf16_tflops if name == "achievable_matmul_fraction" else gpu.hbm_bandwidth_gbps
            key = "bf16_matmul_tflops" if name == "achievable_matmul_fraction" else "copy_GBps_rw"
            how = f"{source} peak.{key} / {datasheet:g} ({gpu.id} datasheet)"
        out[name] = Coefficient(value=float(f"{value:.6g}"), source=how, fitted=name in free)
    return out


def report(rows: list[dict[str, Any]], result: SearchResult) -> FitReport:
    errs = np.abs([r["error"] for r in rows]) * 100
    kinds: dict[str, list[float]] = {}
    for r in rows:
        kinds.setdefault(r["name"].split(" B=")[0].split(" T=")[0], []).append(abs(r["error"]) * 100)
    errors = [MetricError(metric="step_time", points=len(rows), median_abs_pct=round(float(np.median(errs)), 2),
                          max_abs_pct=round(float(errs.max()), 2))]
    errors += [MetricError(metric=f"step_time ({kind})", points=len(v), median_abs_pct=round(float(np.median(v)), 2),
                           max_abs_pct=round(float(max(v)), 2)) for kind, v in kinds.items()]
    pts = [FitPoint(source=r["name"], metric="step_ms", measured=round(r["measured_s"] * 1e3, 4),
                    predicted=round(r["predicted_s"] * 1e3, 4), error_pct=round(100 * r["error"], 2)) for r in rows]
    return FitReport(evidence="steps", method="bounded Nelder-Mead on the squared log error of every step",
                     free=[f.name for f in FREE], iterations=result.iterations, converged=result.converged,
                     loss=round(result.loss, 6), errors=errors, points=pts)


def fitted_on(data: dict[str, Any], gpu: GpuSpec) -> FittedOn:
    s = data["meta"]["shape8b"]
    shape = {"layers": s["layers"], "hidden": s["h"], "heads": s["nh"], "kv_heads": s["nkv"], "head_dim": s["hd"],
             "intermediate": s["inter"], "vocab": s["vocab"]}
    return FittedOn(device=gpu.id, device_in_catalog=True, model=shape_model(data).id, model_shape=shape,
                    dtype="bfloat16", enforce_eager=False)


def calibrate_steps(path: str, gpu: GpuSpec, name: str, command: str) -> CalibrationProfile:
    """The whole fit: read the file, fit, and return the profile (nothing is written here)."""
    from ..calibration.profile import source_file

    data = load_steps(path)
    cal, result = fit(data, gpu)
    if not result.converged:
        raise ReaderError(f"the step-time fit did not converge in {result.iterations} iterations; no profile was "
                          "written.", file=path)
    rows = predict_all(data, gpu, cal)
    shape = data["meta"]["shape8b"]
    description = (f"{len(rows)} forward-step times of a {shape['layers']}-layer, hidden {shape['h']} Llama shape "
                   f"on {data['meta'].get('gpu', gpu.id)} (calib.py), measured peaks "
                   f"{data['peak']['bf16_matmul_tflops']:.0f} TFLOP/s, {data['peak']['copy_GBps_rw']:.0f} GB/s")
    return CalibrationProfile(name=name, fitted_on=fitted_on(data, gpu),
                              step_time=step_coefficients(data, gpu, cal, path), fit=report(rows, result),
                              sources=[source_file(path, "steps", description)], created_by=command)
