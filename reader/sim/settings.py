"""What the scheduler needs to know, with vLLM's own names, and its resolution per version.

`SchedulerSettings` is the input (None = "vLLM's default for this version"); `resolve()` turns
it into a `ResolvedSettings` with every value concrete, the version's behaviour rules attached,
and notes for settings the chosen version does not have.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ReaderError, validation_words
from ..versions import parse_version
from .versions import (ASYNC_OFF_SPEC_METHODS, NEWEST_VERSION, SchedulerBehaviour, behaviour_for, first_release,
                       verification_note)

# Speculative methods whose drafter keeps KV of its own, so the scheduler allocates
# `num_speculative_tokens` lookahead slots per request (scheduler-v1.md section 1).
LOOKAHEAD_SPEC_METHODS = frozenset({"eagle", "eagle3", "mtp", "draft_model"})


class SpeculativeSettings(BaseModel):
    """Speculative decoding as the scheduler sees it: k drafts per decode, accepted at a rate."""

    model_config = ConfigDict(extra="forbid", strict=True)

    method: Literal["eagle", "eagle3", "mtp", "draft_model", "ngram", "suffix", "medusa"] = "eagle"
    num_speculative_tokens: int = Field(ge=1, le=64)
    # Probability that each draft token is accepted, given the ones before it were.
    acceptance_rate: float = Field(ge=0.0, le=1.0)
    parallel_drafting: bool = False

    @property
    def lookahead_tokens(self) -> int:
        return self.num_speculative_tokens if self.method in LOOKAHEAD_SPEC_METHODS else 0

    @property
    def drafting_slots_per_request(self) -> int:
        """vLLM's max_num_new_slots_for_drafting (vllm/config/speculative.py 826-840 @ v0.18.0)."""
        if self.method != "draft_model":
            return 0
        return 1 + (self.num_speculative_tokens - 1 if self.parallel_drafting else 0)


