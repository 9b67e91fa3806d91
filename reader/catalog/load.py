"""Look up models and GPUs in the shipped catalogs (the models/ folder and gpus.yaml beside this file).

Models: by Hugging Face id, alias or bare repo name ("Llama-3.1-8B"), case-insensitive; a path to
a local config.json (or the folder holding one) is read instead, as vLLM would read it. Each model
is a folder of config.json files (reader/catalog/entries.py), read when first asked for.
GPUs: by id, alias or torch device name, case-insensitive and blind to separators ("h100_sxm",
"H100 SXM", "nvidia-h100-80gb-hbm3"). A family name that covers several parts ("H100", "A100")
resolves to the one part gpus.yaml's `ambiguous_aliases` names; `resolve_gpu` returns that note.

catalog.json beside them is generated (python -m reader.catalog.load): the GPUs of gpus.yaml and the
model index (each folder's id and aliases), so that start-up reads one small file; tests check it
is not stale. The catalogs are parsed once, on first use.
"""
from __future__ import annotations

import difflib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from ..errors import ReaderError, did_you_mean
from .entries import MODELS_DIR, read_entry, scan
from .types import GpuSpec, ModelSpec

CATALOG_DIR = Path(__file__).resolve().parent
GPUS_FILE = CATALOG_DIR / "gpus.yaml"
COMPILED_FILE = CATALOG_DIR / "catalog.json"

_HF_PREFIXES = ("https://huggingface.co/", "http://huggingface.co/", "huggingface.co/", "hf.co/")
_GPU_VENDOR_WORDS = ("nvidia", "amd", "instinct", "geforce", "tesla")
_PATH_HINT = ("For a model that is not in the catalog, pass the path to its Hugging Face config.json "
              "(or to the folder that holds it). List the catalog with: vllm-reader catalog models.")


# ---------------------------------------------------------------------------------------------
# Raw data


