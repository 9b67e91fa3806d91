"""`calibrate` shows how far its fit has got on a terminal's stderr (issue 27, item 9): a line that names the
stage (the overall speed's line search, then the simplex) and the replays so far, cleared when the fit ends;
nothing at all where stderr is not a terminal (a log, CI)."""
from __future__ import annotations

import io

from reader.fitting import fit_bench
from reader.fitting.bench import read_bench
from reader.render.progress import ProgressLine

from ._synthetic import resolved_cpu, write


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def fit_two_loads(tmp_path, line, monkeypatch):
    monkeypatch.setattr(fit_bench, "MAX_ITERATIONS", 3)
    monkeypatch.setattr(fit_bench, "SCALE_EVALUATIONS", 2)
    r, device = resolved_cpu()
    loads = [read_bench(write(tmp_path / "c1.json", prompt=64, output=8, n=2, concurrency=1)),
             read_bench(write(tmp_path / "c4.json", prompt=64, output=8, n=4, concurrency=4))]
    fit_bench.fit(fit_bench.replays(r, loads), fit_bench.setup(r, device), line)
    line.close()


def test_on_a_terminal_the_line_names_each_stage_and_is_cleared_at_the_end(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)  # a terminal outside CI
    terminal = Terminal()
    fit_two_loads(tmp_path, ProgressLine("calibrate", terminal, stages=("speed", "fit")), monkeypatch)
    drawn = terminal.getvalue()
    assert "calibrate: [" in drawn and " speed " in drawn and " fit " in drawn
    assert drawn.index(" speed ") < drawn.index(" fit ") and "simulated" in drawn
    assert drawn.endswith("\r") and drawn.rsplit("\r", 2)[-2].strip() == ""  # the last write blanks the line


def test_off_a_terminal_nothing_is_written(tmp_path, monkeypatch):
    log = io.StringIO()
    fit_two_loads(tmp_path, ProgressLine("calibrate", log, stages=("speed", "fit")), monkeypatch)
    assert log.getvalue() == ""
