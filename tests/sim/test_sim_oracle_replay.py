"""Every oracle scenario replays with exactly the decisions vLLM's real scheduler made.

golden/ holds traces of vLLM 0.32.0's scheduler, golden-0.18/ of vLLM 0.18.0's (see
fixtures/oracle/README.md, VERSIONS.md and GENERATED.md). Each step is compared field by field:
scheduled tokens per request and their order, new / resumed / preempted / finished, prefix hits,
free blocks, running and waiting order. Both ways of running phase A (the numpy fast path and
the one-request-at-a-time walk) must reproduce them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from reader.sim.oracle_format import first_difference, load_scenario, replay

ORACLE = Path(__file__).resolve().parents[2] / "fixtures" / "oracle"
CASES = [(d, v, p.name[: -len(".jsonl")]) for d, v in (("golden", "0.32.0"), ("golden-0.18", "0.18.0"))
         for p in sorted((ORACLE / d).glob("*.jsonl"))]
REQUEST_FIELDS = ("first_scheduled_step", "first_token_step", "finish_step", "finish_reason", "num_output_tokens",
                  "num_preemptions", "prefix_hit_tokens", "resume_hit_tokens", "total_scheduled_tokens")


def test_the_oracle_fixtures_are_all_there():
    assert len([c for c in CASES if c[0] == "golden"]) >= 20
    assert len([c for c in CASES if c[0] == "golden-0.18"]) >= 9


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "exact"])
@pytest.mark.parametrize("folder,version,name", CASES, ids=[f"{v}-{n}" for _, v, n in CASES])
def test_replay_matches_the_real_scheduler_step_by_step(folder, version, name, fast_path):
    sc = load_scenario(str(ORACLE / "scenarios" / f"{name}.yaml"))
    lines, summary = replay(sc, version, fast_path=fast_path)
    text = (ORACLE / folder / f"{name}.jsonl").read_text()
    expected = [json.loads(line) for line in text.splitlines()]
    actual = [json.loads(line) for line in lines]
    diff = first_difference(expected, actual)
    assert diff is None, f"{folder}/{name}: {diff}"
    assert "".join(line + "\n" for line in lines) == text, "same fields, but not byte for byte (key order)"

    golden = json.loads((ORACLE / folder / f"{name}.summary.json").read_text())
    assert summary["num_steps"] == golden["num_steps"]
    assert summary["unfinished"] == golden["unfinished"]
    for rid, want in golden["requests"].items():
        got = summary["requests"][rid]
        for key in REQUEST_FIELDS:
            assert got[key] == want[key], f"{name} request {rid} field {key}"


def test_first_difference_names_the_step_and_field():
    a = [{"step": 0, "x": 1}, {"step": 1, "x": 2, "y": 3}]
    b = [{"step": 0, "x": 1}, {"step": 1, "x": 2, "y": 4}]
    assert first_difference(a, b) == "step 1, field 'y': expected 3, got 4"
    assert first_difference(a, a[:1]) == "trace length: expected 2 steps, got 1"
    assert first_difference(a, a) is None


def test_the_cli_writes_the_oracle_trace_byte_for_byte(tmp_path, capsys):
    from reader.cli import main

    out = tmp_path / "t.jsonl"
    summ = tmp_path / "s.json"
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(ORACLE / "scenarios" / "07_kv_preemption.yaml"), "--trace", str(out),
              "--summary", str(summ), "--vllm-version", "0.32.0"])
    assert exc.value.code in (0, None)
    assert out.read_bytes() == (ORACLE / "golden" / "07_kv_preemption.jsonl").read_bytes()
    assert json.loads(summ.read_text())["num_steps"] == 382


def test_the_cli_defaults_to_the_newest_version_with_a_note(capsys):
    from reader.cli import main

    with pytest.raises(SystemExit):
        main(["replay", str(ORACLE / "scenarios" / "01_pure_decode.yaml")])
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 113
    assert "0.33.0" in captured.err and "checked against the real scheduler only at" in captured.err


@pytest.mark.parametrize("text,key", [
    ("requests: 3\n", "requests"),
    ("scheduler: {max_num_seqz: 4}\nrequests: [{id: a, arrival_step: 0, prompt_len: 5, max_tokens: 1}]\n",
     "scheduler.max_num_seqz"),
    ("requests: [{id: a, arrival_step: -1, prompt_len: 5, max_tokens: 1}]\n", "requests[0].arrival_step"),
    ("requests: [{id: a, arrival_step: 0, max_tokens: 1}]\n", "requests[0]"),
    ("scheduler: {max_num_seqs: zero}\nrequests: [{id: a, arrival_step: 0, prompt_len: 5, max_tokens: 1}]\n",
     "max_num_seqs"),
])
def test_bad_scenarios_are_reported_with_the_key(tmp_path, capsys, text, key):
    from reader.cli import main

    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"key '{key}'" in err and "Traceback" not in err
