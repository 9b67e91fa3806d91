"""A model the Hub would have to answer for, on a machine that cannot reach the Hub: one sentence, at once,
within the stated timeout in total, and once per run (issue 22: `check` took 23.5 s a file and printed a
cut-off `ConnectionError: (MaxRetryError(...` as part of its finding)."""
from __future__ import annotations

import socket
import time

import pytest

from reader.catalog import hub


@pytest.fixture(autouse=True)
def fresh_run(monkeypatch):
    monkeypatch.setattr(hub, "_UNREACHABLE", {})
    monkeypatch.setattr(hub, "_MISSES", {})
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(key, raising=False)


def test_a_host_that_does_not_resolve_is_one_sentence_at_once(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example.invalid")  # RFC 2606: never resolves
    start = time.monotonic()
    miss = hub.download_config("acme/open-llama")
    assert time.monotonic() - start < 5
    assert isinstance(miss, hub.HubMiss)
    assert "could not be reached" in miss.reason and "does not resolve" in miss.reason
    assert not any(word in miss.reason for word in ("Error", "MaxRetry", "HTTPSConnectionPool", "errno"))


def test_the_miss_is_remembered_for_the_run(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example.invalid")
    asked = []
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: asked.append(a[0]) or real(*a, **k))
    first = hub.download_config("acme/open-llama")
    again = hub.download_config("acme/open-llama")
    other = hub.download_config("acme/other-model")
    assert asked == ["hub.example.invalid"]  # the host is looked up once in the run
    assert first.reason == again.reason == other.reason


def test_a_hub_that_never_answers_costs_the_timeout_once_in_total(monkeypatch):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # connections complete in the backlog; no byte is ever sent back
    try:
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("VLLM_READER_HUB_TIMEOUT", "1")
        start = time.monotonic()
        miss = hub.download_config("acme/open-llama")
        first = time.monotonic() - start
        hub.download_config("acme/other-model")
        both = time.monotonic() - start
    finally:
        silent.close()
    assert isinstance(miss, hub.HubMiss) and "within 1 s" in miss.reason
    assert first < 2.5 and both < 3.0
