"""The stages import downwards only (tools/module_graph.py: load -> resolve -> check / capacity -> simulate ->
diagnose -> plan -> render -> commands; calibration's profiles beside capacity, never imported by capacity/ or
config/; the fitting that writes them, reader/fitting, beside plan, above the simulator and diagnosis it replays).
The upward imports that remain are listed here, each by file and imported package, with why it is still there:
a new one fails, and one that is mended must leave the list, so it only shrinks."""
from __future__ import annotations

from module_graph import edges, upward

REMAINING = {
    # a vLLM log is one of the forms a launch is read from (logs/form.py), and Deployment carries its reading
    ("reader/config/find.py", "logs"),
    ("reader/config/model.py", "logs"),
    # resolve with the calibration profile a config names
    ("reader/config/from_cli.py", "calibration"),
    # a version note names the rules the chosen release lacks
    ("reader/config/version_span.py", "rules_engine"),
    # `read-log`'s report runs the capacity model on the log's launch
    ("reader/logs/report.py", "pipeline"),
    # the memory rules judge the capacity model's start-up verdict
    ("reader/rules_engine/run.py", "capacity"),
    ("reader/rules_engine/run.py", "pipeline"),
}


def upward_imports() -> set[tuple[str, str]]:
    return {(where.split(":")[0], dst) for _, dst, where in upward(edges())}


def test_no_new_upward_import():
    new = upward_imports() - REMAINING
    assert not new, f"imports a higher stage (move the shared type or function down instead): {sorted(new)}"


def test_a_mended_upward_import_leaves_the_list():
    mended = REMAINING - upward_imports()
    assert not mended, f"no longer imported upwards, remove from REMAINING: {sorted(mended)}"


def test_the_graph_sees_function_level_and_relative_imports():
    found = {(where.split(":")[0], dst) for _, dst, where in edges()}
    assert ("reader/rules_engine/run.py", "capacity") in found  # imported inside startup_memory()
    assert ("reader/plan/search.py", "diagnose") in found  # `from ..diagnose.bracket import ...`
