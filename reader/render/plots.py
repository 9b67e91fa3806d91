"""Chart files for --plot: SVG always, PNG with matplotlib."""
from __future__ import annotations

from pathlib import Path

from ..diagnose.report import Diagnosis
from ..errors import ReaderError
from .charts import Chart, Line, svg, write_png
from .loadcurve_view import curve_chart


def _target(spec: str) -> tuple[Path, str]:
    folder, _, kind = spec.partition(":")
    kind = kind or "svg"
    if kind not in ("svg", "png"):
        raise ReaderError(f"--plot kind must be svg or png, not '{kind}'.", key="--plot")
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ReaderError(f"cannot create the plot folder ({err.strerror}).", key="--plot", file=folder) from None
    return path, kind


def write_chart(chart: Chart, spec: str, name: str, points=None) -> Path:
    folder, kind = _target(spec)
    out = folder / f"{name}.{kind}"
    if kind == "svg":
        out.write_text(svg(chart, points=points))
    else:
        write_png(chart, str(out), points=points)
    return out


def write_diagnosis_plots(d: Diagnosis, spec: str) -> list[Path]:
    written = []
    if d.series is not None and len(d.series.t_s) > 1:
        chart = Chart(title="KV cache usage and queue over time", x_label="time (s)", y_label="% / requests",
                      x=d.series.t_s, lines=[Line("KV usage %", d.series.kv_usage_pct), Line("running", d.series.running),
                                             Line("waiting", d.series.waiting)])
        written.append(write_chart(chart, spec, "timeline"))
    curve = d.load_curve
    if curve is not None and len([p for p in curve.points if p.metrics is not None]) > 1:
        written.append(write_chart(curve_chart(curve, d.slos_ms), spec, "load_curve"))
    simulated = [w for w in d.whatifs if w.metrics is not None]
    if simulated and d.baseline is not None:
        points = [(d.baseline.itl_p99_ms or 0, d.baseline.output_throughput, "as configured")]
        points += [(w.metrics.itl_p99_ms or 0, w.metrics.output_throughput, f"#{i + 1}") for i, w in enumerate(simulated)]
        chart = Chart(title="Throughput against ITL P99 per change", x_label="ITL P99 (ms)", y_label="output tok/s",
                      x=[p[0] for p in points])
        written.append(write_chart(chart, spec, "whatifs", points=points))
    return written
