"""`check`, the CI gate, stops what stops vLLM at start-up (issue 22): memory that does not fit, the spelling
the user wrote, a broken YAML named as one. A launch that would start is never blocked: near the memory
limit the gate warns and states the margin."""
from __future__ import annotations

from pathlib import Path

import pytest

from _rules_helpers import check_text, fired, run_cli, write

LLAMA_8B = "model: meta-llama/Llama-3.1-8B-Instruct\n"


def test_llama_8b_at_its_default_context_on_one_l4_would_not_start(tmp_path):
    # vLLM: "To serve at least one request with the model's max seq len (131072), 16.00 GiB KV cache is needed"
    report = check_text(tmp_path, LLAMA_8B, name="serve.yaml", gpu="L4")
    assert report.summary.exit_code == 1
    finding = next(f for f in report.findings if f.rule_id == "VR417")
    assert finding.severity == "error"
    assert "131072" in finding.message and "16 GiB" in finding.message and "would not start" in finding.message
    assert "estimated maximum model length is" in finding.message  # vLLM's own sentence
    assert "--max-model-len to at most" in finding.fix


def test_check_diagnose_and_capacity_agree_on_the_memory_refusal(tmp_path):
    path = write(tmp_path, "serve.yaml", LLAMA_8B)
    codes = [run_cli([cmd, path, "--gpu", "L4"])[0] for cmd in ("check", "capacity")]
    assert codes == [1, 1]


def test_the_same_model_on_an_h100_passes(tmp_path):
    report = check_text(tmp_path, LLAMA_8B, name="serve.yaml", gpu="H100")
    assert not {"VR417", "VR418", "VR419"} & fired(report)
    assert report.summary.exit_code == 0


def test_weights_that_do_not_fit_the_gpu_at_all_are_an_error(tmp_path):
    report = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-70B-Instruct\n", gpu="L4")
    finding = next(f for f in report.findings if f.rule_id == "VR418")
    assert finding.severity == "error" and report.summary.exit_code == 1
    assert "nothing is left for the KV cache" in finding.message


def test_near_the_limit_is_a_warning_that_states_the_margin(tmp_path):
    # the capacity model estimates 25,408 tokens fit on an L4; vLLM 0.32.0 measured 30,224 (the log):
    # a length between them must not be blocked
    report = check_text(tmp_path, LLAMA_8B + "max-model-len: 29000\n", name="serve.yaml", gpu="L4")
    assert fired(report, "error") == set()
    finding = next(f for f in report.findings if f.rule_id == "VR419")
    assert finding.severity == "warning" and "margin -0.44 GiB" in finding.message
    assert report.summary.exit_code == 0


def test_a_kv_cache_size_given_in_bytes_is_exact_so_a_small_shortfall_is_an_error(tmp_path):
    text = LLAMA_8B + "max-model-len: 32768\nkv-cache-memory-bytes: 3G\n"  # 4 GiB needed, 3 GiB given
    report = check_text(tmp_path, text, name="serve.yaml", version="0.32.0", gpu="L4")
    finding = next(f for f in report.findings if f.rule_id == "VR417")
    assert "short by 1 GiB" in finding.message and "margin is 0 GiB" in finding.message


def test_an_assumed_gpu_never_fails_the_gate_on_memory(tmp_path):
    report = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-70B-Instruct\n")
    assert "VR420" in fired(report, "info")
    assert not {"VR417", "VR418", "VR419"} & fired(report)


def test_a_negated_flag_the_release_lacks_is_named_as_written(tmp_path):
    report = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --no-enable-chunked-prefill\n",
                        version="0.6.3", gpu="H100")
    finding = next(f for f in report.findings if f.rule_id == "VR101")
    assert "does not accept --no-enable-chunked-prefill" in finding.message


