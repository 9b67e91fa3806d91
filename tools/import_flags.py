"""Regenerate rules/flags/v*.json from the shared reference's cli-flags/v*.yaml.

The reference files are YAML for people; the CLI reads JSON because it loads about
fifty times faster, and `vllm-reader check` has a cold-start budget. Run:

    python tools/import_flags.py ../shared/reference/vllm/cli-flags
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parent.parent / "rules" / "flags"


def main(src_dir: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(src_dir).glob("v*.yaml")):
        data = yaml.safe_load(path.read_text())
        data["_source"] = (
            "vllm-reader shared/reference/vllm/cli-flags/" + path.name
            + ": every option `vllm serve` registers at this release tag, extracted statically from the"
            " PyPI sdist (see that folder's README for the method)"
        )
        (OUT / (path.stem + ".json")).write_text(json.dumps(data, indent=0, sort_keys=False) + "\n")
        print("wrote", OUT / (path.stem + ".json"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/reference/vllm/cli-flags")
