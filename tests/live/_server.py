"""Start and stop a real vLLM server (the CPU build, dummy weights) for the live tests and the fixture recorders.

The environments come from tools/vllm_env.sh, which exports VLLM_READER_VLLM_<version> (dots as
underscores). Without them the live tests skip; `.ci/run` builds them, so CI runs every live test.
Traffic stays on 127.0.0.1, bounded in count and time, and every server is stopped by its process group.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parents[2]
TINY_LLAMA = ROOT / "fixtures" / "live" / "tiny-llama"


def venv_for(version: str) -> Optional[Path]:
    """The ready vLLM environment of a release, or None when this machine has none."""
    path = os.environ.get("VLLM_READER_VLLM_" + version.replace(".", "_"))
    if path and (Path(path) / ".ready").is_file():
        return Path(path)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """A running vLLM OpenAI-compatible server: its URL, its log so far, and the arguments it got."""

    def __init__(self, process: subprocess.Popen, port: int, log_path: Path, model: str, args: list[str]):
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self.model = model
        self.args = args

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def get(self, path: str, timeout: float = 10.0) -> str:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as reply:
            return reply.read().decode()

    def complete(self, prompt_ids: list[int], max_tokens: int, timeout: float = 300.0) -> dict:
        """One completion with a token-id prompt; the fake model never stops early (ignore_eos)."""
        body = json.dumps({"model": self.model, "prompt": prompt_ids, "max_tokens": max_tokens,
                           "ignore_eos": True, "temperature": 0}).encode()
        request = urllib.request.Request(self.url + "/v1/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return json.loads(reply.read())


def server_command(venv: Path, model_dir: Path, port: int, extra: list[str]) -> list[str]:
    return [str(venv / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(model_dir), "--load-format", "dummy", "--dtype", "bfloat16",
            "--enforce-eager", "--host", "127.0.0.1", "--port", str(port), *extra]


@contextlib.contextmanager
def live_server(venv: Path, extra: list[str], log_path: Path, model_dir: Path = TINY_LLAMA,
                env: Optional[dict] = None, ready_timeout: float = 300.0) -> Iterator[LiveServer]:
    """Run a server with the given extra flags until the block ends; fail with its log if it never gets ready."""
    port = free_port()
    command = server_command(venv, model_dir, port, extra)
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
                   "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                   start_new_session=True)
    server = LiveServer(process, port, log_path, str(model_dir), command)
    try:
        _wait_ready(server, ready_timeout)
        yield server
    finally:
        stop_group(process)


def _wait_ready(server: LiveServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"vLLM exited with {server.process.returncode} before it was ready:\n"
                               + server.log()[-4000:])
        try:
            server.get("/health", timeout=2.0)
            return
        except OSError:
            time.sleep(1.0)
    raise RuntimeError(f"vLLM was not ready after {timeout:.0f} s:\n" + server.log()[-4000:])


def stop_group(process: subprocess.Popen, timeout: float = 30.0) -> None:
    """Stop a process started in its own session, and everything it started: TERM, then KILL."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
