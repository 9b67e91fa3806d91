"""GPU prices for a plan: given by the user, never shipped.

Hourly prices differ by cloud, region, commitment and month, and no single table stays true, so
vllm-reader carries none: `--price GPU=USD_PER_HOUR` (repeatable, or comma-separated) gives them.
Without prices a plan is ranked by the number of GPUs it takes and costs are not reported.
"""
from __future__ import annotations

from typing import Optional

from ..errors import ReaderError


def parse_prices(specs: Optional[list[str]], searched: list[str]) -> dict[str, float]:
    """{gpu id: USD per GPU-hour} from `GPU=PRICE` items; every GPU named must be one the plan searches,
    and once prices are given, every GPU searched needs one (a cost ranking over some of them would
    silently favour the unpriced)."""
    from ..catalog.load import get_gpu

    prices: dict[str, float] = {}
    for spec in specs or []:
        for item in filter(None, (part.strip() for part in spec.split(","))):
            name, eq, raw = item.partition("=")
            if not eq or not name.strip() or not raw.strip():
                raise ReaderError(f"--price expects GPU=USD_PER_HOUR (e.g. H100-SXM=2.49), got '{item}'.",
                                  key="--price")
            try:
                gpu = get_gpu(name.strip()).id
            except ReaderError as err:
                raise ReaderError(err.message, key="--price", hint=err.hint) from None
            try:
                price = float(raw)
            except ValueError:
                raise ReaderError(f"--price {name.strip()}: '{raw.strip()}' is not a number of US dollars per "
                                  "GPU-hour.", key="--price") from None
            if not price > 0 or price == float("inf"):
                raise ReaderError(f"--price {name.strip()}: a price must be a positive number of US dollars per "
                                  f"GPU-hour, not {raw.strip()}.", key="--price")
            if gpu not in searched:
                raise ReaderError(f"--price names {gpu}, which is not among the GPUs this plan searches "
                                  f"({', '.join(searched)}); add it to --gpus or drop its price.", key="--price")
            prices[gpu] = price
    missing = [g for g in searched if g not in prices]
    if prices and missing:
        raise ReaderError(f"--price gives prices for {', '.join(sorted(prices))} but not for {', '.join(missing)}; "
                          "a plan compares costs only when every GPU searched has a price (or give none, and "
                          "plans are ranked by GPU count).", key="--price")
    return prices
