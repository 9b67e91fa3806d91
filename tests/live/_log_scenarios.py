"""The real vLLM servers whose logs are recorded as fixtures (fixtures/logs/live/), and the recorder.

Each scenario is one server start on the CPU build with dummy weights: a normal start with traffic
(stats lines), a KV-bound start (24 blocks, so requests wait and the cache fills), a start vLLM
refuses for lack of KV memory, and one it refuses for a config error. tools/record_vllm_logs.py
writes them into fixtures/; tests/live/test_live_logs.py records them again and compares.
"""
from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ._server import ROOT, free_port, live_server, server_command

sys.path.insert(0, str(ROOT / "tools"))
from differential.ask_vllm import cpu_env  # noqa: E402  (the CPU worker's preloads, shared with the tools)

WIDE_LLAMA = ROOT / "fixtures" / "live" / "wide-llama"  # 16 layers x 8 KV heads x 128: 64 KiB of KV per token
TINY_LLAMA = ROOT / "fixtures" / "live" / "tiny-llama"
FIXTURES = ROOT / "fixtures" / "logs" / "live"


@dataclass(frozen=True)
class LogScenario:
    name: str
    model: Path
    flags: tuple[str, ...]
    requests: int = 0  # completions sent once the server is ready
    concurrency: int = 8
    output_tokens: int = 64
    starts: bool = True
    env: dict = field(default_factory=dict)


SCENARIOS = (
    LogScenario("serve", TINY_LLAMA, ("--max-model-len", "2048", "--max-num-seqs", "16",
                                      "--max-num-batched-tokens", "512"),
                requests=48, concurrency=8, env={"VLLM_LOG_STATS_INTERVAL": "2"}),
    LogScenario("kv-bound", TINY_LLAMA, ("--max-model-len", "2048", "--max-num-seqs", "16",
                                         "--max-num-batched-tokens", "512", "--num-gpu-blocks-override", "24",
                                         "--no-enable-prefix-caching"),
                requests=48, concurrency=24, output_tokens=128, env={"VLLM_LOG_STATS_INTERVAL": "2"}),
    LogScenario("refused-kv-memory", WIDE_LLAMA, ("--max-model-len", "32768", "--max-num-batched-tokens", "256"),
                starts=False),
    LogScenario("refused-max-len", TINY_LLAMA, ("--max-model-len", "8192"), starts=False),
)


def fixture_path(version: str, scenario: LogScenario) -> Path:
    return FIXTURES / f"vllm-{version}-cpu-{scenario.name}.log"


def record(venv: Path, scenario: LogScenario, log_path: Path) -> Path:
    """Run the scenario's server to its end (traffic sent, or refused) and leave its whole log at log_path."""
    flags = ["--skip-tokenizer-init", *scenario.flags]
    env = {**scenario.env, **cpu_env(venv)}
    if scenario.starts:
        with live_server(venv, flags, log_path, model_dir=scenario.model, env=env) as server:
            _traffic(server, scenario)
            time.sleep(5)  # one more stats interval after the last request
        return log_path
    _run_to_exit(venv, flags, log_path, scenario, env)
    return log_path


def _traffic(server, scenario: LogScenario) -> None:
    def one(i: int) -> None:
        length = 100 + (i * 37) % 400
        server.complete([5 + (i + j) % 1000 for j in range(length)], scenario.output_tokens)

    with concurrent.futures.ThreadPoolExecutor(scenario.concurrency) as pool:
        list(pool.map(one, range(scenario.requests)))


def _run_to_exit(venv: Path, flags: list[str], log_path: Path, scenario: LogScenario, extra_env: dict,
                 timeout: float = 400) -> None:
    command = server_command(venv, scenario.model, free_port(), flags)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1", "TOKENIZERS_PARALLELISM": "false",
           **extra_env}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            process.wait(timeout=timeout)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, 9)
                process.wait(timeout=10)
