"""`read-log`: a LogReading, the launch rebuilt from it, and its memory set beside the prediction."""
from __future__ import annotations

import os
import tempfile
from typing import Any, Optional

from pydantic import BaseModel, Field

from ..errors import ReaderError
from .compare import MemoryComparison, compare_memory
from .read import read_log
from .reading import LogReading
from .stats import StatsSummary, summarize

NOT_A_LOG = ("this is not a vLLM log: no line has vLLM's header ('INFO 05-12 08:01:39 [file.py:271]') or a message only "
             "vLLM prints (engine config, arguments, memory profiling, KV cache size, stats). read-log reads what "
             "`vllm serve`, `kubectl logs` or `docker logs` print; give a config file to `check` or `diagnose`.")


class Launch(BaseModel):
    """The deployment the log describes, as vllm-reader resolved it."""

    command: str  # `vllm serve MODEL --flag value ...`, as rebuilt
    model: Optional[str] = None  # catalog id, when it resolved
    model_how: str = ""
    gpu: Optional[str] = None
    gpu_how: str = ""
    gpu_assumed: bool = False
    vllm_version: str = ""
    version_how: str = ""
    notes: list[str] = Field(default_factory=list)


class LogReport(BaseModel):
    reading: LogReading
    launch: Optional[Launch] = None
    memory: Optional[MemoryComparison] = None
    stats: Optional[StatsSummary] = None
    notes: list[str] = Field(default_factory=list)  # why a part could not be produced


def read_text_arg(path: str) -> tuple[str, str]:
    """The log's text and the name to report: a file, or '-' for standard input."""
    import sys

    if path == "-":
        return sys.stdin.read(), "<stdin>"
    from ..config.load import read_text
    return read_text(path), path


def log_report(text: str, source: str, options: Any) -> LogReport:
    reading = read_log(text, source)
    if not reading.is_vllm_log:
        raise ReaderError(NOT_A_LOG, file=source)
    report = LogReport(reading=reading, stats=summarize(reading.stats))
    if reading.engine_config is None and reading.args is None and reading.command is None:
        report.notes.append("no engine config line and no argument line: the deployment cannot be rebuilt, so "
                            "nothing is predicted; `diagnose CONFIG --log LOG` sets this log beside its config")
        return report
    resolved = _resolve(text, source, options)
    report.launch = _launch(resolved)
    if reading.on_cpu and resolved.gpu_assumed:
        _on_cpu(report.launch, reading, report.notes)
        return report
    report.memory = _memory(resolved, reading, report.notes)
    return report


def _on_cpu(launch: Launch, reading: LogReading, notes: list[str]) -> None:
    """A log of vLLM's CPU build: no GPU to assume, and no GPU's memory to predict beside what it logged."""
    launch.gpu, launch.gpu_how, launch.gpu_assumed = None, f"none: the log is from vLLM's CPU build, {reading.platform_how}", False
    launch.notes = [n for n in launch.notes if not n.startswith("GPU not given")]
    notes.append("the log is from vLLM's CPU build, which the GPU catalog does not model: the memory is not predicted "
                 "beside it (`vllm-reader calibrate` fits a profile of this machine for `diagnose --calibration`)")


def _resolve(text: str, source: str, options: Any) -> Any:
    from ..config.from_cli import resolve_with_calibration

    return resolve_with_calibration(log_deployment(text, source, options), options)


def log_deployment(text: str, source: str, options: Any) -> Any:
    """The deployment a log's text shows (its launch), loaded as a log whatever the file's name, named `source`."""
    from ..config.load import load_deployment

    if os.path.isfile(source) and not source.endswith((".json", ".yaml", ".yml", ".sh", ".bash", ".zsh", ".ps1")):
        return load_deployment(source, options)
    with tempfile.TemporaryDirectory() as folder:  # stdin, or a log saved under a config-like name
        path = os.path.join(folder, "vllm.log")
        with open(path, "w") as handle:
            handle.write(text)
        deployment = load_deployment(path, options)
    return deployment.model_copy(update={"source": source})


def _launch(resolved: Any) -> Launch:
    d = resolved.deployment
    words = [d.entry_point if d.entry_point == "vllm serve" else "python -m vllm.entrypoints.openai.api_server"]
    if d.model:
        words.append(d.model if d.entry_point == "vllm serve" else f"--model {d.model}")
    for flag in d.flags.values():
        if flag.dest == "model":
            continue
        if isinstance(flag.value, bool):
            words.append(flag.option if flag.value else "--no-" + flag.option[2:])
        else:
            words.append(flag.option + ("" if flag.raw in (None, "") else " " + _quote(flag.raw)))
    env = " ".join(f"{k}={v}" for k, v in d.env.items())
    return Launch(command=(env + " " if env else "") + " ".join(words),
                  model=resolved.model.id if resolved.model else None, model_how=resolved.model_how,
                  gpu=resolved.gpu.id if resolved.gpu else None, gpu_how=resolved.gpu_how,
                  gpu_assumed=resolved.gpu_assumed, vllm_version=d.context.vllm_version or resolved.version,
                  version_how={"log": "printed in the log", "cli": "given with --vllm-version"}.get(
                      resolved.version_origin, "not in the log: the newest known release"),
                  notes=[n.message for n in d.notes + resolved.notes])


def _memory(resolved: Any, reading: LogReading, notes: list[str]) -> Optional[MemoryComparison]:
    from ..capacity.api import compute_capacity
    from ..pipeline import capacity_request

    if resolved.model is None:
        notes.append(f"model '{resolved.deployment.model}' is not in the catalog, so the memory cannot be predicted; "
                     "name it with --model (a catalog id or a config.json)")
        return None
    try:
        predicted = compute_capacity(capacity_request(resolved, measured=False))
    except ReaderError as err:
        notes.append(f"the memory cannot be predicted: {err.message}")
        return None
    return compare_memory(reading, predicted, gpu_assumed=resolved.gpu_assumed)


def _quote(text: str) -> str:
    return f"'{text}'" if any(ch in text for ch in " {}[]\"'") else text
