"""Reports: a config cannot inject Markdown or HTML; JSON follows its shipped schema; SARIF is valid 2.1.0."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.report import SCHEMA_VERSION
from reader.diagnose.run import diagnose
from reader.diagnose.whatif import WhatIf
from reader.render.json_schemas import documents
from reader.render.markdown import code, md
from reader.render.report import render_diagnosis, verdict_paragraph

ROOT = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = json.loads((ROOT / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())

HOSTILE = "[click](http://evil.example) <script>alert(1)</script> `x` | *bold* ![img](http://x/y.png)"


@pytest.mark.parametrize("text", [HOSTILE, "a|b", "```", "<img src=x onerror=alert(1)>"])
def test_config_text_cannot_open_markup(text):
    escaped = md(text)
    assert "<script" not in escaped and "<img" not in escaped
    assert "](" not in escaped.replace("\\]", "")  # no live link syntax
    assert "|" not in escaped.replace("\\|", "")  # no table cell breaks
    span = code(text)
    assert "|" not in span and "\n" not in span


@pytest.fixture(scope="module")
def small_diagnosis(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "config.sh"
    # a hostile served-model-name and a hostile placeholder note travel into the report
    path.write_text("# vllm-reader:\n#   vllm_version: 0.18.0\n#   gpu: H100-SXM\n"
                    "#   workload: {prompt_len: 200, output_len: 40, num_requests: 60,"
                    " arrival: {process: poisson, rate: 4.0}}\n"
                    f"vllm serve meta-llama/Llama-3.1-8B-Instruct --served-model-name '{HOSTILE}' "
                    "--max-model-len 4096 --max-num-seqs 8 --max-num-batched-tokens ${BUDGET}\n")
    resolved = resolve(load_deployment(str(path), LoadOptions(set={"BUDGET": "2048"})))
    return diagnose(resolved, slos_ms={"ttft": 500.0, "itl": 30.0}, workers=1)


def test_markdown_report_escapes_everything_from_the_config(small_diagnosis):
    text = render_diagnosis(small_diagnosis, "markdown")
    assert "<script>" not in text and "](http://evil" not in text
    assert text.startswith("# vllm-reader diagnosis: ")
    assert "**Verdict:" in text and "## Evidence" in text and "## Recommendations" in text
    assert "## Assumptions" in text


def test_json_report_validates_against_the_shipped_schema(small_diagnosis):
    doc = json.loads(render_diagnosis(small_diagnosis, "json"))
    schema = json.loads((ROOT / "reader" / "render" / "schemas" / "diagnosis.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["schema_version"] == SCHEMA_VERSION


def test_shipped_schemas_are_current():
    for path, text in documents().items():
        assert path.read_text() == text, f"{path.name} is stale: python -m reader.render.json_schemas"


def test_sarif_report_is_valid_sarif_2_1_0(small_diagnosis):
    doc = json.loads(render_diagnosis(small_diagnosis, "sarif"))
    jsonschema.validate(doc, SARIF_SCHEMA)
    rules = {r["ruleId"] for r in doc["runs"][0]["results"]}
    assert "DX300" in rules  # the verdict is a result


def test_unknown_format_is_bad_input(small_diagnosis):
    from reader.errors import ReaderError
    with pytest.raises(ReaderError):
        render_diagnosis(small_diagnosis, "html")


def _without_slos(d, itl_factor: float, ttft_factor: float):
    """The diagnosis as if no SLO was given, prefill steps were the limit, and its one what-if moved the two
    tails by these factors."""
    base = d.baseline
    moved = base.model_copy(update={"itl_p99_ms": base.itl_p99_ms * itl_factor,
                                    "ttft_p99_ms": base.ttft_p99_ms * ttft_factor})
    whatif = WhatIf(changes={"max_num_batched_tokens": 512}, reason="smaller steps", addresses="budget",
                    status="simulated", metrics=moved)
    verdict = d.verdict.model_copy(update={"limit": "budget_large", "slo": []})
    return d.model_copy(update={"slos_ms": {}, "whatifs": [whatif], "verdict": verdict})


def test_without_slos_a_latency_trade_is_named_with_the_option_that_decides_it(small_diagnosis):
    text = verdict_paragraph(_without_slos(small_diagnosis, itl_factor=0.5, ttft_factor=1.5))
    assert "None of the simulated changes" not in text
    assert "1 lowers ITL P99 at a cost elsewhere" in text and "`max_num_batched_tokens=512`" in text
    assert "`--slo-itl-p99`" in text


def test_without_slos_a_change_within_noise_is_no_trade(small_diagnosis):
    text = verdict_paragraph(_without_slos(small_diagnosis, itl_factor=0.97, ttft_factor=1.5))
    assert "None of the simulated changes improved on the configuration as it is." in text
