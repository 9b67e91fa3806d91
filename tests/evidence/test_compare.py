"""Predicted beside observed: rows joined by key, flagged outside their tolerance, open to new sources' figures."""
from __future__ import annotations

from reader.evidence.compare import compare
from reader.evidence.model import Evidence, Figure
from reader.sim.result import LatencyStats


def test_standard_rows_agree_within_tolerance_and_flag_the_rest():
    predicted = Evidence(source="simulation", num_requests=80, steps_with_output=1060, preemptions=20,
                         num_gpu_blocks=25, itl_ms=LatencyStats(median=1.2))
    observed = Evidence(source="metrics", num_requests=80, steps_with_output=1049, preemptions=9,
                        num_gpu_blocks=24, itl_ms=LatencyStats(median=8.8))
    rows = {r.key: r for r in compare(predicted, observed).rows}
    assert rows["sched.steps"].agrees is True and rows["sched.steps"].exact
    assert rows["sched.preemptions"].agrees is False and abs(rows["sched.preemptions"].difference - 11 / 9) < 1e-9
    assert rows["kv.blocks"].agrees is False           # a block count must match exactly
    assert rows["latency.itl_median"].agrees is False and "step-time model" in rows["latency.itl_median"].if_off
    assert rows["load.requests"].agrees is None        # shown, never judged
    assert "latency.ttft_p99" not in rows              # neither side knows it: no row


def test_draws_give_the_median_and_the_range():
    comparison = compare(Evidence(source="s", steps_with_output=1), Evidence(source="o", steps_with_output=100),
                         draws={"sched.steps": [90, 120, 101]})
    rows = {r.key: r for r in comparison.rows}
    row = rows["sched.steps"]
    assert (row.predicted, row.predicted_low, row.predicted_high, row.draws) == (101, 90, 120, 3)
    assert row.agrees is True


def test_a_new_source_adds_rows_with_figures_and_no_code_change():
    weights = dict(key="memory.weights_gib", label="weights", unit="GiB", group="memory", tolerance=0.05,
                   if_off="the checkpoint's size differs")
    predicted = Evidence(source="simulation", figures=[Figure(value=15.0, **weights)])
    observed = Evidence(source="log", figures=[Figure(value=14.96, exact=True, **weights),
                                               Figure(key="memory.cuda_graphs_gib", label="CUDA graphs", value=0.5,
                                                      unit="GiB", group="memory")])
    comparison = compare(predicted, observed, reasons={"memory": "the log's model differs"})
    rows = {r.key: r for r in comparison.rows}
    assert rows["memory.weights_gib"].agrees is True and rows["memory.weights_gib"].exact
    assert rows["memory.weights_gib"].if_off == "the log's model differs"
    assert rows["memory.cuda_graphs_gib"].predicted is None and rows["memory.cuda_graphs_gib"].agrees is None
    assert [r.key for r in comparison.rows][-2:] == ["memory.weights_gib", "memory.cuda_graphs_gib"]
