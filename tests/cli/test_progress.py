"""Progress on long commands (sweep, observe's scraping, plan): a line on a terminal, nothing in a pipe or in CI
unless asked for; and a report or saved scrapes are written whole or not at all (Ctrl-C mid-write)."""
from __future__ import annotations

import io

import pytest

from reader.files import write_whole
from reader.render.progress import ProgressLine


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_line_rewritten_in_place_and_cleared(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    stream = Terminal()
    line = ProgressLine("sweep", stream)
    line.say("1 of 4 points simulated")
    line.say("2 of 4 points simulated")
    line.close()
    assert stream.getvalue().count("\r") >= 3 and "sweep: 2 of 4 points simulated" in stream.getvalue()
    assert "\n" not in stream.getvalue()


def test_ci_and_pipes_stay_quiet_unless_asked(monkeypatch):
    monkeypatch.setenv("CI", "1")
    quiet_terminal, pipe, asked = Terminal(), io.StringIO(), io.StringIO()
    ProgressLine("observe", quiet_terminal).say("scraped")
    monkeypatch.delenv("CI")
    ProgressLine("observe", pipe).say("scraped")
    ProgressLine("observe", asked, show=True).say("scraped once")
    assert quiet_terminal.getvalue() == pipe.getvalue() == ""
    assert asked.getvalue() == "observe: scraped once\n"


def test_sweep_reports_each_point_as_it_finishes():
    from reader.diagnose.trials import _counted

    seen = []
    assert _counted(iter(["a", "b", "c"]), 3, lambda n, total: seen.append((n, total))) == ["a", "b", "c"]
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_an_interrupted_write_leaves_the_old_file_and_no_partial_one(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("the previous report")

    def interrupted(data):
        raise KeyboardInterrupt

    monkeypatch.setattr("reader.files.gzip.compress", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_whole(target, "the new report", compress=True)
    assert target.read_text() == "the previous report" and list(tmp_path.iterdir()) == [target]
    write_whole(target, "the new report")
    assert target.read_text() == "the new report"
