"""The bench fit on results the simulator wrote from known coefficients: fitted on some loads, it must predict
the others (no measurement noise here, so any error is the fit's own).

The fitted coefficients land within 8% of the true ones (printed; the widest today is the HBM bandwidth, about
5% low, which the KV read efficiency, about 3% high, partly makes up), and the held-out loads' throughput, median
TPOT and median TTFT within 3%: the replay is exact, so what is left is the search's own tolerance.
"""
from __future__ import annotations

import numpy as np
import pytest

from reader.fitting.bench import read_bench
from reader.fitting.fit_bench import compare, fit, predict, replays, setup

from ._synthetic import TRUTH, resolved_cpu, write

pytestmark = pytest.mark.slow

# The fitted loads span what the held-out ones need: short and long prompts (a 1,900-token prompt is prefilled in
# four 512-token chunks, the later ones over long past contexts), one and many requests in flight, open loop.
FIT = {"c1": dict(prompt=256, output=64, n=8, concurrency=1), "c12": dict(prompt=256, output=64, n=36, concurrency=12),
       "r3-long": dict(prompt=1024, output=96, n=16, rate=3.0), "c1-longer": dict(prompt=1900, output=16, n=4,
                                                                                 concurrency=1)}
HELD = {"c4": dict(prompt=256, output=64, n=16, concurrency=4), "r8": dict(prompt=512, output=64, n=30, rate=8.0),
        "c2-long": dict(prompt=1536, output=32, n=6, concurrency=2)}


def test_a_fit_on_four_loads_predicts_three_others(tmp_path):
    r, device = resolved_cpu()
    fitted = replays(r, [read_bench(write(tmp_path / f"{k}.json", **v)) for k, v in FIT.items()])
    held = replays(r, [read_bench(write(tmp_path / f"{k}.json", **v)) for k, v in HELD.items()])
    s = setup(r, device)
    search = fit(fitted, s)
    assert search.converged
    print("\n" + "\n".join(f"{k:28} true {TRUTH[k]:10.4g} fitted {v:10.4g}" for k, v in search.values.items()))
    assert set(search.values) <= set(TRUTH) and len(search.values) >= 5
    off = {k: v / TRUTH[k] - 1 for k, v in search.values.items()}
    assert all(abs(x) < 0.08 for x in off.values()), off
    points, errors = compare(held, predict(held, s, search.values))
    key = {e.metric: e for e in errors}
    print("\n" + "\n".join(f"{p.source:10} {p.metric:20} {p.measured:10.3f} {p.predicted:10.3f} {p.error_pct:+6.1f}%"
                           for p in points if p.in_loss))
    for metric in ("output_throughput", "median_tpot_ms", "median_ttft_ms"):
        assert key[metric].max_abs_pct < 3.0, metric
    assert np.isfinite(search.loss)
