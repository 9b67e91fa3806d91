"""Regenerate the two generated files this package ships, or check that they are current.

    python -m reader.rules_engine.generate          # write them
    python -m reader.rules_engine.generate --check  # exit 1 if either is stale

- rules/rules.lock.json: every rule of rules/validation/*.yaml and rules/compat-matrix.yaml,
  validated and expanded (matrix rules generated), with a digest of the YAML it came from. `check`
  loads it instead of parsing and validating the YAML on every run; when the digest does not match
  the YAML (someone edited a rule and did not regenerate), the loader reads the YAML instead, so a
  stale lock is slow, never wrong. A test fails while the lock is stale.
- reader/render/schemas/findings.schema.json: the JSON schema of `check --format json`, from the
  pydantic models in reader/rules_engine/findings.py.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def findings_schema() -> dict[str, Any]:
    from .findings import SCHEMA_VERSION, CheckReport

    schema = CheckReport.model_json_schema()
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "$id": f"https://vllm-reader.invalid/schemas/findings-v{SCHEMA_VERSION}.json",
              "title": "vllm-reader check --format json", **schema}
    return schema


def schema_path() -> Path:
    return Path(__file__).resolve().parents[1] / "render" / "schemas" / "findings.schema.json"


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def outputs() -> dict[Path, str]:
    from .loader import LOCK_NAME, lock_document, rules_dir

    base = rules_dir()
    return {base / LOCK_NAME: dumps(lock_document(base)), schema_path(): dumps(findings_schema())}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    stale = []
    for path, text in outputs().items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    for path in stale:
        print(("stale: " if check else "wrote: ") + str(path))
    return 1 if (check and stale) else 0


if __name__ == "__main__":
    raise SystemExit(main())
