"""The calibration profile: what a fit learned about one deployment's hardware, as a YAML file.

One type for every calibration (architecture: "one calibration profile type"): `vllm-reader calibrate`
writes it from `vllm bench serve` results or from measured step times, the shipped H200 profile is one
of them, and capacity (memory terms) and step time (coefficients) read it. Layout:

    kind: vllm-reader calibration profile
    format: 1
    fitted_on:      the deployment it belongs to (device, model and its shape, TP, PP, dtype, ...)
    device:         only for a device the catalog does not know: the fitted figures stand in for its datasheet
    step_time:      every coefficient of the step-time model: {value, source}, fitted or fixed
    memory:         memory overhead terms learned from start-up logs (empty until a log fit fills it)
    fit:            how it was fitted: free coefficients, iterations, loss, error per metric, every point
    sources:        the files it came from, with their SHA-256

Loading is safe (plain YAML data only); a malformed profile is a ReaderError naming the key.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..capacity.coefficients import StepTimeCoefficients
from ..errors import ReaderError, validation_words

KIND = "vllm-reader calibration profile"
FORMAT = 1
SHIPPED_DIR = Path(__file__).resolve().parent / "profiles"
DEFAULT_PROFILE = SHIPPED_DIR / "h200-sxm.yaml"
# Per GPU type: fitted by `vllm-reader calibrate --published` on published real-vLLM serving runs
PUBLISHED_DIR = SHIPPED_DIR / "published"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Coefficient(_Strict):
    value: float
    source: str
    fitted: bool = False


class FittedOn(_Strict):
    """The deployment the profile was fitted on; using it elsewhere is refused or warned about."""

    device: str  # catalog GPU id, or the name of a device the catalog does not know
    device_in_catalog: bool
    model: str
    # layers, hidden, heads, kv_heads, head_dim, intermediate, vocab (+ experts): two names of one shape match
    model_shape: dict[str, int] = Field(default_factory=dict)
    tensor_parallel_size: int = Field(default=1, ge=1)
    pipeline_parallel_size: int = Field(default=1, ge=1)
    dtype: str  # the weights' effective dtype (bfloat16, float16, ...)
    quantization: Optional[str] = None
    kv_cache_dtype: str = "auto"
    enforce_eager: bool = False
    vllm_version: Optional[str] = None
    config: Optional[str] = None  # the config file the fit read


class DeviceStandIn(_Strict):
    """A device the catalog does not know (a new GPU, a CPU): the fit's effective figures are its datasheet."""

    name: str
    kind: Literal["gpu", "cpu"] = "gpu"
    bf16_tflops: float = Field(gt=0)  # effective dense matmul rate, TFLOP/s
    hbm_bandwidth_gbps: float = Field(gt=0)  # effective memory bandwidth, GB/s
    memory_gib: float = Field(gt=0)  # memory the deployment may use (a CPU: what the user says it has)
    source: str


class MetricError(_Strict):
    metric: str  # e.g. median_tpot_ms, output_throughput, steps (measured step seconds)
    points: int
    median_abs_pct: float
    max_abs_pct: float
    in_loss: bool = True
    held_out: bool = False  # measured on files the fit did not see (calibrate --hold-out)


class FitPoint(_Strict):
    source: str  # the file's label, or the measured point's name
    metric: str
    measured: float
    predicted: float
    error_pct: float
    in_loss: bool = True
    held_out: bool = False


class FitReport(_Strict):
    evidence: Literal["bench", "steps", "log", "published"]
    method: str
    free: list[str]
    iterations: int = Field(ge=0)
    converged: bool
    loss: float
    errors: list[MetricError] = Field(default_factory=list)
    points: list[FitPoint] = Field(default_factory=list)
    # what the results themselves say about how far to trust the fit (calibration/delivery.py)
    warnings: list[str] = Field(default_factory=list)
    # terms the evidence could not tell apart, each with why (they keep the base profile's values)
    not_fitted: list[str] = Field(default_factory=list)
    # which of the deployment's names (served name, model path) the bench results were measured against
    model_match: Optional[str] = None

    def error_of(self, metric: str) -> Optional[MetricError]:
        return next((e for e in self.errors if e.metric == metric and not e.held_out), None)


