"""Hostile input never reaches the user as internals: mutated corpus configs and bundled examples (hostile
values, dropped and misspelt keys, random real flags, cut shell tokens, unbalanced quotes) through `check` and
`diagnose` exit 0, 1 or 2 only, and print no traceback, no pydantic report, no "internal error". A bad-input exit
is one paragraph on stderr. Examples are derandomized and bounded, so the suite stays fast and repeatable."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reader.config.flagtable import flag_table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "rules"))
from _rules_helpers import run_cli as run  # noqa: E402  (the CLI in-process: exit code, stdout, stderr)
SOURCES = sorted((ROOT / "fixtures" / "corpus").glob("*.*")) + sorted((ROOT / "fixtures" / "examples").glob("*.*"))
SOURCES = [p for p in SOURCES if p.suffix in (".yaml", ".yml", ".sh", ".json", ".md", ".txt", "") and p.is_file()
           and p.stat().st_size < 60_000]
EXAMPLES = sorted((ROOT / "fixtures" / "examples").glob("*.*"))
FLAGS = sorted(o for o in flag_table((0, 32, 0)).options if o.startswith("--"))
HOSTILE = ["0", "-1", "-4", "1e309", "nan", "inf", "99999999999999999999", "abc", "1.5K", "32k", "''", '"',
           "'", "{", "[1,", '{"model": 3}', "null", "true", "\\", "$(rm -rf /)", "${UNSET}", "\u00e9\u4e2d", "-",
           "--", "0x10", "1_000", " ", "\t"]
INTERNALS = ("Traceback", "internal error", "errors.pydantic.dev", "validation error for", "[type=")


def mutate(text: str, data) -> str:
    lines = text.splitlines() or [""]
    kind = data.draw(st.sampled_from(["value", "drop", "misspell", "flag", "cut", "quote", "yaml-flag"]))
    i = data.draw(st.integers(0, len(lines) - 1))
    line = lines[i]
    if kind == "value":
        words = line.split(" ")
        j = data.draw(st.integers(0, len(words) - 1))
        words[j] = data.draw(st.sampled_from(HOSTILE))
        lines[i] = " ".join(words)
    elif kind == "drop":
        del lines[i]
    elif kind == "misspell" and len(line.strip()) > 3:
        j = data.draw(st.integers(0, len(line) - 2))
        lines[i] = line[:j] + line[j + 1] + line[j] + line[j + 2:]
    elif kind == "flag":
        lines[i] = line + f" {data.draw(st.sampled_from(FLAGS))} {data.draw(st.sampled_from(HOSTILE))}"
    elif kind == "yaml-flag":
        lines.insert(i, f"{data.draw(st.sampled_from(FLAGS))[2:]}: {data.draw(st.sampled_from(HOSTILE))}")
    elif kind == "cut":
        cut = data.draw(st.integers(0, max(0, len(text) - 1)))
        return text[:cut]
    elif kind == "quote":
        j = data.draw(st.integers(0, len(line)))
        lines[i] = line[:j] + data.draw(st.sampled_from(["'", '"', "\\", "`", "$("])) + line[j:]
    return "\n".join(lines) + "\n"


def assert_clean(code: int, out: str, err: str, what: str) -> None:
    assert code in (0, 1, 2), f"{what}: exit {code}\n{err[-2000:]}"
    for word in INTERNALS:
        assert word not in out and word not in err, f"{what}: '{word}' reached the user:\n{err[-2000:]}{out[-2000:]}"
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert lines and lines[-1].startswith("error:"), f"{what}: exit 2 without its one paragraph:\n{err}"


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_check_on_mutated_configs(tmp_path_factory, data):
    source = data.draw(st.sampled_from(SOURCES))
    text = mutate(source.read_text(errors="replace"), data)
    path = tmp_path_factory.mktemp("fuzz") / source.name
    path.write_text(text)
    fmt = data.draw(st.sampled_from(["text", "json", "sarif"]))
    code, out, err = run(["check", str(path), "--format", fmt])
    assert_clean(code, out, err, f"check {source.name}\n--- mutated ---\n{text[:1500]}")
    if fmt == "json" and code != 2:
        json.loads(out)


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_diagnose_on_mutated_examples(tmp_path_factory, data):
    source = data.draw(st.sampled_from(EXAMPLES))
    text = mutate(source.read_text(), data)
    path = tmp_path_factory.mktemp("fuzz") / source.name
    path.write_text(text)
    code, out, err = run(["diagnose", str(path), "--no-whatifs", "--workload",
                          "{preset: chat, num_requests: 40}", "--format", "json"])
    assert_clean(code, out, err, f"diagnose {source.name}\n--- mutated ---\n{text[:1500]}")
