"""Write rules/flags/_quant_act_dtypes.json: per release, the model dtypes each quantization method accepts, read
from the release's source with `ast`.

Usage: python tools/import_quant_dtypes.py [SRC_DIR]   (default: what tools/vllm_sources.sh prints)

vLLM maps a method name to its config class (vllm/model_executor/layers/quantization/__init__.py), and before
building the model it refuses a dtype the class's get_supported_act_dtypes does not list: "{dtype} is not
supported for quantization method {method}. Supported dtypes: [...]" (VllmConfig._get_quantization_config,
vllm/config/vllm.py; vllm/model_executor/model_loader/utils.py in releases before vllm/config/vllm.py had it).
A class that inherits the method takes its base's list. A method whose list is computed rather than written out
is left out, and so is a release whose source is not unpacked: `check` then says nothing there. Nothing is
imported or run.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from release_table import write_releases  # noqa: E402

OUT = ROOT / "rules" / "flags" / "_quant_act_dtypes.json"
PACKAGE = "vllm/model_executor/layers/quantization"
METHOD = "get_supported_act_dtypes"
CHECK_WORDS = "is not supported for quantization"
CHECK_FILES = ("vllm/config/vllm.py", "vllm/config/__init__.py", "vllm/config.py",
               "vllm/model_executor/model_loader/utils.py", "vllm/model_executor/model_loader/loader.py")
# torch's names for the dtypes vLLM's --dtype can resolve to; the float8 storage dtypes some classes also list
# are never a model dtype, so they are not kept
TORCH_DTYPES = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32",
                "float32": "float32"}


def _classes(package: Path) -> dict[str, tuple[list[str], bool, Optional[list[str]], str]]:
    """class name -> (base names, whether it defines the method, the dtypes the method returns when they are
    written out, file:line of the method)."""
    found: dict[str, tuple[list[str], bool, Optional[list[str]], str]] = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parents[3]).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name not in found:
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                own = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == METHOD), None)
                found[node.name] = (bases, own is not None, _literal_dtypes(own) if own else None,
                                    f"{rel}:{own.lineno if own else node.lineno}")
    return found


def _literal_dtypes(func: ast.FunctionDef) -> Optional[list[str]]:
    """The dtypes of a body that is one `return [torch.x, ...]` (a docstring may come first)."""
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.List):
        return None
    names = []
    for item in body[0].value.elts:
        if not (isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name) and item.value.id == "torch"):
            return None
        if item.attr in TORCH_DTYPES:
            names.append(TORCH_DTYPES[item.attr])
    return sorted(set(names))


def _resolve(name: str, classes: dict, seen: frozenset = frozenset()) -> Optional[tuple[list[str], str]]:
    """The dtypes a class accepts and where they are written: its own method's, else the nearest base's."""
    if name not in classes or name in seen:
        return None
    bases, defines, dtypes, where = classes[name]
    if defines:
        return (dtypes, where) if dtypes else None
    for base in bases:
        found = _resolve(base, classes, seen | {name})
        if found is not None:
            return found
    return None


def _method_classes(init: Path) -> dict[str, str]:
    """method name -> config class name, from every dict literal of string keys and class-name values."""
    methods: dict[str, str] = {}
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Name):
                    methods.setdefault(key.value, value.id)
    return methods


def read_release(tree_root: Path) -> Optional[dict]:
    """{methods: {method: [dtypes]}, src: {method: file:line}, check: file:line of the refusal}."""
    package = tree_root / PACKAGE
    check = _check_line(tree_root)
    if not (package / "__init__.py").is_file() or check is None:
        return None
    classes = _classes(package)
    methods, src = {}, {}
    for method, cls in sorted(_method_classes(package / "__init__.py").items()):
        found = _resolve(cls, classes)
        if found is not None:
            methods[method], src[method] = found
    return {"methods": methods, "src": src, "check": check} if methods else None


def _check_line(tree_root: Path) -> Optional[str]:
    for rel in CHECK_FILES:
        path = tree_root / rel
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            hit = next((i + 1 for i, line in enumerate(lines) if CHECK_WORDS in line), None)
            if hit is not None:
                return f"{rel}:{hit}"
    return None


if __name__ == "__main__":
    write_releases(OUT, f"tools/import_quant_dtypes.py from each release's {PACKAGE} "
                        f"({METHOD} of the class each method name maps to)", read_release)
