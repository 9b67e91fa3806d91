"""What a vLLM log says, as data: the release, the arguments, the engine's resolved config, the memory
vLLM measured at start-up, its refusal when it did not start, and what the stats lines saw.

These types import nothing from the rest of vllm-reader, so the loaders (a log is a config source)
and the diagnosis (a log is a measurement) can both hold one.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

GIB = 1 << 30


class Figure(BaseModel):
    """One number vLLM printed, with the line that printed it."""

    value: float
    unit: Literal["GiB", "tokens", "blocks", "x", "fraction", "seconds"]
    line: int
    text: str = ""  # the message it was read from, shortened

    @property
    def bytes(self) -> int:
        return int(round(self.value * GIB)) if self.unit == "GiB" else int(self.value)


class WorkerMemory(BaseModel):
    """The memory one worker (a GPU) reported during start-up; None where the log does not say."""

    worker: str = "main"  # the process tag, e.g. "Worker_TP1", "VllmWorkerProcess pid=507"
    total: Optional[Figure] = None  # torch's total memory of the device
    free_at_start: Optional[Figure] = None
    utilization: Optional[Figure] = None
    requested: Optional[Figure] = None  # total x utilization
    weights: Optional[Figure] = None
    non_torch: Optional[Figure] = None
    activation_peak: Optional[Figure] = None
    consumed: Optional[Figure] = None  # weights + non-torch, as the newest releases print it
    available_kv: Optional[Figure] = None
    cudagraph: Optional[Figure] = None  # what graph capture took
    cudagraph_estimate: Optional[Figure] = None  # what the profiler estimated before capture (>= 0.20)

    def known(self) -> list[str]:
        return [name for name in type(self).model_fields if name != "worker" and getattr(self, name) is not None]


class KvCapacity(BaseModel):
    """The engine-wide result of the KV sizing."""

    num_gpu_blocks: Optional[Figure] = None
    num_cpu_blocks: Optional[Figure] = None
    kv_tokens: Optional[Figure] = None
    max_concurrency: Optional[Figure] = None
    concurrency_for_len: Optional[int] = None  # the max_model_len the concurrency is quoted for
    device: str = "GPU"  # "CPU" on vLLM's CPU backend


class Refusal(BaseModel):
    """Why vLLM did not start, as it said it."""

    kind: Literal["max_len_too_long", "no_kv_memory", "free_memory", "oom", "other"]
    message: str
    line: int
    error_type: str = "ValueError"
    max_model_len: Optional[int] = None
    needed_gib: Optional[float] = None
    available_gib: Optional[float] = None
    estimated_max_model_len: Optional[int] = None
    kv_tokens: Optional[int] = None  # V0: tokens the cache holds
    free_gib: Optional[float] = None
    total_gib: Optional[float] = None
    utilization: Optional[float] = None
    requested_gib: Optional[float] = None


class StatsSample(BaseModel):
    """One periodic stats line."""

    line: int
    seconds: Optional[float] = None  # since the first stats line (from vLLM's timestamps)
    engine: Optional[int] = None
    prompt_tps: float
    generation_tps: float
    running: int
    waiting: int  # V0 calls it Pending
    swapped: Optional[int] = None  # V0 only
    kv_usage_pct: float
    prefix_hit_pct: Optional[float] = None


class Preemptions(BaseModel):
    warnings: int = 0  # V0 warns once per 50 preemptions
    cumulative: int = 0  # the highest total_num_cumulative_preemption it printed
    mode: Optional[str] = None
    first_line: Optional[int] = None


class LoggedValues(BaseModel):
    """A key/value text of the log (arguments or the engine config), as read."""

    values: dict[str, Any] = Field(default_factory=dict)
    line: int
    form: str  # "non-default args", "args Namespace", "engine config"
    truncated: bool = False
    dropped: str = ""


class LogReading(BaseModel):
    source: str
    records: int
    recognised: int  # records that matched a known vLLM message
    headers: int = 0  # records with vLLM's own header (level, MM-DD time, [file.py:line])
    formats: list[str] = Field(default_factory=list)  # which message formats matched, in first-seen order
    release: Optional[str] = None  # e.g. "0.8.5", when the log prints it
    release_printed: Optional[str] = None  # as printed, e.g. "0.8.5.post1"
    release_line: Optional[int] = None
    release_range: Optional[str] = None  # what the message formats allow, when the release is not printed
    engine: Optional[Literal["v0", "v1"]] = None
    engine_how: str = ""
    processes: list[str] = Field(default_factory=list)  # process roles seen: APIServer, EngineCore_DP0, Worker_TP0...
    command: Optional[str] = None  # the `vllm serve ...` line of a terminal paste, when the log holds one
    command_line: Optional[int] = None
    args: Optional[LoggedValues] = None
    engine_config: Optional[LoggedValues] = None
    resolved: dict[str, Figure] = Field(default_factory=dict)  # single values other lines state (max model len...)
    workers: list[WorkerMemory] = Field(default_factory=list)
    kv: KvCapacity = Field(default_factory=KvCapacity)
    refusal: Optional[Refusal] = None
    started: bool = False  # a line that only a started server prints was seen
    stats: list[StatsSample] = Field(default_factory=list)
    preemptions: Preemptions = Field(default_factory=Preemptions)
    gpu_name: Optional[str] = None  # a device name the log mentions (e.g. a fused-MoE config file name)
    gpu_name_line: Optional[int] = None
    platform: Optional[str] = None  # the device platform the log names: "cuda", "rocm", "cpu", "tpu", "xpu", ...
    platform_how: str = ""  # the line that named it
    notes: list[str] = Field(default_factory=list)

    @property
    def on_cpu(self) -> bool:
        """vLLM's CPU build: no GPU ran this, whatever the catalog would assume."""
        return self.platform == "cpu"

    @property
    def memory(self) -> WorkerMemory:
        """The first worker's figures (rank 0 where the ranks are tagged), or an empty set."""
        return self.workers[0] if self.workers else WorkerMemory()

    @property
    def is_vllm_log(self) -> bool:
        return self.recognised > 0 or self.headers >= 3
