"""vLLM is found behind whatever runs it (`uv run`, `conda run -n ENV`, `srun`, `kubectl exec POD --`, ...): the
words before the vLLM program are the wrapper's, never vLLM's arguments, and a reading note says which wrapper."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line, load_deployment
from reader.errors import ReaderError

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def read(command: str):
    return load_command_line(command, LoadOptions(vllm_version="0.32.0"))


def wrapper_notes(d) -> list[str]:
    return [n.message for n in d.notes if "launched through the wrapper" in n.message]


@pytest.mark.parametrize("wrapper", [
    "uv run", "poetry run", "pipenv run", "conda run -n vllm", "micromamba run -n serving", "pixi run",
    "hatch run", "nohup", "time", "env HF_HOME=/data", "timeout 10m", "numactl --cpunodebind=0 --membind=0",
    "taskset -c 0-7", "srun -N 1 --gres=gpu:2", "mpirun -np 1", "docker exec -it vllm",
    "kubectl exec -it vllm-0 --", "ray job submit --address http://head:8265 --",
    "uvx --from vllm", "sudo -E",
])
@pytest.mark.parametrize("program", [f"vllm serve {MODEL}", f"python3 -u -m vllm.entrypoints.openai.api_server "
                                                             f"--model {MODEL}"])
def test_the_launch_is_found_behind_a_wrapper_and_the_wrapper_is_said(wrapper, program):
    d = read(f"{wrapper} {program} --max-model-len 4096")
    assert d.model == MODEL and d.flags["max_model_len"].value == 4096
    assert wrapper_notes(d) == [f"vLLM is launched through the wrapper `{wrapper}`; its words are the wrapper's, "
                                "not vLLM's arguments"]


@pytest.mark.parametrize("command, wrapper", [
    ("uv tool run 'vllm>=0.10' -- serve", "uv tool run"), ("uvx vllm==0.9.2 serve", "uvx"),
    ("uvx vllm@0.10.0 serve", "uvx"), ("pipx run 'vllm[audio]' serve", "pipx run"),
])
def test_a_package_spec_run_as_the_program_is_vllm(command, wrapper):
    # uvx and `uv tool run` install the package the spec names and run its executable of the same name
    d = read(f"{command} {MODEL} --max-model-len 4096")
    assert d.model == MODEL and d.flags["max_model_len"].value == 4096
    assert wrapper_notes(d) == [f"vLLM is launched through the wrapper `{wrapper}`; its words are the wrapper's, "
                                "not vLLM's arguments"]


def test_a_wrapper_option_value_that_names_vllm_is_not_read_as_the_program():
    d = read(f"conda run -n vllm vllm serve {MODEL} --max-num-seqs 8")
    assert d.model == MODEL and d.flags["max_num_seqs"].value == 8


def test_uv_run_dash_m_runs_the_module_itself():
    d = read(f"uv run -m vllm.entrypoints.openai.api_server --model {MODEL}")
    assert d.entry_point == "api_server" and wrapper_notes(d)


def test_env_in_a_wrapper_sets_the_variable_for_the_launch():
    d = read(f"nohup env VLLM_USE_V1=1 PORT=8001 vllm serve {MODEL} --port $PORT")
    assert d.env["VLLM_USE_V1"] == "1" and d.flags["port"].value == 8001 and not d.placeholders


def test_a_shell_c_behind_a_wrapper_is_read():
    d = read(f"docker exec -e HF_HOME=/data vllm bash -c 'vllm serve {MODEL} --max-model-len 2048'")
    assert d.flags["max_model_len"].value == 2048 and d.env["HF_HOME"] == "/data"
    assert "`docker exec -e HF_HOME=/data vllm`" in wrapper_notes(d)[0]


def test_any_image_that_runs_a_vllm_command_is_a_docker_run_launch():
    d = read(f"docker run --gpus 2 mycorp/llm:1 uv run vllm serve {MODEL}")
    assert d.form == "docker-run" and d.image == "mycorp/llm:1" and d.context.gpu_count == 2


def test_shell_grammar_alone_is_no_wrapper():
    assert not wrapper_notes(read(f"exec vllm serve {MODEL}"))


def test_text_that_only_mentions_vllm_is_no_launch():
    with pytest.raises(ReaderError):
        read(f"echo vllm serve {MODEL}")


def test_a_makefile_recipe_behind_uv_run_is_found(tmp_path: Path):
    path = tmp_path / "Makefile"
    path.write_text(f"serve:\n\tuv run vllm serve {MODEL} --max-model-len 8192\n")
    d = load_deployment(str(path), LoadOptions(vllm_version="0.32.0"))
    assert d.flags["max_model_len"].value == 8192 and wrapper_notes(d)[0].startswith(
        "vLLM is launched through the wrapper `uv run`")
