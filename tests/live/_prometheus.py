"""Start and stop a real Prometheus server (the distribution package: Debian's `prometheus`, installed by
tools/prometheus_env.sh) that scrapes given 127.0.0.1 targets every second, for the live tests and the
fixture recorders. Its data lives in a temporary folder and goes with it."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Iterator, Optional

from ._server import free_port, stop_group


def prometheus_binary() -> Optional[str]:
    return os.environ.get("VLLM_READER_PROMETHEUS") or shutil.which("prometheus")


class LivePrometheus:
    def __init__(self, process: subprocess.Popen, url: str, log_path: Path):
        self.process, self.url, self.log_path = process, url, log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def query(self, promql: str) -> list:
        with urllib.request.urlopen(self.url + "/api/v1/query?query=" + urllib.parse.quote(promql), timeout=10) as r:
            return json.loads(r.read())["data"]["result"]

    def wait_scraped(self, job: str = "vllm", timeout: float = 60.0) -> None:
        """Until Prometheus has scraped every target of the job at least once, and found it up."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = self.query(f'up{{job="{job}"}}')
            if result and all(r["value"][1] == "1" for r in result):
                return
            time.sleep(0.5)
        raise RuntimeError(f"Prometheus did not scrape job {job} within {timeout:.0f} s:\n" + self.log()[-3000:])


@contextlib.contextmanager
def prometheus_server(binary: str, targets: list[str], folder: Path,
                      interval_s: float = 1.0) -> Iterator[LivePrometheus]:
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = folder / "prometheus.yml"
    config.write_text(
        f"global:\n  scrape_interval: {interval_s:g}s\n  evaluation_interval: {interval_s:g}s\n"
        "scrape_configs:\n  - job_name: vllm\n    static_configs:\n"
        f"      - targets: [{', '.join(repr(t) for t in targets)}]\n")
    log_path = folder / "prometheus.log"
    command = [binary, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
               f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=2h"]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = LivePrometheus(process, f"http://127.0.0.1:{port}", log_path)
    try:
        _wait_ready(server, 60.0)
        yield server
    finally:
        stop_group(process, timeout=20.0)


def _wait_ready(server: LivePrometheus, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"Prometheus exited with {server.process.returncode}:\n" + server.log()[-3000:])
        try:
            with urllib.request.urlopen(server.url + "/-/ready", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"Prometheus was not ready after {timeout:.0f} s:\n" + server.log()[-3000:])
