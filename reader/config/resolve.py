"""resolve: a `Deployment` (user values) -> a `ResolvedDeployment` (every value, with its origin).

Fills what the user left unset with what the chosen vLLM version would use on this GPU for this
model, and says for each value whether the user gave it, vLLM defaulted it, we derived it, or we
had to assume it. Version-dependent defaults come from rules/defaults.yaml.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from ..catalog.resolution import ModelResolution
from ..catalog.types import GpuSpec, ModelSpec
from ..errors import ReaderError
from ..versions import format_version, parse_version, VersionTuple
from .defaults import adjustment_applies, scalar_default, section
from .draft import DraftModel, read_draft
from .flagtable import flag_table
from .max_len import SOURCE as MAX_LEN_SOURCE, default_max_len, derived_max_len
from .model import Deployment, Note
from .platforms import CPU_DEFAULTS, CPU_FORCED, cpu_kv_bytes, on_cpu

Origin = Literal["user", "default", "derived", "assumed", "overridden"]

DEFAULT_GPU = "H100-SXM"
_MTP_MODEL_TYPES = {"deepseek_v3", "deepseek_v32", "qwen3_next", "glm4_moe", "mimo", "ernie4_5_moe"}
SPEC_FAMILIES = ("draft_model", "ngram", "eagle", "eagle3", "medusa", "mlp_speculator", "mtp", "suffix")


class ResolvedValue(BaseModel):
    value: Any = None
    origin: Origin
    why: str = ""
    source: str = ""


class ResolvedSpeculative(BaseModel):
    method: str  # as vLLM names it ("eagle3", "qwen3_next_mtp", "draft_model", ...)
    family: str  # one of SPEC_FAMILIES, or "other"
    model: Optional[str] = None
    num_speculative_tokens: int
    draft_tensor_parallel_size: Optional[int] = None
    inferred: bool = False
    spelled_as: str = "speculative_config"
    draft: Optional[DraftModel] = None  # the draft model's figures, when its config.json can be read


class ResolvedDeployment(BaseModel):
    deployment: Deployment
    version: str
    version_origin: str
    engine: Literal["v0", "v1"]
    engine_why: str
    model: Optional[ModelSpec] = None
    model_how: str = ""  # "model shape from: <source> (<where>)"
    model_resolution: Optional[ModelResolution] = None  # every source asked, what was inferred or assumed
    gpu: Optional[GpuSpec] = None
    gpu_how: str = ""
    gpu_assumed: bool = False
    gpu_count: int
    gpu_count_how: str
    gpu_count_assumed: bool = False
    values: dict[str, ResolvedValue] = Field(default_factory=dict)
    derived: dict[str, ResolvedValue] = Field(default_factory=dict)
    speculative: Optional[ResolvedSpeculative] = None
    notes: list[Note] = Field(default_factory=list)
    # The calibration profile the step-time (and memory) model uses; None = the shipped default.
    calibration: Any = None   # a calibration.profile.CalibrationProfile (the stage above supplies it)
    calibration_path: Optional[str] = None

    @property
    def model_named(self) -> Optional[str]:
        """The model as the user named it (the config, or --model); `model` may be another id's shape (an alias)."""
        res = self.model_resolution
        if res is not None and (res.given_with_option or not self.deployment.model):
            return res.asked
        return self.deployment.model or (self.model.id if self.model else None)

    def reading_notes(self) -> list[Note]:
        """The notes on how the config was read that no rule reports as a finding: info-level loader and
        resolver notes (the rules VR901/VR902 report the warning-level ones)."""
        return [n for n in self.deployment.notes + self.notes if n.level == "info" and not n.reported_as]

    @property
    def version_tuple(self) -> VersionTuple:
        return parse_version(self.version)

    def value(self, dest: str) -> Any:
        item = self.values.get(dest) or self.derived.get(dest)
        return item.value if item else None

    @property
    def model_guessed(self) -> bool:
        """The model's shape rests on a guess: an id inferred from a path, or a format assumed from a name."""
        res = self.model_resolution
        return res is not None and res.found and bool(res.inferred_from or res.assumptions)

    def require_model(self) -> ModelSpec:
        if self.model is None:
            name = self.deployment.model
            res = self.model_resolution
            raise ReaderError(
                (f"model '{name}' could not be resolved ({res.problem if res else 'unknown'})" if name else
                 "the config names no model (vLLM would stop with 'No model specified!')")
                + ", so its memory and speed cannot be modelled. Name the model with --model: a Hugging Face id, a "
                  "model folder or a config.json (see `vllm-reader catalog models` for the shipped ones).",
                file=self.deployment.source, line=self.deployment.model_loc.line if self.deployment.model_loc else None,
                key="model")
        return self.model

    def require_gpu(self) -> GpuSpec:
        assert self.gpu is not None
        return self.gpu


