"""A vLLM launch is read wherever it is written: Makefiles, justfiles, Dockerfiles, Procfiles, CI workflows,
here-documents, Markdown code blocks, and any YAML (custom chart values, kustomize patches, Argo, KServe, KubeAI,
Ray Serve); the form is told by content, not by the file's name. A file with no launch is bad input naming what
was searched. Every fixture under fixtures/forms/ was written for these tests."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reader.config.context import LoadOptions
from reader.config.forms.sniff import kind_of
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.errors import ReaderError

FORMS = Path(__file__).resolve().parents[2] / "fixtures" / "forms"


def load(name: str, **options):
    return load_deployment(str(FORMS / name), LoadOptions(**options))


def values(d) -> dict:
    return {dest: flag.value for dest, flag in d.flags.items()}


def line_of(name: str, needle: str) -> int:
    return next(i for i, text in enumerate((FORMS / name).read_text().splitlines(), start=1) if needle in text)


# (fixture, form, model, some flags, image version, GPU, GPU count)
FORMS_TABLE = [
    ("Makefile", "makefile", "Qwen/Qwen2.5-7B-Instruct",
     {"tensor_parallel_size": 2, "max_model_len": 16384, "port": 8000}, "0.33.0", None, None),
    ("justfile", "justfile", "meta-llama/Llama-3.1-8B-Instruct",
     {"max_model_len": 8192, "gpu_memory_utilization": 0.85}, "0.33.0", None, None),
    ("Dockerfile", "dockerfile", "mistralai/Mistral-7B-Instruct-v0.3",
     {"max_model_len": 16384, "limit_mm_per_prompt": {"image": 2}}, "0.9.2", None, None),
    ("serve.dockerfile", "dockerfile", "Qwen/Qwen2.5-14B-Instruct",
     {"max_num_seqs": 48, "enable_chunked_prefill": True}, "0.8.5", None, None),
    ("Procfile", "procfile", "google/gemma-2-9b-it", {"max_model_len": 4096}, "0.33.0", None, None),
    ("github-workflow.yml", "yaml-command", "microsoft/Phi-3-mini-4k-instruct",
     {"max_model_len": 4096, "max_num_seqs": 8}, "0.33.0", None, None),
    ("heredoc.sh", "shell", "meta-llama/Llama-3.1-8B-Instruct",
     {"max_num_seqs": 128, "max_num_batched_tokens": 4096, "enable_prefix_caching": True}, "0.33.0", None, None),
    ("README-deploy.md", "shell", "Qwen/Qwen3-8B", {"max_model_len": 32768, "enable_prefix_caching": True},
     "0.33.0", None, None),
    ("chart-values.yaml", "yaml-command", "mistralai/Mistral-7B-Instruct-v0.3",
     {"max_num_seqs": 32, "dtype": "bfloat16"}, "0.10.2", "L40S", 1),
    ("kustomization.yaml", "kubernetes", "meta-llama/Llama-3.1-70B-Instruct",
     {"tensor_parallel_size": 4, "max_num_batched_tokens": 16384}, "0.11.0", None, 4),
    ("argo-workflow.yaml", "yaml-command", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
     {"max_model_len": 32768, "max_num_seqs": 16}, "0.20.0", "NVIDIA-L40S", 1),
    ("kserve-runtime.yaml", "kserve-inferenceservice", "models-bucket/ibm-granite/granite-3.1-8b-instruct",
     {"served_model_name": ["granite"], "max_model_len": 8192, "max_num_seqs": 64}, "0.33.0", "NVIDIA-A100-SXM4-80GB",
     1),
    ("kserve-hf-isvc.yaml", "kserve-inferenceservice", "meta-llama/Llama-3.2-3B-Instruct", {"max_model_len": 4096},
     "0.33.0", None, 1),
    ("kubeai-model.yaml", "kubeai-model", "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8",
     {"max_model_len": 16384, "enable_prefix_caching": True}, "0.33.0", "L4", 1),
    ("kubeai-cpu-profile.yaml", "kubeai-model", "Qwen/Qwen2.5-0.5B-Instruct", {"max_model_len": 8192}, "0.33.0", None,
     None),
    ("rayservice.yaml", "ray-serve-llm", "Qwen/Qwen2.5-7B-Instruct",
     {"tensor_parallel_size": 2, "max_model_len": 8192, "max_num_seqs": 40}, "0.33.0", "A10G", 2),
    ("platform.yaml", "yaml-command", "mistralai/Mistral-7B-Instruct-v0.3", {"max_num_seqs": 24}, "0.33.0", None,
     None),
    ("llmisvc-pvc.yaml", "kserve-llminferenceservice", "model-store/models/Qwen2.5-32B-Instruct",
     {"tensor_parallel_size": 2}, "0.33.0", None, 2),
    ("storage-uri.sh", "shell", "team-models/meta-llama/Llama-3.1-8B-Instruct", {"load_format": "runai_streamer"},
     "0.33.0", None, None),
    ("deployment-replicas.yaml", "kubernetes", "meta-llama/Llama-3.1-8B-Instruct", {"max_model_len": 4096}, "0.18.0",
     None, None),
]


@pytest.mark.parametrize("name, form, model, flags, version, gpu, count", FORMS_TABLE, ids=[r[0] for r in FORMS_TABLE])
def test_every_form_loads(name, form, model, flags, version, gpu, count):
    d = load(name)
    assert d.form == form
    assert d.model == model
    for dest, value in flags.items():
        assert d.flags[dest].value == value, dest
        assert d.flags[dest].loc is not None and d.flags[dest].loc.line, f"{dest} has no line"
    assert d.vllm_version_tag == version
    assert (d.context.gpu, d.context.gpu_count) == (gpu, count)


def test_every_fixture_is_in_the_table_or_refused():
    refused = {"notes.txt", "chart-values-no-command.yaml", "exec-variable.dockerfile"}
    on_disk = {p.name for p in FORMS.iterdir() if p.is_file()}
    assert on_disk == {row[0] for row in FORMS_TABLE} | refused


@pytest.mark.parametrize("name", [row[0] for row in FORMS_TABLE])
def test_the_form_is_told_by_content_not_by_the_file_name(name, tmp_path):
    renamed = tmp_path / "config"
    shutil.copy(FORMS / name, renamed)
    original, anonymous = load(name), load_deployment(str(renamed))
    assert (anonymous.form, anonymous.model, values(anonymous)) == (original.form, original.model, values(original))


@pytest.mark.parametrize("name, kind", [
    ("Makefile", "makefile"), ("justfile", "justfile"), ("Dockerfile", "dockerfile"), ("Procfile", "procfile"),
    ("README-deploy.md", "markdown"), ("kserve-runtime.yaml", "yaml-or-shell"), ("heredoc.sh", "shell")])
def test_sniffing_by_content(name, kind):
    assert kind_of((FORMS / name).read_text()) == kind


def test_a_makefile_expands_its_variables_and_lists_every_target_that_launches():
    d = load("Makefile")
    assert "target 'serve'" in d.notes[0].message and "#2 (target 'docker-serve'" in d.notes[0].message
    assert d.flags["max_model_len"].loc.line == line_of("Makefile", "--max-model-len")
    docker = load("Makefile", pick=2)
    assert docker.form == "docker-run" and docker.flags["max_num_seqs"].value == 64
    assert docker.vllm_version_tag == "0.10.1"  # the image make's $(IMAGE) names


def test_make_and_just_variables_take_set_overrides():
    assert load("Makefile", set={"MODEL": "mistralai/Mistral-7B-v0.1"}).model == "mistralai/Mistral-7B-v0.1"
    assert load("justfile", set={"max_len": "4096"}).flags["max_model_len"].value == 4096


def test_a_shebang_recipe_is_read_as_one_script():
    d = load("justfile", pick=2)
    assert d.entry_point == "api_server" and d.flags["max_num_seqs"].value == 32


def test_exec_form_does_not_expand_variables_and_says_so():
    d = load("exec-variable.dockerfile")
    assert d.model is None
    assert any("exec form" in n.message and "$MODEL" in n.message for n in d.notes)


def test_dockerfile_env_reaches_the_launch_and_shell_form_expands_it():
    assert load("Dockerfile").env["VLLM_USE_V1"] == "1"
    d = load("serve.dockerfile")
    assert d.flags["max_num_seqs"].value == 48 and d.image == "vllm/vllm-openai:v0.8.5"


def test_a_config_file_written_by_a_here_document_is_read_for_the_launch_that_names_it():
    d = load("heredoc.sh")
    assert d.flags["max_num_batched_tokens"].loc.line == line_of("heredoc.sh", "max-num-batched-tokens")
    assert d.flags["max_num_seqs"].value == 128  # the command line wins over the file
    remote = load("heredoc.sh", pick=2)
    assert remote.flags["tensor_parallel_size"].value == 2 and remote.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert "2 vLLM launches" in d.notes[0].message  # the config body itself is not a launch


def test_markdown_reads_console_commands_and_yaml_blocks_and_skips_python():
    d = load("README-deploy.md")
    assert d.flags["max_model_len"].loc.line == line_of("README-deploy.md", "--max-model-len")
    k8s = load("README-deploy.md", pick=2)
    assert k8s.form == "kubernetes" and k8s.context.gpu == "L4" and k8s.flags["max_model_len"].value == 16384
    assert "3 vLLM launches" not in d.notes[0].message


def test_markdown_blocks_nested_in_tabs_or_list_items_are_read_at_their_lines(tmp_path):
    guide = tmp_path / "guide.md"
    guide.write_text('# Serve\n\n=== "4xH100"\n\n    ```bash\n    vllm serve Qwen/Qwen3-8B \\\n'
                     '      --tensor-parallel-size 4\n    ```\n')
    d = load_deployment(str(guide))
    assert d.model == "Qwen/Qwen3-8B" and d.flags["tensor_parallel_size"].loc.line == 7


def test_chart_values_the_tool_does_not_know_are_reported_unread():
    d = load("chart-values.yaml")
    unread = next(n for n in d.notes if "not read" in n.message)
    assert "maxModelLen (line 10)" in unread.message and "extraArgs" in unread.message


@pytest.mark.parametrize("name, words", [
    ("notes.txt", ["no vLLM launch found in this script", "searched 3 line(s)"]),
    ("chart-values-no-command.yaml", ["no vLLM launch found in this YAML file", "enabled, model, maxModelLen",
                                      "maxModelLen (line 4)", "helm template"]),
])
def test_a_file_with_no_launch_is_bad_input_naming_what_was_searched(name, words):
    with pytest.raises(ReaderError) as err:
        load(name)
    assert err.value.file and err.value.file.endswith(name)
    for word in words:
        assert word in err.value.message


def test_a_typo_in_a_flat_config_file_is_still_named_as_an_unknown_option(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("model: m\nmax-num-seqz: 8\n")
    with pytest.raises(ReaderError) as err:
        load_deployment(str(config))
    assert "unknown vLLM option 'max-num-seqz'" in err.value.message


def test_kserve_storage_uri_replaces_the_runtime_mount_point():
    d = load("kserve-runtime.yaml")
    assert any("/mnt/models" in n.message for n in d.notes)
    assert d.flags["served_model_name"].value == ["granite"]  # {{.Name}} filled with the InferenceService's name


def test_a_storage_uri_model_is_said_and_an_hf_uri_is_an_id():
    d = load("storage-uri.sh")
    assert any("storage URI s3://team-models/" in n.message and "--model" in n.message for n in d.notes)
    assert load("kubeai-model.yaml").model == "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"


def test_gpu_facts_of_a_ray_serve_config_and_a_kubeai_profile_resolve():
    assert resolve(load("rayservice.yaml")).gpu.id == "A10G"
    assert resolve(load("kubeai-model.yaml")).gpu.id == "L4"


def test_a_kubeai_cpu_profile_names_no_gpu_and_its_count_is_not_gpus():
    d = load("kubeai-cpu-profile.yaml")
    assert any("KubeAI's CPU profile" in n.message and "names no GPU" in n.message for n in d.notes)
    r = resolve(d)
    assert r.gpu_count == 1 and r.gpu_assumed
    assert any("vLLM's CPU build" in n.message and "says nothing of a CPU" in n.message for n in r.notes)


def test_a_command_line_that_also_parses_as_yaml_is_read_as_a_command(tmp_path):
    script = tmp_path / "example.sh"
    script.write_text("""vllm serve m --compilation-config '{"max_cudagraph_capture_size": 256}'\n""")
    d = load_deployment(str(script), LoadOptions(vllm_version="0.18.0"))
    assert d.form == "shell" and d.flags["compilation_config"].value == {"max_cudagraph_capture_size": 256}


def test_a_command_line_that_yaml_reads_as_a_one_key_mapping_is_a_command(tmp_path):
    # `vllm serve m --x '{"k": 1}'` is valid YAML: a mapping whose key is the command up to `": "`
    script = tmp_path / "serve.sh"
    script.write_text("""vllm serve m --speculative-config '{"method": "ngram"}'\n""")
    d = load_deployment(str(script), LoadOptions(vllm_version="0.32.0"))
    assert d.form == "shell" and d.flags["speculative_config"].value == {"method": "ngram"}
