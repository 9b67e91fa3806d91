"""Value constraints of one vLLM release, read from its source with `ast` (nothing is imported or run).

Two kinds of bound are found on the config classes (vllm/config.py, or vllm/config/*.py from 0.10):

- pydantic `Field(ge=..., gt=..., le=..., lt=...)` on a class attribute (the config classes are pydantic
  dataclasses from 0.12.0), including `Annotated[..., Field(...)]`;
- validators: an `if self.<attr> <op> <number>:` (or an `or` holding such tests) at the top level of a method
  that runs while the config is built (`__post_init__`, `_verify_args`, `_verify_*`, `verify_*`, pydantic
  `model_validator`s) whose body raises; the bound is the negated test, and the raised text (f-string parts
  shown as `{...}`) is vLLM's message.

Also read: how the release's `human_readable_int` parses `32k` / `1K` (its pattern, its decimal and binary
multipliers, and whether binary suffixes refuse decimals), for the flags the table types `human_int`.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Optional

NEGATE = {ast.Lt: "ge", ast.LtE: "gt", ast.Gt: "le", ast.GtE: "lt", ast.Eq: "ne", ast.NotEq: "eq"}
FIELD_OPS = ("ge", "gt", "le", "lt")
RUNS_AT_BUILD = ("__post_init__", "_verify_args")
RUNS_AT_BUILD_PREFIX = ("_verify_", "verify_")


def config_files(root: Path) -> list[Path]:
    """The modules that define config classes at this release (root is the `vllm/` package folder)."""
    files = []
    if (root / "config.py").is_file():
        files.append(root / "config.py")
    if (root / "config").is_dir():
        files += sorted((root / "config").glob("*.py"))
    return files


def _number(node: ast.AST) -> Optional[float | int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    return None


def _field_call(value: Optional[ast.AST], annotation: ast.AST) -> Optional[ast.Call]:
    if isinstance(value, ast.Call) and _name(value.func) == "Field":
        return value
    if isinstance(annotation, ast.Subscript) and _name(annotation.value) == "Annotated":
        parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        for part in parts[1:]:
            if isinstance(part, ast.Call) and _name(part.func) == "Field":
                return part
    return None


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def text_of(node: ast.AST) -> Optional[str]:
    """A message as vLLM writes it: literal text, with `{...}` where an f-string or `%` fills in a value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            else:
                inner = part.value if isinstance(part, ast.FormattedValue) else part
                out.append("{" + _short(inner) + "}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = text_of(node.left), text_of(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return text_of(node.left)
    return None


def _short(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - ast.unparse handles every expression node
        return "..."


def _raised_text(body: list[ast.stmt]) -> tuple[bool, Optional[str], Optional[str]]:
    """(raises, exception name, message) for an `if` body that raises at its top level."""
    for stmt in body:
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc
            if isinstance(exc, ast.Call):
                message = text_of(exc.args[0]) if exc.args else None
                return True, _name(exc.func), message
            return True, _name(exc), None
    return False, None, None


def _tests(test: ast.AST) -> list[tuple[str, str, Any]]:
    """`self.x < 1` -> [(x, 'ge', 1)]: the bounds the test's negation demands; `or` gives one per part."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        # any part that holds raises, so each comparison among the parts is a bound on its own
        return [t for v in test.values for t in _tests(v)]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return []
    left, op, right = test.left, test.ops[0], test.comparators[0]
    limit = _number(right)
    attr = _self_attr(left)
    if attr is None or limit is None or type(op) not in NEGATE:
        return []
    return [(attr, NEGATE[type(op)], limit)]


def _self_attr(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def class_bounds(path: Path, rel: str) -> dict[str, list[dict[str, Any]]]:
    """`Class.attr` -> the bounds found for it in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    out: dict[str, list[dict[str, Any]]] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                call = _field_call(stmt.value, stmt.annotation)
                for kw in call.keywords if call is not None else []:
                    limit = _number(kw.value)
                    if kw.arg in FIELD_OPS and limit is not None:
                        out.setdefault(f"{cls.name}.{stmt.target.id}", []).append({
                            "op": kw.arg, "value": limit, "kind": "field", "config": cls.name,
                            "src": f"{rel}:{stmt.lineno} {cls.name}.{stmt.target.id} Field({kw.arg}={limit})"})
            elif isinstance(stmt, ast.FunctionDef) and _runs_at_build(stmt):
                for test_stmt in stmt.body:
                    if not isinstance(test_stmt, ast.If):
                        continue
                    raises, exc, message = _raised_text(test_stmt.body)
                    if not raises:
                        continue
                    for attr, op, limit in _tests(test_stmt.test):
                        out.setdefault(f"{cls.name}.{attr}", []).append({
                            "op": op, "value": limit, "kind": "validator", "config": cls.name, "error": exc,
                            "message": message,
                            "src": f"{rel}:{test_stmt.lineno} {cls.name}.{stmt.name}"})
    return out


def _runs_at_build(fn: ast.FunctionDef) -> bool:
    after = any(_name(d.func if isinstance(d, ast.Call) else d) == "model_validator" for d in fn.decorator_list)
    return after or fn.name in RUNS_AT_BUILD or fn.name.startswith(RUNS_AT_BUILD_PREFIX)


def release_bounds(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Every `Class.attr` bound of the release whose `vllm/` package folder is `root`."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in config_files(root):
        rel = path.relative_to(root.parent).as_posix()
        for key, items in class_bounds(path, rel).items():
            out.setdefault(key, []).extend(items)
    return out


def attribute_classes(root: Path) -> dict[str, str]:
    """`Class.attr` -> the config class its annotation names (`VllmConfig.speculative_config` -> SpeculativeConfig)."""
    out: dict[str, str] = {}
    for path in config_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for stmt in cls.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    names = [n.id for n in ast.walk(stmt.annotation) if isinstance(n, ast.Name)
                             and n.id.endswith("Config")]
                    if len(names) == 1:
                        out[f"{cls.name}.{stmt.target.id}"] = names[0]
    return out


# ---- human-readable integers --------------------------------------------------------------------

def human_int_parser(root: Path) -> Optional[dict[str, Any]]:
    """How `human_readable_int` reads `32k` at this release, or None when the release has no such parser."""
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "def human_readable_int" not in text:
            continue
        tree = ast.parse(text)
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name == "human_readable_int":
                return _describe_human_int(fn, path.relative_to(root.parent).as_posix())
    return None


def _describe_human_int(fn: ast.FunctionDef, rel: str) -> dict[str, Any]:
    pattern, multipliers = None, {}
    binary_refuses_decimals = False
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _name(node.func) in ("fullmatch", "match") and node.args:
            if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                pattern = node.args[0].value
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and isinstance(node.targets[0], ast.Name):
            table = {}
            for k, v in zip(node.value.keys, node.value.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    table[k.value] = _power(v)
            multipliers[node.targets[0].id] = table
        if isinstance(node, ast.Try):
            # `int(number) * mult` inside a try that re-raises: decimals before a binary suffix are refused
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call) and _name(c.func) == "int"]
            if calls and any(isinstance(h, ast.ExceptHandler) for h in node.handlers):
                binary_refuses_decimals = True
    decimal = next((t for name, t in multipliers.items() if "decimal" in name), {})
    binary = next((t for name, t in multipliers.items() if "binary" in name), {})
    return {"function": "human_readable_int", "src": f"{rel}:{fn.lineno}", "pattern": pattern,
            "decimal": decimal, "binary": binary, "binary_refuses_decimals": binary_refuses_decimals}


def _power(node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exp = _power(node.left), _power(node.right)
        return base ** exp if base is not None and exp is not None else None
    return None
