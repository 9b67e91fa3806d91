"""read-log rebuilds the launch and reads the memory vLLM measured from recorded logs of many releases: the
live CPU-server logs (0.18.0, 0.32.0) and the public pastes. A log that does not print its release is read at
the release its thread states (INDEX.yaml), as `read-log --vllm-version` would be."""
from __future__ import annotations

from pathlib import Path

import yaml

from reader.config.context import LoadOptions
from reader.config.load import load_deployment
from reader.logs.read import read_log

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "fixtures" / "logs" / "live"
PUBLIC = ROOT / "fixtures" / "logs" / "public"


def recorded() -> list[tuple[Path, str | None]]:
    index = yaml.safe_load((PUBLIC / "INDEX.yaml").read_text())["logs"]
    stated = {e["file"]: e.get("release") or (e.get("fit") or {}).get("vllm_version") for e in index}
    return [(p, None) for p in sorted(LIVE.glob("*.log"))] + [(PUBLIC / f, r) for f, r in stated.items()]


def measured(reading) -> list[str]:
    w, kv = reading.memory, reading.kv
    names = [n for n in ("weights", "available_kv", "activation_peak", "non_torch") if getattr(w, n) is not None]
    return names + [n for n in ("kv_tokens", "num_gpu_blocks") if getattr(kv, n) is not None]


def test_launch_and_measured_memory_are_rebuilt_from_logs_of_at_least_six_releases():
    rebuilt: dict[str, list[str]] = {}
    for path, stated in recorded():
        reading = read_log(path.read_text(), path.name)
        if not (reading.args or reading.engine_config or reading.command) or not measured(reading):
            continue
        release = reading.release or stated
        if release is None:
            continue
        deployment = load_deployment(str(path), LoadOptions(vllm_version=None if reading.release else release))
        assert deployment.model and deployment.log is not None, path.name
        rebuilt.setdefault(release, []).append(path.name)
    for release, files in sorted(rebuilt.items()):
        print(f"vLLM {release}: {', '.join(files)}")
    assert len(rebuilt) >= 6, rebuilt
    assert {"0.18.0", "0.32.0"} <= set(rebuilt)