def _load_yaml(path: Path) -> dict[str, Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open("r", encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=loader)
    if not isinstance(data, dict):
        raise RuntimeError(f"catalog file {path} is not a mapping")
    return data


def compile_catalogs() -> dict[str, Any]:
    """The model index (from the folders) and the GPU catalog, as the one object catalog.json holds."""
    return {"models": scan(MODELS_DIR), "gpus": _load_yaml(GPUS_FILE)}


def write_compiled() -> Path:
    import json

    COMPILED_FILE.write_text(json.dumps(compile_catalogs(), indent=0, sort_keys=True) + "\n", encoding="utf-8")
    return COMPILED_FILE


@lru_cache(maxsize=1)
def _catalogs() -> dict[str, Any]:
    if not COMPILED_FILE.is_file():
        return compile_catalogs()
    import json

    return json.loads(COMPILED_FILE.read_text(encoding="utf-8"))


def _model_entries() -> list[dict[str, Any]]:
    return _catalogs()["models"]


def _gpu_data() -> dict[str, Any]:
    return _catalogs()["gpus"]


# ---------------------------------------------------------------------------------------------
# Models


def _model_key(name: str) -> str:
    key = name.strip()
    for prefix in _HF_PREFIXES:
        if key.lower().startswith(prefix):
            key = key[len(prefix):]
    return key.strip("/").lower()


@lru_cache(maxsize=1)
def _model_index() -> dict[str, int]:
    """Lower-cased id, alias and (when unique) bare repo name -> position in the model index."""
    index: dict[str, int] = {}
    bare: dict[str, set[int]] = {}
    for pos, entry in enumerate(_model_entries()):
        for name in (entry["id"], *entry.get("aliases", ())):
            key = _model_key(name)
            if key in index and index[key] != pos:
                raise RuntimeError(f"model catalog: '{name}' names two entries")
            index[key] = pos
            if "/" in key:
                bare.setdefault(key.rsplit("/", 1)[1], set()).add(pos)
    for key, positions in bare.items():
        if len(positions) == 1 and key not in index:
            index[key] = next(iter(positions))
    return index


@lru_cache(maxsize=None)
def _model_at(pos: int) -> ModelSpec:
    return read_entry(_model_entries()[pos]["id"], MODELS_DIR)


def find_model(name: str) -> Optional[ModelSpec]:
    """The catalog entry for an id, alias or bare repo name, or None. Never reads files."""
    if not isinstance(name, str) or not name.strip():
        return None
    pos = _model_index().get(_model_key(name))
    return None if pos is None else _model_at(pos)


def catalog_model_names() -> list[str]:
    """Every catalog id and alias, as written (for matching a variant's name to its base)."""
    return [name for entry in _model_entries() for name in (entry["id"], *entry.get("aliases", ()))]


def bare_name_match(name: str) -> Optional[str]:
    """The catalog id whose repository name (without the organisation) is `name`, when only one is."""
    key = _model_key(name)
    if "/" in key:
        return None
    pos = _model_index().get(key)
    return None if pos is None else _model_entries()[pos]["id"]


@lru_cache(maxsize=1)
def catalog_orgs() -> frozenset[str]:
    """Lower-cased organisations of the catalog's ids and aliases (to tell `org/name` in a path)."""
    return frozenset(key.split("/", 1)[0] for key in _model_index() if "/" in key)


def catalog_location(model_id: str) -> str:
    """Where the catalog keeps a model's config.json, for the report."""
    folder = MODELS_DIR / model_id
    name = "config.json" if (folder / "config.json").is_file() else "params.json"
    return f"reader/catalog/models/{model_id}/{name}"


def _is_local_path(name: str) -> bool:
    text = name.strip()
    if text.startswith((".", "/", "~")) or text.lower().endswith(".json") or "\\" in text:
        return True
    return Path(text).expanduser().exists()


def get_model(name: str) -> ModelSpec:
    """The ModelSpec for a catalog name, or for a local config.json / model folder.

    A path that exists wins over a catalog name, as in vLLM (a local folder named like a Hub id
    is what vLLM would load). Unknown names raise ReaderError with the closest catalog names.
    """
    if not isinstance(name, str) or not name.strip():
        raise ReaderError("no model given: expected a Hugging Face id or a path to a config.json.",
                          hint=_PATH_HINT)
    if _is_local_path(name):
        from .model_files import read_model_path

        return read_model_path(name.strip())
    found = find_model(name)
    if found is not None:
        return found
    raise ReaderError(f"unknown model '{name.strip()}'.{did_you_mean(model_suggestions(name))}",
                      hint=_PATH_HINT)


def model_suggestions(name: str) -> list[str]:
    """Up to three catalog names close to `name`: names containing it first, then difflib's picks."""
    display: dict[str, tuple[str, int]] = {}  # lower-cased candidate -> (name to show, entry)
    for pos, entry in enumerate(_model_entries()):
        for candidate in (entry["id"], *entry.get("aliases", ())):
            display.setdefault(candidate.lower(), (candidate, pos))
            if "/" in candidate:
                display.setdefault(candidate.rsplit("/", 1)[1].lower(), (candidate, pos))
    query = _model_key(name)
    queries = list(dict.fromkeys([query] + ([query.rsplit("/", 1)[1]] if "/" in query else [])))
    matches = [k for q in queries if len(q) >= 3 for k in display if q in k]
    for q in queries:
        matches += difflib.get_close_matches(q, list(display), n=8, cutoff=0.6)
    shown: dict[int, str] = {}
    for match in matches:
        text, pos = display[match]
        shown.setdefault(pos, text)
    return list(shown.values())[:3]


def list_models() -> list[ModelSpec]:
    return [_model_at(pos) for pos in range(len(_model_entries()))]


# ---------------------------------------------------------------------------------------------
# GPUs


def _gpu_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _strip_vendor(key: str) -> str:
    changed = True
    while changed:
        changed = False
        for word in _GPU_VENDOR_WORDS:
            if key.startswith(word) and len(key) > len(word):
                key, changed = key[len(word):], True
    return key


@lru_cache(maxsize=1)
def _gpu_index() -> tuple[dict[str, int], dict[str, tuple[str, str]]]:
    """(normalised id/alias/device name -> position, ambiguous family name -> (gpu id, note))."""
    ambiguous = {_gpu_key(name): (rule["gpu"], rule["note"])
                 for name, rule in (_gpu_data().get("ambiguous_aliases") or {}).items()}
    index: dict[str, int] = {}
    loose: dict[str, set[int]] = {}
    for pos, entry in enumerate(_gpu_data()["gpus"]):
        for name in (entry["id"], *entry.get("aliases", ()), entry["device_name"]):
            key = _gpu_key(name)
            if (key in index and index[key] != pos) or key in ambiguous:
                raise RuntimeError(f"gpus.yaml: '{name}' names two entries or is an ambiguous alias")
            index[key] = pos
            loose.setdefault(_strip_vendor(key), set()).add(pos)
    # Without the vendor word ("nvidia-l4" -> "l4"), unless that is ambiguous or taken.
    for key, positions in loose.items():
        if len(positions) == 1 and key not in index and key not in ambiguous:
            index[key] = next(iter(positions))
    return index, ambiguous


@lru_cache(maxsize=None)
def _gpu_at(pos: int) -> GpuSpec:
    return GpuSpec.model_validate(_gpu_data()["gpus"][pos])


def _gpu_by_id(gpu_id: str) -> GpuSpec:
    index, _ = _gpu_index()
    return _gpu_at(index[_gpu_key(gpu_id)])


def resolve_gpu(name: str) -> tuple[GpuSpec, Optional[str]]:
    """(GpuSpec, note) for a name; the note says which part an ambiguous family name was taken as."""
    if not isinstance(name, str) or not _gpu_key(name):
        raise ReaderError("no GPU given: expected a name such as H100-SXM, L4 or MI300X.",
                          hint="List them with: vllm-reader catalog gpus.")
    index, ambiguous = _gpu_index()
    key = _gpu_key(name)
    for candidate in (key, _strip_vendor(key)):
        if candidate in index:
            return _gpu_at(index[candidate]), None
        if candidate in ambiguous:
            gpu_id, note = ambiguous[candidate]
            return _gpu_by_id(gpu_id), f"'{name.strip()}' taken as {gpu_id}: {note}"
    known = ", ".join(entry["id"] for entry in _gpu_data()["gpus"])
    raise ReaderError(f"unknown GPU '{name.strip()}'.{did_you_mean(_gpu_suggestions(key))}",
                      hint=f"Known GPUs: {known} (details: vllm-reader catalog gpus).")


def get_gpu(name: str) -> GpuSpec:
    return resolve_gpu(name)[0]


def find_gpu(name: str) -> Optional[GpuSpec]:
    try:
        return resolve_gpu(name)[0]
    except ReaderError:
        return None


def gpu_lookup_note(name: str) -> Optional[str]:
    """Why a family name resolved to one particular part, or None for an exact name."""
    return resolve_gpu(name)[1]


def _gpu_suggestions(key: str) -> list[str]:
    index, ambiguous = _gpu_index()
    entries = _gpu_data()["gpus"]
    display = {k: entries[pos]["id"] for k, pos in index.items()}
    display.update({k: gpu_id for k, (gpu_id, _) in ambiguous.items()})
    ids: list[str] = []
    for q in dict.fromkeys((key, _strip_vendor(key))):
        for match in difflib.get_close_matches(q, list(display), n=6, cutoff=0.6):
            if display[match] not in ids:
                ids.append(display[match])
    return ids[:3]


def list_gpus() -> list[GpuSpec]:
    return [_gpu_at(pos) for pos in range(len(_gpu_data()["gpus"]))]


def ambiguous_gpu_aliases() -> dict[str, tuple[str, str]]:
    """Family names that resolve by convention: name -> (gpu id, note), as written in gpus.yaml."""
    return {name: (rule["gpu"], rule["note"]) for name, rule in (_gpu_data().get("ambiguous_aliases") or {}).items()}


if __name__ == "__main__":
    print(f"wrote {write_compiled()}")


__all__ = ["get_model", "find_model", "list_models", "get_gpu", "find_gpu", "resolve_gpu", "list_gpus",
           "gpu_lookup_note", "ambiguous_gpu_aliases", "bare_name_match", "catalog_orgs", "catalog_location",
           "model_suggestions", "MODELS_DIR", "GPUS_FILE"]
