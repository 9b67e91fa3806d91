"""`vllm-reader check`: the exit-code contract (0 passed, 1 findings at or above --fail-on, 2 bad input),
several configs (the highest code wins), the output formats, and no traceback for bad input."""
from __future__ import annotations

import pytest

from _rules_helpers import CORPUS, run_cli, write

CLEAN = "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 64\n"
ERROR = "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 512 --max-num-batched-tokens 256\n"  # VR202 error
WARNING = "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 1 --max-model-len 1024 --max-num-batched-tokens 8192\n"


@pytest.fixture()
def files(tmp_path):
    return {name: write(tmp_path, f"{name}.sh", text)
            for name, text in (("clean", CLEAN), ("error", ERROR), ("warning", WARNING))}


@pytest.mark.parametrize("name, fail_on, code", [
    ("clean", "error", 0), ("clean", "warning", 0), ("clean", "never", 0),
    ("error", "error", 1), ("error", "warning", 1), ("error", "never", 0),
    ("warning", "error", 0), ("warning", "warning", 1), ("warning", "never", 0),
])
def test_exit_codes_follow_fail_on(files, name, fail_on, code):
    got, out, err = run_cli(["check", files[name], "--vllm-version", "0.18.0", "--gpu", "H100-SXM",
                             "--fail-on", fail_on])
    assert got == code, out + err


def test_default_fail_on_is_error(files):
    assert run_cli(["check", files["error"], "--vllm-version", "0.18.0"])[0] == 1
    assert run_cli(["check", files["warning"], "--vllm-version", "0.18.0"])[0] == 0


@pytest.mark.parametrize("args, words", [
    (["check", "no-such-file.yaml"], "no such file"),
    (["check", "{bad}", "--format", "xml"], "--format must be one of"),
    (["check", "{clean}", "--fail-on", "sometimes"], "--fail-on must be one of"),
    (["check", "{clean}", "--vllm-version", "banana"], "is not a vLLM version"),
    (["check", "{clean}", "--ignore", "VR9999"], "--ignore VR9999: no such rule"),
    (["check", "{clean}", "--gpu", "NoSuchGPU"], "NoSuchGPU"),
    (["check", "{bad}"], "bad.yaml"),
])
def test_bad_input_exits_2_without_traceback(files, tmp_path, args, words):
    bad = write(tmp_path, "bad.yaml", "model: [unclosed\n")
    args = [a.replace("{clean}", files["clean"]).replace("{bad}", bad) for a in args]
    code, out, err = run_cli(args)
    assert code == 2, out + err
    assert words in err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("version, words", [("0.4.1", "older than the oldest release"),
                                            ("0.40.0", "newer than the newest release")])
def test_a_version_outside_the_tables_is_read_with_the_nearest_release_and_warned(files, version, words):
    assert run_cli(["check", files["clean"], "--vllm-version", version])[0] == 0
    code, out, err = run_cli(["check", files["clean"], "--vllm-version", version, "--fail-on", "warning"])
    assert code == 1 and words in out, out + err


def test_usage_errors_exit_2():
    assert run_cli(["check"])[0] == 2  # no config
    assert run_cli(["check", "x.sh", "--no-such-option"])[0] == 2


def test_several_configs_exit_with_the_highest_code(files, tmp_path):
    assert run_cli(["check", files["clean"], files["warning"], "--vllm-version", "0.18.0"])[0] == 0
    assert run_cli(["check", files["clean"], files["error"], "--vllm-version", "0.18.0"])[0] == 1
    code, out, err = run_cli(["check", files["error"], str(tmp_path / "missing.sh"), files["clean"],
                              "--vllm-version", "0.18.0"])
    assert code == 2
    assert "VR202" in out  # the readable configs are still checked and reported
    assert "missing.sh" in err


def test_text_output_is_one_line_per_finding(files):
    code, out, _ = run_cli(["check", files["error"], "--vllm-version", "0.18.0"])
    lines = out.splitlines()
    assert lines[0].startswith(f"{files['error']}:1: VR202 error max_num_batched_tokens (256) is smaller than "
                               "max_num_seqs (512)")
    assert "[fix: " in lines[0]
    assert lines[-1].startswith("1 error, 0 warnings") and "failed (--fail-on error)" in lines[-1]


def test_info_findings_show_with_verbose(files):
    _, out, _ = run_cli(["check", files["clean"], "--vllm-version", "0.18.0"])
    assert "VR902" not in out and "(info findings: -v)" in out
    _, out, _ = run_cli(["check", files["clean"], "--vllm-version", "0.18.0", "-v"])
    assert "VR902 info GPU not given" in out
    assert "rules evaluated" in out


def test_verbose_lists_rules_skipped_for_lack_of_facts(tmp_path):
    path = write(tmp_path, "serve.sh", "vllm serve /models/private --tensor-parallel-size 3\n")
    code, out, _ = run_cli(["check", path, "--vllm-version", "0.18.0", "-v"])
    assert code == 0  # the head count is unknown: no error, but the skip is reported
    assert "skipped VR501 (heads-not-divisible-by-tp): missing model.num_attention_heads" in out


def test_ignore_and_rule_options(files):
    assert run_cli(["check", files["error"], "--vllm-version", "0.18.0", "--ignore", "VR202"])[0] == 0
    assert run_cli(["check", files["error"], "--vllm-version", "0.18.0", "--ignore",
                    "batched-tokens-below-max-num-seqs"])[0] == 0
    code, out, _ = run_cli(["check", files["error"], "--vllm-version", "0.18.0", "--rule", "VR201", "-v"])
    assert code == 0 and "VR202" not in out


def test_markdown_and_output_file(files, tmp_path):
    target = tmp_path / "report.md"
    code, out, _ = run_cli(["check", files["error"], "--vllm-version", "0.18.0", "--format", "markdown",
                            "-o", str(target)])
    assert code == 1 and out == ""
    text = target.read_text()
    assert text.startswith("# vllm-reader check") and "| error | VR202" in text
    assert "vLLM's own messages:" in text


def test_corpus_config_by_its_image_tag():
    code, out, _ = run_cli(["check", str(CORPUS / "docker_dockerapps_deepseek-v3_no_tp.ps1")])
    assert code == 0
    assert "(vLLM 0.6.6)" in out.splitlines()[-1]  # vllm/vllm-openai:v0.6.6.post1


def test_module_entry_point_runs_in_a_fresh_process(files):
    import subprocess
    import sys

    from _rules_helpers import REPO

    proc = subprocess.run([sys.executable, "-m", "reader", "check", files["error"], "--vllm-version", "0.18.0"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "VR202" in proc.stdout
