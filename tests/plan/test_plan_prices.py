"""Prices are the user's: per GPU type searched, positive, every type or none."""
from __future__ import annotations

import pytest

from reader.errors import ReaderError
from reader.plan.prices import parse_prices

SEARCHED = ["H100-SXM", "L40S"]


def test_prices_are_read_by_catalog_name_repeated_or_comma_separated():
    assert parse_prices(["H100=2.5", "L40S=0.9"], SEARCHED) == {"H100-SXM": 2.5, "L40S": 0.9}
    assert parse_prices(["h100-sxm=2.5,l40s=0.9"], SEARCHED) == {"H100-SXM": 2.5, "L40S": 0.9}
    assert parse_prices(None, SEARCHED) == {}


@pytest.mark.parametrize("given, words", [
    (["H100-SXM=2.5", "L4=0.8", "L40S=1"], "not among the GPUs this plan searches"),
    (["H100-SXM=2.5"], "but not for L40S"),
    (["H100-SXM=cheap", "L40S=1"], "is not a number"),
    (["H100-SXM=-1", "L40S=1"], "positive"),
    (["H100-SXM"], "GPU=USD_PER_HOUR"),
    (["NoSuchGPU=1"], "NoSuchGPU"),
])
def test_bad_prices_are_bad_input_naming_the_option(given, words):
    with pytest.raises(ReaderError) as err:
        parse_prices(given, SEARCHED)
    assert words in err.value.render()
