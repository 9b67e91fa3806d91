"""Start and stop a real vLLM server (the CPU build, dummy weights) for the live tests and the fixture recorders.

The environments come from tools/vllm_env.sh, which exports VLLM_READER_VLLM_<version> (dots as
underscores). Without them the live tests skip; `.ci/run` builds them, so CI runs every live test.
Traffic stays on 127.0.0.1, bounded in count and time, and every server is stopped by its process group.

`fixtures/live/tiny-llama` has a word-level tokenizer (tools/make_tiny_tokenizer.py), so a server started
without `--skip-tokenizer-init` serves text prompts and `vllm bench serve` (bench_serve below) can run its
random dataset against it; with the flag, prompts are token-id lists as before.
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
from typing import Callable, Iterator, Optional

ROOT = Path(__file__).resolve().parents[2]
TINY_LLAMA = ROOT / "fixtures" / "live" / "tiny-llama"
# Serves POST /reset_prefix_cache (vllm/entrypoints/serve/dev/cache/api_router.py, v0.32.0), which bench_serve's
# cold_cache needs.
DEV_MODE_ENV = {"VLLM_SERVER_DEV_MODE": "1"}


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
        self.front_cpus: Optional[str] = None  # where the API server runs when it is kept apart (front_end_apart)

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


def pinned(cpus: Optional[str], command: list[str]) -> list[str]:
    """The command under `taskset -c CPUS` (a CPU list such as "0" or "0,1"), or as it is without one."""
    return ["taskset", "-c", cpus, *command] if cpus else command


def server_command(venv: Path, model_dir: Path, port: int, extra: list[str]) -> list[str]:
    return [str(venv / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(model_dir), "--load-format", "dummy", "--dtype", "bfloat16",
            "--enforce-eager", "--host", "127.0.0.1", "--port", str(port), *extra]


@contextlib.contextmanager
def live_server(venv: Path, extra: list[str], log_path: Path, model_dir: Path = TINY_LLAMA,
                env: Optional[dict] = None, ready_timeout: float = 300.0, cpus: Optional[str] = None,
                front_apart: bool = False) -> Iterator[LiveServer]:
    """Run a server with the given extra flags until the block ends; fail with its log if it never gets ready.
    cpus: pin the server's processes to these CPUs (taskset). front_apart: once it is ready, keep the engine and
    the API server on CPUs of their own (front_end_apart)."""
    port = free_port()
    command = pinned(cpus, server_command(venv, model_dir, port, extra))
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
                   "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                   start_new_session=True)
    server = LiveServer(process, port, log_path, str(model_dir), command)
    try:
        _wait_ready(server, ready_timeout)
        if front_apart:
            server.front_cpus = front_end_apart(server)
        yield server
    finally:
        stop_group(process)


def front_end_apart(server: LiveServer) -> Optional[str]:
    """Pin the engine core process, every thread of it, to all the server's CPUs but the last, and the API server
    to the last; return that CPU for the benchmark client (None on a single CPU: nothing to split).

    Why: the CPU build binds its OpenMP threads to all cores but one, which it reserves for the rest (its start-up
    log at v0.32.0, from ompmultiprocessing.py: 'reserved_cpus=[1]' on two cores), but it leaves the
    engine's own Python threads and the API server free to land anywhere. On two cores the busy engine then
    starved the API server: whole responses reached the client in one burst when the request was done (a lone
    request's 128 tokens with 127 gaps of 0 ms, 4 of 8 requests at one request at a time; a first wave of 16
    waiting 3.9 s), and three rounds of one load gave 2,991 / 1,239 / 984 tok/s. Apart (pinned by hand with
    taskset), the same loads gave no burst in three rounds, and their rounds agreed within 4% (c16-out128 4,473 /
    4,182 / 4,402 tok/s, r30-out256 5,173 / 5,295 / 5,211)."""
    cpus = sorted(os.sched_getaffinity(server.process.pid))  # within a taskset the server was started under
    if len(cpus) < 2:
        return None
    engines = [pid for pid in _children(server.process.pid) if _comm(pid).startswith("VLLM::EngineCor")]
    if not engines:
        raise RuntimeError("no 'VLLM::EngineCore' process under the server: its engine cannot be kept apart")
    for pid in engines:
        _pin_threads(pid, set(cpus[:-1]))
    _pin_threads(server.process.pid, {cpus[-1]})
    return str(cpus[-1])


def _children(parent: int) -> list[int]:
    """Processes whose parent is `parent` (from /proc/*/stat: no kernel option needed)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # the command name is in parentheses and may hold spaces: the parent id follows the last ')'
            if int(stat.read_text().rpartition(")")[2].split()[1]) == parent:
                out.append(int(stat.parent.name))
    return out


def _comm(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/comm").read_text().strip()
    return ""


def _pin_threads(pid: int, cpus: set[int]) -> None:
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(task.name), cpus)


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


def bench_serve(venv: Path, server: LiveServer, runs: list[tuple[Path, list[str]]], timeout: float = 600.0,
                cpus: Optional[str] = None, served_name: Optional[str] = None,
                on_done: Optional[Callable[[Path], None]] = None, cold_cache: bool = False) -> list[dict]:
    """Run `vllm bench serve` against the server once per (result path, arguments), one after another in one
    process (tests/live/_bench_driver.py: vLLM imported once), and return the saved results (--save-result
    --save-detailed). The random dataset needs the model's tokenizer, so the server runs without
    --skip-tokenizer-init. served_name: the name the server answers to (default: its --served-model-name, else
    the model path). on_done(path) is called as each result is written. cpus: pin the client there (default: beside
    a server's API server kept apart, front_end_apart). cold_cache: empty the server's prefix cache before each run
    (the server must run with DEV_MODE_ENV; tests/live/_bench_driver.py says why)."""
    served = served_name or _flag(server.args, "--served-model-name") or server.model
    tokenizer = _flag(server.args, "--model") or str(TINY_LLAMA)
    argvs = [["--backend", "vllm", "--base-url", server.url, "--model", served, "--tokenizer", tokenizer,
              "--save-result", "--save-detailed", "--result-dir", str(path.parent), "--result-filename", path.name,
              "--disable-tqdm", *args] for path, args in runs]
    for path, _ in runs:
        path.parent.mkdir(parents=True, exist_ok=True)
    command = pinned(cpus or server.front_cpus,
                     [str(venv / "bin" / "python"), str(Path(__file__).with_name("_bench_driver.py"))])
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                   **({"BENCH_DRIVER_RESET_PREFIX_CACHE": "1"} if cold_cache else {})}
    log_path = runs[0][0].parent / "bench.log"
    deadline = time.monotonic() + timeout
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                   env=environment, start_new_session=True)
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(argvs))
            process.stdin.close()
            for line in process.stdout:
                log.write(line)
                if line.startswith("bench-driver: done ") and on_done is not None:
                    on_done(Path(line.split("bench-driver: done ", 1)[1].strip()))
                if time.monotonic() > deadline:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"vllm bench serve ran past {timeout:.0f} s: see {log_path}")
            process.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            stop_group(process)
    missing = [str(path) for path, _ in runs if not path.is_file()]
    if process.returncode != 0 or missing:
        raise RuntimeError(f"vllm bench serve failed ({process.returncode}; missing {missing}): see {log_path}")
    return [json.loads(path.read_text()) for path, _ in runs]


def _flag(args: list[str], name: str) -> Optional[str]:
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None
