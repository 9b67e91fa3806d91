"""A stand-in for the Hugging Face Hub on 127.0.0.1, for the real huggingface_hub client (HF_ENDPOINT).

It answers the one route the client uses to download a file, `/<org>/<name>/resolve/<revision>/<file>`
(HEAD for the metadata, GET for the bytes), with the headers and error codes the Hub sends
(X-Repo-Commit, ETag, X-Error-Code: GatedRepo / RepoNotFound / EntryNotFound / RevisionNotFound),
as huggingface_hub/file_download.py get_hf_file_metadata and utils/_http.py hf_raise_for_status
read them (huggingface_hub v2.4.0). Every request is recorded so tests can say what was asked.
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import unquote


@dataclass
class Repo:
    files: dict[str, dict[str, Any]]  # revision -> {filename: JSON object}
    gated_token: Optional[str] = None  # a gated repo: only this bearer token gets the files
    commits: dict[str, str] = field(default_factory=dict)  # revision -> commit hash

    def commit(self, revision: str) -> str:
        return self.commits.get(revision) or hashlib.sha1(revision.encode()).hexdigest()


@dataclass
class Request:
    method: str
    path: str
    authorization: Optional[str]


class FakeHub:
    def __init__(self, repos: dict[str, Repo]):
        self.repos = repos
        self.requests: list[Request] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802 (http.server's naming)
                hub._answer(self, body=False)

            def do_GET(self) -> None:  # noqa: N802
                hub._answer(self, body=True)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "FakeHub":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def files_asked(self) -> list[str]:
        return [r.path.rsplit("/", 1)[-1] for r in self.requests]

    def _answer(self, h: BaseHTTPRequestHandler, body: bool) -> None:
        auth = h.headers.get("Authorization")
        self.requests.append(Request(h.command, unquote(h.path), auth))
        parts = unquote(h.path.split("?", 1)[0]).strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return self._error(h, 404, "RepoNotFound", "not a resolve URL")
        repo_id, revision, filename = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        repo = self.repos.get(repo_id)
        if repo is None:
            return self._error(h, 404, "RepoNotFound", "Repository not found")
        if repo.gated_token is not None and auth != f"Bearer {repo.gated_token}":
            return self._error(h, 401, "GatedRepo", "Access to model is restricted. You must be authenticated.")
        if revision not in repo.files:
            return self._error(h, 404, "RevisionNotFound", "Invalid rev id")
        data = repo.files[revision].get(filename)
        if data is None:
            return self._error(h, 404, "EntryNotFound", "Entry not found")
        payload = (json.dumps(data, indent=2) + "\n").encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.send_header("ETag", '"' + hashlib.sha1(payload).hexdigest() + '"')
        h.send_header("X-Repo-Commit", repo.commit(revision))
        h.end_headers()
        if body:
            h.wfile.write(payload)

    @staticmethod
    def _error(h: BaseHTTPRequestHandler, status: int, code: str, message: str) -> None:
        payload = json.dumps({"error": message}).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.send_header("X-Error-Code", code)
        h.send_header("X-Error-Message", message)
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(payload)
