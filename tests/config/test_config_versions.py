"""Releases outside the tables are read with the nearest release's facts, loudly, naming the rules applied beyond
their version range; image tags map to a release or to "unknown, newest assumed"."""
from __future__ import annotations

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line, load_deployment
from reader.errors import ReaderError
from reader.rules_engine.loader import load_rules
from reader.versions import choose_version, format_version, known_versions, parse_version

OLDEST, NEWEST = format_version(known_versions()[0]), format_version(known_versions()[-1])


def version_warning(d):
    return next(n for n in d.notes if n.key == "vllm_version" and n.level == "warning")


def beyond_range(tag: str, requested: str) -> list[str]:
    active = [r for r in load_rules().active(parse_version(tag)) if r.theme != "input"]
    return [r.id for r in active if not r.active(parse_version(requested))]


@pytest.mark.parametrize("requested, tag, words", [
    ("0.4.1", OLDEST, "older than the oldest release"),
    ("0.40.0", NEWEST, "newer than the newest release"),
])
def test_a_release_outside_the_tables_is_read_with_the_nearest_one_and_said_loudly(requested, tag, words):
    d = load_command_line("vllm serve m --max-num-seqs 8", LoadOptions(vllm_version=requested))
    assert d.vllm_version_tag == tag and d.context.vllm_version == requested
    warning = version_warning(d)
    assert words in warning.message
    expected = beyond_range(tag, requested)
    assert expected, "the tables have rules whose range stops short of this release"
    assert all(rule_id in warning.message for rule_id in expected)
    assert f"{len(expected)} of the" in warning.message


def test_text_that_is_no_version_at_all_is_still_bad_input():
    with pytest.raises(ReaderError) as err:
        load_command_line("vllm serve m", LoadOptions(vllm_version="banana"))
    assert err.value.key == "vllm_version"


@pytest.mark.parametrize("image, tag, span", [
    ("vllm/vllm-openai:v0.9.2-cu128", "0.9.2", "inside"),
    ("vllm/vllm-openai:v0.6.2-distributed", OLDEST, "older"),
    ("vllm/vllm-openai:nightly-8d0a01a5f2e1", NEWEST, "unknown"),
    ("vllm/vllm-openai:latest", NEWEST, "unknown"),
    ("vllm/vllm-openai", NEWEST, "unknown"),
    ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "0.8.5", "inside"),
    ("public.ecr.aws/deep-learning-containers/vllm:0.11.0-gpu-py312-cu128-ubuntu22.04-ec2", "0.11.0", "inside"),
    ("lmcache/vllm-openai:2025-05-05-v1", NEWEST, "unknown"),
    ("lmcache/vllm-openai:v0.3.7", NEWEST, "unknown"),  # LMCache 0.3.7 (the production-stack tutorials), not vLLM's
    ("vllm/vllm-openai@sha256:0123456789abcdef", NEWEST, "unknown"),
])
def test_image_tags_map_to_a_release_or_to_unknown_newest_assumed(image, tag, span):
    d = load_command_line(f"docker run --gpus all {image} --model m")
    assert d.vllm_version_tag == tag
    assert d.context.vllm_version_origin == "image"
    choice = choose_version(d.context.vllm_version, "image")
    assert choice.span == span
    if span == "unknown":
        assert any("names no vLLM release" in n.message and NEWEST in n.message for n in d.notes)
    if span == "older":
        assert "older than the oldest release" in version_warning(d).message


def test_an_image_tag_outside_the_tables_in_a_manifest_loads(tmp_path):
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text("""apiVersion: apps/v1
kind: Deployment
metadata: {name: old-vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.5.4
        args: ["--model", "m", "--max-num-seqs", "8"]
""")
    d = load_deployment(str(manifest))
    assert d.vllm_version_tag == OLDEST and d.context.vllm_version == "0.5.4"
    assert "older than the oldest release" in version_warning(d).message


VERTEX = "us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve"


@pytest.mark.parametrize("tag, release", [
    ("20250312_0916_RC01", "0.7.3"),  # after 0.7.3 (2025-02-20), before 0.8.0 (2025-03-18)
    ("20250318_0916_RC00", "0.8.0"),  # the day 0.8.0 came out
])
def test_a_build_date_tag_is_read_as_the_newest_release_published_by_then_and_said_inferred(tag, release):
    d = load_command_line(f"docker run --gpus all {VERTEX}:{tag} --model m")
    assert d.vllm_version_tag == release and d.context.vllm_version_origin == "image"
    note = next(n.message for n in d.notes if "assumed from the image tag" in n.message)
    assert f"built {tag[:4]}-{tag[4:6]}-{tag[6:8]}" in note and "--vllm-version" in note


@pytest.mark.parametrize("tag", ["20991231_0000_RC00", "20240101_0000_RC00", "20251399_0000", "20250312123"])
def test_a_date_no_two_dated_releases_bracket_or_no_date_at_all_names_no_release(tag):
    d = load_command_line(f"docker run --gpus all {VERTEX}:{tag} --model m")
    assert d.vllm_version_tag == NEWEST
    assert any("names no vLLM release" in n.message for n in d.notes)
    assert not any("assumed from the image tag" in n.message for n in d.notes)
