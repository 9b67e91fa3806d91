"""Write rules/flags/_registries.json: per release, the string values vLLM checks an option against at start-up
when argparse no longer does (an option without `choices`), read from the release's source with `ast`.

Usage: python tools/import_registries.py [SRC_DIR]   (default: what tools/vllm_sources.sh prints)

Each registry names the module-level `Literal[...]` alias the release builds its list from, and the words of the
error it raises for a value outside it; the file records, per release, the values with the alias's file and line
and the raise site's file and line (found by its words). Nothing is imported or run. A release whose source is
not unpacked is left out: `check` then keeps its softer fallback (VR403's list, a warning).

Only registries whose every unknown value is a refusal are listed. Not listed, and why:
- distributed_executor_backend before 0.11.2: its executors took other strings in other ways (from 0.11.2 a
  string outside the literal is an import path, so only a dotless one is certainly refused);
- tokenizer_mode: the tokenizer registry also takes custom modes, and "auto" is rewritten per model first.
Plugins can add quantization methods and model loaders at run time too; `check` says so in VR120's notes.
"""
from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "rules" / "flags" / "_registries.json"

REGISTRIES = {
    "quantization": {
        "option": "--quantization",
        "module": "vllm/model_executor/layers/quantization/__init__.py",
        "alias": "QuantizationMethods",
        "raise_words": "Unknown quantization method",
        "raise_in": ["vllm/config.py", "vllm/config"],
        "vllm_message": "Unknown quantization method: {value}. Must be one of {values}.",
        # ModelConfig.validate_quantization_before lowercases the name first (vllm/config.py @ v0.10.0,
        # vllm/config/model.py @ v0.11.0 to v0.33.0): `FP8` is fp8 (found by tools/differential)
        "normalize": "lower",
        "why": "ModelConfig._verify_quantization compares the lowercased name with QUANTIZATION_METHODS, the list of "
               "the QuantizationMethods literal (plus methods a plugin registers at run time)",
    },
    "load_format": {
        "option": "--load-format",
        "module": "vllm/model_executor/model_loader/__init__.py",
        "alias": "LoadFormats",
        "raise_words": "is not supported\")",
        "raise_in": ["vllm/model_executor/model_loader/__init__.py"],
        "vllm_message": "Load format `{value}` is not supported",
        "normalize": "lower",
        "why": "LoadConfig lowercases the name; get_model_loader looks it up among the loaders of the LoadFormats "
               "literal (plus loaders a plugin registers) when the worker loads the model",
    },
    "attention_backend": {
        "option": "--attention-backend",
        "module": ["vllm/v1/attention/backends/registry.py", "vllm/attention/backends/registry.py"],
        "enum": "AttentionBackendEnum",
        "raise_words": "Unknown attention backend",
        "raise_in": ["vllm/v1/attention/backends/registry.py", "vllm/attention/backends/registry.py"],
        "vllm_message": "Unknown attention backend: '{value}'. Valid options are: {joined}",
        "normalize": "upper",
        # where AttentionConfig's validator takes 'auto' (no backend) before the enum lookup, it is accepted too
        "auto_if": ("vllm/config/attention.py", 'value.lower() == "auto"'),
        "why": "AttentionConfig's validator looks the upper-cased name up among AttentionBackendEnum's members",
    },
    "distributed_executor_backend": {
        "option": "--distributed-executor-backend",
        "module": "vllm/config/parallel.py",
        "alias": "DistributedExecutorBackend",
        "raise_words": 'qualname.rsplit(".", 1)',
        "raise_in": ["vllm/utils"],
        "vllm_message": "ValueError: not enough values to unpack (expected 2, got 1) (Executor.get_class takes "
                        "'{value}' for an import path: it is none of {joined})",
        # only where Executor.get_class takes any other string as an executor's import path: a dotted one may be
        # a real class (unverifiable here), a dotless one cannot be
        "dotted_if": ("vllm/v1/executor/abstract.py", "resolve_obj_by_qualname(distributed_executor_backend)"),
        "why": "Executor.get_class knows the DistributedExecutorBackend names and imports any other string as "
               "'module.Class'",
    },
}


