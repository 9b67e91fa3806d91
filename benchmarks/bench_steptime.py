"""Per-call cost of StepTimeModel.__call__ (the simulator calls it once per simulated step).

    .venv/bin/python benchmarks/bench_steptime.py

Target: < 20 us per call for realistic batches (the simulator runs hundreds of thousands of steps). This is
where the per-call cost is measured; the unit suite has no wall-clock bound on it.
Prints microseconds per call for a pure-decode batch, a mixed chunked-prefill batch and a large batch.
"""
from __future__ import annotations

import time

import numpy as np

from reader.batch import StepBatch
from reader.fitting.fit_steps import load_steps, shape_model
from reader.calibration.profile import default_calibration
from reader.capacity.steptime import StepTimeModel
from reader.catalog.load import get_gpu


def per_call_us(model: StepTimeModel, batch: StepBatch, n: int = 20000) -> float:
    for _ in range(200):
        model(batch)
    t = time.perf_counter()
    for _ in range(n):
        model(batch)
    return (time.perf_counter() - t) / n * 1e6


def cases() -> dict[str, StepBatch]:
    rng = np.random.default_rng(0)
    past = rng.integers(100, 8000, 256)
    return {
        "decode 64 seqs": StepBatch(np.ones(64, np.int64), past[:64].copy(), 64),
        "mixed: 1 prefill chunk 2048 + 63 decodes": StepBatch(
            np.concatenate([[2048], np.ones(63, np.int64)]), past[:64].copy(), 63),
        # the case the unit suite timed until it moved here (a wall-clock bound does not belong in plain pytest)
        "mixed: 1 prefill 1024 + 127 decodes": StepBatch(
            np.concatenate([[1024], np.ones(127, np.int64)]), np.arange(128, dtype=np.int64) * 30, 127),
        "decode 256 seqs": StepBatch(np.ones(256, np.int64), past.copy(), 256),
        "prefill 16384 (eager, beyond graphs)": StepBatch(np.array([16384]), np.array([0]), 1),
    }


def main() -> dict[str, float]:
    model, gpu = shape_model(load_steps("fixtures/gpu/h200-llama3-8b-steps.json")), get_gpu("H200-SXM")
    stm = StepTimeModel(model, gpu, default_calibration(gpu.id), max_num_seqs=256, max_num_batched_tokens=8192)
    out = {}
    for name, batch in cases().items():
        out[name] = per_call_us(stm, batch)
        print(f"{name:<45} {out[name]:6.2f} us/call   step {stm(batch) * 1e3:7.2f} ms")
    return out


if __name__ == "__main__":
    main()
