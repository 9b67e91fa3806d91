"""`vllm-reader step-time`: batch parsing, output, and bad input as a one-line error naming the item."""
from __future__ import annotations

import json

import pytest

from reader.cli import main
from reader.commands.step_time import parse_batch, run
from reader.errors import ReaderError


def test_parse_batch_builds_the_step():
    b = parse_batch("prefill:2048@0, decode:3@100")
    assert list(b.new_tokens) == [2048, 1, 1, 1] and list(b.past_tokens) == [0, 100, 100, 100] and b.sampled == 4


@pytest.mark.parametrize("bad", ["prefill:2048", "decode:x@1", "chunk:5@0", "decode:0@5", ""])
def test_bad_batch_items_are_named(bad):
    with pytest.raises(ReaderError) as err:
        parse_batch(bad)
    assert err.value.key == "--batch"
    if bad:
        assert bad.split(",")[0] in err.value.message


def test_json_output_splits_the_step():
    out = json.loads(run("meta-llama/Llama-3.1-8B", "H200", "prefill:2048@0,decode:64@2048", fmt="json"))
    s = out["seconds"]
    print(f"\n{json.dumps(s, indent=1)}")
    assert s["total"] == pytest.approx(sum(v for k, v in s.items() if k != "total"))
    assert {"linear", "attention", "lm_head", "overhead", "allreduce", "moe"} <= set(s)


def test_cli_exit_codes(capsys):
    with pytest.raises(SystemExit) as ok:
        main(["step-time", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H200", "--batch", "decode:8@512"])
    assert ok.value.code in (0, None)
    assert "total" in capsys.readouterr().out
    with pytest.raises(SystemExit) as bad:
        main(["step-time", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "H200", "--batch", "decode:8"])
    assert bad.value.code == 2
    err = capsys.readouterr().err
    assert "decode:8" in err and "Traceback" not in err