def literal_values(path: Path, alias: str) -> Optional[tuple[list[str], int]]:
    """The strings of `alias = Literal[...]` at module level, and its line; None when the module has no such alias."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == alias and isinstance(node.value, ast.Subscript):
            items = node.value.slice
            elts = items.elts if isinstance(items, ast.Tuple) else [items]
            values = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return values, node.lineno
    return None


def enum_members(path: Path, name: str) -> Optional[tuple[list[str], int]]:
    """The member names of `class name(Enum...)` at module level, and its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            members = [t.id for item in node.body if isinstance(item, ast.Assign) for t in item.targets
                       if isinstance(t, ast.Name) and t.id.isupper()]
            return members, node.lineno
    return None


def raise_site(root: Path, places: list[str], words: str) -> Optional[str]:
    """`file:line` of the first line holding `words` under the given files or folders of the release."""
    for place in places:
        base = root / place
        files = [base] if base.is_file() else sorted(base.rglob("*.py")) if base.is_dir() else []
        for path in files:
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if words in line:
                    return f"{path.relative_to(root)}:{number}"
    return None


def release_registry(root: Path, spec: dict[str, Any]) -> Optional[dict[str, Any]]:
    modules = [spec["module"]] if isinstance(spec["module"], str) else spec["module"]
    rel = next((m for m in modules if (root / m).is_file()), None)
    if rel is None:
        return None
    name = spec.get("enum") or spec["alias"]
    found = enum_members(root / rel, name) if spec.get("enum") else literal_values(root / rel, name)
    check = raise_site(root, spec["raise_in"], spec["raise_words"])
    if found is None or check is None:
        return None
    values, line = found
    out = {"values": values, "src": f"{rel}:{line} {name}", "check": check}
    dotted = spec.get("dotted_if")
    if dotted:
        if not (root / dotted[0]).is_file() or dotted[1] not in (root / dotted[0]).read_text(encoding="utf-8"):
            return None
        out["dotted"] = f"{dotted[0]}: {dotted[1]}"  # an import path ('module.Class') is taken unchecked
    auto = spec.get("auto_if")
    if auto and (root / auto[0]).is_file() and auto[1] in (root / auto[0]).read_text(encoding="utf-8"):
        out["also"] = {"AUTO": f"{auto[0]}: {auto[1]}"}  # accepted before the lookup, not a member
    return out


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in name.lstrip("v").split("."))


def build(src_dir: Path) -> dict[str, Any]:
    releases = sorted((p for p in src_dir.glob("v*") if (p / ".ready").exists()), key=lambda p: _version_key(p.name))
    out: dict[str, Any] = {}
    for dest, spec in REGISTRIES.items():
        per_release = {}
        for rel in releases:
            got = release_registry(rel, spec)
            if got is not None:
                per_release[rel.name.lstrip("v")] = got
        out[dest] = {"option": spec["option"], "vllm_message": spec["vllm_message"], "why": spec["why"],
                     "normalize": spec.get("normalize"), "releases": per_release}
    return {"schema": 1, "_source": "tools/import_registries.py: each release's PyPI sdist (tools/vllm_sources.sh), "
            "read with ast; values from the Literal alias named in `src`, refused where `check` raises",
            "registries": out}


def main(argv: list[str]) -> int:
    default = Path(os.environ.get("VLLM_READER_CACHE", Path.home() / ".cache" / "vllm-reader")) / "vllm-src"
    src_dir = Path(argv[0]) if argv else default
    data = build(src_dir)
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    counts = {k: len(v["releases"]) for k, v in data["registries"].items()}
    print(f"wrote {OUT.relative_to(ROOT)}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
