"""The deployment description: what the user gave, kept apart from what vLLM would default.

`Deployment` is the loader's output. It holds only values the user wrote (with where they wrote
them); nothing here is a default. `ServingConfig` is the typed view of the scheduling and memory
flags under vLLM's own names: a field left `None` means "not set", never "set to the default".
Defaults are resolved per version later (`reader.config.resolve`).
"""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from ..logs.reading import LogReading


class SourceLoc(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: Optional[str] = None
    line: Optional[int] = None

    def __str__(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or (f"line {self.line}" if self.line else "")


class Note(BaseModel):
    """Something the user should know about how their input was read."""

    level: Literal["info", "warning"] = "info"
    message: str
    loc: Optional[SourceLoc] = None
    key: Optional[str] = None
    # where `check` reports this already, so that it says it once: a rule id (VR905), or "model_source" (its
    # model line names the id as written and where its shape came from)
    reported_as: Optional[str] = None


class Placeholder(BaseModel):
    """A `$(VAR)` / `${VAR}` / `$VAR` the input refers to but does not define."""

    text: str
    name: str
    flag: Optional[str] = None
    loc: Optional[SourceLoc] = None


class BoundViolation(BaseModel):
    """A value outside the bounds this vLLM release enforces (reader/config/constraints.py)."""

    name: str  # the setting, or `dest.key` inside a JSON option
    value: Any
    requirement: str  # e.g. ">= 1"
    vllm_message: str  # what vLLM says when it refuses the value
    source: str  # where in vLLM's source the bound is


class KeyViolation(BaseModel):
    """A key of a JSON option that the release's config class does not take, or whose value its type refuses
    (rules/flags `key_types`, reader/config/constraints.py)."""

    name: str  # `dest.key` (nested keys joined with dots)
    value: Any
    requirement: str  # what the key needs: "a string", "one of ...", "a key it takes"
    vllm_message: str  # pydantic's error, as vLLM prints it
    config: str  # the config class, e.g. SpeculativeConfig
    stage: str  # "parse": argparse refuses it (vllm serve exits 2); "startup": the engine config refuses it
    known: list[str] = Field(default_factory=list)  # for an unknown key: the keys the class takes


class SyntaxRefusal(BaseModel):
    """A value written in a syntax an earlier release read and the chosen one refuses (vLLM would not start)."""

    form: str  # "the KEY=VALUE form"
    written: str  # the value as written
    removed_in: str  # the release that stopped reading it
    instead: str  # the value in the syntax the release reads


class GivenFlag(BaseModel):
    """One vLLM flag as the user gave it."""

    dest: str  # vLLM's argparse destination, e.g. "max_num_seqs"
    option: str  # canonical option string at the chosen version, e.g. "--max-num-seqs"
    spelling: str  # as written: "--max_num_seq", "max-num-seqs:", "maxNumSeqs", "-tp"
    value: Any = None  # typed as vLLM's parser would type it; None when unresolved
    raw: Optional[str] = None  # the text as written, for messages
    loc: Optional[SourceLoc] = None
    in_version: bool = True  # False: the chosen vLLM version does not register this flag
    versions_with_flag: Optional[str] = None  # e.g. "0.6.3..0.17.1", when not in_version
    invalid_choice: Optional[list[Any]] = None  # the version's argparse choices, when the value is not one
    out_of_bounds: Optional[BoundViolation] = None  # the release's bound the value breaks
    key_error: Optional[KeyViolation] = None  # a JSON key vLLM refuses when it builds its config (start-up)
    refused_syntax: Optional[SyntaxRefusal] = None  # a syntax this release no longer reads (argparse refuses it)
    unresolved: list[str] = Field(default_factory=list)  # placeholders left in the value
    notes: list[str] = Field(default_factory=list)


class SpeculativeSpec(BaseModel):
    """Speculative decoding, normalised from --speculative-config or the older flags."""

    model_config = ConfigDict(extra="forbid")

    method: Optional[str] = None  # draft_model, ngram, eagle, eagle3, medusa, mlp_speculator, mtp, suffix, ...
    model: Optional[str] = None
    num_speculative_tokens: Optional[int] = None
    draft_tensor_parallel_size: Optional[int] = None
    method_inferred: bool = False  # True when vLLM would infer the method from the draft model's name
    spelled_as: str = "speculative_config"  # or "speculative_model" (legacy flags), "spec_*", "kserve"


Number = Union[StrictInt, StrictFloat]


class ServingConfig(BaseModel):
    """The flags that shape scheduling and memory, as the user set them (None = not set).

    Every other flag the version accepts is kept, typed, in `other`.
    """

    model_config = ConfigDict(extra="forbid")

    model: Optional[StrictStr] = None
    dtype: Optional[StrictStr] = None
    quantization: Optional[StrictStr] = None
    kv_cache_dtype: Optional[StrictStr] = None
    max_model_len: Optional[StrictInt] = None  # -1 = "auto" (fit to memory), v0.18.0+
    tensor_parallel_size: Optional[StrictInt] = None
    pipeline_parallel_size: Optional[StrictInt] = None
    data_parallel_size: Optional[StrictInt] = None
    enable_expert_parallel: Optional[StrictBool] = None
    decode_context_parallel_size: Optional[StrictInt] = None
    distributed_executor_backend: Optional[StrictStr] = None
    max_num_seqs: Optional[StrictInt] = None
    max_num_batched_tokens: Optional[StrictInt] = None
    max_num_scheduled_tokens: Optional[StrictInt] = None
    enable_chunked_prefill: Optional[StrictBool] = None
    long_prefill_token_threshold: Optional[Number] = None
    long_prefill_token_threshold_adaptive: Optional[StrictBool] = None
    max_num_partial_prefills: Optional[StrictInt] = None
    max_long_partial_prefills: Optional[StrictInt] = None
    max_num_active_seqs: Optional[StrictInt] = None
    scheduler_reserve_full_isl: Optional[StrictBool] = None
    watermark: Optional[Number] = None
    prefill_schedule_interval: Optional[StrictInt] = None
    gpu_memory_utilization: Optional[Number] = None
    kv_cache_memory_bytes: Optional[StrictInt] = None
    num_gpu_blocks_override: Optional[StrictInt] = None
    block_size: Optional[StrictInt] = None
    enable_prefix_caching: Optional[StrictBool] = None
    prefix_caching_hash_algo: Optional[StrictStr] = None
    scheduling_policy: Optional[StrictStr] = None
    async_scheduling: Optional[StrictBool] = None
    performance_mode: Optional[StrictStr] = None
    enforce_eager: Optional[StrictBool] = None
    cudagraph_capture_sizes: Optional[list[StrictInt]] = None
    cuda_graph_sizes: Optional[list[StrictInt]] = None
    max_cudagraph_capture_size: Optional[StrictInt] = None
    max_seq_len_to_capture: Optional[StrictInt] = None
    compilation_config: Optional[Union[dict[str, Any], StrictInt, StrictStr]] = None
    optimization_level: Optional[Union[StrictInt, StrictStr]] = None
    speculative_config: Optional[Union[dict[str, Any], StrictStr]] = None
    speculative_model: Optional[StrictStr] = None
    num_speculative_tokens: Optional[StrictInt] = None
    speculative_draft_tensor_parallel_size: Optional[StrictInt] = None
    spec_method: Optional[StrictStr] = None
    spec_model: Optional[StrictStr] = None
    spec_tokens: Optional[StrictInt] = None
    num_lookahead_slots: Optional[StrictInt] = None
    cpu_offload_gb: Optional[Number] = None
    swap_space: Optional[Number] = None
    preemption_mode: Optional[StrictStr] = None
    num_scheduler_steps: Optional[StrictInt] = None
    use_v2_block_manager: Optional[StrictBool] = None
    scheduler_delay_factor: Optional[Number] = None
    disable_hybrid_kv_cache_manager: Optional[StrictBool] = None
    disable_sliding_window: Optional[StrictBool] = None
    enable_lora: Optional[StrictBool] = None
    max_loras: Optional[StrictInt] = None
    kv_offloading_size: Optional[Number] = None
    kv_transfer_config: Optional[Union[dict[str, Any], StrictStr]] = None
    other: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def scheduling_fields(cls) -> tuple[str, ...]:
        return tuple(name for name in cls.model_fields if name != "other")


class Context(BaseModel):
    """What the config file alone does not say: version, hardware, workload, entry point."""

    vllm_version: Optional[str] = None
    vllm_version_origin: Literal["cli", "comment", "image", "log", "profile", "none"] = "none"
    gpu: Optional[str] = None
    gpu_origin: Literal["cli", "comment", "manifest", "none"] = "none"
    gpu_source: Optional[str] = None  # for a GPU read from the file: what named it ("node selector ...", line)
    gpu_count: Optional[int] = None
    gpu_count_origin: Literal["cli", "comment", "manifest", "none"] = "none"
    num_nodes: Optional[int] = None
    replicas: Optional[int] = None  # copies of this launch behind one service (a Deployment's spec.replicas)
    replicas_source: Optional[str] = None  # what said so, with its line
    workload: Optional[Union[str, dict[str, Any]]] = None  # a file path or an inline spec
    workload_origin: Literal["cli", "comment", "file", "none"] = "none"
    usage_context: Literal["serve", "llm"] = "serve"  # `vllm serve` vs the offline LLM class
    slo_ttft_p99_ms: Optional[float] = None
    slo_itl_p99_ms: Optional[float] = None
    calibration: Optional[str] = None  # a calibration profile path (relative to the file when from the comment)
    calibration_origin: Literal["cli", "comment", "none"] = "none"


class Deployment(BaseModel):
    """A vLLM launch as the user wrote it: the loader's output, before any default."""

    source: str  # path of the file read, or "<command line>"
    form: str  # e.g. "vllm-config-yaml", "shell", "docker-run", "kubernetes", "helm-production-stack"
    entry_point: str = "vllm serve"  # or "api_server" (python -m vllm.entrypoints.openai.api_server)
    vllm_version_tag: str  # the checked release whose flag table parsed this config
    model: Optional[str] = None
    model_loc: Optional[SourceLoc] = None
    model_uri: Optional[str] = None  # the storage URI the model was given as (hf://, s3://, pvc://, ...), if any
    flags: dict[str, GivenFlag] = Field(default_factory=dict)  # by dest, in the order given
    serving: ServingConfig = Field(default_factory=ServingConfig)
    speculative: Optional[SpeculativeSpec] = None
    env: dict[str, str] = Field(default_factory=dict)  # environment the vLLM process gets (VLLM_USE_V1, ...)
    image: Optional[str] = None
    context: Context = Field(default_factory=Context)
    notes: list[Note] = Field(default_factory=list)
    placeholders: list[Placeholder] = Field(default_factory=list)
    log: Optional[LogReading] = None  # when the source is a vLLM log: what it measured and said

    @property
    def served_names(self) -> list[str]:
        """--served-model-name, every name given (the first is the one vLLM reports; clients may use any)."""
        given = self.flags.get("served_model_name")
        value = given.value if given is not None else None
        return [value] if isinstance(value, str) else [str(v) for v in value or [] if v]