# ---- entry point ------------------------------------------------------------------------------

def resolve(deployment: Deployment, model_override: Optional[str] = None,
            calibration: Any = None, calibration_path: Optional[str] = None,
            device: Optional[GpuSpec] = None,
            model_resolution: Optional[ModelResolution] = None) -> ResolvedDeployment:
    """device: a GPU the catalog does not know, standing in under its own name (from a calibration profile).
    `model_resolution` reuses a model found before (the what-ifs change flags, not the model)."""
    from ..catalog import load as catalog

    version = parse_version(deployment.vllm_version_tag)
    notes: list[Note] = []
    resolution = model_resolution if model_resolution is not None else _resolve_model(deployment, model_override)
    _model_notes(deployment, resolution, notes)
    model = resolution.spec if resolution is not None else None
    model_how = resolution.shape_from() if resolution is not None else \
        "model shape from: nowhere (the config names no model)"
    gpu, gpu_how, gpu_assumed = _resolve_gpu(deployment, notes, catalog, device)
    engine, engine_why = _engine(deployment, version)
    r = ResolvedDeployment(
        deployment=deployment, version=format_version(version),
        version_origin=deployment.context.vllm_version_origin, engine=engine, engine_why=engine_why,
        model=model, model_how=model_how, model_resolution=resolution, gpu=gpu, gpu_how=gpu_how,
        gpu_assumed=gpu_assumed, gpu_count=1, gpu_count_how="", notes=notes, calibration=calibration,
        calibration_path=calibration_path,
    )
    _Resolver(r, version).run()
    return r


# ---- model, GPU, engine ---------------------------------------------------------------------

def _resolve_model(d: Deployment, override: Optional[str]) -> Optional[ModelResolution]:
    """The model's shape through the resolution chain (reader/catalog/resolution.py)."""
    from ..catalog.resolution import require_model, resolve_model, resolve_storage_path

    revision = _flag_text(d, "revision")
    config_format = _flag_text(d, "config_format")
    if override:
        return require_model(override, revision=revision, config_format=config_format)
    name = _flag_text(d, "hf_config_path") or d.model
    if not name:
        return None
    served_names = d.served_names
    uri = d.model_uri if name == d.model else None
    if uri and not uri.lower().startswith("hf://"):  # s3://, pvc://, oci://...: the path part names the model
        return resolve_storage_path(name, revision=revision, served_names=served_names)
    if uri and uri.count(":") > 1:  # hf://org/name:revision
        revision = revision or uri.rsplit(":", 1)[1]
    return resolve_model(name, revision=revision, served_names=served_names, config_format=config_format)


def _model_notes(d: Deployment, res: Optional[ModelResolution], notes: list[Note]) -> None:
    """What was inferred or assumed about the model, loudly, with how to override it."""
    if res is None:
        return
    name = res.asked
    # info level: the rules VR904-VR906 report these as warnings from the model.* facts
    if len(res.steps) > 1:
        notes.append(Note(level="info", loc=d.model_loc, key="model", reported_as="model_source",
                          message=f"model looked up in turn: {res.tried()}"))
    if res.inferred_from and res.found:
        notes.append(Note(level="info", loc=d.model_loc, key="model", reported_as="VR905", message=(
            f"the model path '{name}' does not exist here, so the model was inferred from {res.inferred_from}: "
            f"{res.resolved_id} ({res.shape_from(with_inference=False)}). If that is wrong, name the model with "
            "--model (a Hugging Face id, a model folder or a config.json)")))
    for assumption in res.assumptions:
        notes.append(Note(level="info", loc=d.model_loc, key="model", reported_as="VR906", message=(
            f"assumed: {assumption}; give the checkpoint's config.json with --model to replace the assumption")))
    if not res.found:
        notes.append(Note(level="info", loc=d.model_loc, key="model", reported_as="VR904", message=(
            f"model '{name}' could not be resolved: {res.problem}; checks that need its architecture are skipped. "
            "Name the model with --model (a Hugging Face id, a model folder or a config.json)")))


def _flag_text(d: Deployment, dest: str) -> Optional[str]:
    flag = d.flags.get(dest)
    value = flag.value if flag is not None else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def _resolve_gpu(d: Deployment, notes: list[Note], catalog, device: Optional[GpuSpec]) -> tuple[GpuSpec, str, bool]:
    ctx = d.context
    if device is not None and (not ctx.gpu or ctx.gpu.lower() == device.id.lower()):
        return device, "the calibration profile's device (not in the catalog; its fitted figures stand in for a datasheet)", False
    from_manifest = ctx.gpu_origin == "manifest"
    if ctx.gpu:
        # A GPU the user names must exist (bad input otherwise); one a manifest names may be outside the catalog.
        found = catalog.find_gpu(ctx.gpu) if from_manifest else catalog.get_gpu(ctx.gpu)
        if found is not None:
            return found, {"cli": "given with --gpu", "comment": "the vllm-reader comment block",
                           "manifest": f"read from the manifest ({ctx.gpu_source or 'GPU hint'})"}.get(
                               ctx.gpu_origin, ctx.gpu_origin), False
    gpu = catalog.get_gpu(DEFAULT_GPU)
    why = (f"the manifest names GPU '{ctx.gpu}' ({ctx.gpu_source}), which the GPU catalog does not have"
           if ctx.gpu and from_manifest else "GPU not given")
    cpu = on_cpu(d.env)
    if cpu is not None and not ctx.gpu:
        notes.append(Note(level="warning", message=(
            f"vLLM's CPU build ({cpu}): its KV cache is the size it is given, but every speed figure stands on an "
            f"assumed {gpu.id} and says nothing of a CPU; calibrate a profile of this machine (`vllm-reader "
            "calibrate`) and pass it with --calibration")))
    else:
        notes.append(Note(level="warning", message=(
            f"{why}: assuming {gpu.id}. Every memory and speed figure depends on it; set it with --gpu "
            "(see `vllm-reader catalog gpus`)")))
    return gpu, "assumed (not given)" if not ctx.gpu else f"assumed ({why})", True


def _engine(d: Deployment, version: VersionTuple) -> tuple[Literal["v0", "v1"], str]:
    entry = section("engine", version)
    assert entry is not None
    if entry["value"] == "v1" and entry.get("v0_when_env") and d.env.get("VLLM_USE_V1") == "0":
        return "v0", f"VLLM_USE_V1=0 selects the V0 engine ({entry['source']})"
    return entry["value"], entry["source"]


# ---- values -------------------------------------------------------------------------------

class _Resolver:
    """Fills r.values and r.derived in dependency order."""

    def __init__(self, r: ResolvedDeployment, version: VersionTuple) -> None:
        self.r = r
        self.v = version
        self.user = r.deployment.serving
        self.table = flag_table(version)
        self.model = r.model
        self.gpu = r.gpu

    def run(self) -> None:
        for name in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel",
                     "dtype", "kv_cache_dtype", "block_size", "gpu_memory_utilization", "scheduling_policy",
                     "long_prefill_token_threshold", "enforce_eager", "cpu_offload_gb", "swap_space",
                     "num_scheduler_steps", "max_num_partial_prefills", "scheduler_reserve_full_isl", "watermark",
                     "performance_mode", "long_prefill_token_threshold_adaptive", "prefix_caching_hash_algo"):
            self._scalar(name)
        self._plain("kv_cache_memory_bytes")
        self._plain("num_gpu_blocks_override")
        self._plain("max_num_active_seqs")
        self._gpu_count()
        self._quantization()
        self._effective_dtypes()
        self._max_model_len()
        self._speculative()
        self._chunked_prefill()
        self._prefix_caching()
        self._batch_limits()
        self._scheduled_tokens()
        self._async_scheduling()
        self._cpu_platform()
        self._cudagraphs()

    # -- helpers
    def _set(self, dest: str, value: Any, origin: Origin, why: str = "", source: str = "") -> None:
        self.r.values[dest] = ResolvedValue(value=value, origin=origin, why=why, source=source)

    def _derive(self, name: str, value: Any, why: str, source: str = "", origin: Origin = "derived") -> None:
        self.r.derived[name] = ResolvedValue(value=value, origin=origin, why=why, source=source)

    def _given(self, dest: str) -> Any:
        return getattr(self.user, dest, None) if dest in type(self.user).model_fields else self.user.other.get(dest)

    def _in_version(self, dest: str) -> bool:
        return dest in self.table.by_dest

    def _scalar(self, dest: str) -> None:
        given = self._given(dest)
        if given is not None:
            self._set(dest, given, "user", "given in the config")
            return
        entry = scalar_default(dest, self.v)
        if entry is not None and self._in_version(dest):
            self._set(dest, entry["value"], "default", f"vLLM {format_version(self.v)} default", entry["source"])

    def _plain(self, dest: str) -> None:
        given = self._given(dest)
        if given is not None:
            self._set(dest, given, "user", "given in the config")
        elif self._in_version(dest):
            self._set(dest, None, "default", "not set (vLLM decides)")

    # -- parallelism and GPUs
    def _gpu_count(self) -> None:
        tp, pp, dp = (self.r.value(k) or 1 for k in ("tensor_parallel_size", "pipeline_parallel_size",
                                                      "data_parallel_size"))
        needed = tp * pp * dp
        self._derive("world_size", tp * pp, "tensor_parallel_size x pipeline_parallel_size: GPUs per engine replica")
        self._derive("gpus_needed", needed, "tensor x pipeline x data parallel sizes")
        ctx = self.r.deployment.context
        if ctx.gpu_count:
            self.r.gpu_count = ctx.gpu_count
            self.r.gpu_count_how = {"cli": "given with --gpus", "comment": "the vllm-reader comment block",
                                    "manifest": "read from the manifest"}.get(ctx.gpu_count_origin, ctx.gpu_count_origin)
        else:
            self.r.gpu_count = needed
            self.r.gpu_count_how = "assumed: as many as tensor x pipeline x data parallel need"
            self.r.gpu_count_assumed = True

    # -- dtypes and quantization
    def _quantization(self) -> None:
        given = self._given("quantization")
        if given is not None:
            self._set("quantization", given, "user", "given in the config")
        elif self.model is not None and self.model.quantization is not None:
            self._set("quantization", self.model.quantization.method, "derived",
                      "the checkpoint's quantization_config (vLLM reads it when --quantization is unset)")
        else:
            self._set("quantization", None, "default", "none: unquantized weights")

    def _effective_dtypes(self) -> None:
        dtype = self.r.value("dtype") or "auto"
        model_dtype = self.model.torch_dtype if self.model else "bfloat16"
        names = {"half": "float16", "float": "float32", "bf16": "bfloat16", "fp16": "float16"}
        effective = model_dtype if dtype == "auto" else names.get(dtype, dtype)
        if effective == "float32" and dtype == "auto":
            effective = "bfloat16"
        self._derive("model_dtype", effective, "dtype 'auto' takes the checkpoint's torch_dtype" if dtype == "auto"
                     else f"dtype {dtype}")
        kv = self.r.value("kv_cache_dtype") or "auto"
        if kv != "auto":
            kv_eff, why = kv, f"kv_cache_dtype {kv}"
        elif self.model is not None and self.model.quantization and self.model.quantization.kv_cache_dtype:
            kv_eff, why = self.model.quantization.kv_cache_dtype, "the checkpoint's quantization config asks for it"
        else:
            kv_eff, why = effective, "kv_cache_dtype 'auto' follows the model dtype"
        self._derive("kv_cache_dtype", kv_eff, why, "vllm/utils/torch_utils.py 324-342 @ v0.18.0")

    # -- lengths
    def _max_model_len(self) -> None:
        given = self._given("max_model_len")
        if given is not None:
            if given == -1:
                self._set("max_model_len", -1, "user", "auto: vLLM fits the longest length the KV cache holds")
            else:
                self._set("max_model_len", given, "user", "given in the config")
            return
        if self.model is not None:
            length, why = default_max_len(self.model, self.v)
            self._set("max_model_len", length, "default", why, MAX_LEN_SOURCE)
        else:
            self._set("max_model_len", None, "default", "the model's maximum length (model unknown)")

    def _speculative(self) -> None:
        spec = self.r.deployment.speculative
        if spec is None:
            return
        method, inferred = spec.method, False
        if not method:
            method, inferred = self._infer_spec_method(spec.model), True
        family = _spec_family(method)
        k = spec.num_speculative_tokens
        if k is None:
            k = 1 if family == "mtp" else 0
        self.r.speculative = ResolvedSpeculative(
            method=method, family=family, model=spec.model, num_speculative_tokens=k,
            draft_tensor_parallel_size=spec.draft_tensor_parallel_size, inferred=inferred, spelled_as=spec.spelled_as,
            draft=read_draft(spec.model))

    def _infer_spec_method(self, draft: Optional[str]) -> str:
        """How vLLM names the method when only a draft model is given (SpeculativeConfig.__post_init__)."""
        if draft is None:
            if self.model is not None and self.model.model_type in _MTP_MODEL_TYPES:
                return "mtp"
            return "draft_model"
        low = draft.lower()
        if low in ("ngram", "[ngram]"):
            return "ngram"
        if "eagle3" in low:
            return "eagle3"
        if "eagle" in low:
            return "eagle"
        if "medusa" in low:
            return "medusa"
        if "mlp_speculator" in low or "mlp-speculator" in low or "accelerator" in low:
            return "mlp_speculator"
        return "draft_model"

    # -- scheduler
    def _chunked_prefill(self) -> None:
        given = self._given("enable_chunked_prefill")
        entry = section("chunked_prefill", self.v)
        rule, source = entry["value"], entry["source"]
        if self.r.engine == "v0" and rule != "v0_auto":
            rule = "v0_auto"
        if rule == "forced_on":
            if given is False:
                self._set("enable_chunked_prefill", True, "overridden",
                          f"vLLM {format_version(self.v)} always uses chunked prefill for generative models and "
                          "ignores enable_chunked_prefill=False", source)
            else:
                self._set("enable_chunked_prefill", True, "user" if given else "default",
                          "V1 engine: always on", source)
            return
        if given is not None:
            self._set("enable_chunked_prefill", given, "user", "given in the config", source)
            return
        if rule == "model_supported":
            self._set("enable_chunked_prefill", True, "default", "on for generative decoder models", source)
            return
        max_len = self.r.value("max_model_len") or 0
        auto = (max_len > 32768 and self.r.speculative is None and not self._given("enable_lora")
                and not (self.model is not None and self.model.layer_kinds.sliding))
        self._set("enable_chunked_prefill", auto, "default",
                  "V0: on automatically only when max_model_len > 32768 (no sliding window, speculation or LoRA)",
                  source)

    def _prefix_caching(self) -> None:
        given = self._given("enable_prefix_caching")
        entry = section("prefix_caching", self.v)
        if given is not None:
            self._set("enable_prefix_caching", given, "user", "given in the config", entry["source"])
            return
        value = entry["value"]
        if self.r.engine == "v0":
            value = False
        if value in ("model_supported", "model_supported_with_hybrid"):
            hybrid = self.model is not None and self.model.layer_kinds.linear > 0
            value = value == "model_supported_with_hybrid" or not hybrid
        self._set("enable_prefix_caching", value, "default",
                  "off for hybrid (mamba) models" if value is False and self.r.engine == "v1" else
                  f"vLLM {format_version(self.v)} default for this model", entry["source"])

    def _known_max_len(self) -> int:
        """max_model_len as vLLM has it when it sizes the batch: 'auto' (-1) is resolved by then to at most the
        model's positions, which stand in for it here; 0 when unknown."""
        value = self.r.value("max_model_len") or 0
        if value == -1 and self.model is not None:
            return derived_max_len(self.model, self.v)
        return max(value, 0)

    def _batch_limits(self) -> None:
        tokens_given = self._given("max_num_batched_tokens")
        seqs_given = self._given("max_num_seqs")
        max_len = self._known_max_len()
        self._derive("max_model_len", max_len or None, "max_model_len as vLLM's scheduler checks see it: 'auto' (-1) "
                     "is the model's longest length by then", "vllm/config/model.py _get_and_verify_max_len")
        chunked = bool(self.r.value("enable_chunked_prefill"))
        if self.r.engine == "v0":
            self._v0_batch_limits(tokens_given, seqs_given, max_len, chunked)
            return
        entry = section("batch_defaults", self.v)
        tier, tier_why = self._tier(entry)
        usage = self.r.deployment.context.usage_context
        base_tokens, base_seqs = tier[usage]["tokens"], tier[usage]["seqs"]
        why_tokens = [f"{tier_why}, {'vllm serve' if usage == 'serve' else 'LLM()'}: {base_tokens}"]
        why_seqs = [f"{tier_why}: {base_seqs}"]
        tokens, seqs = base_tokens, base_seqs
        doubles, doubles_src = adjustment_applies("throughput_mode_doubles", self.v)
        if doubles and self.r.value("performance_mode") == "throughput":
            tokens, seqs = tokens * 2, seqs * 2
            why_tokens.append("doubled by --performance-mode throughput")
            why_seqs.append("doubled by --performance-mode throughput")
        if seqs_given is None:
            clamp, _ = adjustment_applies("clamp_seqs_to_tokens", self.v)
            limit = tokens_given if tokens_given is not None else tokens
            if clamp and seqs > limit:
                seqs = limit
                why_seqs.append(f"clamped to max_num_batched_tokens ({limit})")
            self._set("max_num_seqs", seqs, "default", "; ".join(why_seqs), entry["source"])
        else:
            self._set("max_num_seqs", seqs_given, "user", "given in the config")
        if tokens_given is not None:
            self._set("max_num_batched_tokens", tokens_given, "user", "given in the config")
            return
        raise_len, raise_src = adjustment_applies("unchunked_raise_to_max_len", self.v)
        if not chunked and raise_len and max_len and tokens < max_len:
            tokens = max_len
            why_tokens.append(f"raised to max_model_len ({max_len}) because chunked prefill is off")
        clamp_len, _ = adjustment_applies("clamp_tokens_to_seqs_times_len", self.v)
        cap = self.r.value("max_num_seqs") * max_len if max_len else None
        if clamp_len and cap and tokens > cap:
            tokens = cap
            why_tokens.append(f"clamped to max_num_seqs x max_model_len ({cap})")
        self._set("max_num_batched_tokens", tokens, "default", "; ".join(why_tokens), entry["source"])

    def _tier(self, entry: dict[str, Any]) -> tuple[dict[str, Any], str]:
        gpu = self.gpu
        gib = gpu.memory_gib if gpu else 0.0
        name = (gpu.device_name if gpu else "").lower()
        for tier in entry["tiers"]:
            if "min_gib" in tier and gib < tier["min_gib"]:
                continue
            if any(word in name for word in tier.get("name_excludes", [])):
                continue
            if tier.get("name_includes") and not any(word in name for word in tier["name_includes"]):
                continue
            return tier, self._tier_words(tier, gib)
        raise AssertionError("the last tier of every batch_defaults entry matches everything")

    def _tier_words(self, tier: dict[str, Any], gib: float) -> str:
        gpu = self.gpu.id if self.gpu else "GPU"
        if "min_gib" in tier:
            return f"vLLM {format_version(self.v)} on {gpu} ({gib:.1f} GiB, >= {tier['min_gib']} GiB tier)"
        if tier.get("name_includes"):
            return f"vLLM {format_version(self.v)} on {gpu} (device-name tier)"
        return f"vLLM {format_version(self.v)} on {gpu} ({gib:.1f} GiB, base tier)"

    def _v0_batch_limits(self, tokens_given: Optional[int], seqs_given: Optional[int], max_len: int,
                         chunked: bool) -> None:
        entry = section("v0_batch_defaults", self.v)
        if seqs_given is None:
            self._set("max_num_seqs", entry["seqs"], "default", "V0 engine default", entry["source"])
        else:
            self._set("max_num_seqs", seqs_given, "user", "given in the config")
        if tokens_given is not None:
            self._set("max_num_batched_tokens", tokens_given, "user", "given in the config")
        elif chunked:
            self._set("max_num_batched_tokens", entry["chunked_tokens"], "default",
                      "V0 with chunked prefill", entry["source"])
        else:
            self._set("max_num_batched_tokens", max(max_len, 2048), "default",
                      "V0 without chunked prefill: max(max_model_len, 2048)", entry["source"])

    def _scheduled_tokens(self) -> None:
        budget = self.r.value("max_num_batched_tokens")
        given = self._given("max_num_scheduled_tokens")
        if given is not None:
            self._derive("max_num_scheduled_tokens", given, "given in the config", origin="user")
            return
        spec = self.r.speculative
        entry = section("spec_decode_budget", self.v)
        if spec is not None and entry is not None and entry["value"] == "reduce_for_draft_model" \
                and spec.family == "draft_model":
            seqs = self.r.value("max_num_seqs")
            self._derive("max_num_scheduled_tokens", budget - seqs,
                         f"max_num_batched_tokens - 1 drafting slot x max_num_seqs ({budget} - {seqs})",
                         entry["source"])
        else:
            self._derive("max_num_scheduled_tokens", budget, "equals max_num_batched_tokens")

    def _async_scheduling(self) -> None:
        given = self._given("async_scheduling")
        entry = section("async_scheduling", self.v)
        if entry is None:
            return
        if given is not None:
            self._set("async_scheduling", given, "user", "given in the config", entry["source"])
            return
        if entry["value"] is False:
            self._set("async_scheduling", False, "default", f"vLLM {format_version(self.v)} default", entry["source"])
            return
        spec = self.r.speculative
        executor = self._given("distributed_executor_backend")
        off_reason = None
        if spec is not None and spec.family not in ("eagle", "eagle3", "mtp"):
            off_reason = f"speculative method {spec.method} turns it off"
        elif executor not in (None, "mp", "uni", "external_launcher"):
            off_reason = f"the {executor} executor turns it off"
        self._set("async_scheduling", off_reason is None, "default",
                  off_reason or "auto: on", entry["source"])

    def _cpu_platform(self) -> None:
        """vLLM's CPU build sets its own block size, KV-cache size and scheduling (config/platforms.py)."""
        device = getattr(self.r.calibration, "device", None)
        why = on_cpu(self.r.deployment.env, getattr(device, "kind", None))
        if why is None:
            return
        self._derive("platform", "cpu", f"vLLM's CPU build: {why}")
        for dest, (value, source) in CPU_DEFAULTS.items():
            if self._given(dest) is None:
                self._set(dest, value, "default", "vLLM's CPU platform default", source)
        for dest, (value, source) in CPU_FORCED.items():
            if dest in self.r.values or self._in_version(dest):
                self._set(dest, value, "overridden" if self._given(dest) is not None else "default",
                          "vLLM's CPU platform sets it", source)
        kv = cpu_kv_bytes(self.r.deployment.env)
        if kv is not None and self._given("kv_cache_memory_bytes") is None:
            self._set("kv_cache_memory_bytes", kv[0], "user", "the KV cache vLLM's CPU build is given", kv[1])

    def _cudagraphs(self) -> None:
        if self.r.value("enforce_eager"):
            self._derive("max_cudagraph_capture_size", 0, "enforce_eager: no CUDA graphs")
            return
        given_sizes = self._given("cudagraph_capture_sizes") or self._given("cuda_graph_sizes")
        given_max = self._given("max_cudagraph_capture_size")
        budget = self.r.value("max_num_batched_tokens")
        if given_max is not None:
            self._derive("max_cudagraph_capture_size", min(given_max, budget), "max_cudagraph_capture_size given",
                         origin="user")
            return
        if given_sizes:
            self._derive("max_cudagraph_capture_size", min(max(given_sizes), budget), "largest capture size given",
                         origin="user")
            return
        entry = section("cudagraph_max_capture", self.v)
        if entry["value"] == "seqs_rule":
            k = self.r.speculative.num_speculative_tokens if self.r.speculative else 0
            cap = entry.get("cap_blackwell", entry["cap"]) if self.gpu and "blackwell" in self.gpu.arch.lower() \
                else entry["cap"]
            size = min(self.r.value("max_num_seqs") * (1 + k) * 2, cap, budget)
            why = f"min(max_num_seqs x (1 + speculative tokens) x 2, {cap}, max_num_batched_tokens)"
        else:
            size, why = min(entry["value"], budget), "release default"
        self._derive("max_cudagraph_capture_size", size, why, entry["source"])


def _spec_family(method: str) -> str:
    low = method.lower()
    if low.endswith("mtp") or "_mtp" in low:
        return "mtp"
    if low in ("ngram", "ngram_gpu"):
        return "ngram"
    if low in SPEC_FAMILIES:
        return low
    return "other"
