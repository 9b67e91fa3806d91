"""Downloading config.json from the Hub, with the real huggingface_hub client against a local stand-in.

The stand-in (tests/catalog/_fake_hub.py) listens on 127.0.0.1 and is reached through HF_ENDPOINT,
exactly as a mirror or a private hub would be. Each test runs the CLI in a fresh process, so the
client reads its environment (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, HF_HUB_CACHE) as a user's run would.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from _catalog_helpers import REPO
from _fake_hub import FakeHub, Repo

pytest.importorskip("huggingface_hub")

TINY_CONFIG = json.loads((REPO / "fixtures" / "live" / "tiny-llama" / "config.json").read_text())
# A model the catalog does not hold: a 4-layer Llama with 8k positions (our own, not a real repository).
OPEN_CONFIG = dict(TINY_CONFIG, num_hidden_layers=4, max_position_embeddings=8192)
REPOS = {
    "acme/open-llama": Repo({"main": {"config.json": OPEN_CONFIG}}, commits={"main": "1" * 40}),
    "acme/gated-llama": Repo({"main": {"config.json": TINY_CONFIG}}, gated_token="hf_test_token"),
    "acme/fp8-llama": Repo({"main": {"config.json": TINY_CONFIG, "hf_quant_config.json": {
        "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": None, "exclude_modules": ["lm_head"]}}}}),
}


@pytest.fixture
def hub():
    with FakeHub(REPOS) as server:
        yield server


def run(tmp_path: Path, model: str, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    config = tmp_path / "serve.sh"
    config.write_text(f"vllm serve {model} --max-model-len 1024\n")
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    full_env.update({"HF_HUB_CACHE": str(tmp_path / "hf-cache"), **env})
    return subprocess.run([sys.executable, "-m", "reader", "capacity", str(config), "--gpu", "H100-SXM", *extra],
                          cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=180)


def test_a_model_outside_the_catalog_is_downloaded_and_read(hub, tmp_path):
    out = run(tmp_path, "acme/open-llama", {"HF_ENDPOINT": hub.url})
    assert out.returncode == 0, out.stderr
    assert "model shape from: Hugging Face Hub" in out.stdout and "acme/open-llama" in out.stdout
    saved = tmp_path / "hf-cache" / "models--acme--open-llama" / "snapshots" / ("1" * 40) / "config.json"
    assert json.loads(saved.read_text())["num_hidden_layers"] == 4


def test_only_the_small_json_files_are_asked_for_never_weights(hub, tmp_path):
    run(tmp_path, "acme/open-llama", {"HF_ENDPOINT": hub.url})
    assert set(hub.files_asked()) <= {"config.json", "hf_quant_config.json", "params.json"}
    assert "config.json" in hub.files_asked()


def test_the_second_run_reads_the_download_from_the_cache_even_offline(hub, tmp_path):
    run(tmp_path, "acme/open-llama", {"HF_ENDPOINT": hub.url})
    asked = len(hub.requests)
    out = run(tmp_path, "acme/open-llama", {"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0 and "model shape from: Hugging Face cache" in out.stdout
    assert len(hub.requests) == asked


def test_a_modelopt_sidecar_is_downloaded_when_config_json_has_no_quantization(hub, tmp_path):
    out = run(tmp_path, "acme/fp8-llama", {"HF_ENDPOINT": hub.url}, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["weight_format"].startswith("modelopt")


def test_a_gated_repository_without_a_token_is_refused_in_one_sentence(hub, tmp_path):
    out = run(tmp_path, "acme/gated-llama", {"HF_ENDPOINT": hub.url})
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "acme/gated-llama is a gated repository" in out.stderr and "HF_TOKEN" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_hf_token_opens_a_gated_repository(hub, tmp_path):
    out = run(tmp_path, "acme/gated-llama", {"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_test_token"})
    assert out.returncode == 0, out.stderr
    assert any(r.authorization == "Bearer hf_test_token" for r in hub.requests)


def test_a_missing_repository_is_bad_input_naming_the_model_and_the_option(hub, tmp_path):
    out = run(tmp_path, "acme/no-such-model", {"HF_ENDPOINT": hub.url})
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "has no repository acme/no-such-model" in out.stderr and "--model" in out.stderr


def test_offline_mode_never_asks_the_hub(hub, tmp_path):
    out = run(tmp_path, "acme/open-llama", {"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 2 and "HF_HUB_OFFLINE is set" in out.stderr
    assert hub.requests == []


def test_an_unreachable_hub_fails_fast_with_a_clear_message(tmp_path):
    # A closed loopback port: the connection is refused at once and not retried, so the whole run (a fresh
    # process, start-up included) ends well inside the README's 10 s timeout; retried it took about 24 s.
    start = time.monotonic()
    out = run(tmp_path, "acme/open-llama", {"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert out.returncode == 2 and "could not be reached" in out.stderr and "HF_HUB_OFFLINE=1" in out.stderr
    assert time.monotonic() - start < 10


def test_model_option_takes_a_hub_id_too(hub, tmp_path):
    out = run(tmp_path, "/models/our-finetune", {"HF_ENDPOINT": hub.url}, "--model", "acme/open-llama")
    assert out.returncode == 0, out.stderr
    assert "model shape from: Hugging Face Hub" in out.stdout


def test_a_catalog_model_never_imports_the_hub_client(tmp_path):
    # start-up time: huggingface_hub (and its HTTP stack) is imported only when a download is needed
    example = REPO / "fixtures" / "examples" / "llama-3.1-8b-h100-chat.yaml"
    code = ("import sys; from reader.config.from_cli import load_and_resolve, load_options; "
            f"r = load_and_resolve({str(example)!r}, load_options()); "
            "print(r.model_resolution.source, 'huggingface_hub' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env["HF_HUB_CACHE"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["catalog", "False"], out.stderr


class SilentHub:
    """A loopback port that accepts connections and never answers: a Hub that hangs. Counts the connections."""

    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.listener.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        for conn in [*self.held, self.listener]:
            conn.close()


@pytest.mark.parametrize("env_key", ["VLLM_READER_HUB_TIMEOUT", "HF_HUB_ETAG_TIMEOUT"])
def test_a_hub_that_never_answers_is_given_up_after_the_timeout_with_one_request(tmp_path, monkeypatch, env_key):
    # The README: "at most 10 s in total (VLLM_READER_HUB_TIMEOUT ... change it) ... one metadata request that is not
    # retried".
    # Retried the client's way (five retries, waits of 1 to 8 s) this would take about 24 s and six connections.
    from reader.catalog import hub

    silent = SilentHub()
    for key in [k for k in os.environ if k.startswith(("HF_", "HUGGING", "VLLM_READER_HUB"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HF_ENDPOINT", silent.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv(env_key, "1")
    try:
        start = time.monotonic()
        miss = hub.download_config("acme/open-llama")
        elapsed = time.monotonic() - start
    finally:
        silent.close()
    # under load the silent server's accept can itself outlast the second ("no answer within 1 s" to the
    # reachability probe): either way the one timeout is what ends it
    assert isinstance(miss, hub.HubMiss) and "answer within 1 s" in miss.reason
    assert 0.9 < elapsed < 3, elapsed
    assert len(silent.held) <= 2  # the reachability probe, then one request: never the client's retries
