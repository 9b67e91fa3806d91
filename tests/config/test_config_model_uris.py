"""A model given as a storage URI is read by the name its URI carries, loudly: KServe model cars (`oci://`, named by
the image or, in a catalog image, by the tag), `pvc://`, `s3://`, `gs://`, `hf://`; a launch whose model is KServe's
/mnt/models serves the URI the file gives (`storageUri`, or a Helm `model: {mode: uri, uri: ...}` mapping)."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.config.context import LoadOptions
from reader.config.forms.storage_uri import parse_model_uri
from reader.config.load import load_deployment
from reader.errors import ReaderError


@pytest.mark.parametrize("uri, model", [
    ("oci://registry.redhat.io/rhelai1/modelcar-granite-3-1-8b-instruct:1.5",
     "registry.redhat.io/rhelai1/granite-3.1-8b-instruct"),
    ("oci://quay.io/redhat-ai-services/modelcar-catalog:llama-3.2-11b-vision-instruct-fp8-dynamic",
     "quay.io/redhat-ai-services/llama-3.2-11b-vision-instruct-fp8-dynamic"),
    ("oci://quay.io/org/qwen2.5-7b-instruct@sha256:0123abcd", "quay.io/org/qwen2.5-7b-instruct"),
    ("oci://quay.io/org/modelcar-catalog:latest", "quay.io/org/catalog"),
    ("oci://quay.io/cfchase/granite-modelcar:0.1", "quay.io/cfchase/granite"),
    ("pvc://models-pvc/Llama-3.1-8B-Instruct", "models-pvc/Llama-3.1-8B-Instruct"),
    ("s3://bucket/models/Qwen2.5-7B-Instruct/", "bucket/models/Qwen2.5-7B-Instruct"),
    ("gs://bucket/meta-llama/Llama-3.1-8B", "bucket/meta-llama/Llama-3.1-8B"),
    ("hf://Qwen/Qwen3-8B:main", "Qwen/Qwen3-8B"),
])
def test_the_model_a_storage_uri_names(uri, model):
    assert parse_model_uri(uri).model == model


def load(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return load_deployment(str(path), LoadOptions(vllm_version="0.32.0"))


ISVC = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: qwen
spec:
  predictor:
    model:
      modelFormat: {name: vLLM}
      storageUri: oci://quay.io/redhat-ai-services/modelcar-catalog:qwen2.5-7b-instruct
      args: [--model, /mnt/models, --max-model-len, "8192"]
"""


def test_a_kserve_model_car_at_mnt_models_is_the_model_its_tag_names(tmp_path):
    d = load(tmp_path, "isvc.yaml", ISVC)
    assert d.model == "quay.io/redhat-ai-services/qwen2.5-7b-instruct"
    assert d.model_uri == "oci://quay.io/redhat-ai-services/modelcar-catalog:qwen2.5-7b-instruct"
    assert any("model car image is read as the folder" in n.message for n in d.notes)


# The shape of redhat-ai-services/helm-charts charts/vllm-kserve values.yaml: the runtime's command and args, and
# the model as a mapping the chart turns into the InferenceService's storageUri.
CHART_VALUES = """deploymentMode: RawDeployment
image: {image: registry.redhat.io/rhaiis/vllm-cuda-rhel9, tag: 3.3.0-1771898916}
model:
  args: ["--max-model-len=4096"]
  mode: uri
  uri: oci://quay.io/redhat-ai-services/modelcar-catalog:granite-3.3-2b-instruct
servingRuntime:
  name: ""
  command: [python, -m, vllm.entrypoints.openai.api_server]
  args: [--port=8080, --model=/mnt/models]
"""


def test_a_chart_model_mapping_is_the_uri_served_at_mnt_models(tmp_path):
    d = load(tmp_path, "values.yaml", CHART_VALUES)
    assert d.model == "quay.io/redhat-ai-services/granite-3.3-2b-instruct"
    assert any(n.message == "KServe downloads model.uri to /mnt/models, so the model served is "
               "oci://quay.io/redhat-ai-services/modelcar-catalog:granite-3.3-2b-instruct" for n in d.notes)


def test_a_chart_model_in_another_storage_mode_leaves_mnt_models_as_written(tmp_path):
    d = load(tmp_path, "values.yaml", CHART_VALUES.replace("mode: uri", "mode: s3"))
    assert d.model == "/mnt/models"


EKS = """model:
  mode: uri
  uri: pvc://models/Qwen2.5-7B-Instruct
modelParameters:
  maxModelLen: 8192
"""


def test_a_model_mapping_names_the_model_by_its_uri_not_as_text(tmp_path):
    d = load(tmp_path, "values.yaml", EKS)
    assert d.model == "models/Qwen2.5-7B-Instruct" and d.model_uri == "pvc://models/Qwen2.5-7B-Instruct"


def test_a_model_mapping_without_a_uri_is_bad_input_naming_the_key(tmp_path):
    with pytest.raises(ReaderError) as err:
        load(tmp_path, "values.yaml", EKS.replace("mode: uri", "mode: pvc"))
    assert err.value.key == "model" and err.value.line == 1
