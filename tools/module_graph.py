"""Which reader packages import which: every `import reader.X` / `from reader.X` / relative import in reader/,
function-level ones included, as (importing package, imported package, file:line).

    python tools/module_graph.py            # package -> the packages it imports, with counts
    python tools/module_graph.py --upward   # only the imports that go up a stage (STAGE below)

A package is reader/'s first level: a folder (reader/sim) or a top-level module (reader/errors.py -> errors).
"""
from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

READER = Path(__file__).resolve().parents[1] / "reader"

# load -> resolve -> check / capacity -> simulate -> diagnose -> render; calibration provides fitted coefficients
# beside capacity but is not imported by capacity/ or config/ (house rules). A package may import its own stage
# and lower ones. Shared leaves (errors, files, ...) are stage 0; the commands and the CLI are the top.
STAGE = {
    "errors": 0, "files": 0, "resources": 0, "versions": 0, "batch": 0,
    "config": 1, "catalog": 1,
    "rules_engine": 2,
    "capacity": 3, "calibration": 3,
    "sim": 4, "evidence": 4, "logs": 4, "observe": 4,  # what a run did: simulated, logged or scraped
    "pipeline": 5,  # glue from a resolved deployment to the capacity model's and the simulator's inputs
    "diagnose": 6, "plan": 7,
    "fitting": 7,  # calibrate: replays the simulator, the diagnosis's scenarios and logs to fit a profile
    "render": 8,
    "commands": 9, "cli": 10, "entry": 10, "__main__": 10,
}


def package_of(path: Path) -> str:
    parts = path.relative_to(READER).parts
    return parts[0] if len(parts) > 1 else path.stem


def imported_packages(path: Path) -> list[tuple[str, int]]:
    """The reader packages `path` imports, with the line of each import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = path.relative_to(READER.parent).with_suffix("").parts  # ("reader", "sim", "engine")
    if path.name == "__init__.py":
        module = module[:-1] + ("__init__",)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(module[:-node.level]) if node.level else []
            target = base + (node.module.split(".") if node.module else [])
            names = [target + [a.name] for a in node.names] if len(target) == 1 else [target]
        else:
            continue
        for name in names:
            if name[0] == "reader" and len(name) > 1 and name[1] in STAGE:  # not `from .. import __version__`
                out.append((name[1], node.lineno))
    return out


def edges() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(READER.rglob("*.py")):
        src = package_of(path)
        for dst, line in imported_packages(path):
            if dst != src:
                found.append((src, dst, f"{path.relative_to(READER.parent)}:{line}"))
    return found


def upward(found: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Imports of a higher stage's package, and the ones the house rules name (capacity/ or config/ importing
    calibration/ or logs/)."""
    banned = {("capacity", "calibration"), ("config", "calibration"), ("capacity", "logs"), ("config", "logs")}
    return [e for e in found if STAGE[e[1]] > STAGE[e[0]] or (e[0], e[1]) in banned]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upward", action="store_true", help="only the imports that go up a stage")
    args = ap.parse_args()
    found = edges()
    if args.upward:
        for src, dst, where in upward(found):
            print(f"{src} -> {dst}  {where}")
        return
    for src in sorted({e[0] for e in found}, key=lambda p: (STAGE[p], p)):
        counts = Counter(e[1] for e in found if e[0] == src)
        print(f"{src:13} " + ", ".join(f"{dst} {n}" for dst, n in sorted(counts.items(), key=lambda c: (STAGE[c[0]], c[0]))))


if __name__ == "__main__":
    main()
