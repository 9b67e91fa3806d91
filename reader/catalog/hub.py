"""Downloading a model's config.json (never its weights) from the Hugging Face Hub.

The real `huggingface_hub` client does the work, so everything it honours works here: HF_ENDPOINT
(a mirror or a private hub), HF_TOKEN (gated and private repositories; else the token that
`hf auth login` stored), HF_HUB_OFFLINE, and the cache (the file lands in the Hugging Face cache,
where the next run finds it without asking the Hub). Only the small JSON files vLLM reads for the
model's shape are asked for: config.json (or Mistral's params.json), and ModelOpt's
hf_quant_config.json when config.json carries no quantization_config.

A machine without network answers at once: the Hub's host is resolved and connected to first (within the
timeout; skipped behind an HTTPS proxy), and a host that does not resolve or connect is reported in one
sentence without asking the client, whose retries took over 20 s. Each lookup is bounded by the timeout in
total, and a miss (and an unreachable Hub) is remembered for the rest of the run: `check` on fifty files
pays for it once.

The client is imported only when a download is needed, so commands that never reach the Hub do not
pay for it. Every failure becomes one sentence (`HubMiss.reason`) for the report.
"""
from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from .hf_cache import hub_cache_dir

DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_TIMEOUT_S = 10.0  # huggingface_hub's own default for the metadata request (DEFAULT_ETAG_TIMEOUT)
_TRUE = {"1", "on", "yes", "true"}


@dataclass(frozen=True)
class HubMiss:
    reason: str
    denied: bool = False  # the Hub answered and refused (gated, private, missing); not a network problem


@dataclass(frozen=True)
class Downloaded:
    repo_id: str
    revision: str
    folder: Path  # the snapshot folder in the Hugging Face cache
    endpoint: str


