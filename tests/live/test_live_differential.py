"""`check` against the real vLLM (CPU build), live: the recorded verdicts in fixtures/differential/ must still be
what vLLM says, and on fresh random configs `check` must agree with vLLM on at least 99.5% of those outside the
CPU-only refusals listed in rules/differential/known-disagreements.yaml, with no unlisted disagreement.
One driver process per release answers all configs (tools/differential/driver.py); about a minute per release."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

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
