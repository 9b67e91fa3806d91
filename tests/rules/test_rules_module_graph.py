"""The rules engine stays a stage of its own: it does not reach into rendering (render/ writes its data for
people), and its modules do not import each other in a circle (loader and matrix share rulefile.py)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "reader" / "rules_engine"


def imports_of(path: Path) -> set[str]:
    """Modules a file imports, at any depth (imports inside functions count), as dotted names under reader."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = "reader.rules_engine"
            elif node.level == 2:
                base = "reader"
            else:
                base = ""
            module = ".".join(p for p in (base, node.module or "") if p)
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def graph() -> dict[str, set[str]]:
    modules = {f"reader.rules_engine.{p.stem}": p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def test_the_rules_engine_does_not_import_the_renderers():
    for path in PACKAGE.glob("*.py"):
        assert not any(m.startswith("reader.render") for m in imports_of(path)), path.name


def test_the_rules_engine_modules_form_no_cycle():
    edges = graph()
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in edges[node]:
            assert state.get(nxt) != 1, "import cycle: " + " -> ".join(trail + [nxt])
            if nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in edges:
        if node not in state:
            visit(node, [node])