class TermSettings(_Strict):
    """The settings a memory term holds at: the ones the terms depend on (reader/capacity/profile_terms.py
    DEPENDS_ON). A trial that changes one carries the term with the capacity model's estimate, or drops it."""

    max_num_batched_tokens: int
    max_num_seqs: int
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enforce_eager: bool = False
    num_speculative_tokens: int = 0
    cudagraph_capture_sizes: Optional[list[int]] = None
    max_cudagraph_capture_size: Optional[int] = None
    gpu_memory_utilization: Optional[float] = None  # recorded, not carried: no term depends on it


class MemoryTerm(Coefficient):
    """A memory overhead term in bytes per GPU, at the settings `at`, with the capacity model's own estimate
    there (`estimate`): the ratio of the two carries it to other settings. Profiles written before the
    settings were recorded have neither, and their terms are used as they are (the reports say so)."""

    at: Optional[TermSettings] = None
    estimate: Optional[float] = None


class MemoryTerms(_Strict):
    """Memory overhead terms measured from vLLM start-up logs (`calibrate --log`). Each is per GPU, in bytes;
    None = not measured, and the capacity model's own estimate stands. The capacity model takes them in place
    of its estimates (reader/pipeline.py capacity_request -> CapacityRequest.profile_terms), carried to each
    trial's settings. `fit` says how they were fitted and how well they predict the logs' KV memory."""

    activation_peak_bytes: Optional[MemoryTerm] = None
    non_torch_bytes: Optional[MemoryTerm] = None
    cudagraph_bytes: Optional[MemoryTerm] = None
    fit: Optional[FitReport] = None

    def terms(self) -> dict[str, MemoryTerm]:
        """The terms the profile holds, by the capacity model's name (activation_peak, non_torch, cudagraph)."""
        named = {"activation_peak": self.activation_peak_bytes, "non_torch": self.non_torch_bytes,
                 "cudagraph": self.cudagraph_bytes}
        return {name: term for name, term in named.items() if term is not None}


class SourceFile(_Strict):
    path: str
    sha256: str
    kind: Literal["bench", "steps", "log", "published"]
    description: str = ""


class CalibrationProfile(_Strict):
    kind: Literal["vllm-reader calibration profile"] = KIND
    format: Literal[1] = FORMAT
    name: str
    fitted_on: FittedOn
    device: Optional[DeviceStandIn] = None
    step_time: dict[str, Coefficient]
    memory: MemoryTerms = Field(default_factory=MemoryTerms)
    fit: FitReport
    sources: list[SourceFile] = Field(default_factory=list)
    created_by: str = ""

    @field_validator("step_time")
    @classmethod
    def _every_coefficient(cls, value: dict[str, Coefficient]) -> dict[str, Coefficient]:
        names = StepTimeCoefficients.names()
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(f"unknown step-time coefficient '{unknown[0]}' (known: {', '.join(names)})")
        missing = [k for k in names if k not in value and k not in StepTimeCoefficients.optional()]
        if missing:
            raise ValueError(f"step-time coefficient '{missing[0]}' is missing")
        for name, c in value.items():
            positive = StepTimeCoefficients.divides(name)
            if not math.isfinite(c.value) or c.value < 0 or (positive and c.value == 0):
                raise ValueError(f"step-time coefficient '{name}' is {c.value:g}: it must be "
                                 f"{'above 0' if positive else 'at least 0'} and finite")
        return value

    def coefficients(self) -> StepTimeCoefficients:
        return StepTimeCoefficients(**{k: c.value for k, c in self.step_time.items()})

    def with_optional_terms(self) -> "CalibrationProfile":
        """The profile with every coefficient written out: a term it predates at its neutral value."""
        neutral = StepTimeCoefficients.optional()
        extra = {k: Coefficient(value=v, source="neutral (the profile predates this term)")
                 for k, v in neutral.items() if k not in self.step_time}
        return self.model_copy(update={"step_time": {**self.step_time, **extra}}) if extra else self

    def summary_error(self) -> Optional[MetricError]:
        """The error a report quotes: of the first metric in the loss."""
        return next((e for e in self.fit.errors if e.in_loss and not e.held_out), None)


