"""The environment `pip install '.[test]'` builds is the one pyproject.toml promises.

pip resolves each dependency's own requirements too, and two distributions (typer and typer-slim) write the same
`typer` package: when a pin once let one install over the other, every command ended as an "internal error".
These checks fail on such an environment before any command test does.
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


def test_the_typer_package_is_the_typer_release_installed():
    import typer

    installed = metadata.version("typer")
    assert typer.__version__ == installed, (
        f"the imported typer is {typer.__version__} but typer {installed} is installed: another distribution "
        "(typer-slim, say) has written over the same package")


def test_a_command_exit_code_reaches_the_caller():
    from typer.testing import CliRunner

    from reader.cli import app

    result = CliRunner().invoke(app, ["explain", "NO-SUCH-RULE"])
    assert result.exit_code == 2 and "internal error" not in result.output