class SchedulerSettings(BaseModel):
    """Everything the V1 scheduler reads. None means: vLLM's default for `vllm_version`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    vllm_version: str | None = None
    max_num_seqs: int = Field(default=128, ge=1)
    max_num_batched_tokens: int = Field(default=2048, ge=1)
    max_num_scheduled_tokens: int | None = Field(default=None, ge=1)
    enable_chunked_prefill: bool = True
    long_prefill_token_threshold: int = Field(default=0, ge=0)
    long_prefill_token_threshold_adaptive: bool | None = None
    max_num_active_seqs: int | None = Field(default=None, ge=1)
    block_size: int = Field(default=16, ge=1)
    # Total KV blocks including vLLM's reserved null block (usable = num_gpu_blocks - 1).
    num_gpu_blocks: int = Field(default=10000, ge=2)
    enable_prefix_caching: bool | None = None
    scheduling_policy: Literal["fcfs", "priority"] = "fcfs"
    # None: derived from the workload (see resolve()).
    max_model_len: int | None = Field(default=None, ge=2)
    scheduler_reserve_full_isl: bool | None = None
    watermark: float | None = Field(default=None, ge=0.0, lt=1.0)
    async_scheduling: bool | None = None
    speculative: SpeculativeSettings | None = None

    @field_validator("vllm_version")
    @classmethod
    def _check_version(cls, v: str | None) -> str | None:
        if v is not None:
            parse_version(v)  # ValueError: not a vLLM version
        return v

    @model_validator(mode="after")
    def _check_active_seqs(self) -> "SchedulerSettings":
        if self.max_num_active_seqs is not None and self.max_num_active_seqs > self.max_num_seqs:
            raise ValueError("max_num_active_seqs must be <= max_num_seqs")
        return self

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, file: str | None = None) -> "SchedulerSettings":
        """Validate user data; any problem becomes a ReaderError naming the key."""
        return validate_model(cls, data, file=file)


def validate_model(cls, data: Any, *, file: str | None = None, prefix: str = ""):
    """cls.model_validate(data), with the first validation error turned into a ReaderError."""
    try:
        return cls.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()) if p != "__root__")
        key = f"{prefix}.{loc}" if prefix and loc else (loc or prefix or None)
        raise ReaderError(f"{validation_words(first)} (got {first.get('input')!r}).",
                          file=file, key=key) from None


@dataclass(frozen=True)
class ResolvedSettings:
    """Concrete scheduler settings for one version (the scheduler reads only this)."""

    vllm_version: str
    behaviour: SchedulerBehaviour
    max_num_seqs: int
    max_num_active_seqs: int
    max_num_batched_tokens: int
    max_num_scheduled_tokens: int
    enable_chunked_prefill: bool
    long_prefill_token_threshold: int
    long_prefill_token_threshold_adaptive: bool
    block_size: int
    num_gpu_blocks: int
    enable_prefix_caching: bool
    scheduling_policy: str
    max_model_len: int
    scheduler_reserve_full_isl: bool
    watermark: float
    watermark_blocks: int
    async_scheduling: bool
    num_spec_tokens: int
    spec_method: str | None
    acceptance_rate: float
    num_lookahead_tokens: int
    drafting_slots_per_request: int
    notes: tuple[str, ...] = field(default=())

    @property
    def usable_blocks(self) -> int:
        return self.num_gpu_blocks - 1

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in ("behaviour", "notes")}
        out["notes"] = list(self.notes)
        return out


def derive_max_model_len(longest_request: int, enable_chunked_prefill: bool, max_num_batched_tokens: int) -> int:
    """The oracle's rule when max_model_len is not given: with chunking, the smallest multiple of
    1024 (at least 2048) that holds the longest request; without, max_num_batched_tokens."""
    if not enable_chunked_prefill:
        return max_num_batched_tokens
    return max(2048, -(-longest_request // 1024) * 1024)


def async_scheduling(chosen: bool | None, beh: SchedulerBehaviour, spec: Any = None) -> bool:
    """Whether the engine schedules the next step while this one runs: the flag when given, else the release's
    default, which some speculative methods turn off."""
    if chosen is not None:
        return bool(chosen)
    return bool(beh.async_scheduling_default and not (spec and spec.method in ASYNC_OFF_SPEC_METHODS))


def resolve(settings: SchedulerSettings, *, longest_request: int = 2048) -> ResolvedSettings:
    """Fill version defaults; note settings the chosen version does not have."""
    version = settings.vllm_version or NEWEST_VERSION
    beh = behaviour_for(version)
    notes: list[str] = []
    if settings.vllm_version is None:
        notes.append(f"vLLM version not given: simulating {beh.version}, the newest version this tool knows.")
    note = verification_note(beh.version)
    if note:
        notes.append(note)
    if not beh.v1_engine_default:
        notes.append(f"vLLM {beh.version} defaults to the V0 engine; the simulation uses the V1 scheduler's rules.")

    def only_from(flag: str, feature: str, value: Any, default: Any) -> Any:
        if value is None:
            return default
        if not getattr(beh, feature) and value != default:
            notes.append(f"{flag}={value!r} ignored: vLLM {beh.version} has no such setting "
                         f"(it arrived in {first_release(feature)}).")
            return default
        return value

    full_isl = only_from("scheduler_reserve_full_isl", "full_isl_gate_exists", settings.scheduler_reserve_full_isl,
                         beh.full_isl_gate_exists)
    watermark = only_from("watermark", "watermark_exists", settings.watermark, 0.0)
    adaptive = only_from("long_prefill_token_threshold_adaptive", "adaptive_threshold_exists",
                         settings.long_prefill_token_threshold_adaptive, False)
    active = only_from("max_num_active_seqs", "max_num_active_seqs_exists", settings.max_num_active_seqs, None)

    spec = settings.speculative
    k = spec.num_speculative_tokens if spec else 0
    slots = spec.drafting_slots_per_request if spec else 0
    budget = settings.max_num_scheduled_tokens or settings.max_num_batched_tokens
    if slots and beh.draft_slot_accounting == "prereduce" and settings.max_num_scheduled_tokens is None:
        budget = max(settings.max_num_batched_tokens - slots * settings.max_num_seqs, 1)
    if beh.draft_slot_accounting != "per_request":
        slots_in_loop = 0
    else:
        slots_in_loop = slots

    async_sched = async_scheduling(settings.async_scheduling, beh, spec)
    caching = settings.enable_prefix_caching
    if caching is None:
        caching = beh.v1_engine_default
    mml = settings.max_model_len or derive_max_model_len(
        longest_request, settings.enable_chunked_prefill, settings.max_num_batched_tokens)
    return ResolvedSettings(
        vllm_version=beh.version,
        behaviour=beh,
        max_num_seqs=settings.max_num_seqs,
        max_num_active_seqs=active or settings.max_num_seqs,
        max_num_batched_tokens=settings.max_num_batched_tokens,
        max_num_scheduled_tokens=budget,
        enable_chunked_prefill=settings.enable_chunked_prefill,
        long_prefill_token_threshold=settings.long_prefill_token_threshold,
        long_prefill_token_threshold_adaptive=bool(adaptive),
        block_size=settings.block_size,
        num_gpu_blocks=settings.num_gpu_blocks,
        enable_prefix_caching=bool(caching),
        scheduling_policy=settings.scheduling_policy,
        max_model_len=mml,
        scheduler_reserve_full_isl=bool(full_isl),
        watermark=float(watermark),
        # vllm/v1/core/kv_cache_manager.py __init__ @ v0.32.0: int(watermark * kv_cache_config.num_blocks)
        watermark_blocks=int(float(watermark) * settings.num_gpu_blocks),
        async_scheduling=bool(async_sched),
        num_spec_tokens=k,
        spec_method=spec.method if spec else None,
        acceptance_rate=spec.acceptance_rate if spec else 0.0,
        num_lookahead_tokens=spec.lookahead_tokens if spec else 0,
        drafting_slots_per_request=slots_in_loop,
        notes=tuple(notes),
    )
