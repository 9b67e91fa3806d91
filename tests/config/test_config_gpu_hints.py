"""The GPU type comes from what the file says (node labels, instance types, SkyPilot accelerators, resource
names), through tables that are data with their sources; without it, or with a GPU the catalog lacks, the
H100 is assumed, loudly."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.catalog import load as catalog
from reader.config.forms.gpu_hints import tables
from reader.config.load import load_deployment
from reader.config.resolve import resolve

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "forms" / "gpu"

# GPUs the tables name although the catalog does not model them: a manifest asking for one is reported.
OUTSIDE_CATALOG = {"T4", "V100", "P100", "P4", "A10", "A40", "L40", "RTX-A6000"}


def load(name: str):
    return load_deployment(str(FIXTURES / name))


@pytest.mark.parametrize("name, gpu, count, words", [
    ("gpu-product-label.yaml", "H100-SXM", 1, "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3-SHARED"),
    ("karpenter-affinity.yaml", "A100-80GB-SXM", 4, "instance-gpu-memory"),
    ("instance-type-choice.yaml", "L4", 2, "node.kubernetes.io/instance-type=g6.12xlarge"),
    ("azure-instance-type.yaml", "H100-NVL", 2, "Standard_NC80adis_H100_v5"),
    ("skypilot-any-of.sky.yaml", "A100-40GB-SXM", 8, "resources.accelerators A100:8"),
    ("skypilot-instance-type.sky.yaml", "H100-SXM", 8, "resources.instance_type p5.48xlarge"),
])
def test_the_gpu_type_is_read_from_the_file(name, gpu, count, words):
    d = load(name)
    r = resolve(d)
    assert r.gpu.id == gpu and not r.gpu_assumed
    assert d.context.gpu_count == count
    assert words in r.gpu_how and "line" in r.gpu_how


def test_a_choice_of_machine_types_takes_the_first_and_names_the_others():
    d = load("instance-type-choice.yaml")
    assert any("g5.12xlarge" in n.message and "--gpu" in n.message for n in d.notes)


def test_skypilot_run_gets_the_gpus_per_node_of_an_instance_type():
    d = load("skypilot-instance-type.sky.yaml")
    assert d.flags["tensor_parallel_size"].value == 8


def test_a_gpu_outside_the_catalog_falls_back_to_the_assumed_one_loudly():
    r = resolve(load("gke-t4.yaml"))
    assert r.gpu_assumed and r.gpu.id == "H100-SXM"
    warning = next(n.message for n in r.notes if n.level == "warning" and "GPU" in n.message)
    assert "'T4'" in warning and "cloud.google.com/gke-accelerator=nvidia-tesla-t4" in warning and "--gpu" in warning


def test_a_mig_slice_is_counted_and_said_not_modelled():
    d = load("mig-slice.yaml")
    assert d.context.gpu_count == 1
    assert any("MIG slice(s) 3g.40gb" in n.message and n.level == "warning" for n in d.notes)
    assert resolve(d).gpu_assumed


def test_no_gpu_in_the_file_keeps_the_assumed_h100_loudly(tmp_path):
    script = tmp_path / "serve.sh"
    script.write_text("vllm serve Qwen/Qwen2.5-7B-Instruct\n")
    r = resolve(load_deployment(str(script)))
    assert r.gpu_assumed and any(n.message.startswith("GPU not given: assuming H100-SXM") for n in r.notes)


def _every_mapped_gpu():
    t = tables()
    for table in ("gke", "karpenter_gpu_name", "aws_families", "coreweave", "skypilot", "kubeai_profiles"):
        for key, gpu in t[table].items():
            yield f"{table}.{key}", gpu
    for key, (gpu, count) in t["instance_types"].items():
        assert isinstance(count, int) and count >= 1, key
        yield f"instance_types.{key}", gpu


@pytest.mark.parametrize("where, gpu", list(_every_mapped_gpu()))
def test_every_table_entry_names_a_catalog_gpu_or_a_declared_outside_one(where, gpu):
    assert catalog.find_gpu(gpu) is not None or gpu in OUTSIDE_CATALOG, where


def test_every_label_key_has_a_source_and_a_table():
    for key, spec in tables()["label_keys"].items():
        assert spec["source"] and (spec["values"] == "as-is" or spec["values"] in tables()), key
