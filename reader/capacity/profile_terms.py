"""Memory terms a calibration profile learned from start-up logs, carried to the settings of a trial.

A term was measured at some settings: vLLM's profiling run peaks with `max_num_batched_tokens` (a
forward pass over the whole budget) and `max_num_seqs` (the sampler's rows), CUDA graphs grow with
the capture sizes, non-torch memory with the number of GPUs. A what-if, a sweep or a plan that
changes one of those settings cannot reuse the measured bytes. The term then follows the capacity
model's own estimate: the measurement times estimate(trial) / estimate(measured settings), the
estimate's shape with the measurement's level. Where the estimate gives no level to scale from
(zero at the measured settings), the term is dropped and the estimate stands. Each figure says which
of the three it is.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from .figures import Figure, gib

TermName = Literal["activation_peak", "non_torch", "cudagraph"]

# The capacity request's settings each term depends on (reader/capacity/memory.py: activation_peak takes the
# token budget, the sequences and the DP ranks an MoE layer sees; non_torch_bytes the world size;
# capture_sizes the sequences, the budget, speculative tokens and the capture settings).
DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "activation_peak": ("max_num_batched_tokens", "max_num_seqs", "data_parallel_size"),
    "non_torch": ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"),
    "cudagraph": ("enforce_eager", "max_num_seqs", "max_num_batched_tokens", "num_speculative_tokens",
                  "cudagraph_capture_sizes", "max_cudagraph_capture_size"),
}
SETTINGS = tuple(dict.fromkeys(name for names in DEPENDS_ON.values() for name in names))
LABELS = {"activation_peak": "activation peak", "non_torch": "non-torch memory", "cudagraph": "CUDA graphs"}


class ProfileTerm(BaseModel):
    """One term as the profile holds it: bytes per GPU at `at`, and the estimate at the same settings."""

    model_config = ConfigDict(frozen=True)

    value: float  # bytes per GPU at the settings in `at`
    at: dict[str, Any] = Field(default_factory=dict)  # the settings it holds at (names of SETTINGS); empty: unknown
    estimate: Optional[float] = None  # the capacity model's estimate at `at`, bytes: the scale to carry it by
    profile: str  # the profile's name or path, for the report


def settings_of(request: Any) -> dict[str, Any]:
    """The settings of a capacity request that the memory terms depend on, as plain values."""
    out = {}
    for name in SETTINGS:
        value = getattr(request, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def changed(term: ProfileTerm, name: str, now: dict[str, Any]) -> list[str]:
    """The settings this term depends on that differ from where it was measured ('' entries: not recorded)."""
    if not term.at:
        return []  # a profile written before the settings were recorded: used as it is, and said so
    return [s for s in DEPENDS_ON[name] if s in term.at and term.at[s] != now.get(s)]


def carried(name: str, term: ProfileTerm, estimate: Figure, now: dict[str, Any]) -> Figure:
    """The term's figure at the request's settings: as measured, scaled with the estimate, or the estimate."""
    label = LABELS[name]
    moved = changed(term, name, now)
    where = f"calibration profile {term.profile}"
    if not moved:
        at = "" if term.at else " (the profile does not record the settings it was measured at)"
        return Figure(value=term.value, unit="bytes", how=f"{label} {gib(term.value)} from the {where}{at}",
                      source=where, basis="fitted")
    diff = ", ".join(f"{s} {_show(term.at[s])} -> {_show(now.get(s))}" for s in moved)
    if name == "cudagraph" and now.get("enforce_eager"):
        return estimate.model_copy(update={"how": f"{estimate.how} (the profile's {gib(term.value)} was measured with "
                                           f"CUDA graphs; this deployment runs eagerly)"})
    if term.estimate and term.estimate > 0 and estimate.value > 0:
        value = term.value * estimate.value / term.estimate
        how = (f"{label} {gib(term.value)} from the {where}, measured at other settings ({diff}), scaled with the "
               f"estimate: x {gib(estimate.value)} / {gib(term.estimate)} = {gib(value)}")
        return Figure(value=value, unit="bytes", how=how, source=where, basis="fitted")
    return estimate.model_copy(update={"how": f"{estimate.how} (the {where} measured {gib(term.value)} at other "
                                       f"settings ({diff}) with no estimate to scale it by, so it is not used)"})


def _show(value: Any) -> str:
    if isinstance(value, list):
        return f"[{', '.join(str(v) for v in value[:3])}{', ...' if len(value) > 3 else ''}]" if value else "[]"
    return str(value)
