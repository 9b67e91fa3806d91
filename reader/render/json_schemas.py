"""JSON schemas of `diagnose`, `sweep`, `observe` and `plan --format json`, generated from the pydantic models.

    python -m reader.render.json_schemas          # write reader/render/schemas/{diagnosis,sweep,observe,plan}.schema.json
    python -m reader.render.json_schemas --check  # exit 1 if either is stale (a test runs this)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parent / "schemas"


def documents() -> dict[Path, str]:
    from ..diagnose.report import SCHEMA_VERSION, Diagnosis
    from ..diagnose.sweep import Sweep
    from ..observe.report import SCHEMA_VERSION as OBSERVE_VERSION
    from ..observe.report import ObserveReport
    from ..plan.result import SCHEMA_VERSION as PLAN_VERSION, Plan

    out = {}
    for name, model, title, version in (("diagnosis", Diagnosis, "vllm-reader diagnose --format json", SCHEMA_VERSION),
                                        ("sweep", Sweep, "vllm-reader sweep --format json", SCHEMA_VERSION),
                                        ("observe", ObserveReport, "vllm-reader observe --format json", OBSERVE_VERSION),
                                        ("plan", Plan, "vllm-reader plan --format json", PLAN_VERSION)):
        schema: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                                  "$id": f"https://vllm-reader.invalid/schemas/{name}-v{version}.json",
                                  "title": title, **model.model_json_schema()}
        out[SCHEMAS / f"{name}.schema.json"] = json.dumps(schema, indent=1) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    docs = documents()
    if "--check" in args:
        stale = [path for path, text in docs.items() if not path.is_file() or path.read_text() != text]
        for path in stale:
            print(f"stale: {path}")
        return 1 if stale else 0
    for path, text in docs.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
