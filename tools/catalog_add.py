"""Add (or refresh) one model in the shipped catalog: reader/catalog/models/<org>/<name>/.

    python tools/catalog_add.py RAW_CONFIG.json ENTRY.yaml [--quant-sidecar hf_quant_config.json]

RAW_CONFIG.json is a stored copy of the model's real config.json (from the repository ENTRY.yaml
names); ENTRY.yaml holds the entry's source.yaml fields (id, source, published_params, ...) and,
optionally, `set:` - keys to add or overwrite in the config, each of which must also be listed under
`filled` with its reason. The config is trimmed to the keys vllm-reader reads
(reader.catalog.hf_config.READ_KEYS); the removed keys are listed in source.yaml under `trimmed`.
The entry is then read back with the same reader users get, so a config it cannot read is refused.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reader.catalog.hf_config import trim_config  # noqa: E402
from reader.catalog.model_files import read_model_path  # noqa: E402

MODELS_DIR = REPO / "reader" / "catalog" / "models"
FIELD_ORDER = ("id", "aliases", "verification", "source", "license", "published_params", "filled", "unverified",
               "trimmed", "notes")


def write_entry(raw: dict, entry: dict, sidecar: dict | None = None) -> Path:
    model_id = entry["id"]
    folder = MODELS_DIR / model_id
    before = {f.name: f.read_bytes() for f in folder.iterdir()} if folder.is_dir() else None
    if before and "aliases" not in entry:  # an upgrade keeps the names users already look it up by
        aliases = (yaml.safe_load(before.get("source.yaml", b"")) or {}).get("aliases")
        if aliases:
            entry["aliases"] = aliases
    config = dict(raw)
    for key, value in (entry.pop("set", None) or {}).items():
        if key not in (entry.get("filled") or {}):
            raise SystemExit(f"{model_id}: 'set' changes {key} but 'filled' gives no reason for it")
        config[key] = value
    trimmed = trim_config(config)
    removed = sorted(k for k in config if k not in trimmed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(trimmed, indent=2) + "\n", encoding="utf-8")
    if sidecar is not None:
        (folder / "hf_quant_config.json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    entry = dict(entry)
    if removed:
        entry["trimmed"] = removed
    ordered = {k: entry[k] for k in FIELD_ORDER if k in entry}
    ordered.update({k: v for k, v in entry.items() if k not in ordered})
    text = yaml.safe_dump(ordered, sort_keys=False, width=110, allow_unicode=True)
    (folder / "source.yaml").write_text(text, encoding="utf-8")
    try:
        read_model_path(folder)  # the entry must read with the users' reader
    except Exception as error:
        _restore(folder, before)
        raise SystemExit(f"{model_id}: the reader refuses the entry, so nothing was written: {error}") from None
    return folder


def _restore(folder: Path, before: dict[str, bytes] | None) -> None:
    """Put the folder back as it was: removed if it is new, its old files if it was an upgrade."""
    for f in folder.iterdir():
        f.unlink()
    if before is None:
        folder.rmdir()
        if not any(folder.parent.iterdir()):
            folder.parent.rmdir()
        return
    for name, data in before.items():
        (folder / name).write_bytes(data)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--quant-sidecar"):
        print(__doc__, file=sys.stderr)
        return 2
    raw = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    entry = yaml.safe_load(Path(argv[1]).read_text(encoding="utf-8"))
    sidecar = json.loads(Path(argv[3]).read_text(encoding="utf-8")) if len(argv) == 4 else None
    print(f"wrote {write_entry(raw, entry, sidecar)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
