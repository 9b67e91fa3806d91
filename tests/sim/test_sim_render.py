"""Simulation results side by side: text, Markdown, JSON."""
from __future__ import annotations

import io
import json

from reader.render.simtable import progress_bar, render
from reader.sim.api import run_modes

SETTINGS = dict(vllm_version="0.32.0", max_num_seqs=16, num_gpu_blocks=2000)
WL = {"num_requests": 20, "arrival": {"process": "poisson", "rate": 50.0}, "prompt_len": 200, "output_len": 20}


def results():
    return run_modes(SETTINGS, WL, lambda b: 0.01, ["continuous", "chunked"], seed=0, slos_ms={"ttft": 50.0})


def test_text_table_has_one_column_per_mode_and_the_headline_metrics():
    text = render(results(), "text")
    header = text.splitlines()[0]
    assert "CONTINUOUS" in header and "CONTINUOUS+CHUNKED" in header
    for label in ("request throughput (req/s)", "mean TTFT (ms)", "P99 ITL (ms)", "preemptions",
                  "request goodput (req/s)"):
        assert label in text


def test_markdown_is_a_table_and_json_round_trips():
    rs = results()
    md = render(rs, "markdown")
    assert md.startswith("| metric |") and "| --- |" in md
    data = json.loads(render(rs, "json"))
    assert [d["mode"] for d in data] == ["continuous", "chunked"] and "evidence" in data[0]


def test_the_progress_bar_draws_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = progress_bar(stream, min_seconds=0.0)
        bar(5, 10)
        bar(10, 10)
    assert "10/10" in tty.getvalue() and pipe.getvalue() == ""
