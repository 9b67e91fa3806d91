"""A config vLLM would refuse gets the same finding from every command that reads a config: `check`, `capacity`,
`simulate` and `sweep` print check's findings and exit 1, `diagnose` gives the "vLLM would not start" verdict
with them and exits 1; none of them stops with its own bad-input error (exit 2) first, even where its model
could not take the value (a KV-cache dtype the capacity model does not know)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))
from _rules_helpers import run_cli  # noqa: E402  (the CLI in-process: exit code, stdout, stderr)

REFUSED = [
    # (file text, release, the rule every command must report)
    ("model: meta-llama/Llama-3.1-8B-Instruct\nkv-cache-dtype: bogus\n", "0.33.0", "VR410"),
    ("model: meta-llama/Llama-3.1-8B-Instruct\nmax-num-seqs: 0\n", "0.32.0", "VR116"),
    ("model: meta-llama/Llama-3.1-8B-Instruct\ntensor-parallel-size: 3\n", "0.32.0", "VR501"),
    ("model: meta-llama/Llama-3.1-8B-Instruct\nspeculative-config: {\"model\": 3, \"num_speculative_tokens\": 2}\n",
     "0.32.0", "VR119"),
    ("model: meta-llama/Llama-3.1-8B-Instruct\nspeculative-config: {\"method\": \"ngram\"}\n", "0.18.0", "VR328"),
]
COMMANDS = [["check"], ["capacity"], ["simulate", "--workload", "{num_requests: 20}"],
            ["sweep", "--param", "max_num_seqs=8,16", "--workload", "{num_requests: 20}"],
            ["diagnose", "--no-whatifs", "--workload", "{num_requests: 20}"]]


@pytest.mark.parametrize("text, version, rule", REFUSED, ids=[r[2] for r in REFUSED])
@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_gives_checks_finding(tmp_path, text, version, rule, command):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    code, out, err = run_cli([command[0], str(path), "--vllm-version", version, "--gpu", "H100", *command[1:]])
    assert code == 1, (code, err)
    assert rule in out, out[-2000:]
    assert "Traceback" not in out + err and "internal error" not in out + err
    if command[0] == "diagnose":
        assert "would not start" in out
