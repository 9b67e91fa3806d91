"""Write rules/flags/_removed_architectures.json: per release, the model architectures it no longer serves and the
last release that did, read from the release's source with `ast`.

Usage: python tools/import_removed_architectures.py [SRC_DIR]   (default: what tools/vllm_sources.sh prints)

vLLM keeps a dict of previously supported architectures in vllm/model_executor/models/registry.py
(_PREVIOUSLY_SUPPORTED_MODELS: architecture -> the last version that served it) and refuses a model whose
config.json names one of them with "Model architecture {arch} was supported in vLLM until v{version}, and is not
supported anymore." A release without the dict is left out, and so is one whose source is not unpacked: `check`
then says nothing about removed architectures there. Nothing is imported or run.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from release_table import write_releases  # noqa: E402

OUT = ROOT / "rules" / "flags" / "_removed_architectures.json"
REGISTRY = "vllm/model_executor/models/registry.py"
NAME = "_PREVIOUSLY_SUPPORTED_MODELS"
RAISE_WORDS = "was supported in vLLM until"


def read_release(tree_root: Path) -> Optional[dict]:
    """{architectures: {arch: last version}, src: file:line of the dict, check: file:line of the raise}."""
    path = tree_root / REGISTRY
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    table = None
    for node in ast.parse(text).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == NAME and isinstance(node.value, ast.Dict):
            table = (node.lineno, {k.value: v.value for k, v in zip(node.value.keys, node.value.values)
                                   if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)})
    if table is None:
        return None
    check = next((i + 1 for i, line in enumerate(text.splitlines()) if RAISE_WORDS in line), None)
    return {"architectures": dict(sorted(table[1].items())), "src": f"{REGISTRY}:{table[0]}",
            "check": f"{REGISTRY}:{check}" if check else None}


if __name__ == "__main__":
    write_releases(OUT, f"tools/import_removed_architectures.py from each release's {REGISTRY} ({NAME})",
                   read_release)
