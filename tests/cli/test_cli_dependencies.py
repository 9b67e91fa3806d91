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


def test_every_runtime_range_takes_what_vllm_0_18_0_installed():
    # tools/vllm018-venv.freeze.txt is `pip freeze` of the vLLM 0.18.0 environment tools/vllm_env.sh builds: a range
    # that excluded one of its versions would make `pip install vllm-reader` change a package vLLM runs on
    # (tests/live/test_live_install_beside_vllm.py checks the same in the real environments).
    from packaging.utils import canonicalize_name

    pins = dict(line.split("==", 1) for line in (ROOT / "tools" / "vllm018-venv.freeze.txt").read_text().split()
                if "==" in line)
    frozen = {canonicalize_name(name): version for name, version in pins.items()}
    outside = {str(r): frozen[canonicalize_name(r.name)] for r in RUNTIME
               if canonicalize_name(r.name) in frozen and not r.specifier.contains(frozen[canonicalize_name(r.name)])}
    assert outside == {}
