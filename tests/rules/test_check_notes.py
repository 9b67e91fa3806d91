"""`check` shows the notes on how a config was read that `diagnose` shows: the release assumed, the other
launches in a file, an option prefix read as the full name, a deprecated form the release still accepts.

They are not findings (nothing fails on them), but a reviewer of a CI gate needs them: `-v` lists them, the
plain text says how many there are, JSON has them per config, SARIF as tool notifications of level note.
"""
from __future__ import annotations

import json
import os

import jsonschema

from _rules_helpers import FINDINGS_SCHEMA, SARIF_SCHEMA, run_cli, write

MAKEFILE = ("serve-a:\n\tvllm serve meta-llama/Llama-3.1-8B --max-num-seq 64 --max-model-len 8192\n\n"
            "serve-b:\n\tvllm serve Qwen/Qwen3-8B --max-model-len 4096\n")
KV_FORM = "vllm serve meta-llama/Llama-3.1-8B --limit-mm-per-prompt image=2 --max-model-len 8192\n"


def check(args: list[str]) -> tuple[int, str]:
    code, out, err = run_cli(["check", *args, "--gpu", "H100-SXM"])
    assert code == 0, err
    return code, out


def test_verbose_text_lists_the_reading_notes_with_their_lines(tmp_path):
    makefile = write(tmp_path, "Makefile", MAKEFILE)
    _, out = check([makefile, "-v"])
    assert f"{makefile}: note: the file holds 2 vLLM launches; reading #1 (target 'serve-a', line 2)" in out
    assert f"{makefile}: note: vLLM version not given: using " in out and "the newest version" in out
    assert f"{makefile}:2: note: '--max-num-seq' is read as --max-num-seqs" in out


def test_the_deprecated_key_value_form_is_a_note_where_the_release_still_reads_it(tmp_path):
    config = write(tmp_path, "serve.sh", KV_FORM)
    _, out = check([config, "-v", "--vllm-version", "0.9.2"])
    assert (f"{config}:1: note: 'image=2' is read as {{\"image\": 2}}: vLLM 0.9.2 still accepts the deprecated "
            "KEY=VALUE form, which vLLM 0.10.0 removed") in out
    assert "newest version" not in out  # the release was given


def test_plain_text_says_how_many_notes_verbose_would_show(tmp_path):
    _, out = check([write(tmp_path, "Makefile", MAKEFILE)])
    assert "note:" not in out and out.rstrip().endswith("passed (3 reading notes: -v)")


def test_json_has_the_notes_per_config_and_validates(tmp_path):
    makefile = write(tmp_path, "Makefile", MAKEFILE)
    _, out = check([makefile, "--format", "json"])
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8")))
    notes = doc["configs"][0]["notes"]
    assert [n["line"] for n in notes] == [None, None, 2]
    assert notes[2] == {"message": "'--max-num-seq' is read as --max-num-seqs: vLLM's argument parser accepts an "
                        "unambiguous prefix of an option name.", "file": makefile, "line": 2, "key": "--max-num-seq"}
    assert doc["findings"] == [] or all("note" not in f["rule_id"] for f in doc["findings"])


def test_sarif_has_the_notes_as_tool_notifications_of_level_note(tmp_path):
    write(tmp_path, "Makefile", MAKEFILE)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        _, out = check(["Makefile", "--format", "sarif"])
    finally:
        os.chdir(old)
    doc = json.loads(out)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(doc)
    notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["note"] * 3
    prefix = notes[2]
    assert "'--max-num-seq' is read as --max-num-seqs" in prefix["message"]["text"]
    assert prefix["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": "Makefile", "uriBaseId": "%SRCROOT%"},
                                                          "region": {"startLine": 2}}
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_notes_a_rule_already_reports_are_not_repeated(tmp_path):
    # VR905 reports the inferred model as a warning; the resolver's note saying the same is not a second line.
    config = write(tmp_path, "serve.sh", "vllm serve /models/Qwen3-8B\n")
    code, out, _ = run_cli(["check", config, "-v", "--vllm-version", "0.18.0", "--gpu", "H100-SXM"])
    assert "VR905" in out and "note: the model path" not in out and "note: model looked up" not in out
