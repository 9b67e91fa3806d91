"""Workloads: arrival processes, length distributions, shared prefixes, trace files, presets, and
errors that name the key or line."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reader.errors import ReaderError
from reader.sim import workload as wlmod
from reader.sim.workload import PRESETS, generate, load_workload, read_trace

WORKLOADS = Path(__file__).resolve().parents[2] / "fixtures" / "workloads"
# the bundled example workloads, named: a loop over the folder alone would pass with the folder empty
EXAMPLES = ("chat_small", "closed_loop_1k_200", "empirical_lengths", "shared_prefix_gamma", "trace_replay")


def spec(**over):
    base = {"num_requests": 4000, "seed": 1, "arrival": {"process": "poisson", "rate": 10.0},
            "prompt_len": 100, "output_len": 10}
    base.update(over)
    return load_workload(base)


def test_poisson_arrivals_come_at_the_rate():
    w = generate(spec())
    assert w.arrival[0] == 0.0 and np.all(np.diff(w.arrival) >= 0)
    assert w.num_requests / w.arrival[-1] == pytest.approx(10.0, rel=0.05)


def test_gamma_burstiness_below_one_is_burstier_at_the_same_rate():
    smooth = generate(spec(arrival={"process": "gamma", "rate": 10.0, "burstiness": 4.0}))
    bursty = generate(spec(arrival={"process": "gamma", "rate": 10.0, "burstiness": 0.25}))
    for w in (smooth, bursty):
        assert w.num_requests / w.arrival[-1] == pytest.approx(10.0, rel=0.1)
    assert np.diff(bursty.arrival).std() > 3 * np.diff(smooth.arrival).std()


@pytest.mark.parametrize("dist,check", [
    ({"dist": "fixed", "value": 700}, lambda x: np.all(x == 700)),
    ({"dist": "uniform", "low": 10, "high": 20}, lambda x: x.min() == 10 and x.max() == 20),
    ({"dist": "normal", "mean": 500.0, "std": 50.0}, lambda x: abs(x.mean() - 500) < 5),
    ({"dist": "lognormal", "median": 300.0, "sigma": 1.0, "max": 5000}, lambda x: abs(np.median(x) - 300) < 20
     and x.max() <= 5000),
    ({"dist": "empirical", "values": [1, 2], "weights": [3.0, 1.0]}, lambda x: abs((x == 1).mean() - 0.75) < 0.03),
])
def test_length_distributions(dist, check):
    assert check(generate(spec(prompt_len=dist)).prompt_len)


def test_a_bare_integer_is_a_fixed_length_and_min_clips():
    w = generate(spec(output_len=1, prompt_len={"dist": "normal", "mean": 5.0, "std": 50.0, "min": 3}))
    assert np.all(w.output_len == 1) and w.prompt_len.min() == 3


def test_shared_prefix_fraction_and_groups():
    w = generate(spec(prompt_len=1000, shared_prefix={"fraction": 0.25, "groups": 3}))
    assert set(w.prefix_group.tolist()) == {0, 1, 2} and np.all(w.prefix_len == 250)


def test_closed_loop_and_max_concurrency():
    closed = generate(spec(arrival={"process": "closed", "concurrency": 8}))
    assert np.all(closed.arrival == 0) and closed.max_concurrency == 8
    capped = generate(spec(arrival={"process": "poisson", "rate": 5.0, "concurrency": 2}))
    assert capped.max_concurrency == 2


def test_seeds_make_workloads_repeatable():
    a, b, c = generate(spec()), generate(spec()), generate(spec(), seed=99)
    assert np.array_equal(a.arrival, b.arrival) and not np.array_equal(a.arrival, c.arrival)


def test_presets_are_documented_and_overridable():
    for name in PRESETS:
        assert f"- {name}" in wlmod.__doc__ or f"- {name} (" in wlmod.__doc__
        w = generate(load_workload(name))
        assert w.num_requests == PRESETS[name]["num_requests"]
    small = load_workload({"preset": "rag", "num_requests": 10, "arrival": {"rate": 2.0}})
    assert small.num_requests == 10 and small.arrival.rate == 2.0 and small.arrival.process == "poisson"
    assert load_workload("long-context-rag").preset == "rag"


def test_example_workload_files_load():
    assert sorted(p.stem for p in WORKLOADS.glob("*.yaml")) == list(EXAMPLES)
    for name in EXAMPLES:
        w = generate(load_workload(str(WORKLOADS / f"{name}.yaml")))
        assert w.num_requests > 0, name


def test_jsonl_and_csv_traces_agree():
    a = read_trace(str(WORKLOADS / "trace_small.jsonl"))
    b = read_trace(str(WORKLOADS / "trace_small.csv"))
    for col in ("arrival", "prompt_len", "output_len", "prefix_group", "prefix_len", "priority"):
        assert np.array_equal(getattr(a, col), getattr(b, col)), col
    assert a.prefix_len.max() == 512 and a.priority.max() == 1
    via_yaml = generate(load_workload(str(WORKLOADS / "trace_replay.yaml")))
    assert np.array_equal(via_yaml.prompt_len, a.prompt_len)


@pytest.mark.parametrize("data,key", [
    ({"num_requests": 0, "prompt_len": 1, "output_len": 1}, "num_requests"),
    ({"prompt_len": 1, "output_len": 1, "arrivals": {}}, "arrivals"),
    ({"prompt_len": {"dist": "uniform", "low": 5}, "output_len": 1}, "prompt_len"),
    ({"prompt_len": 1, "output_len": 1, "arrival": {"process": "poisson"}}, "arrival"),
    ({"prompt_len": 1}, None),
    ({"preset": "nope"}, "preset"),
])
def test_bad_workloads_raise_reader_errors_naming_the_key(data, key):
    with pytest.raises(ReaderError) as err:
        load_workload(data)
    if key:
        assert err.value.key.startswith(key)


@pytest.mark.parametrize("text,line,key", [
    ('{"arrival_time": 0, "prompt_len": 5, "output_len": 1}\n{"arrival_time": 1, "prompt_len": "x", "output_len": 1}\n',
     2, "prompt_len"),
    ('{"arrival_time": 0, "prompt_len": 5}\n', 1, "output_len"),
    ('not json\n', 1, None),
    ('{"arrival_time": 0, "prompt_len": 5, "output_len": 1, "colour": 3}\n', 1, "colour"),
])
def test_bad_trace_lines_are_reported_with_their_line(tmp_path, text, line, key):
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(ReaderError) as err:
        read_trace(str(path))
    assert err.value.line == line and err.value.key == key


def test_missing_files_are_reader_errors(tmp_path):
    with pytest.raises(ReaderError):
        load_workload(str(tmp_path / "none.yaml"))
    with pytest.raises(ReaderError):
        read_trace(str(tmp_path / "none.jsonl"))