def test_a_yaml_with_a_stray_tab_is_a_yaml_error_on_its_line(tmp_path):
    text = LLAMA_8B + "max-model-len: 4096\n\tgpu-memory-utilization: 0.9\n"
    report = check_text(tmp_path, text, name="serve.yaml", gpu="H100")
    assert report.summary.exit_code == 2
    error = report.configs[0].error
    assert "malformed YAML" in error and ":3:" in error and "tab" in error
    assert "no vLLM launch found" not in error


def test_a_makefile_without_a_launch_is_still_called_one(tmp_path):
    report = check_text(tmp_path, "all:\n\techo hi\n", name="Makefile")
    assert "no vLLM launch found in this Makefile" in report.configs[0].error


def test_the_memory_verdict_keeps_check_light(tmp_path):
    # the gate starts on every commit: sizing memory must not pull in numpy (the simulator's and fits' library)
    import subprocess
    import sys

    path = write(tmp_path, "serve.yaml", LLAMA_8B)
    code = ("import sys; from reader.cli import main\n"
            f"try: main(['check', {path!r}, '--gpu', 'L4'])\n"
            "except SystemExit as done: print(done.code, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=str(Path(__file__).resolve().parents[2]))
    assert out.stdout.split()[-2:] == ["1", "False"], out.stdout + out.stderr


def test_a_request_that_exactly_fills_the_kv_memory_is_refused_where_vllm_holds_the_null_block_back(tmp_path):
    # 1 GiB of KV cache holds 8,192 tokens of Llama-3.1-8B (128 KiB a token in bf16). From 0.29.0 the start-up
    # check first takes one block of every layer (the null block) off the memory: vLLM 0.32.0's CPU build refuses
    # max_model_len 8192 ("estimated maximum model length is 8176"); 0.18.0 does not (fixtures/differential, the
    # memory-bound configs; vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory @ v0.32.0, moved to
    # kv_cache_planning.py @ v0.33.0 with the same reservation)
    model = str(Path(__file__).resolve().parents[2] / "fixtures" / "differential" / "models" / "llama-3.1-8b-shape"
                / "config.json")
    text = "vllm serve /models/llama --kv-cache-memory-bytes 1073741824 --max-model-len 8192 --block-size 16\n"
    verdicts = {v: fired(check_text(tmp_path, text, version=v, gpu="L4", model=model), "error")
                for v in ("0.18.0", "0.32.0", "0.33.0")}
    assert verdicts == {"0.18.0": set(), "0.32.0": {"VR417"}, "0.33.0": {"VR417"}}
    refused = check_text(tmp_path, text, version="0.32.0", gpu="L4", model=model)
    assert "estimated maximum model length is 8176" in next(f.message for f in refused.findings if f.rule_id == "VR417")


def test_a_kv_space_given_to_the_cpu_build_decides_without_a_gpu(tmp_path):
    # VLLM_CPU_KVCACHE_SPACE=4 is one 32768-token request of Llama-3.1-8B (128 KiB a token) with nothing to spare
    # for the null block: the real 0.32.0 CPU build refuses ("available KV cache memory (3.98 GiB) ... estimated
    # maximum model length is 32640", fixtures/differential/corpus-vllm-0.32.0.jsonl). No GPU figure enters the
    # verdict, so naming none must not soften it to VR420's information.
    text = "VLLM_CPU_KVCACHE_SPACE=4 vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768\n"
    report = check_text(tmp_path, text, version="0.32.0")
    assert fired(report, "error") == {"VR417"} and "VR420" not in fired(report)
    assert "estimated maximum model length is 32640" in next(f.message for f in report.findings
                                                              if f.rule_id == "VR417")
    assert not fired(check_text(tmp_path, text.replace("32768\n", "32640\n"), version="0.32.0"), "error")


def test_a_rope_scaling_in_hf_overrides_lengthens_the_model_only_where_vllm_lets_it(tmp_path):
    # the real CPU builds' verdicts on Qwen2.5-32B-Instruct (32768 positions) at --max-model-len 131072 with a
    # factor-4 override of each rope type (tools/differential/rope_overrides.py, fixtures/differential): 0.18.0
    # refuses both, 0.32.0 refuses YaRN (its factor is not applied) and accepts linear
    import json

    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "differential"
    for version in ("0.18.0", "0.32.0"):
        recorded = json.loads((fixtures / f"rope-overrides-vllm-{version}.json").read_text())
        for row in recorded["rows"]:
            override = json.dumps({"rope_scaling": {"rope_type": row["rope_type"], "factor": 4.0,
                                                    "original_max_position_embeddings": 32768}})
            text = (f"vllm serve Qwen/Qwen2.5-32B-Instruct --max-model-len {recorded['max_model_len']} "
                    f"--hf-overrides '{override}'\n")
            refused = "VR402" in fired(check_text(tmp_path, text, version=version, gpu="H100"), "error")
            assert refused == (row["verdict"] == "refused"), (version, row["rope_type"])


def test_a_release_whose_override_handling_was_not_read_is_not_refused(tmp_path):
    text = ("vllm serve Qwen/Qwen2.5-32B-Instruct --max-model-len 131072 --hf-overrides "
            "'{\"rope_scaling\": {\"factor\": 4, \"rope_type\": \"yarn\"}}'\n")
    assert "VR402" not in fired(check_text(tmp_path, text, version="0.17.0", gpu="H100"))


def test_the_original_qwen_would_not_start_after_the_last_release_that_served_it(tmp_path):
    """vLLM lists QWenLMHeadModel as served until v0.23.0 and refuses it from v0.24.0
    (registry.py _PREVIOUSLY_SUPPORTED_MODELS @ v0.32.0); 0.18.0 still builds it (qwen.py)."""
    launch = "vllm serve Qwen/Qwen-7B-Chat --trust-remote-code\n"
    refused = check_text(tmp_path, launch, version="0.32.0", gpu="H100")
    assert "VR611" in fired(refused, "error") and refused.summary.exit_code == 1
    for served in ("0.23.0", "0.18.0"):
        assert "VR611" not in fired(check_text(tmp_path, launch, version=served, gpu="H100"))


def test_a_longrope_model_with_no_length_given_starts_at_its_pre_scaling_length(tmp_path):
    """vLLM 0.18.0 and 0.32.0 run Phi-3.5-mini-instruct at 4,096 tokens when no --max-model-len is given
    (fixtures/differential/rope-lengths-vllm-*.json): on an L4 it starts; at its full 131,072 it would not."""
    for version in ("0.18.0", "0.32.0"):
        assert not fired(check_text(tmp_path, "vllm serve microsoft/Phi-3.5-mini-instruct\n", version=version,
                                    gpu="L4"), "error")
        full = check_text(tmp_path, "vllm serve microsoft/Phi-3.5-mini-instruct --max-model-len 131072\n",
                          version=version, gpu="L4")
        assert "VR417" in fired(full, "error")


def _says(ours: str, recorded: str) -> bool:
    """Whether vLLM's recorded sentence is the one a rule quotes: its <placeholders> and {sets} stand for any text,
    and the exception's class name (which the recorder drops) is optional."""
    import re

    parts = re.split(r"<[^>]*>|\{[^}]*\}", re.sub(r"^\w+Error: ", "", ours))
    return re.search(".*".join(re.escape(p) for p in parts), recorded) is not None


# the CPU build of 0.18.0 lacks the GPU kernel GPTQ packs its weights for: a refusal of the platform, not the launch
_CPU_ONLY = "object has no attribute 'gptq_shuffle'"


@pytest.mark.parametrize("version", ["0.18.0", "0.32.0"])
def test_a_gptq_checkpoint_whose_settings_sit_in_quantize_config_json_starts_only_where_vllm_started_it(
        tmp_path, version):
    """The real CPU builds, asked with GPTQ-packed weights in the tiny Llama's shape (tools/differential/quant_file.py,
    fixtures/differential/quant-file-vllm-<version>.json): without --quantization vLLM stopped loading the weights;
    with --quantization gptq it started at 0.32.0 in bfloat16 and float16, while 0.18.0's GPTQ kernel refused
    bfloat16; once quantize_config.json was gone it could not find the config file. `check` gives each the same
    verdict, with vLLM's own sentence."""
    import json
    import shutil

    root = Path(__file__).resolve().parents[2]
    folder = root / "fixtures" / "hf_configs" / "gptq-quantize-config"
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(folder / "config.json", bare)
    recorded = json.loads((root / "fixtures" / "differential" / f"quant-file-vllm-{version}.json").read_text())["rows"]
    assert [row["quantization"] for row in recorded] == ["none", "gptq", "gptq@float16", "gptq:no-file"]
    for row in recorded:
        case, _, dtype = row["quantization"].partition("@")
        method, _, variant = case.partition(":")
        flag = "" if method == "none" else f" --quantization {method}"
        launch = f"vllm serve {bare if variant else folder}{flag} --dtype {dtype or 'bfloat16'}\n"
        report = check_text(tmp_path, launch, version=version, gpu="H100")
        refusals = fired(report, "error") & {"VR421", "VR422", "VR414"}
        refused = row["verdict"] == "refused" and _CPU_ONLY not in row["message"]
        assert bool(refusals) == refused, row
        assert report.summary.exit_code == (1 if refusals else 0), row
        if refusals:
            (rule,) = refusals
            finding = next(f for f in report.findings if f.rule_id == rule)
            assert _says(finding.vllm_message, row["message"]), (finding.vllm_message, row["message"])


def test_the_dtype_a_quantization_method_refuses_is_a_verdict_only_where_the_method_and_dtype_are_certain(tmp_path):
    """VR414: 0.18.0's AWQ kernel takes float16 only. A checkpoint's own awq may run on the Marlin kernel instead,
    and a float32 checkpoint under --dtype auto ran in float16 on older releases, so neither is refused."""
    named = check_text(tmp_path, "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --quantization awq --dtype bfloat16\n",
                       version="0.18.0", gpu="H100")
    assert "VR414" in fired(named, "error")
    assert "Supported dtypes" in next(f for f in named.findings if f.rule_id == "VR414").vllm_message
    for launch, version in (("vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --dtype bfloat16", "0.18.0"),
                            ("vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --quantization awq", "0.18.0"),
                            ("vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --quantization awq --dtype bfloat16", "0.32.0")):
        assert "VR414" not in fired(check_text(tmp_path, launch + "\n", version=version, gpu="H100"), "error"), launch
    # gpt-oss's MXFP4 takes bfloat16 only, at every release that has it
    half = check_text(tmp_path, "vllm serve openai/gpt-oss-20b --dtype half\n", version="0.32.0", gpu="H100")
    assert "VR414" in fired(half, "error")


def test_the_file_beside_config_json_sizes_the_weights_once_quantization_makes_vllm_read_it(tmp_path):
    from reader.capacity.shapes import resolve_weight_format
    from reader.catalog.load import get_gpu
    from reader.catalog.model_files import read_model_path

    spec = read_model_path(Path(__file__).resolve().parents[2] / "fixtures" / "hf_configs" / "gptq-quantize-config")
    gpu = get_gpu("H100")
    read = resolve_weight_format(spec, "gptq", "bfloat16", gpu)
    assert read.method == "gptq" and read.attn_bits == pytest.approx(4 + 16 / 128 + 4 / 128)
    assert resolve_weight_format(spec, None, "bfloat16", gpu).method is None  # unread: 16-bit weights


def test_a_model_whose_config_names_no_length_takes_any_max_model_len_as_vllm_does(tmp_path):
    # BLOOM (ALiBi) has no length key: vLLM assumes 2048 and accepts a longer --max-model-len without checking it
    report = check_text(tmp_path, "vllm serve bigscience/bloom --tensor-parallel-size 8 --max-model-len 8192\n",
                        version="0.32.0", gpu="H100")
    assert report.summary.exit_code == 0 and not fired(report, "error")
    llama = check_text(tmp_path, "vllm serve meta-llama/Llama-2-7b-hf --max-model-len 8192\n", version="0.32.0",
                       gpu="H100")
    assert "VR402" in fired(llama, "error")  # a model that names its length still has it checked


def test_an_architecture_a_release_no_longer_serves_would_not_start_from_that_release_on(tmp_path):
    # each release's own list (rules/flags/_removed_architectures.json): BaichuanForCausalLM appears from 0.25.0
    # with "0.23.0" as the last release that served it
    launch = "vllm serve baichuan-inc/Baichuan2-7B-Chat --trust-remote-code\n"
    assert "VR611" not in fired(check_text(tmp_path, launch, version="0.23.0", gpu="H100"))
    report = check_text(tmp_path, launch, version="0.32.0", gpu="H100")
    finding = next(f for f in report.findings if f.rule_id == "VR611")
    assert finding.severity == "error" and report.summary.exit_code == 1
    assert "BaichuanForCausalLM, which vLLM served up to 0.23.0" in finding.message
    # adept/fuyu-8b's FuyuForCausalLM was served up to 0.25.0
    fuyu = "vllm serve adept/fuyu-8b\n"
    assert "VR611" not in fired(check_text(tmp_path, fuyu, version="0.25.0", gpu="H100"))
    assert "VR611" in fired(check_text(tmp_path, fuyu, version="0.32.0", gpu="H100"), "error")


def test_a_catalog_copy_of_an_older_revision_does_not_speak_for_the_current_files(tmp_path):
    # the catalog's tiiuae/falcon-7b is the release revision's RWForCausalLM file (secondary); the Hub's current one
    # names FalconForCausalLM, which 0.32.0 serves. A local folder that really holds the old file is refused.
    assert "VR611" not in fired(check_text(tmp_path, "vllm serve tiiuae/falcon-7b\n", version="0.32.0", gpu="H100"))
    import shutil

    folder = tmp_path / "falcon-7b"
    folder.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "reader" / "catalog" / "models" / "tiiuae" / "falcon-7b" /
                "config.json", folder)
    report = check_text(tmp_path, f"vllm serve {folder}\n", version="0.32.0", gpu="H100")
    assert "VR611" in fired(report, "error")


