"""Where one vLLM release refuses a configuration at start-up, read from its source with `ast` (nothing is
imported or run).

A refusal site is a `raise` or an `assert` in a function that runs while `vllm serve` turns its arguments
into an engine configuration: the serve argument checks (`ServeSubcommand.validate`), `EngineArgs.__post_init__`,
`EngineArgs.from_cli_args` and `EngineArgs.create_engine_config()`, and everything they reach inside the
modules that build the configuration (vllm/config.py or vllm/config/*.py, vllm/engine/arg_utils.py, the serve
entry point and its cli_args module). Reaching is followed statically:

- `self.m()` / `cls.m()` / `super().m()`: the method of that class or its bases;
- `Config(...)` for a class of those modules: what runs when it is built (`__init__`, `__post_init__`, pydantic
  `model_validator`s and `field_validator`s);
- `Config.m()`: that class's method; `f()`: a function of the module or one it imports from the modules above;
- `obj.m()` on an object of unknown class: the method `m` of every class of those modules that defines it
  (an over-approximation: a site found here may be unreachable, never the reverse within these modules);
- `obj.p` where `p` is a `@property` of a class of those modules: the property's body.

Calls leaving those modules (the platform's own checks, Hugging Face config loading, the model registry) are not
followed: what they refuse is platform-specific or needs the model's files, and the coverage table says so.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from flag_constraints import config_files, node_name, text_of

ENTRY_POINTS = [("EngineArgs", "create_engine_config"), ("EngineArgs", "__post_init__"),
                ("EngineArgs", "from_cli_args"), ("ServeSubcommand", "validate")]
BUILD_METHODS = ("__init__", "__post_init__")
VALIDATOR_DECORATORS = ("model_validator", "field_validator", "validator", "root_validator")
# method names too generic to follow on an object of unknown class (dict/list methods and the like)
GENERIC = {"get", "update", "items", "keys", "values", "append", "extend", "pop", "copy", "replace", "split",
           "join", "format", "startswith", "endswith", "lower", "upper", "strip", "add", "setdefault", "index",
           "count", "sort", "remove", "insert", "compute_hash", "to_dict", "__init__", "__post_init__"}


@dataclass
class Site:
    """One `raise` or `assert` of a release."""
    file: str          # relative to the source root: vllm/config/scheduler.py
    line: int
    where: str         # Class.method or function
    kind: str          # the exception raised, or AssertionError
    message: Optional[str]   # vLLM's text, `{...}` where it fills in a value
    condition: str     # the tests that lead to it (enclosing `if`s, or the assertion), shortened

    def key(self) -> str:
        """What identifies the same refusal in another release (lines move, wording changes are new sites)."""
        return f"{self.where}|{self.kind}|{self.message if self.message is not None else 'if ' + self.condition}"


@dataclass
class Module:
    rel: str
    tree: ast.Module
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> imported name


def scope_files(root: Path) -> list[Path]:
    """The modules that build the configuration at this release (root is the `vllm/` package folder)."""
    files = config_files(root)
    for rel in ("engine/arg_utils.py", "entrypoints/cli/serve.py"):
        if (root / rel).is_file():
            files.append(root / rel)
    for rel in ("entrypoints/openai/cli_args.py", "entrypoints/launchers/cli_args.py",
                "entrypoints/common/cli_args.py"):
        path = root / rel
        if path.is_file() and "def validate_parsed_serve_args" in path.read_text(encoding="utf-8", errors="replace"):
            files.append(path)
    return files


def _load(root: Path) -> list[Module]:
    modules = []
    for path in scope_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        mod = Module(rel=path.relative_to(root.parent).as_posix(), tree=tree)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                mod.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                mod.classes[node.name] = node
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    mod.imports[alias.asname or alias.name] = alias.name
        modules.append(mod)
    return modules


class Release:
    """The modules of one release and the functions reachable from its entry points."""

    def __init__(self, root: Path) -> None:
        self.modules = _load(root)
        self.classes: dict[str, tuple[Module, ast.ClassDef]] = {}
        self.functions: dict[str, tuple[Module, ast.FunctionDef]] = {}
        self.methods: dict[str, list[str]] = {}      # method name -> ["Class.method", ...]
        self.properties: dict[str, list[str]] = {}
        for mod in self.modules:
            for name, cls in mod.classes.items():
                self.classes.setdefault(name, (mod, cls))
            for name, fn in mod.functions.items():
                self.functions.setdefault(name, (mod, fn))
        for name, (mod, cls) in self.classes.items():
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    table = self.properties if _is_property(stmt) else self.methods
                    table.setdefault(stmt.name, []).append(f"{name}.{stmt.name}")

    def method(self, cls_name: str, method: str, seen: Optional[set[str]] = None) -> Optional[str]:
        """`Class.method` as Python finds it: the class, then its bases (in this release's modules)."""
        seen = seen or set()
        if cls_name in seen or cls_name not in self.classes:
            return None
        seen.add(cls_name)
        _, cls = self.classes[cls_name]
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == method for s in cls.body):
            return f"{cls_name}.{method}"
        for base in cls.bases:
            found = self.method(node_name(base), method, seen)
            if found:
                return found
        return None

    def body(self, qualname: str) -> Optional[tuple[Module, ast.FunctionDef]]:
        if "." in qualname:
            cls_name, method = qualname.split(".", 1)
            mod, cls = self.classes[cls_name]
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == method:
                    return mod, stmt
            return None
        return self.functions.get(qualname)

    def on_build(self, cls_name: str) -> list[str]:
        """What runs when `Class(...)` is built: its (inherited) __init__/__post_init__ and validators."""
        out = [m for m in (self.method(cls_name, b) for b in BUILD_METHODS) if m]
        chain, seen = [cls_name], set()
        while chain:
            name = chain.pop()
            if name in seen or name not in self.classes:
                continue
            seen.add(name)
            _, cls = self.classes[name]
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                        node_name(d) in VALIDATOR_DECORATORS for d in stmt.decorator_list):
                    out.append(f"{name}.{stmt.name}")
            chain += [node_name(b) for b in cls.bases]
        return out

    def callees(self, qualname: str) -> set[str]:
        found = self.body(qualname)
        if found is None:
            return set()
        _, fn = found
        own_class = qualname.split(".", 1)[0] if "." in qualname else None
        out: set[str] = set()
        for node in _walk_own(fn):
            if isinstance(node, ast.Call):
                out |= self._call_targets(node, own_class)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in self.properties:
                out |= set(self.properties[node.attr])
        return out

    def _call_targets(self, call: ast.Call, own_class: Optional[str]) -> set[str]:
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in self.classes:
                return set(self.on_build(func.id))
            if func.id in self.functions:
                return {func.id}
            return set()
        if not isinstance(func, ast.Attribute):
            return set()
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls") and own_class:
            found = self.method(own_class, func.attr)
            return {found} if found else set()
        if isinstance(owner, ast.Call) and node_name(owner.func) == "super" and own_class:
            _, cls = self.classes[own_class]
            for base in cls.bases:
                found = self.method(node_name(base), func.attr)
                if found:
                    return {found}
            return set()
        if isinstance(owner, ast.Name) and owner.id in self.classes:
            found = self.method(owner.id, func.attr)
            return {found} if found else set()
        if func.attr in GENERIC or func.attr.startswith("__"):
            return set()
        return set(self.methods.get(func.attr, []))

    def reachable(self) -> list[str]:
        todo = [f"{c}.{m}" for c, m in ENTRY_POINTS if c in self.classes and self.method(c, m)]
        todo = [self.method(*q.split(".", 1)) for q in todo]
        seen: set[str] = set()
        while todo:
            q = todo.pop()
            if q in seen:
                continue
            seen.add(q)
            todo += sorted(self.callees(q) - seen)
        return sorted(seen)

    def sites(self) -> list[Site]:
        out = []
        for qualname in self.reachable():
            found = self.body(qualname)
            if found is None:
                continue
            mod, fn = found
            out += list(_sites_in(fn, mod.rel, qualname))
        return sorted(out, key=lambda s: (s.file, s.line))


