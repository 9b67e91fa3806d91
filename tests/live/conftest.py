"""Live tests run the real vLLM (CPU build). They skip when no environment is ready; `.ci/run` builds one."""
from __future__ import annotations

import pytest

from ._server import venv_for


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/live/" in str(item.fspath):
            item.add_marker(pytest.mark.live)


@pytest.fixture(scope="session")
def vllm_032():
    venv = venv_for("0.32.0")
    if venv is None:
        pytest.skip("no vLLM 0.32.0 environment (run tools/vllm_env.sh and export what it prints; .ci/run does)")
    return venv


@pytest.fixture(scope="session")
def vllm_018():
    venv = venv_for("0.18.0")
    if venv is None:
        pytest.skip("no vLLM 0.18.0 environment (run tools/vllm_env.sh and export what it prints; .ci/run does)")
    return venv
