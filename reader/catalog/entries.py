"""The shipped model catalog: a folder of real config.json files, read by the same reader as a user's.

    reader/catalog/models/<org>/<name>/config.json          the real file, trimmed to the keys the reader reads
                                       hf_quant_config.json  (ModelOpt checkpoints) and params.json (Mistral
                                                             format, which vLLM then reads) where the model has them
                                       source.yaml           where the file came from and what was changed

source.yaml holds: `id` (= the folder), `aliases`, `verification` (primary: an exact copy of the file;
secondary: a commit-pinned second-hand copy; unverified: no stored copy), `source` (kind, repo, path,
commit or url, copy_of, note), `license`, `published_params` (total, active, as_written, source),
`filled` (config key -> why it was added or changed), `unverified` (config keys no stored copy
confirms), `figure_sources` (ModelSpec field -> where a figure the file leaves implicit comes from),
`trimmed` (keys removed from the real file) and `notes`. A folder dropped in this layout is a
catalog model: the index (catalog.json) is regenerated from the folders by `python -m reader.catalog.load`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from .model_files import PARAMS_NAME, find_model_files, read_model_files
from .types import ModelSpec

MODELS_DIR = Path(__file__).resolve().parent / "models"
SOURCE_NAME = "source.yaml"
# source.yaml speaks of config keys; ModelSpec of its own fields.
_FIELD_OF_KEY = {"quantization_config": "quantization", "layer_types": "layer_kinds",
                 "sliding_window_pattern": "layer_kinds", "no_rope_layers": "layer_kinds", "text_config": "is_multimodal"}


def read_source(folder: Path) -> dict[str, Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    path = folder / SOURCE_NAME
    with path.open("r", encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=loader)
    if not isinstance(data, dict):
        raise RuntimeError(f"{path} is not a mapping")
    return data


def scan(models_dir: Path = MODELS_DIR) -> list[dict[str, Any]]:
    """{id, aliases} of every model folder, sorted by id in any case (what the compiled index holds)."""
    out = []
    for source in sorted(models_dir.glob(f"*/*/{SOURCE_NAME}"), key=lambda p: str(p).lower()):
        folder = source.parent
        model_id = f"{folder.parent.name}/{folder.name}"
        meta = read_source(folder)
        if meta.get("id", model_id) != model_id:
            raise RuntimeError(f"{source}: id '{meta.get('id')}' is not the folder's name '{model_id}'")
        if not any((folder / name).is_file() for name in ("config.json", PARAMS_NAME)):
            raise RuntimeError(f"{folder} has a {SOURCE_NAME} but neither config.json nor {PARAMS_NAME}")
        out.append({"id": model_id, "aliases": [str(a) for a in meta.get("aliases") or []]})
    return out


def folder_of(model_id: str, models_dir: Path = MODELS_DIR) -> Path:
    return models_dir / model_id


def read_entry(model_id: str, models_dir: Path = MODELS_DIR) -> ModelSpec:
    """The ModelSpec of one catalog folder: its files through the users' reader, its source.yaml on top."""
    folder = folder_of(model_id, models_dir)
    meta = read_source(folder)
    files = find_model_files(folder, "mistral" if (folder / PARAMS_NAME).is_file() else "hf")
    spec = read_model_files(files, model_id=model_id, source=source_text(meta))
    return spec.model_copy(update=_overlay(meta, spec))


def _overlay(meta: dict[str, Any], spec: ModelSpec) -> dict[str, Any]:
    fields = ModelSpec.model_fields
    figure_sources = {_FIELD_OF_KEY.get(k, k): str(why) for k, why in (meta.get("filled") or {}).items()
                      if _FIELD_OF_KEY.get(k, k) in fields}
    figure_sources.update({k: str(v) for k, v in (meta.get("figure_sources") or {}).items()})
    unverified = tuple(dict.fromkeys(_FIELD_OF_KEY.get(k, k) for k in meta.get("unverified") or ()
                                     if _FIELD_OF_KEY.get(k, k) in fields))
    fallback = (meta.get("source") or {}).get("note") or "unverified: no stored copy confirms it (see source.yaml)"
    for name in unverified:
        figure_sources.setdefault(name, str(fallback))
    notes = " ".join(n for n in (str(meta.get("notes") or "").strip(), spec.notes) if n)
    return {"aliases": tuple(str(a) for a in meta.get("aliases") or ()),
            "verification": meta.get("verification", "primary"), "figure_sources": figure_sources,
            "unverified": unverified, "notes": notes, "params_source": _params_source(meta, spec)}


def source_text(meta: dict[str, Any]) -> str:
    """One line: where the config.json came from (repo path @ commit, or a URL), and any note."""
    src = meta.get("source") or {}
    where = " ".join(str(src[k]) for k in ("repo", "path") if src.get(k))
    if src.get("commit"):
        where += f" @ {src['commit']}"
    if src.get("url"):
        where = f"{where} {src['url']}".strip()
    key = src.get("key") or src.get("preset")
    if key:
        where += f" (key {key})"
    note = src.get("note")
    if note:
        where = f"{where}; {note}" if where else str(note)
    return where or "shipped catalog (source.yaml names no source)"


def _params_source(meta: dict[str, Any], spec: ModelSpec) -> str:
    published: Optional[dict[str, Any]] = meta.get("published_params")
    if not published:
        return spec.params_source
    return f"{spec.params_source}; published: {published.get('as_written', published.get('total'))} " \
           f"({published.get('source', 'source not named')})"


__all__ = ["MODELS_DIR", "SOURCE_NAME", "scan", "read_entry", "read_source", "source_text", "folder_of"]
