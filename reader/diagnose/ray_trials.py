"""Trials as tasks on an existing Ray cluster: `--ray ADDRESS` (or `--ray auto`) on plan and sweep.

An optional extra (`pip install 'vllm-reader[ray]'`). The base scenario travels once (ray.put) and each
change is one task running the same `run_trial` as a local worker; results come back in the order of the
changes, so a plan or sweep is the same as with local processes. The cluster's workers need vllm-reader
installed, or the driver's checkout on their PYTHONPATH.
"""
from __future__ import annotations

from typing import Any

from ..errors import ReaderError
from .trials import RuleErrors, Trial, run_trial


def on_ray(address: str, base: Any, changes: list[Any], rule_errors: RuleErrors, skip_no_effect: bool) -> list[Trial]:
    ray = _connect(address)
    remote = ray.remote(run_trial)
    shared = ray.put(base)
    return ray.get([remote.remote(shared, change, rule_errors, skip_no_effect) for change in changes])


def _connect(address: str) -> Any:
    try:
        import ray
    except ImportError:
        raise ReaderError("--ray needs Ray: pip install 'vllm-reader[ray]'.", key="--ray") from None
    if not ray.is_initialized():
        _reachable(address)
        try:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise ReaderError(f"--ray {address}: cannot connect to a Ray cluster there ({err}).", key="--ray") from None
    return ray


def _reachable(address: str) -> None:
    """A HOST:PORT that takes no connection is said at once (Ray itself retries it for minutes)."""
    import socket

    host, _, port = address.rpartition(":")
    if address == "auto" or "://" in address or not port.isdigit():
        return
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=5).close()
    except OSError as err:
        raise ReaderError(f"--ray {address}: no Ray cluster answers there ({err.strerror or err}); give the head "
                          "node's address (ray start --head prints it), or 'auto' on a node of the cluster.",
                          key="--ray") from None