@pytest.mark.parametrize("version", ["0.18.0", "0.32.0"])
def test_hf_overrides_that_are_not_json_would_not_start_where_vllm_refused_them(tmp_path, version):
    """The real CPU builds (tools/differential/hf_overrides_text.py, fixtures/differential/hf-overrides-text-vllm-*.json)
    refused an unterminated JSON object and plain text for --hf-overrides while building the config, and started with
    a JSON object. `check` says the same, with vLLM's sentence."""
    import json
    import shlex

    root = Path(__file__).resolve().parents[2]
    rows = json.loads((root / "fixtures" / "differential" / f"hf-overrides-text-vllm-{version}.json").read_text())["rows"]
    assert [row["verdict"] for row in rows] == ["refused", "refused", "ok"]
    for row in rows:
        launch = f"vllm serve {root / 'fixtures' / 'live' / 'tiny-llama'} --hf-overrides {shlex.quote(row['hf_overrides'])}\n"
        report = check_text(tmp_path, launch, version=version, gpu="H100")
        assert ("VR124" in fired(report, "error")) == (row["verdict"] == "refused"), row
        if row["verdict"] == "refused":
            finding = next(f for f in report.findings if f.rule_id == "VR124")
            assert _says(finding.vllm_message, row["message"]), (finding.vllm_message, row["message"])