def _is_property(fn: ast.FunctionDef) -> bool:
    return any(node_name(d) in ("property", "cached_property") for d in fn.decorator_list)


def _walk_own(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function, without the bodies of functions and classes defined inside it."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo += list(ast.iter_child_nodes(node))


def _sites_in(fn: ast.FunctionDef, rel: str, qualname: str) -> Iterator[Site]:
    def visit(stmts: list[ast.stmt], tests: list[str]) -> Iterator[Site]:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.Raise) and stmt.exc is not None:
                exc = stmt.exc
                message = text_of(exc.args[0]) if isinstance(exc, ast.Call) and exc.args else None
                yield Site(rel, stmt.lineno, qualname, node_name(exc) or "Exception", message, _short(tests))
            elif isinstance(stmt, ast.Assert):
                message = text_of(stmt.msg) if stmt.msg is not None else None
                yield Site(rel, stmt.lineno, qualname, "AssertionError", message,
                           _short(tests + [_unparse(stmt.test)]))
            elif isinstance(stmt, ast.If):
                yield from visit(stmt.body, tests + [_unparse(stmt.test)])
                yield from visit(stmt.orelse, tests + ["not (" + _unparse(stmt.test) + ")"])
            else:
                for name in ("body", "orelse", "finalbody"):
                    yield from visit(getattr(stmt, name, []) or [], tests)
                for handler in getattr(stmt, "handlers", []) or []:
                    yield from visit(handler.body, tests + [f"except {_unparse(handler.type) if handler.type else ''}"])
                for case in getattr(stmt, "cases", []) or []:
                    yield from visit(case.body, tests + [f"case {_unparse(case.pattern)}"])

    yield from visit(fn.body, [])


def _unparse(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


def _short(tests: list[str]) -> str:
    text = " and ".join(tests[-2:])
    return text if len(text) <= 200 else text[:197] + "..."