# ---- reading and writing ----------------------------------------------------------------------

def read_input(path: str | Path, what: str) -> str:
    """A calibration input's text; an unreadable file is one ReaderError naming it (what: 'the bench result')."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ReaderError(f"cannot read {what}: {getattr(err, 'strerror', None) or err}.", file=str(path)) from None


def load_profile(path: str | Path) -> CalibrationProfile:
    """A profile from its YAML file; every problem is one ReaderError naming the file and key."""
    from ..config.yamlsafe import load_yaml_documents

    name = str(path)
    text = read_input(path, "the calibration profile")
    docs = load_yaml_documents(text, name)
    data = docs[0].data if docs else None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise ReaderError(f"not a calibration profile (its first document needs 'kind: {KIND}'; "
                          "`vllm-reader calibrate` writes one).", file=name)
    try:
        return CalibrationProfile.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = tuple(first.get("loc", ()))
        key = ".".join(str(p) for p in loc)
        message = validation_words(first)
        if first.get("type") == "extra_forbidden":
            message = "unknown key"
        raise ReaderError(f"bad calibration profile: {message}.", file=name, key=key or None,
                          line=docs[0].line(loc)) from None


@lru_cache(maxsize=8)
def _cached(path: str, mtime_ns: int) -> CalibrationProfile:
    return load_profile(path)


def read_profile(path: str | Path) -> CalibrationProfile:
    """load_profile, remembered while the file is unchanged (what-ifs re-resolve many times)."""
    p = Path(path)
    try:
        stamp = p.stat().st_mtime_ns
    except OSError:
        return load_profile(p)
    return _cached(str(p.resolve()), stamp)


def default_profile() -> CalibrationProfile:
    """The shipped profile every deployment uses unless given another (fitted on measured H200 steps)."""
    return read_profile(DEFAULT_PROFILE)


def shipped_profile_path(gpu_id: Optional[str]) -> Path:
    """The shipped profile of a GPU type: its published-runs fit where one exists, else the default."""
    if gpu_id:
        path = PUBLISHED_DIR / f"{gpu_id.lower()}.yaml"
        if path.is_file():
            return path
    return DEFAULT_PROFILE


def shipped_profile(gpu_id: Optional[str]) -> CalibrationProfile:
    return read_profile(shipped_profile_path(gpu_id))


def default_calibration(gpu_id: Optional[str] = None) -> StepTimeCoefficients:
    """The shipped coefficients for a GPU type: its published-runs fit where one exists, else the ones fitted on
    measured H200 steps."""
    return (shipped_profile(gpu_id) if gpu_id else default_profile()).coefficients()


def dump_profile(profile: CalibrationProfile) -> str:
    """The profile as YAML (block style, keys in the model's order), readable by load_profile."""
    import yaml

    data = profile.model_dump(mode="json", exclude_none=True)
    for key in ("warnings", "not_fitted"):  # a fit with nothing to say leaves no empty list behind
        if not data["fit"].get(key):
            data["fit"].pop(key, None)
    header = (f"# {KIND} (written by vllm-reader calibrate; see reader/calibration/profile.py for the layout).\n"
              f"# Regenerate rather than edit: the fit's errors below describe the coefficients as written.\n")
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=110, allow_unicode=True)


def write_profile(profile: CalibrationProfile, path: str | Path) -> None:
    """Write atomically (a temporary file renamed over the target): a half-written profile never exists."""
    import os
    import tempfile

    target = Path(path)
    text = dump_profile(profile)
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".calibration-", suffix=".yaml", dir=str(target.parent))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
        tmp = None
    except OSError as err:
        raise ReaderError(f"cannot write the calibration profile: {err.strerror or err}.", file=str(target)) from None
    finally:
        # also on Ctrl-C between the write and the rename: no temporary file is left beside the target
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def source_file(path: str | Path, kind: str, description: str = "") -> SourceFile:
    """A file a fit read, named as given, with the SHA-256 of its bytes."""
    import hashlib

    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return SourceFile(path=str(path), sha256=digest, kind=kind, description=description)
