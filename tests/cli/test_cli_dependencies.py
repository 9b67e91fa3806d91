"""The environment `pip install '.[test]'` builds is the one pyproject.toml promises.

pip resolves each dependency's own requirements too, and a loose pin once let it install full typer 0.29 (asked
for by huggingface_hub 1.x) over typer-slim 0.15 in the same `typer` package: every command then ended as an
"internal error". These checks fail on such an environment before any command test does.
"""
from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the environment checks need not run on 3.10

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(text) for text in PROJECT["dependencies"]]


@pytest.mark.parametrize("requirement", RUNTIME, ids=lambda r: r.name)
def test_every_runtime_dependency_is_installed_at_a_version_pyproject_allows(requirement):
    if requirement.marker is not None and not requirement.marker.evaluate():
        pytest.skip(f"{requirement} does not apply to Python {sys.version_info[:2]}")
    installed = metadata.version(requirement.name)
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"{requirement.name} {installed} is installed; pyproject.toml asks for {requirement}")


def test_the_typer_package_is_the_typer_slim_release_we_pin():
    import typer

    slim = metadata.version("typer-slim")
    assert typer.__version__ == slim, (
        f"the imported typer is {typer.__version__} but typer-slim {slim} is installed: another distribution "
        "(full typer, pulled in by a dependency) has written over the same package")


def test_a_command_exit_code_reaches_the_caller():
    from typer.testing import CliRunner

    from reader.cli import app

    result = CliRunner().invoke(app, ["explain", "NO-SUCH-RULE"])
    assert result.exit_code == 2 and "internal error" not in result.output
