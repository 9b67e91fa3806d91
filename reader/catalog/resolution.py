"""Where a model's shape comes from: one chain of sources, each of which says what it found.

Every way in ends in the same reader (reader/catalog/model_files.py, then hf_config.py): a model is
its config.json. The chain, first hit wins:

1. a local file or folder that exists (config.json, params.json, hf_quant_config.json in it);
2. a Hugging Face id: the local Hugging Face cache (at the config's `revision`, else `main`);
3. the shipped catalog (reader/catalog/models/, trimmed config.json files with their sources);
4. a download of config.json alone from the Hub (huggingface_hub: HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE);
5. a path that does not exist here (it lives in the serving container): the ids its last components
   and --served-model-name most likely name, each tried through 2-4, said loudly as an inference;
6. a name that is a variant of a known model, whose own config is out of reach: a quantized name
   (`-FP8`, `-AWQ`, ...) takes its base model's shape with the announced weight format; a re-upload or
   fine-tune named after a catalog model (`TheBloke/Llama-2-7B-Chat`, `Qwen2.5-7B-Instruct-abliterated`,
   `Hermes-3-Llama-3.1-8B`) takes that model's shape; both said as an assumption.

The catalog comes before the Hub so that a known model never needs the network (CI gates run offline
and give the same answer every time); an explicit `revision` puts the Hub first, since the catalog
holds one pinned copy.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Literal, Optional

from pydantic import BaseModel, Field

from ..errors import ReaderError
from . import names
from .types import ModelSpec

Source = Literal["local", "hf-cache", "catalog", "hub", "name"]
_SOURCE_WORDS = {"local": "local files", "hf-cache": "Hugging Face cache", "catalog": "shipped catalog",
                 "hub": "Hugging Face Hub", "name": "the name"}
_HF_URL = re.compile(r"^(https?://)?(www\.)?(huggingface\.co|hf\.co)/", re.IGNORECASE)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")


class ModelStep(BaseModel):
    """One source asked about one name, and its answer."""

    source: Source
    name: str
    found: bool
    detail: str = ""

    def describe(self) -> str:
        verb = "found" if self.found else "no"
        return f"{_SOURCE_WORDS[self.source]}: {verb} {self.name}" + (f" ({self.detail})" if self.detail else "")


class ModelResolution(BaseModel):
    """The model's shape and how it was found (or why it was not)."""

    asked: str
    given_with_option: bool = False  # --model: the user named it; nothing was inferred
    spec: Optional[ModelSpec] = None
    source: Optional[Source] = None
    location: str = ""  # the file, snapshot, catalog folder or Hub repository the shape was read from
    resolved_id: Optional[str] = None
    inferred_from: Optional[str] = None  # how an id was read from a path that does not exist here
    assumptions: list[str] = Field(default_factory=list)
    steps: list[ModelStep] = Field(default_factory=list)
    problem: Optional[str] = None  # one sentence, when no source had the model

    @property
    def found(self) -> bool:
        return self.spec is not None

    def shape_from(self, with_inference: bool = True) -> str:
        """`model shape from: <source> (<where>)`, the line every report shows."""
        if self.spec is None:
            return f"model shape from: nowhere ({self.problem})"
        text = f"model shape from: {_SOURCE_WORDS[self.source or 'name']} ({self.location})"
        if self.inferred_from and with_inference:
            text += f"; id {self.resolved_id} inferred from {self.inferred_from}"
        return text

    def tried(self) -> str:
        return "; ".join(step.describe() for step in self.steps)


class _Chain:
    def __init__(self, asked: str, revision: Optional[str], config_format: Optional[str]):
        self.r = ModelResolution(asked=asked)
        self.revision = revision
        self.config_format = config_format

    def step(self, source: Source, name: str, found: bool, detail: str = "") -> None:
        self.r.steps.append(ModelStep(source=source, name=name, found=found, detail=detail))

    def hit(self, spec: ModelSpec, source: Source, location: str, resolved_id: Optional[str]) -> ModelResolution:
        self.r.spec, self.r.source, self.r.location, self.r.resolved_id = spec, source, location, resolved_id
        return self.r


def resolve_model(name: str, *, revision: Optional[str] = None, served_names: Iterable[str] = (),
                  config_format: Optional[str] = None, from_option: bool = False) -> ModelResolution:
    """Find the shape of the model `name` names (a path, a folder, a file or a Hugging Face id)."""
    text = _HF_URL.sub("", name.strip()) if isinstance(name, str) else ""
    if not text:
        raise ReaderError("no model given: expected a Hugging Face id, a model folder or a config.json.",
                          key="--model" if from_option else "model")
    chain = _Chain(text, revision, config_format)
    chain.r.given_with_option = from_option
    if names.is_gguf(text):
        problem = (f"'{text}' is a GGUF checkpoint, whose shape is inside the .gguf file, which vllm-reader does not "
                   "read; name the base model's Hugging Face id or config.json with --model")
        if from_option:
            raise ReaderError(f"--model {text}: {problem}.", key="--model")
        return _unresolved(chain, problem)
    if _exists(text):
        return _local(chain, text)
    if _looks_like_path(text):
        if from_option:
            raise ReaderError(f"no such file or folder: '{text}'.", key="--model",
                              hint="Give --model a Hugging Face id, a model folder or a config.json that exists.")
        return _by_inference(chain, text, served_names)
    if _HUB_ID.match(text):
        return _by_hub_id(chain, text, served_names)
    return _unresolved(chain, f"'{text}' is neither a path that exists here nor a Hugging Face id")


def _by_hub_id(chain: _Chain, text: str, served_names: Iterable[str]) -> ModelResolution:
    """An id: as named; else the base model of a quantized name; else what its name or --served-model-name
    suggest (a relative path in the container, a private fine-tune named after its base)."""
    if _by_id(chain, text, chain.revision) is not None:
        return chain.r
    if "/" in text and _by_base_name(chain, [names.Candidate(text, "")], family=False):
        return chain.r
    inferred = _by_inference(chain, text, served_names, skip=text)
    if inferred.found or "/" not in text:
        return inferred
    return _unresolved(chain, f"no source has the model {text} ({_misses(chain)})")


def require_model(name: str, *, revision: Optional[str] = None, config_format: Optional[str] = None,
                  option: str = "--model") -> ModelResolution:
    """resolve_model for a name the user gave as an option: not finding it is bad input (exit 2)."""
    res = resolve_model(name, revision=revision, config_format=config_format, from_option=True)
    if not res.found:
        from ..errors import did_you_mean
        from .load import model_suggestions

        raise ReaderError(f"{option} {name.strip()}: {res.problem}.{did_you_mean(model_suggestions(name))}",
                          key=option, hint="Give a Hugging Face id, a model folder or a config.json; "
                                           "`vllm-reader catalog models` lists the shipped ones.")
    return res


def resolve_storage_path(path: str, *, revision: Optional[str] = None,
                         served_names: Iterable[str] = ()) -> ModelResolution:
    """A model location without its scheme (s3://, gs://, pvc://, oci://... stripped by the caller; hf:// ids go
    to resolve_model): a bucket or volume path whose last components, like a container path's, name the model."""
    text = path.strip()
    if not text:
        raise ReaderError("the storage URI has no path after its scheme.", key="model")
    chain = _Chain(text, revision, None)
    return _by_inference(chain, text.strip("/"), served_names)


# ---------------------------------------------------------------------------------------------
# Sources


def _exists(text: str) -> bool:
    try:
        return Path(text).expanduser().exists()
    except OSError:
        return False


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~", ".\\")) or "\\" in text or text.count("/") > 1 \
        or text.lower().endswith(".json")


def _local(chain: _Chain, text: str) -> ModelResolution:
    from .model_files import find_model_files, read_model_files

    files = find_model_files(text, chain.config_format)
    spec = read_model_files(files, model_id=text, source=f"local files {files.describe()}")
    chain.step("local", text, True, files.describe())
    return chain.hit(spec, "local", str(files.main), None)


def _by_id(chain: _Chain, repo_id: str, revision: Optional[str]) -> Optional[ModelResolution]:
    """Cache, then catalog, then Hub (Hub before catalog when a revision is pinned)."""
    if _from_cache(chain, repo_id, revision):
        return chain.r
    order = ("hub", "catalog") if _pinned(revision) else ("catalog", "hub")
    for source in order:
        if source == "catalog" and _from_catalog(chain, repo_id):
            return chain.r
        if source == "hub" and _from_hub(chain, repo_id, revision):
            return chain.r
    return None


def _pinned(revision: Optional[str]) -> bool:
    """A revision other than the default branch: the catalog's one copy may not be that revision."""
    return bool(revision) and revision != "main"


def _from_cache(chain: _Chain, repo_id: str, revision: Optional[str]) -> bool:
    from .hf_cache import Snapshot, find_snapshot

    snap = find_snapshot(repo_id, revision)
    if not isinstance(snap, Snapshot):
        chain.step("hf-cache", repo_id, False, snap.reason)
        return False
    return _read_folder(chain, "hf-cache", repo_id, snap.repo_id, snap.folder,
                        f"{snap.repo_id} @ {snap.revision} = {snap.commit[:12]}")


def _read_folder(chain: _Chain, source: Source, asked: str, model_id: str, folder: Path, where: str) -> bool:
    """A cached or downloaded snapshot read with the users' reader; the step and the hit recorded."""
    from .model_files import find_model_files, read_model_files

    files = find_model_files(folder, chain.config_format)
    where = f"{where}, {files.main}"
    spec = read_model_files(files, model_id=model_id, source=f"{_SOURCE_WORDS[source]}: {where}")
    chain.step(source, asked, True, where)
    chain.hit(spec, source, where, model_id)
    return True


def _from_catalog(chain: _Chain, repo_id: str) -> bool:
    from .load import catalog_location, find_model

    spec = find_model(repo_id)
    if spec is None:
        chain.step("catalog", repo_id, False)
        return False
    where = catalog_location(spec.id)
    chain.step("catalog", repo_id, True, spec.id if spec.id.lower() != repo_id.lower() else "")
    chain.hit(spec, "catalog", where, spec.id)
    if _pinned(chain.revision):
        chain.r.assumptions.append(f"the catalog holds one copy of {spec.id}'s config.json, not necessarily the one "
                                   f"at revision '{chain.revision}'")
    return True


def _from_hub(chain: _Chain, repo_id: str, revision: Optional[str]) -> bool:
    from .hub import Downloaded, download_config

    got = download_config(repo_id, revision)
    if not isinstance(got, Downloaded):
        chain.step("hub", repo_id, False, got.reason)
        return False
    return _read_folder(chain, "hub", repo_id, repo_id, got.folder,
                        f"{got.endpoint}/{repo_id} @ {got.revision}, downloaded to the Hugging Face cache")


# ---------------------------------------------------------------------------------------------
# Guesses: ids read from a path, and quantization read from a name


def _by_inference(chain: _Chain, text: str, served_names: Iterable[str], skip: str = "") -> ModelResolution:
    from .load import bare_name_match, catalog_orgs

    orgs, match = catalog_orgs(), _bare_match(bare_name_match)
    candidates = names.candidate_ids(text, known_orgs=orgs, bare_match=match)
    for served in (s.strip() for s in served_names if isinstance(s, str) and s.strip()):
        if _HUB_ID.match(served) and served.count("/") == 1:
            candidates.append(names.Candidate(served, f"--served-model-name '{served}'"))
        else:
            candidates += names.candidate_ids(served, known_orgs=orgs, bare_match=match, label="--served-model-name")
    candidates = [c for c in candidates if c.repo_id.lower() != skip.lower()]  # already asked for as named
    for cand in candidates:
        if _by_id(chain, cand.repo_id, cand.revision or chain.revision) is not None:
            chain.r.inferred_from = cand.why
            return chain.r
    # the asked id keeps its own name (its quantized base was tried before the inference), then the ids guessed
    asked = [names.Candidate(skip, "")] if skip else []
    if _by_base_name(chain, asked, quantized=False) or _by_base_name(chain, candidates):
        return chain.r
    what = f"the path '{text}' does not exist here" if _looks_like_path(text) else f"no source has '{text}'"
    if not candidates:
        return _unresolved(chain, f"{what} and its name matches no known model")
    tried = ", ".join(dict.fromkeys(c.repo_id for c in candidates))
    return _unresolved(chain, f"{what}, and the ids it suggests ({tried}) were found nowhere ({_misses(chain)})")


def _bare_match(catalog_match):
    """A bare folder name -> an id the catalog or the Hugging Face cache holds under that name."""
    def match(base: str) -> Optional[str]:
        from .hf_cache import cached_repo_ids

        hit = catalog_match(base)
        if hit:
            return hit
        cached = [r for r in cached_repo_ids() if r.rsplit("/", 1)[-1].lower() == base.lower()]
        return cached[0] if len(cached) == 1 else None
    return match


def _by_base_name(chain: _Chain, candidates: list[names.Candidate], quantized: bool = True,
                  family: bool = True) -> bool:
    """The shape of the model a name is a variant of, its own config out of reach: the base of a quantized
    name (`-FP8`, `-AWQ`, ...) with the weight format it announces, or the catalog model a re-upload or
    fine-tune is named after (names.named_base) in its own format."""
    for cand in candidates:
        quant = names.quantization_from_name(cand.repo_id)
        if quantized and quant and _from_base(chain, cand, quant, _quant_bases(quant)):
            return True
        base = names.named_base(quant.base if quant else cand.repo_id, _catalog_names()) if family else None
        if base and base.lower() != cand.repo_id.lower() and _from_base(chain, cand, quant, [base]):
            return True
    return False


def _quant_bases(quant: names.NameQuant) -> list[str]:
    short = quant.base.rsplit("/", 1)[-1]
    org = names.org_for(short)
    return list(dict.fromkeys([quant.base] + ([f"{org}/{short}"] if org else [])))


def _catalog_names() -> list[str]:
    from .load import catalog_model_names

    return catalog_model_names()


def _from_base(chain: _Chain, cand: names.Candidate, quant: Optional[names.NameQuant], bases: list[str]) -> bool:
    for base in bases:
        if _by_id(chain, base, chain.revision) is None:
            continue
        spec = chain.r.spec
        assert spec is not None
        how, note, step = _variant_words(spec.id, quant)
        update: dict = {"id": cand.repo_id, "notes": (spec.notes + " " if spec.notes else "") + note}
        if quant is not None:
            update["quantization"] = quant.spec
        chain.r.spec = spec.model_copy(update=update)
        chain.r.resolved_id = cand.repo_id
        if cand.why:
            chain.r.inferred_from = cand.why
        chain.r.assumptions.append(f"the config.json of {cand.repo_id} is out of reach, so its shape is taken from "
                                   f"{spec.id} and {how}")
        chain.step("name", cand.repo_id, True, step)
        return True
    return False


def _variant_words(base_id: str, quant: Optional[names.NameQuant]) -> tuple[str, str, str]:
    """What the report says of a variant read as its base: the assumption, the model's note, the step."""
    if quant is not None:
        return (f"its weights are assumed to be {quant.words}, from the '{quant.suffix}' in its name",
                f"Shape of {base_id}; weight format assumed from the name's '{quant.suffix}'.",
                f"{quant.words}, shape of {base_id}")
    return ("it is read as a re-upload or fine-tune of that model, with the same shape and weight format "
            "(pass its config.json with --model if it differs)",
            f"Shape of {base_id}, the model its name is a variant of.", f"named after {base_id}")


def _misses(chain: _Chain) -> str:
    from .hf_cache import hub_cache_dir

    seen = dict.fromkeys(f"{_SOURCE_WORDS[s.source]}: {s.detail}" if s.detail else
                         f"{_SOURCE_WORDS[s.source]}: not there" for s in chain.r.steps if not s.found)
    if any(s.source == "hf-cache" for s in chain.r.steps):
        seen[f"the Hugging Face cache looked in: {hub_cache_dir()}"] = None
    return "; ".join(seen)


def _unresolved(chain: _Chain, problem: str) -> ModelResolution:
    chain.r.spec = None
    chain.r.problem = problem
    return chain.r


__all__ = ["resolve_model", "require_model", "resolve_storage_path", "ModelResolution", "ModelStep"]
