"""How evidence figures read in a report: quantities with their units, differences, agreement marks."""
from __future__ import annotations

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


def difference(value: Optional[float]) -> str:
    if value is None:
        return ""
    return f"{100 * value:+.0f}%"


def agreement(row: Any) -> str:
    if row.agrees is None:
        return ""
    if row.agrees:
        return "yes"
    return "**no**"


def view_helpers() -> dict[str, Any]:
    return {"quantity": quantity, "difference": difference, "agreement": agreement}
