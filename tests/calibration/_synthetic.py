"""Bench result files written by the simulator itself, from known coefficients (for tests of the fit alone).

A real benchmark adds noise the model cannot explain; these files have none, so a fit on some of them must
predict the others almost exactly. They follow `vllm bench serve --save-result --save-detailed`'s layout.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from reader.fitting.fit_bench import setup
from reader.calibration.profile import DeviceStandIn
from reader.calibration.select import standin_gpu
from reader.config.from_cli import load_options
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.scenario import build_scenario
from reader.pipeline import step_time_model
from reader.sim.api import simulate
from reader.sim.workload import WorkloadSpec, generate

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENT = ROOT / "fixtures" / "calibration" / "cpu-tiny-llama" / "deployment.yaml"
TINY = str(ROOT / "fixtures" / "live" / "tiny-llama")
# The "true" device: what the fit should find again.
TRUTH = {"device.bf16_tflops": 0.05, "device.hbm_bandwidth_gbps": 12.0, "kv_read_eff": 0.5, "attn_compute_eff": 0.8,
         "host_overhead_s": 0.002, "per_sampled_row_s": 1e-4, "front_end_s": 0.004}


def resolved_cpu(device_name: str = "cpu-xeon-2c"):
    options = load_options(model=TINY, gpu=device_name)
    device = DeviceStandIn(name=device_name, kind="cpu", bf16_tflops=0.1, hbm_bandwidth_gbps=20.0, memory_gib=16.0,
                           source="test")
    return resolve(load_deployment(str(DEPLOYMENT), options), model_override=TINY, device=standin_gpu(device)), device


def write(path: Path, prompt: int, output: int, n: int, rate: float = math.inf, concurrency: int | None = None,
          seed: int = 0, model_id: str = "tiny-llama", detailed: bool = True) -> Path:
    """One synthetic result: n requests of fixed lengths at a rate (Poisson) and/or a concurrency cap."""
    r, device = resolved_cpu()
    s = setup(r, device)
    coefficients, gpu = s.apply(TRUTH)
    arrival = ({"process": "burst"} if math.isinf(rate) else {"process": "poisson", "rate": rate})
    if concurrency:
        arrival["concurrency"] = concurrency
    spec = WorkloadSpec.model_validate({"num_requests": n, "seed": seed, "arrival": arrival,
                                        "prompt_len": prompt, "output_len": output})
    wl = generate(spec)
    sc = build_scenario(r, generated=wl)
    stm = step_time_model(r, coefficients=coefficients, gpu=gpu)
    res = simulate(sc.settings, wl, stm, keep_requests=True, overhead_s=coefficients.host_overhead_s,
                   front_end_s=coefficients.front_end_s)
    req = res.requests
    send = np.array(req.send_time_s, dtype=float)
    data = {"backend": "vllm", "model_id": model_id, "tokenizer_id": TINY, "num_prompts": n,
            "request_rate": "inf" if math.isinf(rate) else rate, "burstiness": 1.0, "max_concurrency": concurrency,
            "duration": res.duration_s, "completed": res.completed, "failed": res.failed,
            "total_input_tokens": res.total_input_tokens, "total_output_tokens": res.total_output_tokens,
            "request_throughput": res.request_throughput, "output_throughput": res.output_throughput,
            "total_token_throughput": res.total_token_throughput}
    for metric, stats in (("ttft", res.ttft_ms), ("tpot", res.tpot_ms), ("itl", res.itl_ms), ("e2el", res.e2el_ms)):
        data.update({f"mean_{metric}_ms": stats.mean, f"median_{metric}_ms": stats.median,
                     f"std_{metric}_ms": stats.std, f"p99_{metric}_ms": stats.p99})
    if detailed:
        ttft = np.array(req.first_token_s, dtype=float) - send
        e2e = np.array(req.finish_s, dtype=float) - send
        out = np.array(req.output_tokens)
        # the simulator keeps each request's first and last token; its gaps are spread evenly between them
        itls = [[float(g)] * int(o - 1) for g, o in zip((e2e - ttft) / np.maximum(out - 1, 1), out)]
        data.update(input_lens=req.prompt_len, output_lens=req.output_tokens, start_times=(send + 1000.0).tolist(),
                    ttfts=ttft.tolist(), latencies=e2e.tolist(), itls=itls, errors=[""] * n)
    path.write_text(json.dumps(data))
    return path
