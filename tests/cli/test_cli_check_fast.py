"""`vllm-reader check` starts without typer when its arguments are plainly valid
(reader/commands/check_fast.py). The fast path must be invisible: the same options, the same
output and exit code as the typer command, and anything unusual left to the typer command."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from reader.cli import app
from reader.commands.check_fast import parse, parser

ROOT = Path(__file__).resolve().parents[2]
CORPUS = "fixtures/corpus/vllm_perf-benchmarks_serving-tests.json"   # has an error finding (VR102)
EXAMPLE = "fixtures/examples/llama-3.1-8b-h100-chat.yaml"
TYPER_PATH = "import sys; from reader.cli import main; main(sys.argv[1:])"


def _run(prefix: list[str], args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *prefix, "check", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_the_fast_parser_has_exactly_the_check_commands_options():
    command = typer.main.get_command(app).commands["check"]
    typer_options = {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}
    fast_options = {o for o in parser()._option_string_actions}
    assert fast_options == typer_options - {"--help"}


@pytest.mark.parametrize("args", [
    [CORPUS],
    [CORPUS, "--format", "json"],
    [CORPUS, "-f", "sarif"],
    [CORPUS, "--format=markdown"],
    [CORPUS, EXAMPLE, "--fail-on", "warning", "--vllm-version", "0.10.0"],
    [CORPUS, "--ignore", "VR102", "-v"],
    [EXAMPLE, "--gpu", "H100-SXM", "--gpus", "2", "--usage-context", "llm"],
    [CORPUS, "--format", "xml"],                       # bad input from the command: exit 2, same message
    ["fixtures/does-not-exist.yaml"],                  # bad input from the loader
], ids=lambda a: " ".join(Path(x).name if "/" in x else x for x in a))
def test_the_fast_path_prints_what_the_typer_command_prints(args, tmp_path):
    fast = _run(["-m", "reader"], args, ROOT)
    full = _run(["-c", TYPER_PATH], args, ROOT)
    assert parse(args) is not None  # these are taken by the fast path
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr)
    assert fast.returncode in (0, 1, 2) and "Traceback" not in fast.stderr


def test_the_fast_path_writes_the_report_file_the_same_way(tmp_path):
    fast, full = tmp_path / "fast.sarif", tmp_path / "full.sarif"
    a = _run(["-m", "reader"], [str(ROOT / CORPUS), "-f", "sarif", "-o", str(fast)], tmp_path)
    b = _run(["-c", TYPER_PATH], [str(ROOT / CORPUS), "-f", "sarif", "-o", str(full)], tmp_path)
    assert a.returncode == b.returncode == 1 and a.stdout == b.stdout == ""
    assert fast.read_text() == full.read_text()


@pytest.mark.parametrize("args", [
    ["--help"], [CORPUS, "-h"], [CORPUS, "--debug"],
    [CORPUS, "--frobnicate"],                          # unknown option: typer's usage error
    [CORPUS, "--fail"],                                # an abbreviation: click does not take it
    [CORPUS, "--gpus", "0"],                           # below typer's min=1
    [CORPUS, "--pick", "two"],
    [CORPUS, "--format"],                              # missing value
    [CORPUS, "--format", "json", EXAMPLE],             # a config after an option
    ["--", CORPUS],
    [],
])
def test_anything_unusual_goes_to_the_typer_command(args):
    assert parse(args) is None


def test_a_usage_error_still_gets_typers_message_and_exit_2():
    result = _run(["-m", "reader"], [CORPUS, "--frobnicate"], ROOT)
    assert result.returncode == 2 and "No such option: --frobnicate" in result.stderr
