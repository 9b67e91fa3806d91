"""Durations and times as an operator writes them: 90, 90s, 5m, 1h30m (Prometheus's units); times as unix
seconds, RFC 3339 (2025-01-31T12:00:00Z) or `now`."""
from __future__ import annotations

import re
from datetime import datetime, timezone

from ..errors import ReaderError

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")


def seconds(text: str, option: str) -> float:
    raw = text.strip().lower()
    try:
        value = float(raw)
    except ValueError:
        parts = _PART.findall(raw)
        if not parts or "".join(n + u for n, u in parts) != raw:
            raise ReaderError(f"'{text}' is not a duration: write seconds (90) or with units (90s, 5m, 1h30m).",
                              key=option) from None
        value = sum(float(n) * _UNITS[u] for n, u in parts)
    if value <= 0:
        raise ReaderError(f"'{text}' is not a positive duration.", key=option)
    return value


def moment(text: str, option: str) -> float:
    raw = text.strip()
    if raw.lower() == "now":
        import time
        return time.time()
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ReaderError(f"'{text}' is not a time: write unix seconds, RFC 3339 (2025-01-31T12:00:00Z) or now.",
                          key=option) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()
