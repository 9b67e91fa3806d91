"""What vLLM prints at start-up and while serving, per release: one table of message formats.

Each entry names the fact a line states, the releases that print it in that wording (first and
last known), and where in vLLM's source the line comes from. A log is matched against every
format whatever its release (a pasted excerpt rarely says which release it is), and the formats
that matched narrow the release when the log does not print it.

Sources: the message templates in vLLM's source at the tags named (0.18.0 and 0.32.0 read in the
installed releases; older tags through vLLM's pull requests that introduced or changed the line),
and the public logs of fixtures/logs/public/INDEX.yaml, which show each wording in the wild.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..versions import VersionRange

_N = r"(-?\d+(?:\.\d+)?)"  # a plain number
_C = r"(\d[\d,]*)"  # an integer that may carry thousands separators


@dataclass(frozen=True)
class LogFormat:
    name: str  # the fact, e.g. "available_kv"
    regex: re.Pattern
    releases: str  # VersionRange text: where this wording is printed
    source: str
    engine: Optional[str] = None  # "v0" / "v1" when only one engine prints it


def _f(name: str, pattern: str, releases: str, source: str, engine: Optional[str] = None) -> LogFormat:
    return LogFormat(name, re.compile(pattern), releases, source, engine)


FORMATS: tuple[LogFormat, ...] = (
    # ---- which release, which engine, which arguments ------------------------------------------
    _f("engine_config", r"Initializing an? (?:(V0|V1) )?LLM engine \(v?([^)]*)\) with config: (.*)", "0.6.3..",
       "vllm/engine/llm_engine.py LLMEngine.__init__ (V0: 'an LLM engine' to 0.7.0, 'a V0 LLM engine' from 0.7.1); "
       "vllm/v1/engine/core.py EngineCore.__init__ @ v0.18.0/v0.32.0 ('a V1 LLM engine')"),
    _f("server_version", r"vLLM API server version v?(\d+\.\d+\.\d+\S*)", "0.6.3..0.12.0",
       "vllm/entrypoints/openai/api_server.py run_server (logger.info 'vLLM API server version %s')"),
    _f("banner_version", r"█\s+version v?(\d+\.\d+\.\d+\S*)", "0.13.0..",
       "vllm/entrypoints/utils.py log_version_and_model (ASCII banner) @ v0.18.0; api_utils.py @ v0.32.0"),
    _f("namespace_args", r"(?:^|\] )args: Namespace\((.*)", "0.6.3..0.9.2",
       "vllm/entrypoints/openai/api_server.py run_server: logger.info('args: %s', args)"),
    _f("non_default_args", r"non-default args: (\{.*)", "0.9.2..",
       "vllm/entrypoints/utils.py log_non_default_args @ v0.18.0; vllm/entrypoints/serve/utils/api_utils.py @ v0.32.0"),
    _f("command_line", r"^(?:[\w.@:~/()\-]*[$#] )?((?:[A-Z_][A-Z0-9_]*=\S+ )*(?:vllm serve|python3? -m "
       r"vllm\.entrypoints\.openai\.api_server)(?: .*)?)$", "0.6.3..",
       "not a vLLM message: the shell command of a terminal paste, pasted above its output"),
    _f("max_model_len", r"Using max model len (\d+)", "0.10.2..",
       "vllm/config/model.py get_and_verify_max_len logger.info @ v0.18.0/v0.32.0"),
    _f("chunked_prefill", r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)", "0.6.3..",
       "vllm/config.py SchedulerConfig.__post_init__; vllm/config/scheduler.py @ v0.18.0/v0.32.0"),
    _f("num_blocks_override", r"Overriding num_gpu_blocks=(\d+) with num_gpu_blocks_override=(\d+)", "0.6.3..",
       "vllm/v1/core/kv_cache_utils.py get_num_blocks; V0 worker.initialize_cache"),
    # ---- memory, as the worker measured it ------------------------------------------------------
    _f("weights_gb", r"Loading model weights took " + _N + r" GB", "0.6.3..0.7.3",
       "vllm/worker/model_runner.py load_model: 'Loading model weights took %.4f GB' (bytes / 2**30, so GiB); "
       "vllm/v1/worker/gpu_model_runner.py kept the wording until 0.8.0"),
    _f("weights_v1", r"Model loading took " + _N + r" (GB|GiB)(?: memory)? and " + _N + r" seconds", "0.8.0..",
       "vllm/v1/worker/gpu_model_runner.py load_model: '... GB and' to 0.8.x, '... GiB and' from 0.8.5, "
       "'... GiB memory and' @ v0.18.0/v0.32.0", "v1"),
    _f("profile_oneline", r"Memory profiling results: total_gpu_memory=" + _N + r"GiB initial_memory_usage=" + _N +
       r"GiB peak_torch_memory=" + _N + r"GiB memory_usage_post_profile=" + _N + r"GiB non_torch_memory=" + _N +
       r"GiB kv_cache_size=" + _N + r"GiB gpu_memory_utilization=" + _N, "0.6.4..0.6.4",
       "vllm/worker/worker.py determine_num_available_blocks @ v0.6.4 (PR vllm#9352); peak_torch includes weights",
       "v0"),
    _f("profile_table_total", r"^total_gpu_memory\s+" + _N + r"GiB$", "0.6.5..0.6.5",
       "vllm/worker/worker.py determine_num_available_blocks, table form (PR vllm#10511)", "v0"),
    _f("profile_table_util", r"^gpu_memory_utilization\s+" + _N + r"$", "0.6.5..0.6.5", "same", "v0"),
    _f("profile_table_weights", r"^model weights take\s+" + _N + r"GiB$", "0.6.5..0.6.5", "same", "v0"),
    _f("profile_table_non_torch", r"^non_torch_memory\s+" + _N + r"GiB$", "0.6.5..0.6.5", "same", "v0"),
    _f("profile_table_activation", r"^PyTorch activation peak memory\s+" + _N + r"GiB$", "0.6.5..0.6.5", "same", "v0"),
    _f("profile_table_kv", r"^available_kv_cache_memory\s+" + _N + r"GiB$", "0.6.5..0.6.5", "same", "v0"),
    _f("profile_total", r"the current vLLM instance can use total_gpu_memory \(" + _N + r"GiB\) x "
       r"gpu_memory_utilization \(" + _N + r"\) = " + _N + r"GiB", "0.6.6..0.10.2",
       "vllm/worker/worker.py determine_num_available_blocks (V0 worker, 0.6.6 until V0's removal)", "v0"),
    _f("profile_breakdown", r"model weights take " + _N + r"GiB; non_torch_memory takes " + _N + r"GiB; PyTorch "
       r"activation peak memory takes " + _N + r"GiB(?:; the rest of the memory reserved for KV Cache is " + _N + r"GiB)?",
       "0.6.6..0.10.2", "same", "v0"),
    _f("blocks_v0", r"#? ?(?:GPU|cuda|CUDA|XPU|HPU|NPU|TPU) blocks: (\d+), # CPU blocks: (\d+)", "0.6.3..0.10.2",
       "vllm/executor/gpu_executor.py / executor_base.py initialize_cache ('# GPU blocks' to 0.7.x, "
       "'# cuda blocks' from 0.7.3)", "v0"),
    _f("blocks_v1_early", r"^# GPU blocks: (\d+)$", "0.7.0..0.7.3",
       "vllm/v1/core/kv_cache_utils.py get_kv_cache_config (before PR vllm#13596)", "v1"),
    _f("cache_config_blocks", r"vllm cache_config_info with initialization after num_gpu_blocks is: (\d+)",
       "0.9.0..0.11.0", "vllm/v1/metrics/loggers.py log_engine_initialized (PrometheusStatLogger)", "v1"),
    _f("available_kv", r"Available KV cache memory: " + _N + r" GiB", "0.8.0..",
       "vllm/v1/worker/gpu_worker.py determine_available_memory @ v0.18.0 (457) / v0.32.0 (760)", "v1"),
    _f("kv_tokens", r"(GPU|CPU|XPU|TPU|HPU|NPU)(?: \+ host)? KV cache size: " + _C + r" tokens", "0.7.3..",
       "vllm/v1/core/kv_cache_utils.py (PR vllm#13596; one line with the concurrency @ v0.32.0)", "v1"),
    _f("max_concurrency", r"Maximum concurrency for " + _C + r" tokens per request: " + _N + r"x", "0.6.4..",
       "vllm/executor/executor_base.py (V0); vllm/v1/core/kv_cache_utils.py @ v0.18.0/v0.32.0"),
    _f("graph_capture", r"Graph capturing finished in " + _N + r" secs?, took " + _N + r" GiB", "0.6.3..",
       "vllm/worker/model_runner.py capture_model (V0); vllm/v1/worker/gpu_model_runner.py capture_model"),
    _f("cudagraph_pool", r"CUDA graph pool memory: " + _N + r" GiB \(actual\), " + _N + r" GiB \(estimated\)",
       "0.18.0..", "vllm/v1/worker/gpu_worker.py compile_or_warm_up_model @ v0.18.0 (618) / v0.32.0", "v1"),
    _f("memory_summary", r"Free memory on device \(" + _N + r"/" + _N + r" GiB\) on startup\. Desired GPU memory "
       r"utilization is \(" + _N + r", " + _N + r" GiB\)\. Actual usage is " + _N + r" GiB for consumed memory "
       r"\(weights \+ non-torch\), " + _N + r" GiB for peak activation, and " + _N + r" GiB for CUDAGraph memory\..*"
       r"Current kv cache memory in use is " + _N + r" GiB", "0.11.0..",
       "vllm/v1/worker/gpu_worker.py compile_or_warm_up_model: DEBUG @ v0.18.0 (658-680), INFO @ v0.32.0 "
       "(1000-1034)", "v1"),
    _f("kv_memory_given", r"Initial free memory " + _N + r" GiB, reserved " + _N + r" GiB memory for KV Cache as "
       r"specified by kv_cache_memory_bytes", "0.11.0..",
       "vllm/v1/worker/gpu_worker.py determine_available_memory (kv_cache_memory_bytes path)", "v1"),
    _f("cpu_kv_space", r"Explicitly set \(" + _N + r"/" + _N + r"\) GiB for KV cache on node", "0.30.0..",
       "vllm/v1/worker/cpu_worker.py (VLLM_CPU_KVCACHE_SPACE) @ v0.32.0", "v1"),
    # ---- refusals -------------------------------------------------------------------------------
    _f("refusal_max_len_v1", r"To serve at least one request with the models?'s max seq len \((\d+)\), \(?" + _N +
       r" GiB KV cache is needed, which is larger than the available KV cache memory \(" + _N + r" GiB\)"
       r"(?:\. Based on the available memory, the estimated maximum model length is (\d+))?", "0.8.0..",
       "vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory ('models's' until 0.11, then 'model's')", "v1"),
    _f("refusal_max_len_v0", r"The model's max seq len \((\d+)\) is larger than the maximum number of tokens that "
       r"can be stored in KV cache \((\d+)\)", "0.6.3..0.10.2",
       "vllm/worker/worker.py raise_if_cache_size_invalid (V0)", "v0"),
    _f("refusal_no_kv_memory", r"No available memory for the cache blocks", "0.6.3..",
       "vllm/worker/worker.py raise_if_cache_size_invalid; vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory"),
    _f("refusal_free_memory", r"Free memory on device(?: \S+)? \(" + _N + r"/" + _N + r" GiB\) on startup is less "
       r"than desired GPU memory utilization \(" + _N + r", " + _N + r" GiB\)", "0.9.0..",
       "vllm/v1/worker/gpu_worker.py init_device; vllm/v1/worker/utils.py request_memory @ v0.18.0", "v1"),
    _f("refusal_oom", r"(?:torch\.)?(?:cuda\.)?OutOfMemoryError: (?:CUDA out of memory\. )?Tried to allocate " + _N +
       r" (GiB|MiB)", "0.6.3..", "PyTorch's CUDA caching allocator (raised inside vLLM's profiling run or capture)"),
    _f("refusal_engine_failed", r"EngineCore failed to start|Engine core initialization failed", "0.8.0..",
       "vllm/v1/engine/core.py run_engine_core; vllm/v1/engine/utils.py wait_for_engine_startup", "v1"),
    _f("refusal_other", r"^(?:\w+\.)*(ValueError|RuntimeError|AssertionError|NotImplementedError|TypeError|"
       r"KeyError|ImportError|OSError|ValidationError): (.+)", "0.6.3..",
       "any exception vLLM's start-up raised (config checks raise pydantic ValidationError from the pydantic "
       "config classes, e.g. vllm/config/model.py ModelConfig @ v0.18.0/v0.32.0)"),
    # ---- while serving --------------------------------------------------------------------------
    _f("stats_v1", r"(?:Engine (\d+): )?Avg prompt throughput: " + _N + r" tokens/s, Avg generation throughput: " +
       _N + r" tokens/s, Running: (\d+) reqs, Waiting: (\d+) reqs, (?:GPU|CPU|XPU|TPU|HPU|NPU) KV cache usage: " +
       _N + r"%(?:, Prefix cache hit rate: " + _N + r"%)?", "0.8.0..",
       "vllm/v1/metrics/loggers.py LoggingStatLogger.log @ v0.18.0 (220) / v0.32.0", "v1"),
    _f("stats_v0", r"Avg prompt throughput: " + _N + r" tokens/s, Avg generation throughput: " + _N +
       r" tokens/s, Running: (\d+) reqs, Swapped: (\d+) reqs, Pending: (\d+) reqs, GPU KV cache usage: " + _N +
       r"%, CPU KV cache usage: " + _N + r"%", "0.6.3..0.10.2", "vllm/engine/metrics.py LoggingStatLogger.log", "v0"),
    _f("preempted_v0", r"Sequence group (\S+) is preempted by PreemptionMode\.(\w+) mode because there is not enough "
       r"KV cache space\..*?total_num_cumulative_preemption=(\d+)", "0.6.3..0.10.2",
       "vllm/core/scheduler.py Scheduler._preempt (warning every 50 preemptions)", "v0"),
)


@lru_cache(maxsize=1)
def by_name() -> dict[str, LogFormat]:
    return {f.name: f for f in FORMATS}


def release_range(names: set[str]) -> Optional[VersionRange]:
    """The releases consistent with every dated format seen: the latest start and the earliest end."""
    ranges = [VersionRange.parse(by_name()[n].releases) for n in names if n in by_name()]
    if not ranges:
        return None
    low = max((r.low for r in ranges if r.low is not None), default=None)
    highs = [r.high for r in ranges if r.high is not None]
    high = min(highs) if highs else None
    if low is not None and high is not None and low > high:
        return None  # formats no single release prints together (a fork, or several logs pasted together)
    return VersionRange(low, high)
