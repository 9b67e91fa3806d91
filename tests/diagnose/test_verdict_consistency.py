"""Property (issue 24): over generated configs and loads, the verdict agrees with its own what-ifs. A scheduler
default is named only when one of its relaxations, re-simulated at the same load, raises goodput (with SLOs) or
output throughput; a default set aside as refuted has no relaxation that does."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reader.config.context import SLO, LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.loadcurve import SCHEDULER_LIMITS
from reader.diagnose.run import diagnose
from reader.diagnose.scenario import slos_from
from reader.diagnose.whatif import relieves

MODELS = ("Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B")
GPUS = ("L4", "A10G", "H100-SXM")

configs = st.fixed_dictionaries({
    "model": st.sampled_from(MODELS),
    "gpu": st.sampled_from(GPUS),
    "max_num_seqs": st.sampled_from([8, 32, 128, 256]),
    "max_num_batched_tokens": st.sampled_from([512, 2048, 8192]),
    "gpu_memory_utilization": st.sampled_from([0.6, 0.75, 0.9]),
    "rate": st.floats(min_value=0.5, max_value=16.0),
    "slo": st.sampled_from([None, SLO(ttft_p99_ms=1500, itl_p99_ms=80)]),
})


def deployment(c: dict) -> str:
    text = (f"model: {c['model']}\nmax-model-len: 8192\nmax-num-seqs: {c['max_num_seqs']}\n"
            f"max-num-batched-tokens: {c['max_num_batched_tokens']}\n"
            f"gpu-memory-utilization: {c['gpu_memory_utilization']}\n")
    path = Path(tempfile.mkdtemp()) / "serve.yaml"
    path.write_text(text)
    return str(path)


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_the_verdict_agrees_with_its_own_whatifs(c):
    workload = {"num_requests": 150, "seed": 1, "arrival": {"process": "poisson", "rate": c["rate"]},
                "prompt_len": {"dist": "lognormal", "median": 800.0, "sigma": 0.7, "min": 16, "max": 6000},
                "output_len": {"dist": "lognormal", "median": 200.0, "sigma": 0.6, "min": 8, "max": 1500}}
    options = LoadOptions(vllm_version="0.18.0", gpu=c["gpu"], workload=workload, slo=c["slo"] or SLO())
    resolved = resolve(load_deployment(deployment(c), options))
    d = diagnose(resolved, slos_ms=slos_from(resolved), workers=2, curve=False)
    if not d.starts:
        return
    limit = d.verdict.limit
    if limit in SCHEDULER_LIMITS:
        tried = [w for w in d.whatifs if w.addresses == limit]
        assert not tried or any(relieves(w, d.baseline, d.slos_ms) for w in tried), (c, limit)
    for refuted in d.verdict.refuted:
        assert refuted != limit
        assert not any(relieves(w, d.baseline, d.slos_ms) for w in d.whatifs if w.addresses == refuted), (c, refuted)
