"""What vLLM's CPU platform sets on its own, per release, with its sources: one table for the config's resolver
(a launch whose environment sets VLLM_CPU_KVCACHE_SPACE, or a profile of a CPU) and the log reader (a log of
the CPU build), so that both model the CPU server as vLLM configures it.

Sources, read at v0.18.0, v0.32.0 and v0.33.0 (~/.cache/vllm-reader/vllm-src): vllm/platforms/cpu.py
CpuPlatform.check_and_update_config sets block_size to 128 unless the user set it (MLA models 16), turns async
scheduling off ("async scheduling is not required on CPU") whatever was asked, and, from v0.32.0, takes the KV
cache's size from VLLM_CPU_KVCACHE_SPACE in GiB as kv_cache_memory_bytes (v0.18.0: the same variable, through
get_device_total_memory). Chunked prefill stays as configured except for MLA models.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

CPU_KV_ENV = "VLLM_CPU_KVCACHE_SPACE"
_RELEASES = "v0.18.0, v0.32.0 and v0.33.0"
_CPU_PY = f"vllm/platforms/cpu.py CpuPlatform.check_and_update_config @ {_RELEASES}"

# dest -> (value, why): what the CPU platform defaults where the user set nothing
CPU_DEFAULTS: dict[str, tuple[Any, str]] = {
    "block_size": (128, f"{_CPU_PY} (128 unless the user sets it; MLA models differ)"),
}
# dest -> (value, why): what the CPU platform sets whatever the user asked
CPU_FORCED: dict[str, tuple[Any, str]] = {
    "async_scheduling": (False, f"{_CPU_PY} (async scheduling is not required on CPU: always off)"),
}
GIB = 1 << 30


def cpu_kv_bytes(env: Mapping[str, str]) -> Optional[tuple[int, str]]:
    """The KV cache's size a CPU server gets from its environment, and why; None when the variable is not set
    (or not a whole number of GiB, which vLLM itself would refuse)."""
    text = str(env.get(CPU_KV_ENV, "")).strip()
    if not text.isdigit():
        return None
    return int(text) * GIB, f"{CPU_KV_ENV}={text} (GiB) in the launch's environment: {_CPU_PY}"


def on_cpu(env: Mapping[str, str], device_kind: Optional[str] = None) -> Optional[str]:
    """Why this launch runs vLLM's CPU build (None: nothing says so): the CPU KV-cache variable in its
    environment, or a calibration profile of a CPU."""
    if cpu_kv_bytes(env) is not None:
        return f"{CPU_KV_ENV} is set in its environment"
    if device_kind == "cpu":
        return "the calibration profile is of a CPU"
    return None