def offline(env: Mapping[str, str] = os.environ) -> bool:
    return any(env.get(key, "").strip().lower() in _TRUE for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def endpoint(env: Mapping[str, str] = os.environ) -> str:
    return (env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def timeout_s(env: Mapping[str, str] = os.environ) -> float:
    for key in ("VLLM_READER_HUB_TIMEOUT", "HF_HUB_ETAG_TIMEOUT"):
        try:
            value = float(env.get(key, ""))
        except ValueError:
            continue
        if value > 0:
            return value
    return DEFAULT_TIMEOUT_S


_UNREACHABLE: dict[str, HubMiss] = {}  # endpoint -> why it cannot be reached, for the rest of the run
_MISSES: dict[tuple[str, Optional[str], str], HubMiss] = {}  # (repo, revision, endpoint) -> the miss


def download_config(repo_id: str, revision: Optional[str] = None) -> Downloaded | HubMiss:
    """config.json (or params.json) of `repo_id` at `revision`, downloaded into the Hugging Face cache; within
    timeout_s() in total, and a miss is given again without asking for the rest of the run."""
    if offline():
        return HubMiss("HF_HUB_OFFLINE is set, so the Hugging Face Hub was not asked")
    where = endpoint()
    key = (repo_id, revision, where)
    if key not in _MISSES:
        got = _UNREACHABLE.get(where) or _bounded(repo_id, revision, where)
        if isinstance(got, Downloaded):
            return got
        _MISSES[key] = got
    return _MISSES[key]


def _bounded(repo_id: str, revision: Optional[str], where: str) -> Downloaded | HubMiss:
    """The download in a daemon thread, given up after the timeout (the client's own retries are not bounded)."""
    box: list[Downloaded | HubMiss] = []
    worker = threading.Thread(target=lambda: box.append(_reach_then_download(repo_id, revision, where)), daemon=True)
    worker.start()
    worker.join(timeout_s())
    if box:
        return box[0]
    _UNREACHABLE[where] = HubMiss(f"the Hub ({where}) did not answer within {timeout_s():g} s; set HF_ENDPOINT for a "
                                  "mirror, or HF_HUB_OFFLINE=1 to skip it")
    return _UNREACHABLE[where]


def _reach_then_download(repo_id: str, revision: Optional[str], where: str) -> Downloaded | HubMiss:
    problem = _unreachable(where)
    if problem is not None:
        _UNREACHABLE[where] = HubMiss(f"the Hub ({where}) could not be reached: {problem}; set HF_ENDPOINT for a "
                                      "mirror, or HF_HUB_OFFLINE=1 to skip it")
        return _UNREACHABLE[where]
    return _download(repo_id, revision, where)


def _unreachable(where: str) -> Optional[str]:
    """Why the endpoint's host cannot be reached from here (it does not resolve, or refuses or ignores a
    connection within the timeout), or None. Behind an HTTPS proxy the proxy is the client's business."""
    from urllib.parse import urlsplit

    parts = urlsplit(where)
    if not parts.hostname or any(os.environ.get(k) for k in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except OSError:
        return f"its host name {parts.hostname} does not resolve here (no network or no DNS)"
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout_s()).close()
    except OSError:
        return f"{parts.hostname} port {port} did not accept a connection within {timeout_s():g} s"
    return None


def _download(repo_id: str, revision: Optional[str], where: str) -> Downloaded | HubMiss:
    client = _client()
    if client is None:
        return HubMiss("the huggingface_hub package is not installed (pip install huggingface_hub)")
    try:
        path = _fetch(client, repo_id, "config.json", revision, where)
    except Exception as err:  # the client's errors are mapped to one sentence below
        if not _is_missing_file(client, err):
            return _miss(client, err, repo_id, revision, where)
        try:
            path = _fetch(client, repo_id, "params.json", revision, where)
        except Exception as err2:
            if _is_missing_file(client, err2):
                return HubMiss(f"the Hub repository {repo_id} has neither config.json nor params.json", denied=True)
            return _miss(client, err2, repo_id, revision, where)
    folder = Path(path).parent
    if path.endswith("config.json") and not _has_quantization_config(Path(path)):
        try:
            _fetch(client, repo_id, "hf_quant_config.json", revision, where)
        except Exception:  # optional: most repositories have none
            pass
    return Downloaded(repo_id=repo_id, revision=revision or "main", folder=folder, endpoint=where)


def _client() -> Any:
    # Quiet the client: no progress bars, telemetry or advisory warnings in our reports.
    for key in ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_TELEMETRY", "HF_HUB_DISABLE_IMPLICIT_TOKEN_WARNING"):
        os.environ.setdefault(key, "1")
    try:
        import huggingface_hub
        from huggingface_hub import errors
        from huggingface_hub.utils import logging as hub_logging
    except ImportError:
        return None
    hub_logging.set_verbosity_error()
    return huggingface_hub, errors


def _fetch(client: Any, repo_id: str, filename: str, revision: Optional[str], where: str) -> str:
    hub, _ = client
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN") or None
    _ask_once(hub, hub.hf_hub_url(repo_id, filename, revision=revision, endpoint=where), token)
    return hub.hf_hub_download(repo_id, filename, revision=revision, cache_dir=str(hub_cache_dir()), endpoint=where,
                               token=token, etag_timeout=timeout_s())


def _ask_once(hub: Any, url: str, token: Optional[str]) -> None:
    """One HEAD request for the file, not retried: an unreachable or silent Hub fails within `timeout_s()`.

    The client's own metadata call (get_hf_file_metadata) goes through http_backoff, which retries network
    errors five times with waits of 1 to 8 s, so a lookup would take about 24 s whatever the timeout said.
    A refusal (gated, missing, HTTP error) raises the client's own error, as its download would.
    """
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    headers = dict(build_hf_headers(token=token), **{"Accept-Encoding": "identity"})
    session = get_session()
    # The client's session is requests' below huggingface_hub 1.0 and httpx's (httpx2 in 2.x) from 1.0 on;
    # they spell "do not follow redirects" differently.
    no_redirects = {"allow_redirects": False} if type(session).__module__.startswith("requests") \
        else {"follow_redirects": False}
    response = session.head(url, headers=headers, timeout=timeout_s(), **no_redirects)
    hf_raise_for_status(response)


def _is_missing_file(client: Any, err: Exception) -> bool:
    _, errors = client
    return isinstance(err, errors.EntryNotFoundError) and not isinstance(err, errors.LocalEntryNotFoundError)


def _miss(client: Any, err: Exception, repo_id: str, revision: Optional[str], where: str) -> HubMiss:
    _, errors = client
    status = getattr(getattr(err, "response", None), "status_code", None)
    if isinstance(err, errors.GatedRepoError):
        return HubMiss(f"{repo_id} is a gated repository and the Hub ({where}) refused access (HTTP {status}): accept "
                       "its license on the model page and set HF_TOKEN to a token that has access", denied=True)
    if isinstance(err, errors.RepositoryNotFoundError):
        return HubMiss(f"the Hub ({where}) has no repository {repo_id}, or it is private and HF_TOKEN does not give "
                       f"access (HTTP {status})", denied=True)
    if isinstance(err, errors.RevisionNotFoundError):
        return HubMiss(f"the Hub repository {repo_id} has no revision '{revision}'", denied=True)
    if isinstance(err, errors.OfflineModeIsEnabled):
        return HubMiss("HF_HUB_OFFLINE is set, so the Hugging Face Hub was not asked")
    if isinstance(err, errors.HfHubHTTPError) and status is not None:
        return HubMiss(f"the Hub ({where}) answered HTTP {status} for {repo_id}", denied=status in (401, 403, 404))
    if isinstance(err, (errors.LocalEntryNotFoundError, OSError, TimeoutError)) \
            or "Timeout" in type(err).__name__ or "Connect" in type(err).__name__:
        return HubMiss(f"the Hub ({where}) could not be reached (no answer within {timeout_s():g} s); set HF_ENDPOINT "
                       "for a mirror, or HF_HUB_OFFLINE=1 to skip it")
    return HubMiss(f"downloading config.json of {repo_id} from {where} failed: {type(err).__name__}")


def _has_quantization_config(path: Path) -> bool:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and ("quantization_config" in data
                                       or "quantization_config" in (data.get("text_config") or {}))


__all__ = ["download_config", "Downloaded", "HubMiss", "offline", "endpoint", "timeout_s"]
