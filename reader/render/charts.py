"""Charts: Mermaid `xychart-beta` blocks (rendered by GitHub) and standalone SVG files.

Only numbers and our own labels go into charts; nothing from a config is printed in them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Optional, Sequence


@dataclass
class Line:
    name: str
    values: list[float]


@dataclass
class Chart:
    title: str
    x_label: str
    y_label: str
    x: list[float]  # numeric positions (for SVG); Mermaid uses them as category labels
    lines: list[Line] = field(default_factory=list)
    bars: list[Line] = field(default_factory=list)
    x_categories: Optional[list[str]] = None  # labels instead of numbers


def thin(xs: Sequence[float], ys: Sequence[float], points: int = 40) -> tuple[list[float], list[float]]:
    """At most `points` evenly spaced samples (Mermaid charts stay readable)."""
    if len(xs) <= points:
        return list(xs), list(ys)
    step = (len(xs) - 1) / (points - 1)
    idx = [round(i * step) for i in range(points)]
    return [xs[i] for i in idx], [ys[i] for i in idx]


def _fmt(v: float) -> str:
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:.0f}"
    return f"{v:.3g}"


def mermaid(chart: Chart) -> str:
    values = [v for series in chart.lines + chart.bars for v in series.values] or [0.0]
    top = max(values)
    top = top * 1.1 if top > 0 else 1.0
    labels = chart.x_categories or [_fmt(x) for x in chart.x]
    out = ["```mermaid", "xychart-beta", f'    title "{_plain(chart.title)}"',
           '    x-axis "' + _plain(chart.x_label) + '" [' + ", ".join(f'"{_plain(l)}"' for l in labels) + "]",
           f'    y-axis "{_plain(chart.y_label)}" 0 --> {_fmt(top)}']
    for series in chart.bars:
        out.append("    bar [" + ", ".join(_fmt(v) for v in series.values) + "]")
    for series in chart.lines:
        out.append("    line [" + ", ".join(_fmt(v) for v in series.values) + "]")
    out.append("```")
    return "\n".join(out)


def quadrant(chart: Chart, dots: list[tuple[str, float, float]], x_range: tuple[float, float],
             y_range: tuple[float, float], x_unit: str, y_unit: str) -> str:
    """A Mermaid `quadrantChart` used as a labelled scatter: each dot (name, x, y) with x and y scaled to 0..1
    over the ranges, which the axis labels state."""
    out = ["```mermaid", "quadrantChart", f"    title {_plain(chart.title)}",
           f"    x-axis {_plain(chart.x_label)} {_fmt(x_range[0])} {x_unit} --> {_fmt(x_range[1])} {x_unit}",
           f"    y-axis {_plain(chart.y_label)} {_fmt(y_range[0])} --> {_fmt(y_range[1])} {y_unit}"]
    for name, x, y in dots:
        out.append(f"    {_plain(name)}: [{min(max(x, 0.0), 1.0):.3f}, {min(max(y, 0.0), 1.0):.3f}]")
    out.append("```")
    return "\n".join(out)


def _plain(text: str) -> str:
    return "".join(ch for ch in str(text) if ch not in '"`[]\n\r')


_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


def svg(chart: Chart, width: int = 720, height: int = 360, points: Optional[list[tuple[float, float, str]]] = None
        ) -> str:
    """A line/bar chart (or, with `points`, a labelled scatter) as a self-contained SVG document."""
    left, right, top, bottom = 70, 20, 40, 50
    pw, ph = width - left - right, height - top - bottom
    xs = chart.x if not points else [p[0] for p in points]
    ys = [v for s in chart.lines + chart.bars for v in s.values] if not points else [p[1] for p in points]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    y1 = max(ys) * 1.1 if ys and max(ys) > 0 else 1.0
    if x1 == x0:
        x1 = x0 + 1

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return top + ph - y / y1 * ph

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">{escape(chart.title)}</text>',
             f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>',
             f'<text x="{left + pw / 2}" y="{height - 10}" text-anchor="middle">{escape(chart.x_label)}</text>',
             f'<text x="16" y="{top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {top + ph / 2})">'
             f'{escape(chart.y_label)}</text>']
    for i in range(5):
        yv = y1 * i / 4
        parts.append(f'<text x="{left - 6}" y="{py(yv) + 4:.1f}" text-anchor="end">{_fmt(yv)}</text>')
        parts.append(f'<line x1="{left}" y1="{py(yv):.1f}" x2="{left + pw}" y2="{py(yv):.1f}" stroke="#ddd"/>')
    for i in range(5):
        xv = x0 + (x1 - x0) * i / 4
        parts.append(f'<text x="{px(xv):.1f}" y="{top + ph + 16}" text-anchor="middle">{_fmt(xv)}</text>')
    if points:
        for x, y, label in points:
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="{_COLORS[0]}"/>')
            parts.append(f'<text x="{px(x) + 6:.1f}" y="{py(y) - 6:.1f}">{escape(label)}</text>')
    for k, series in enumerate(chart.lines):
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(chart.x, series.values))
        color = _COLORS[k % len(_COLORS)]
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{coords}"/>')
        parts.append(f'<text x="{left + pw - 4}" y="{top + 14 + 14 * k}" text-anchor="end" fill="{color}">'
                     f'{escape(series.name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_png(chart: Chart, path: str, points: Optional[list[tuple[float, float, str]]] = None) -> None:
    """PNG needs matplotlib (the `plot` extra); SVG never does."""
    from ..errors import ReaderError
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReaderError("PNG charts need matplotlib: pip install 'vllm-reader[plot]', or write .svg files.",
                          key="--plot") from None
    fig, ax = plt.subplots(figsize=(7.2, 3.6))
    if points:
        ax.scatter([p[0] for p in points], [p[1] for p in points])
        for x, y, label in points:
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4))
    for series in chart.lines:
        ax.plot(chart.x, series.values, label=series.name)
    ax.set_title(chart.title)
    ax.set_xlabel(chart.x_label)
    ax.set_ylabel(chart.y_label)
    if chart.lines:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
