"""Text views of a calibration: the fit's points against their measurements, and the profile in brief."""
from __future__ import annotations

from typing import Any, Iterable

from ..calibration.profile import CalibrationProfile, FitPoint, MetricError
from ..calibration.select import CalibrationUse


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


KEY_METRICS = ("output_throughput", "median_tpot_ms", "median_ttft_ms")


def render_profile(profile: CalibrationProfile, written_to: str | None = None, notes: Iterable[str] = ()) -> str:
    """What `vllm-reader calibrate` prints: the deployment, the coefficients it fitted, the error per metric,
    and the held-out files' key metrics beside their predictions."""
    on = profile.fitted_on
    fit = profile.fit
    lines = [f"calibration profile '{profile.name}': {on.model} on {on.device}"
             f"{'' if on.device_in_catalog else ' (not in the catalog: the profile stands in for its datasheet)'}, "
             f"TP {on.tensor_parallel_size} x PP {on.pipeline_parallel_size}, {on.dtype}",
             f"fitted on {sum(1 for s in profile.sources if 'held out' not in s.description)} file(s) "
             f"({fit.evidence}), {fit.iterations} iterations, {'converged' if fit.converged else 'NOT converged'}",
             *([fit.model_match[0].upper() + fit.model_match[1:]] if fit.model_match else []),
             "", "fitted coefficients:" if fit.evidence != "log" else
             "step-time coefficients: not fitted (no bench results), the shipped profile's"]
    for name in fit.free:
        if name in profile.step_time:
            lines.append(f"  {name:<32} {profile.step_time[name].value:.6g}")
    if profile.device is not None:
        d = profile.device
        lines.append(f"  device {d.name} ({d.kind}): {d.bf16_tflops:.4g} TFLOP/s and {d.hbm_bandwidth_gbps:.4g} GB/s "
                     "effective")
    if fit.evidence != "log":
        lines += ["", "fit error per metric:"] + [_error_line(e) for e in fit.errors if not e.held_out]
    lines += _memory_lines(profile)
    held = [e for e in fit.errors if e.held_out]
    if held:
        lines += ["", "held-out files (predicted, not fitted):"] + [_error_line(e) for e in held]
        lines += ["", point_table(p for p in fit.points if p.held_out and p.metric in KEY_METRICS)]
    if fit.not_fitted:
        lines += ["", "not fitted (the evidence cannot tell them apart; the base profile's values):"] + [
            f"  {why}" for why in fit.not_fitted]
    if fit.warnings:
        lines += ["", "warnings (what the results say about the fit):"] + [f"  {w}" for w in fit.warnings]
    notes = list(notes)
    if notes:
        lines += ["", "notes:"] + [f"  {note}" for note in notes]
    if written_to:
        lines += ["", f"wrote {written_to}"]
    return "\n".join(lines)


_TERM_LABELS = {"activation_peak_bytes": "activation peak", "non_torch_bytes": "non-torch memory",
                "cudagraph_bytes": "CUDA graphs"}


def _memory_lines(profile: CalibrationProfile) -> list[str]:
    """The memory terms learned from start-up logs, the settings they hold at, and how well they predict the
    logs' available KV memory."""
    memory = profile.memory
    terms = {field: getattr(memory, field) for field in _TERM_LABELS if getattr(memory, field) is not None}
    if not terms:
        return []
    lines = ["", "memory terms (per GPU, from start-up logs):"]
    for field, term in terms.items():
        estimate = f" (the capacity model estimates {term.estimate / 2**30:.2f} GiB)" if term.estimate else ""
        lines.append(f"  {_TERM_LABELS[field]:<20} {term.value / 2**30:8.2f} GiB{estimate}")
    at = next((t.at for t in terms.values() if t.at is not None), None)
    if at is not None:
        lines.append(f"  at max_num_batched_tokens {at.max_num_batched_tokens}, max_num_seqs {at.max_num_seqs}, "
                     f"TP {at.tensor_parallel_size}"
                     + (f", gpu_memory_utilization {at.gpu_memory_utilization:g}" if at.gpu_memory_utilization else "")
                     + (", eager" if at.enforce_eager else ", CUDA graphs")
                     + f", {profile.fitted_on.dtype}, vLLM {profile.fitted_on.vllm_version or '(release not stated)'}"
                     + "; other settings scale them with the capacity model's estimate")
    if memory.fit is not None:
        lines += [_error_line(e) for e in memory.fit.errors]
    return lines


def calibration_line(use: CalibrationUse) -> str:
    """The sentence every report carries: which calibration the step times come from, and how well it fitted."""
    if use.evidence == "log":
        return (f"step times: the shipped coefficients (calibration profile '{use.name}' ({use.chosen}, {use.path}) "
                f"holds memory terms from start-up logs of {use.fitted_on} and no bench results)"
                + (f"; {use.extrapolated}" if use.extrapolated else ""))
    fit = ""
    if use.published_error is not None:
        fit = f"; its replay's error: {use.published_error}"
    elif use.fit_metric is not None:
        what = "step times" if use.fit_metric.startswith("step_time") else use.fit_metric.replace("_", " ")
        fit = f"; its fit: {what} within {use.fit_median_abs_pct:.1f}% (median), {use.fit_max_abs_pct:.1f}% (worst)"
    stands = ", whose fitted figures stand in for the device's datasheet" if use.device_stands_in else ""
    text = (f"step times: calibration profile '{use.name}' ({use.chosen}, {use.path}), fitted on {use.fitted_on} "
            f"from {'measured step times' if use.evidence == 'steps' else use.evidence + ' results'}{stands}{fit}")
    if use.fit_warnings:
        text += (f"; the fit left {use.fit_warnings} warning(s) about its own results in the profile "
                 "(fit.warnings): read them before trusting its latencies")
    if use.extrapolated:
        text += f"; {use.extrapolated}"
    return text
