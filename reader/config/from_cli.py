"""From command-line values to a resolved deployment: the load -> resolve step every command that
reads a config starts with. Free of typer: commands import it inside their functions, after typer has parsed."""
from __future__ import annotations

from typing import Any, Optional


def parse_set(values: Optional[list[str]]) -> dict[str, str]:
    from ..errors import ReaderError

    out: dict[str, str] = {}
    for item in values or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ReaderError(f"--set expects KEY=VALUE, got '{item}'.", key="--set")
        out[key.strip().lstrip("$").strip("(){}")] = value
    return out


def load_options(vllm_version: Optional[str] = None, gpu: Optional[str] = None, gpus: Optional[int] = None,
                 model: Optional[str] = None, workload: Optional[str] = None, set_values: Optional[list[str]] = None,
                 pick: Optional[int] = None, usage_context: str = "serve", slo_ttft: Optional[float] = None,
                 slo_itl: Optional[float] = None, calibration: Optional[str] = None,
                 release: Optional[tuple[str, str]] = None) -> Any:
    from .context import LoadOptions, SLO
    from ..errors import ReaderError

    if usage_context not in ("serve", "llm"):
        raise ReaderError(f"--usage-context must be 'serve' or 'llm', not '{usage_context}'.", key="--usage-context")
    return LoadOptions(vllm_version=vllm_version, gpu=gpu, gpu_count=gpus, model=model, workload=workload,
                       usage_context=usage_context if usage_context != "serve" else None,
                       slo=SLO(ttft_p99_ms=slo_ttft, itl_p99_ms=slo_itl), set=parse_set(set_values), pick=pick,
                       calibration=calibration, release=release[0] if release else None,
                       release_from=release[1] if release else None)


def load_and_resolve(config: str, options: Any) -> Any:
    """load -> resolve, the first two stages of every command that reads a config (with the calibration
    profile the options or the file name, checked against the deployment)."""
    from .load import load_deployment

    return resolve_with_calibration(load_deployment(config, options), options)


def resolve_with_calibration(deployment: Any, options: Any) -> Any:
    """resolve, with the calibration profile the deployment names (checked against it)."""
    from .resolve import resolve

    if not deployment.context.calibration:
        return resolve(deployment, model_override=options.model)
    from ..calibration import select

    profile, path = select.load_for(deployment)
    device = select.standin_gpu(profile.device) if profile is not None and profile.device is not None else None
    resolved = resolve(deployment, model_override=options.model, calibration=profile, calibration_path=path,
                       device=device)
    select.check(resolved)
    return resolved
