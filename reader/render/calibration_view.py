"""Text views of a calibration: the fit's points against their measurements, and the profile in brief."""
from __future__ import annotations

from typing import Any, Iterable

from ..calibration.profile import CalibrationProfile, FitPoint, MetricError


def step_table(rows: Iterable[dict[str, Any]]) -> str:
    """Measured against predicted step times (rows from fit_steps.predict_all), with the error summary."""
    rows = list(rows)
    lines = [f"{'point':<30} {'measured ms':>11} {'predicted ms':>12} {'error %':>8}"]
    for r in rows:
        lines.append(f"{r['name']:<30} {r['measured_s'] * 1e3:>11.2f} {r['predicted_s'] * 1e3:>12.2f} "
                     f"{100 * r['error']:>+8.1f}")
    errs = sorted(abs(r["error"]) for r in rows)
    mid = len(errs) // 2
    median = errs[mid] if len(errs) % 2 else (errs[mid - 1] + errs[mid]) / 2
    lines.append(f"median |error| {100 * median:.1f}%   max |error| {100 * errs[-1]:.1f}%   points {len(rows)}")
    return "\n".join(lines)


def _error_line(e: MetricError) -> str:
    return (f"  {e.metric:<28} median |error| {e.median_abs_pct:6.1f}%   worst {e.max_abs_pct:6.1f}%   "
            f"({e.points} point{'s' if e.points != 1 else ''}{'' if e.in_loss else ', not fitted'})")


def point_table(points: Iterable[FitPoint]) -> str:
    lines = [f"  {'source':<44} {'metric':<22} {'measured':>10} {'predicted':>10} {'error':>8}"]
    for p in points:
        lines.append(f"  {p.source[-44:]:<44} {p.metric:<22} {p.measured:>10.4g} {p.predicted:>10.4g} "
                     f"{p.error_pct:>+7.1f}%")
    return "\n".join(lines)


def render_profile(profile: CalibrationProfile, written_to: str | None = None, held_out: Iterable[FitPoint] = (),
                   held_out_errors: Iterable[MetricError] = ()) -> str:
    """What `vllm-reader calibrate` prints: the deployment, the coefficients it fitted, the error per metric."""
    on = profile.fitted_on
    fit = profile.fit
    lines = [f"calibration profile '{profile.name}': {on.model} on {on.device}"
             f"{'' if on.device_in_catalog else ' (not in the catalog: the profile stands in for its datasheet)'}, "
             f"TP {on.tensor_parallel_size} x PP {on.pipeline_parallel_size}, {on.dtype}",
             f"fitted on {len(profile.sources)} file{'s' if len(profile.sources) != 1 else ''} "
             f"({fit.evidence}), {fit.iterations} iterations, {'converged' if fit.converged else 'NOT converged'}",
             "", "fitted coefficients:"]
    for name in fit.free:
        if name in profile.step_time:
            lines.append(f"  {name:<32} {profile.step_time[name].value:.6g}")
    if profile.device is not None:
        d = profile.device
        lines.append(f"  device {d.name} ({d.kind}): {d.bf16_tflops:.4g} TFLOP/s effective, "
                     f"{d.hbm_bandwidth_gbps:.4g} GB/s effective")
    lines += ["", "fit error per metric:"] + [_error_line(e) for e in fit.errors]
    points = list(held_out)
    if points:
        lines += ["", "held-out files (predicted, not fitted):"] + [_error_line(e) for e in held_out_errors]
        lines += ["", point_table(points)]
    if written_to:
        lines += ["", f"wrote {written_to}"]
    return "\n".join(lines)
