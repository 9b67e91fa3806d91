"""The README's two commands are the contract with a new user; CI runs the second one as written."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "the README must open with a bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].startswith("pip install . && vllm-reader diagnose fixtures/examples/")
    example = commands[0].split()[-1]
    assert (ROOT / example).is_file()
    assert "[test]" in commands[1]


def test_ci_runs_the_readme_test_command_as_written():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci
