"""Regenerate rules/flags/v*.json from the shared reference's cli-flags/v*.yaml and each release's source.

The reference files are YAML for people (every option, its type, choices and default); the CLI reads JSON
because it loads about fifty times faster, and `vllm-reader check` has a cold-start budget. To each option
this tool adds its value bounds as the release's own source states them (pydantic `Field(ge/gt/le/lt)`, and
validator tests that raise), and to each table how the release parses human-readable integers
(tools/flag_constraints.py reads the source with `ast`). Run:

    bash tools/vllm_sources.sh          # once: unpacks every release's Python source (prints the folder)
    python tools/import_flags.py ../shared/reference/vllm/cli-flags ~/.cache/vllm-reader/vllm-src
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from flag_constraints import attribute_classes, human_int_parser, release_bounds

OUT = Path(__file__).resolve().parent.parent / "rules" / "flags"


def main(src_dir: str, sources: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    paths = sorted(Path(src_dir).glob("v*.yaml"))
    missing = [p.stem for p in paths if not (Path(sources) / p.stem / "vllm" / "__init__.py").is_file()]
    if missing:
        sys.exit(f"no source for {', '.join(missing)} under {sources}: run tools/vllm_sources.sh first")
    for path in paths:
        data = yaml.safe_load(path.read_text())
        data["_source"] = (
            "vllm-reader shared/reference/vllm/cli-flags/" + path.name
            + ": every option `vllm serve` registers at this release tag, extracted statically from the"
            " PyPI sdist (see that folder's README for the method); bounds and parsers from the same sdist by"
            " tools/flag_constraints.py"
        )
        add_constraints(data, Path(sources) / path.stem / "vllm")
        (OUT / (path.stem + ".json")).write_text(json.dumps(data, indent=0, sort_keys=False) + "\n")
        print("wrote", OUT / (path.stem + ".json"))
    write_history()


def add_constraints(data: dict, root: Path) -> None:
    """Each option's bounds (`bounds`: op, value, kind, config, src, and vLLM's message for a validator) and,
    for JSON options whose value builds a config class, the bounds of its keys (`key_bounds`)."""
    bounds = release_bounds(root)
    classes = attribute_classes(root)
    by_attr: dict[str, list[str]] = {}
    for key in bounds:
        by_attr.setdefault(key.split(".", 1)[1], []).append(key)
    for spec in data["flags"].values():
        field = spec.get("field")
        if field is None:
            # tables before 0.8.5 name no config field: an attribute of the same name on exactly one class
            candidates = by_attr.get(spec["dest"], [])
            field = candidates[0] if len(candidates) == 1 else None
        if field in bounds and spec.get("type") in ("int", "float", "human_int", "human_int_or_auto"):
            spec["bounds"] = bounds[field]
        target = classes.get(field or "")
        if target and spec.get("type") in ("json", "json_or_str"):
            keys = {k.split(".", 1)[1]: v for k, v in bounds.items() if k.split(".", 1)[0] == target}
            if keys:
                spec["key_bounds"] = {"config": target, "keys": keys}
    parser = human_int_parser(root)
    if parser is not None:
        data["parsers"] = {"human_int": parser}


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
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/reference/vllm/cli-flags",
         sys.argv[2] if len(sys.argv) > 2 else str(Path.home() / ".cache" / "vllm-reader" / "vllm-src"))
