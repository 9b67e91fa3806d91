"""Reading /metrics pages: prometheus_client's parser, counters across restarts, engines and models, old names."""
from __future__ import annotations

import gzip

import pytest

from reader.errors import ReaderError
from reader.observe.evidence import Settings, observe
from reader.observe.samples import parse
from reader.observe.scrape import Scrape, load_files, save
from reader.observe.series import window

from ._pages import Engine, page, scrape_file


def snapshots(pages):
    return [parse(Scrape(text=text, time=t, source="test")) for t, text in pages]


def test_counters_are_increases_over_the_window():
    w = window(snapshots([(0, page(Engine(preemptions=5, finished=10, steps=100))),
                          (10, page(Engine(preemptions=12, finished=30, steps=400)))]))
    assert w.increase("preemptions") == 7
    assert w.increase("finished") == 20
    assert w.histogram("step_tokens").count == 300


def test_a_counter_that_drops_is_a_restart_counted_from_zero():
    w = window(snapshots([(0, page(Engine(preemptions=50, steps=1000))),
                          (10, page(Engine(preemptions=60, steps=1200))),
                          (20, page(Engine(preemptions=4, steps=90))),     # the server restarted
                          (30, page(Engine(preemptions=9, steps=150)))]))
    assert w.increase("preemptions") == 10 + 4 + 5
    assert w.histogram("step_tokens").count == 200 + 90 + 60
    assert w.restarts_at == {2}


def test_engines_are_summed_and_kv_usage_is_the_fullest_engine():
    first = page(Engine(engine="0", preemptions=1, running=2, kv=0.2),
                 Engine(engine="1", preemptions=2, running=3, kv=0.9))
    later = page(Engine(engine="0", preemptions=4, running=5, kv=0.3),
                 Engine(engine="1", preemptions=8, running=1, kv=0.5))
    w = window(snapshots([(0, first), (5, later)]))
    assert w.increase("preemptions") == 3 + 6
    assert [v for _, v in w.gauge("running")] == [5, 6]
    assert [v for _, v in w.gauge("kv_usage", "max")] == [0.9, 0.5]


def test_several_models_behind_one_endpoint_need_a_choice():
    both = page(Engine(model="a", preemptions=3), Engine(model="b", engine="1", preemptions=9))
    snaps = snapshots([(0, both)])
    with pytest.raises(ReaderError, match="serves 2 models .*--served-model"):
        window(snaps)
    assert window(snaps, "b").increase("preemptions") == 9
    with pytest.raises(ReaderError, match="no metrics for the served model 'c'"):
        window(snaps, "c")


def test_older_releases_spelling_of_kv_usage_is_read_and_named():
    old = Engine(kv=0.7, kv_name="vllm:gpu_cache_usage_perc")
    w = window(snapshots([(0, page(old))]))
    assert w.gauge("kv_usage", "max") == [(0, 0.7)]
    assert w.names_used["kv_usage"] == "vllm:gpu_cache_usage_perc"


def test_missing_metrics_are_unknown_not_zero():
    text = "\n".join(line for line in page(Engine(finished=3, steps=10)).splitlines()
                     if "preemptions" not in line) + "\n"
    w = window(snapshots([(0, text), (5, text)]))
    assert w.increase("preemptions") is None
    obs = observe(w, Settings(), "test", "scrapes")
    assert "preemptions" in obs.missing


def test_one_scrape_counts_from_the_server_start():
    text = page(Engine(preemptions=7, finished=20, steps=300)) + \
        '# TYPE vllm:num_preemptions_created gauge\nvllm:num_preemptions_created{engine="0",model_name="m"} 100.0\n'
    obs = observe(window(snapshots([(160.0, text)])), Settings(), "test", "scrapes")
    assert obs.evidence.preemptions == 7 and obs.evidence.steps_with_output == 300
    assert obs.busy_s == 60.0
    assert "since the server started" in obs.evidence.notes[0]


def test_a_page_that_is_not_vllm_metrics_is_bad_input():
    with pytest.raises(ReaderError, match="not a vLLM server's metrics page: it has 1 metric samples .* none named"):
        parse(Scrape(text="# TYPE up gauge\nup 1\n", time=0, source="x"))
    with pytest.raises(ReaderError, match="not Prometheus metrics text"):
        parse(Scrape(text="<html><body>hello</body></html>\n", time=0, source="x"))
    with pytest.raises(ReaderError, match="holds no metrics at all"):
        parse(Scrape(text="", time=0, source="x"))


def test_saved_scrapes_keep_their_times_in_one_file_plain_or_gzip(tmp_path):
    scrapes = [Scrape(text=page(Engine(steps=s)), time=t, source="http://h/metrics") for t, s in ((1.5, 1), (7.25, 9))]
    for name in ("s.prom", "s.prom.gz"):
        save(scrapes, tmp_path / name)
        back = load_files([str(tmp_path / name)])
        assert [(s.time, s.source) for s in back] == [(1.5, "http://h/metrics"), (7.25, "http://h/metrics")]
        assert window([parse(s) for s in back]).histogram("step_tokens").count == 8
    assert gzip.open(tmp_path / "s.prom.gz", "rt").read().startswith("# vllm-reader-scrape time=1.500")


def test_a_folder_is_its_scrape_files_and_a_file_without_header_uses_its_mtime(tmp_path):
    import os
    scrape_file(tmp_path / "a.prom", [(10.0, page(Engine(steps=5)))])
    (tmp_path / "b.txt").write_text(page(Engine(steps=25)))
    os.utime(tmp_path / "b.txt", (20.0, 20.0))
    (tmp_path / "notes.md").write_text("not a scrape")
    back = load_files([str(tmp_path)])
    assert [(s.time, s.time_known) for s in back] == [(10.0, True), (20.0, False)]
    with pytest.raises(ReaderError, match="no such file or folder"):
        load_files([str(tmp_path / "missing.prom")])


def _scraped_until_idle(monkeypatch, pages: list[str]) -> list:
    """from_url with --until-idle over pages served in turn (the last one again once they run out)."""
    from reader.observe import sources

    served = iter(pages)
    last = [pages[-1]]

    def get(url, timeout):
        last[0] = next(served, last[0])
        return last[0]

    clock = iter(float(i) for i in range(10_000))
    monkeypatch.setattr(sources, "get", get)
    plan = sources.LiveWindow(window_s=100.0, interval_s=1.0, until_idle=True)
    return sources.from_url("http://127.0.0.1:1/metrics", plan, clock=lambda: next(clock), sleep=lambda s: None
                            ).snapshots


def test_until_idle_waits_for_the_counters_to_settle_after_the_server_empties(monkeypatch):
    # the first page that shows an empty server can still be short of the final counts (a live run stopped at
    # one with 7 of the server's 8 preemptions)
    pages = [page(Engine()), page(Engine(running=8, waiting=4, steps=50, preemptions=1)),
             page(Engine(steps=120, preemptions=2, finished=12)), page(Engine(steps=121, preemptions=3, finished=12)),
             page(Engine(steps=121, preemptions=3, finished=12)), page(Engine(running=5, steps=200))]
    snapshots = _scraped_until_idle(monkeypatch, pages)
    assert len(snapshots) == 5  # stopped at the second still, empty page; the first empty one was not final
    assert window(snapshots).increase("preemptions") == 3


def test_until_idle_still_stops_for_traffic_too_short_to_be_seen_in_flight(monkeypatch):
    pages = [page(Engine()), page(Engine(steps=10, finished=1)), page(Engine(steps=10, finished=1))]
    assert len(_scraped_until_idle(monkeypatch, pages)) == 3
