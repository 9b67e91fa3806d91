"""`check` says loudly when it could not find the model, what it inferred, and what it assumed."""
from __future__ import annotations

import shutil
from pathlib import Path

from _rules_helpers import fired, run_cli
from reader.rules_engine.run import CheckOptions, check_files

TINY = Path(__file__).resolve().parents[2] / "fixtures" / "live" / "tiny-llama"  # 4 attention heads


def _config(tmp_path: Path, line: str) -> str:
    path = tmp_path / "serve.sh"
    path.write_text(line + "\n")
    return str(path)


def test_an_unresolved_model_is_a_warning_naming_it_and_the_rules_that_could_not_run(tmp_path):
    config = _config(tmp_path, "vllm serve /models/my-private-finetune --tensor-parallel-size 3")
    report = check_files([config], CheckOptions(vllm_version="0.18.0"))
    finding = next(f for f in report.findings if f.rule_id == "VR904")
    assert finding.severity == "warning"
    assert "'/models/my-private-finetune'" in finding.message
    assert "VR501 (heads-not-divisible-by-tp)" in finding.message  # the head check needs the model
    assert {s.rule_id for s in report.skipped} >= {"VR501"}
    assert report.summary.exit_code == 0
    assert check_files([config], CheckOptions(vllm_version="0.18.0", fail_on="warning")).summary.exit_code == 1


def test_naming_the_model_lets_the_skipped_rules_run(tmp_path):
    folder = tmp_path / "my-private-finetune"
    shutil.copytree(TINY, folder)
    config = _config(tmp_path, "vllm serve /models/my-private-finetune --tensor-parallel-size 3")
    report = check_files([config], CheckOptions(vllm_version="0.18.0", model=str(folder)))
    assert "VR904" not in fired(report) and "VR501" in fired(report, "error")


def test_a_local_model_folder_needs_no_model_option(tmp_path):
    folder = tmp_path / "my-private-finetune"
    shutil.copytree(TINY, folder)
    report = check_files([_config(tmp_path, f"vllm serve {folder} --tensor-parallel-size 3")],
                         CheckOptions(vllm_version="0.18.0"))
    assert "VR904" not in fired(report) and "VR501" in fired(report, "error")


def test_a_model_inferred_from_a_container_path_is_a_warning_with_the_override(tmp_path):
    report = check_files([_config(tmp_path, "vllm serve /models/Qwen3-8B")], CheckOptions(vllm_version="0.18.0"))
    finding = next(f for f in report.findings if f.rule_id == "VR905")
    assert finding.severity == "warning" and "Qwen/Qwen3-8B" in finding.message and "--model" in finding.fix
    assert finding.locations[0].line == 1


def test_a_model_option_that_resolves_nowhere_is_bad_input(tmp_path):
    code, _, err = run_cli(["check", _config(tmp_path, "vllm serve /models/x"), "--model", "acme/no-such-model"])
    assert code == 2 and "--model acme/no-such-model" in err and "Traceback" not in err


def test_the_report_says_where_the_model_shape_came_from(tmp_path):
    report = check_files([_config(tmp_path, "vllm serve /models/Qwen3-8B")], CheckOptions(vllm_version="0.18.0"))
    result = report.configs[0]
    assert result.model == "/models/Qwen3-8B"  # as written; the id it was read as is on the source line
    assert result.model_source.startswith("model shape from: shipped catalog (reader/catalog/models/Qwen/Qwen3-8B/")
    assert "id Qwen/Qwen3-8B inferred from the folder name 'Qwen3-8B'" in result.model_source
    code, out, _ = run_cli(["check", _config(tmp_path, "vllm serve /models/Qwen3-8B"), "-v"])
    assert "model /models/Qwen3-8B; model shape from: shipped catalog" in out


def test_an_alias_is_reported_as_written_with_the_shape_it_reads_beside_it(tmp_path):
    # The catalog reads the Instruct model with the base model's config.json; check names the id the user wrote.
    config = _config(tmp_path, "vllm serve meta-llama/Llama-3.1-8B-Instruct")
    result = check_files([config], CheckOptions(vllm_version="0.18.0")).configs[0]
    assert result.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert "reader/catalog/models/meta-llama/Llama-3.1-8B/config.json" in result.model_source
    code, out, _ = run_cli(["check", config, "-v"])
    assert ("model meta-llama/Llama-3.1-8B-Instruct; model shape from: shipped catalog "
            "(reader/catalog/models/meta-llama/Llama-3.1-8B/config.json)") in out
