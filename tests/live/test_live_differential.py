"""`check` against the real vLLM (CPU build), live: the recorded verdicts in fixtures/differential/ must still be
what vLLM says, and on fresh random configs `check` must agree with vLLM on at least 99.5% of those outside the
CPU-only refusals listed in rules/differential/known-disagreements.yaml, with no unlisted disagreement.
One driver process per release answers all configs (tools/differential/driver.py); a few minutes per release.
The memory-bound configs are judged by the driver's kv-cache stage, itself checked against a real engine start."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from differential.configs import generate  # noqa: E402
from differential.harness import compare, describe, options_for, vllm_verdicts  # noqa: E402

FRESH = 200
SEEDS = {"0.32.0": 1032, "0.18.0": 1018}


def _recorded(version: str):
    path = ROOT / "fixtures" / "differential" / f"vllm-{version}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
    return [r["config"] for r in rows], {r["config"]["id"]: r["vllm"] for r in rows}


@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_check_agrees_with_the_real_vllm(version, request):
    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    recorded, then = _recorded(version)
    fresh = generate(FRESH, SEEDS[version], options_for(version), version)
    now = vllm_verdicts(venv, recorded + fresh)
    changed = [c["id"] for c in recorded if now[c["id"]]["verdict"] != then[c["id"]]["verdict"]]
    assert not changed, f"vLLM {version} no longer says what fixtures/differential recorded for {changed[:10]}: re-record"
    result = compare(fresh, now, version)
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    unexplained = [describe(r) for r in result["rows"] if not r["known"]]
    assert not unexplained, "new disagreements with vLLM:\n" + "\n".join(unexplained)
    assert result["agreement_outside_known"] >= 0.995
    # memory-bound configs were drawn and vLLM refused some and started others
    assert 0 < result["memory"]["refused_by_vllm"] < result["memory"]["configs"]


@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_the_drivers_kv_cache_stage_says_what_the_real_engine_said(version, request):
    """The driver's memory stage (vLLM's own check_enough_kv_cache_memory with the CPU worker's KV space and a
    full-attention spec built from the engine config, no weights) against a real engine start of the CPU build
    recorded in fixtures/logs/live/vllm-<version>-cpu-refused-kv-memory.log: wide-llama, max_model_len 32768,
    VLLM_CPU_KVCACHE_SPACE=1. Same refusal, same figures (0.32.0 holds the null block back: 0.99 GiB, 16,256)."""
    import re
    import subprocess

    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    log = (ROOT / "fixtures" / "logs" / "live" / f"vllm-{version}-cpu-refused-kv-memory.log").read_text()
    engine = re.search(r"ValueError: (To serve at least one request.*?estimated maximum model length is \d+)", log)
    item = {"id": "wide", "model": str(ROOT / "fixtures" / "live" / "wide-llama"),
            "argv": ["--dtype", "bfloat16", "--max-model-len", "32768", "--enforce-eager", "--load-format", "dummy",
                     "--max-num-batched-tokens", "256"], "env": {"VLLM_CPU_KVCACHE_SPACE": "1"}}
    proc = subprocess.run([str(venv / "bin" / "python"), str(ROOT / "tools" / "differential" / "driver.py"),
                           str(ROOT / "fixtures" / "live" / "tiny-llama")], input=json.dumps(item) + "\n",
                          capture_output=True, text=True, timeout=600, cwd=str(ROOT))
    said = json.loads(proc.stdout.splitlines()[-1])
    assert said["verdict"] == "refused" and said["stage"] == "kv-cache", said
    assert said["message"].startswith(engine.group(1)), (said["message"], engine.group(1))


@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_the_corpus_verdicts_are_still_what_vllm_says(version, request):
    """Every asked config of fixtures/corpus/ re-asked (tools/differential/corpus.py): vLLM's verdicts must be those
    recorded in fixtures/differential/corpus-vllm-<version>.jsonl, which the default suite compares with `check`."""
    from differential.corpus import corpus_files, fixture_path
    from differential.corpus import vllm_item, vllm_verdicts as corpus_verdicts

    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    lines = [json.loads(line) for line in fixture_path(version).read_text().splitlines() if line.strip()]
    then = {r["file"]: r["vllm"]["verdict"] for r in lines[1:]}
    items = {p.name: vllm_item(p) for p in corpus_files()}
    now = corpus_verdicts(venv, items)
    # a file `check` now reads as bad input is not asked again; vLLM's recorded refusal of it stays the fixture's
    bad_input = {n for n, item in items.items() if item.get("skip", "").startswith("no launch")}
    changed = sorted(n for n in then if n in now and now[n]["verdict"] != then[n])
    assert set(now) | (bad_input & set(then)) == set(then) and not changed, f"re-record the corpus at {version}: {changed}"
