"""How evidence figures read in a report: quantities with their units, differences, agreement marks."""
from __future__ import annotations

import math
from typing import Any, Optional


def quantity(value: Optional[float], unit: str = "") -> str:
    if value is None:
        return "n/a"
    if unit == "ms":
        return f"{value / 1000:,.2f} s" if value >= 1000 else f"{value:,.1f} ms"
    if unit == "s":
        return f"{value:,.1f} s" if value < 600 else f"{value / 60:,.1f} min"
    if unit == "%":
        return f"{value:.0f}%"
    if unit == "req/s":
        return f"{value:,.2f} {unit}"
    text = f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:,.1f}"
    return f"{text} {unit}" if unit else text


def observed(f: Any) -> str:
    """An observed figure (a Figure or a comparison Row) as what is known of it: a value, the range it lies in
    (a percentile's bucket, a rate over a busy span known between bounds), or unknown."""
    value = getattr(f, "observed", None) if hasattr(f, "observed") else f.value
    low = getattr(f, "observed_low", None) if hasattr(f, "observed_low") else f.low
    high = getattr(f, "observed_high", None) if hasattr(f, "observed_high") else f.high
    if value is None:
        return "unknown (not read at both ends of the window)" if getattr(f, "unknown", True) else "n/a"
    bound = getattr(f, "bound", "")
    if bound and low is not None:
        return f"at least {quantity(low, f.unit)} ({bound})"
    if low is not None and high is not None:
        top = "and up" if math.isinf(high) else f"to {quantity(high, f.unit)}"
        if getattr(f, "kind", None) == "bucket":
            if low == 0 and not math.isinf(high):
                # the first bucket: an interpolated point inside it (297 ms of 0-300 ms when the mean is 0.016 ms)
                # would say more than the buckets do
                return f"at most {quantity(high, f.unit)} (its histogram's first bucket)"
            return f"{quantity(low, f.unit)} {top} (its histogram bucket; {quantity(value, f.unit)} interpolated)"
        return f"{quantity(low, f.unit)} {top} (over the busy span's bounds)"
    return quantity(value, f.unit) + (" (exact)" if f.exact else "")


def difference(value: Optional[float]) -> str:
    if value is None:
        return ""
    return f"{100 * value:+.0f}%"


def agreement(row: Any) -> str:
    if row.agrees is None:
        return ""
    inside = getattr(row, "observed_low", None) is not None
    if row.agrees:
        return "yes, inside the range" if inside else "yes"
    return "**no**, outside the range" if inside else "**no**"


def view_helpers() -> dict[str, Any]:
    return {"quantity": quantity, "difference": difference, "agreement": agreement, "observed": observed}
