"""The real vLLM CPU server's logs, recorded again and compared with the fixtures read by the offline tests
(fixtures/logs/live/, written by tools/record_vllm_logs.py): the same facts must come out of a fresh log,
so a release that changes a message's wording fails here, not in a user's hands."""
from __future__ import annotations

import pytest

from reader.logs.read import read_log

from ._log_scenarios import SCENARIOS, cpu_env, fixture_path, record

# Arguments that differ from run to run by design.
_VARYING_ARGS = {"host", "port"}
_CONFIG_KEYS = ("max_seq_len", "dtype", "enforce_eager", "enable_prefix_caching", "enable_chunked_prefill",
                "chunked_prefill_enabled", "tensor_parallel_size", "quantization", "kv_cache_dtype", "device_config")


def facts(reading) -> dict:
    args = {k: v for k, v in (reading.args.values if reading.args else {}).items() if k not in _VARYING_ARGS}
    args.pop("model", None)
    config = reading.engine_config.values if reading.engine_config else {}
    refusal = reading.refusal
    return {
        "release": reading.release, "engine": reading.engine, "roles": sorted(set(reading.processes)),
        "args": args, "config": {k: config.get(k) for k in _CONFIG_KEYS},
        "resolved": {k: v.value for k, v in reading.resolved.items()},
        "kv_tokens": reading.kv.kv_tokens.value if reading.kv.kv_tokens else None,
        "max_concurrency": reading.kv.max_concurrency.value if reading.kv.max_concurrency else None,
        "device": reading.kv.device, "available_kv": reading.memory.available_kv.value
        if reading.memory.available_kv else None,
        "refusal": (refusal.kind, refusal.max_model_len, refusal.needed_gib, refusal.estimated_max_model_len)
        if refusal else None,
        "started": reading.started, "stats": bool(reading.stats),
        "formats": sorted(set(reading.formats) - {"refusal_other", "refusal_engine_failed"}),
    }


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_a_fresh_log_says_what_the_recorded_one_says(version, scenario, tmp_path, request):
    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    try:
        cpu_env(venv)
    except RuntimeError as err:
        pytest.skip(str(err))
    stored = fixture_path(version, scenario)
    assert stored.is_file(), f"no recorded fixture {stored.name}: run tools/record_vllm_logs.py {version}"
    fresh = record(venv, scenario, tmp_path / stored.name)
    old, new = facts(read_log(stored.read_text(), stored.name)), facts(read_log(fresh.read_text(), fresh.name))
    assert new == old
    assert new["started"] == scenario.starts and (new["refusal"] is None) == scenario.starts
