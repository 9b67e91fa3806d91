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
    write_history()



def _runs(present: list[bool], tags: list[str]) -> list[str]:
    """Contiguous runs of checked tags, written 'A..B'."""
    runs, start = [], None
    for i, here in enumerate(present + [False]):
        if here and start is None:
            start = i
        elif not here and start is not None:
            runs.append(f"{tags[start]}..{tags[i - 1]}")
            start = None
    return runs


def write_history() -> None:
    """rules/flags/_history.json: for every option string ever accepted, where it exists.

    Used to say "--swap-space was removed in 0.18.0" or "did you mean" without loading 41 tables.
    """
    def key(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in p.stem.lstrip("v").split("."))

    files = sorted(OUT.glob("v*.json"), key=key)
    tags = [p.stem.lstrip("v") for p in files]
    seen: dict[str, dict] = {}
    for i, path in enumerate(files):
        table = json.loads(path.read_text())
        for option, spec in table["flags"].items():
            spellings = [option] + list(spec.get("aliases", [])) + list(spec.get("neg", []))
            for s in spellings:
                entry = seen.setdefault(s, {"dest": spec["dest"], "canonical": option, "present": [False] * len(tags)})
                entry["present"][i] = True
    history = {
        s: {"dest": e["dest"], "canonical": e["canonical"], "versions": _runs(e["present"], tags)}
        for s, e in sorted(seen.items())
    }
    (OUT / "_history.json").write_text(json.dumps({"tags": tags, "options": history}, indent=0) + "\n")
    print("wrote", OUT / "_history.json", len(history), "option strings")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/reference/vllm/cli-flags")
