"""The one table of scheduler behaviour that differs between vLLM versions.

Every rule the simulator applies differently by version is a row here, keyed by a version
range, with the evidence it rests on. The scheduler never compares version numbers itself: it
reads a `SchedulerBehaviour` built from this table.

Evidence levels (the `evidence` column):
- "oracle": confirmed by running the real scheduler of both versions (fixtures/oracle/VERSIONS.md);
- "source": read in the vLLM source of the named release (not run);
- "doc": from the project's reference notes (shared/reference/vllm), not checked further.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..versions import VersionRange, VersionTuple, format_version, parse_version

# Releases whose scheduler decisions were compared with golden traces of the real scheduler.
VERIFIED_VERSIONS: dict[str, str] = {
    "0.18.0": "fixtures/oracle/golden-0.18 (vLLM 0.18.0's real Scheduler)",
    "0.32.0": "fixtures/oracle/golden (vLLM 0.32.0's real Scheduler)",
}

# The newest release this tool has facts for; the default when no version is given.
NEWEST_VERSION = "0.33.0"


@dataclass(frozen=True)
class Row:
    feature: str
    versions: str  # VersionRange text
    value: object
    evidence: str


# (feature, versions, value, evidence). For a feature, the first row whose range holds the
# version wins; a feature with no matching row takes its `SchedulerBehaviour` default.
TABLE: tuple[Row, ...] = (
    Row("full_isl_gate_exists", "0.19.0..", True,
        "oracle: 15_admission_full_isl_on (0.18 admits on the first chunk; 0.32 needs the whole sequence); "
        "upstream PR #37307; --scheduler-reserve-full-isl default true"),
    Row("lone_request_threshold_exempt", "0.31.0..", True,
        "oracle: 09_long_prefill_threshold (0.18 caps a lone request at the threshold; 0.32 does not); "
        "upstream PR #57951; vllm/v1/core/sched/scheduler.py schedule() @ v0.32.0"),
    Row("unhashed_blocks_freed_to_front", "0.24.0..", True,
        "oracle (VERSIONS.md item 3): from 0.24.0 freed blocks without a block hash go to the front of the "
        "free queue; vllm/v1/core/block_pool.py free_blocks @ v0.32.0"),
    Row("watermark_exists", "0.24.0..", True,
        "oracle (VERSIONS.md item 4) for presence; rule from vllm/v1/core/kv_cache_manager.py allocate_slots "
        "@ v0.32.0: int(watermark * num_blocks) kept free for WAITING/PREEMPTED admissions while running is non-empty"),
    Row("max_num_active_seqs_exists", "0.31.0..", True,
        "doc: flags.yaml (--max-num-active-seqs v0.31.0..); rule from scheduler.py schedule() @ v0.32.0"),
    Row("adaptive_threshold_exists", "0.31.0..", True,
        "doc: flags.yaml (--long-prefill-token-threshold-adaptive v0.31.0..); rule from scheduler.py @ v0.32.0: "
        "cap floored at max_num_batched_tokens // (running + waiting)"),
    Row("draft_slot_accounting", "0.17.0..0.27.1", "prereduce",
        "doc: scheduler-v1.md section 1 (vllm/config/vllm.py 1256-1285 @ v0.18.0): budget = "
        "max_num_batched_tokens - slots_per_request * max_num_seqs"),
    Row("draft_slot_accounting", "0.28.0..", "per_request",
        "source: scheduler.py schedule() @ v0.32.0: each scheduled request also uses its drafting slots "
        "of max_num_batched_tokens (input_budget)"),
    Row("async_scheduling_default", "0.14.0..", True,
        "doc: flags.yaml async_scheduling (None = auto from v0.14.0; auto-enabled unless the speculative method "
        "is draft_model/ngram/suffix/medusa/mlp_speculator)"),
    Row("lookahead_on_first_admission", "0.32.0..", True,
        "source: scheduler.py @ v0.32.0 gives lookahead slots to every admission; scheduler-v1.md (v0.18.0 "
        "l.706-708) only to requests with computed tokens; the release in between that changed it is not located"),
    Row("pad_one_token_admission_to_spec", "0.32.0..", True,
        "source: scheduler.py @ v0.32.0 pads an admitted request with exactly one token left to 1 + k "
        "(uniform spec-decode batch); first release with it not located"),
    Row("v1_engine_default", "0.8.0..", True,
        "doc: flags.yaml how_to_read (V1 default engine from v0.8.0); earlier releases default to V0, "
        "which this simulator does not model"),
)

# Speculative methods for which auto async scheduling stays off (flags.yaml, v0.18.0 rule).
ASYNC_OFF_SPEC_METHODS = frozenset({"draft_model", "ngram", "suffix", "medusa", "mlp_speculator"})


@dataclass(frozen=True)
class SchedulerBehaviour:
    """The version-dependent rules, resolved for one version."""

    version: str
    full_isl_gate_exists: bool = False
    lone_request_threshold_exempt: bool = False
    unhashed_blocks_freed_to_front: bool = False
    watermark_exists: bool = False
    max_num_active_seqs_exists: bool = False
    adaptive_threshold_exists: bool = False
    draft_slot_accounting: str = "none"  # "none" | "prereduce" | "per_request"
    async_scheduling_default: bool = False
    lookahead_on_first_admission: bool = False
    pad_one_token_admission_to_spec: bool = False
    v1_engine_default: bool = False

    @property
    def verified(self) -> bool:
        return self.version in VERIFIED_VERSIONS


def behaviour_for(version: str | VersionTuple) -> SchedulerBehaviour:
    """The scheduler rules of one vLLM version (any x.y.z; not only the checked tags)."""
    v = parse_version(version) if isinstance(version, str) else version
    values: dict[str, object] = {}
    for row in TABLE:
        if row.feature not in values and VersionRange.parse(row.versions).contains(v):
            values[row.feature] = row.value
    return SchedulerBehaviour(version=format_version(v), **values)


def first_release(feature: str) -> str:
    """The release a feature arrived in: the lower bound of its first row whose value is true."""
    for row in TABLE:
        if row.feature == feature and row.value is True:
            return row.versions.split("..")[0]
    raise KeyError(feature)


def verification_note(version: str) -> str | None:
    """A note for versions whose decisions no golden trace has checked, else None."""
    v = format_version(parse_version(version))
    if v in VERIFIED_VERSIONS:
        return None
    checked = ", ".join(VERIFIED_VERSIONS)
    return (f"vLLM {v}: the scheduler rules used for this version come from the version table "
            f"(reader/sim/versions.py); decisions were checked against the real scheduler only at {checked}.")


def table_rows() -> list[dict[str, object]]:
    """The table as plain data (for docs and `--explain`-style output)."""
    return [{"feature": r.feature, "versions": r.versions, "value": r.value, "evidence": r.evidence}
            for r in TABLE]
