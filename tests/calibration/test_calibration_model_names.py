"""`calibrate` takes bench results measured against any name the deployment answers to (issue 25): each of
--served-model-name's names (what clients and `vllm bench serve --model` must send when it is set), the model
path, and the path's last folder; it says which one the results used, and refuses any other name."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.fitting.bench import read_bench
from reader.fitting.fit_bench import check_model
from reader.calibration.profile import DeviceStandIn
from reader.calibration.select import standin_gpu
from reader.config.from_cli import load_options
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.errors import ReaderError

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "fixtures" / "live" / "tiny-llama")
# A recorded result (fixtures/calibration/cpu-tiny-llama/README.md), its model_id rewritten to each name tried.
RECORDED = ROOT / "fixtures" / "calibration" / "cpu-tiny-llama" / "bench" / "round-1" / "c1-short.json"
SERVE_SH = """#!/bin/bash
# vllm-reader:
#   gpu: cpu-xeon-2c
#   vllm_version: 0.32.0
vllm serve /models/tiny-llama-tok --served-model-name tiny tiny-chat --max-num-seqs 32 \\
    --max-num-batched-tokens 1024 --enable-prefix-caching
"""


@pytest.fixture(scope="module")
def resolved(tmp_path_factory):
    script = tmp_path_factory.mktemp("config") / "serve.sh"
    script.write_text(SERVE_SH)
    device = DeviceStandIn(name="cpu-xeon-2c", kind="cpu", bf16_tflops=0.1, hbm_bandwidth_gbps=20.0, memory_gib=16,
                           source="test")
    options = load_options(model=TINY)
    return resolve(load_deployment(str(script), options), model_override=TINY, device=standin_gpu(device))


def result_against(model_id: str, tmp_path: Path):
    path = tmp_path / f"{model_id.replace('/', '_')}.json"
    text = RECORDED.read_text()
    assert '"model_id": "tiny-llama"' in text
    path.write_text(text.replace('"model_id": "tiny-llama"', f'"model_id": "{model_id}"', 1))
    return read_bench(path)


@pytest.mark.parametrize("model_id, said", [
    ("tiny", "'tiny', --served-model-name"),
    ("tiny-chat", "'tiny-chat', --served-model-name"),
    ("/models/tiny-llama-tok", "'/models/tiny-llama-tok', the model path"),
    ("tiny-llama-tok", "'tiny-llama-tok', the last folder of the model path"),
    ("TINY", "'TINY', --served-model-name 'tiny'"),
])
def test_results_against_any_name_the_deployment_answers_to_are_taken(resolved, tmp_path, model_id, said):
    assert check_model(resolved, [result_against(model_id, tmp_path)]) == f"the benchmarks ran against {said}."


def test_another_model_is_refused_naming_every_name_it_could_have_been(resolved, tmp_path):
    with pytest.raises(ReaderError) as refused:
        check_model(resolved, [result_against("meta-llama/Llama-3.1-8B", tmp_path)])
    message = str(refused.value)
    assert "ran against model 'meta-llama/Llama-3.1-8B'" in message and refused.value.key == "model_id"
    for name in ("'tiny' (--served-model-name)", "'tiny-chat' (--served-model-name)",
                 "'/models/tiny-llama-tok' (the model path)"):
        assert name in message
