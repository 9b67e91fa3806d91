"""The replicas a file runs are read: a Deployment's (or StatefulSet's) spec.replicas, a LeaderWorkerSet's replicas
(whole groups, each one vLLM), a KServe InferenceService's minReplicas; more than one is said in a reading note."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_deployment

FORMS = Path(__file__).resolve().parents[2] / "fixtures" / "forms"
LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: qwen}
spec:
  replicas: 3
  leaderWorkerTemplate:
    size: 1
    workerTemplate:
      spec:
        containers:
          - name: vllm
            image: vllm/vllm-openai:v0.10.2
            args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
"""
ISVC = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: qwen}
spec:
  predictor:
    minReplicas: 2
    model:
      modelFormat: {name: vLLM}
      args: [--model, Qwen/Qwen2.5-7B-Instruct]
"""


def load(tmp_path: Path, text: str):
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    return load_deployment(str(path), LoadOptions(vllm_version="0.32.0"))


def deployment(kind: str, count: str) -> str:
    text = (FORMS / "deployment-replicas.yaml").read_text()
    return text.replace("kind: Deployment", f"kind: {kind}").replace("replicas: 4", f"replicas: {count}")


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_a_deployments_replicas_are_read_and_said(tmp_path, kind):
    d = load(tmp_path, deployment(kind, "4"))
    assert d.context.replicas == 4 and d.context.replicas_source == f"{kind} spec.replicas, line 6"
    assert any(n.message.startswith(f"4 replicas ({kind} spec.replicas)") for n in d.notes)


def test_one_replica_is_read_without_a_note(tmp_path):
    d = load(tmp_path, deployment("Deployment", "1"))
    assert d.context.replicas == 1 and not any("replicas (" in n.message for n in d.notes)


def test_a_leaderworkersets_replicas_are_whole_groups(tmp_path):
    d = load(tmp_path, LWS)
    assert d.context.replicas == 3 and d.context.replicas_source.startswith("LeaderWorkerSet spec.replicas")


def test_a_kserve_min_replicas_is_read(tmp_path):
    d = load(tmp_path, ISVC)
    assert d.context.replicas == 2
    assert d.context.replicas_source == "InferenceService spec.predictor.minReplicas, line 6"
