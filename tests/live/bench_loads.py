"""The loads `vllm bench serve` runs against the CPU vLLM for the calibration proof, and their split.

Shared by the fixture recorder (tools/record_bench_fixtures.py) and the live test
(tests/live/test_live_calibration.py). Each load varies what the step-time model must get right:
concurrency (1 to 16 in flight), open-loop request rates, short (256) and long (1,024, chunked by the
512-token budget) prompts, and mixed lengths. A profile is fitted on the FIT loads and predicts HELD_OUT.

The FIT half holds one request at a time at both prompt lengths (c1-short, c1-long): only that pair tells a
prefill's fixed cost from its cost per prompt token (reader/calibration/coverage.py). Until 2026-12-02 c4-long
was fitted and c1-long held out; that fit predicted the lone 1,024-token prompt 55% slow (README, "The proof on
a real engine").
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENT = ROOT / "fixtures" / "calibration" / "cpu-tiny-llama" / "deployment.yaml"
BENCH_DIR = DEPLOYMENT.parent / "bench"
DEVICE = "cpu-xeon-2c"

# name -> vllm bench serve arguments (the random dataset; every run is seeded)
LOADS: dict[str, list[str]] = {
    "c1-short": ["--random-input-len", "256", "--random-output-len", "64", "--num-prompts", "12",
                 "--max-concurrency", "1"],
    "c4-short": ["--random-input-len", "256", "--random-output-len", "64", "--num-prompts", "32",
                 "--max-concurrency", "4"],
    "c16-short": ["--random-input-len", "256", "--random-output-len", "64", "--num-prompts", "64",
                  "--max-concurrency", "16"],
    "r4-short": ["--random-input-len", "256", "--random-output-len", "64", "--num-prompts", "40",
                 "--request-rate", "4"],
    "r12-short": ["--random-input-len", "256", "--random-output-len", "64", "--num-prompts", "60",
                  "--request-rate", "12"],
    "c1-long": ["--random-input-len", "1024", "--random-output-len", "128", "--num-prompts", "8",
                "--max-concurrency", "1"],
    "c4-long": ["--random-input-len", "1024", "--random-output-len", "128", "--num-prompts", "24",
                "--max-concurrency", "4"],
    "r2-long": ["--random-input-len", "1024", "--random-output-len", "128", "--num-prompts", "24",
                "--request-rate", "2"],
    "c8-mixed": ["--random-input-len", "512", "--random-output-len", "96", "--random-range-ratio", "0.5",
                 "--num-prompts", "40", "--max-concurrency", "8"],
    "r6-mixed": ["--random-input-len", "512", "--random-output-len", "96", "--random-range-ratio", "0.5",
                 "--num-prompts", "40", "--request-rate", "6"],
}
FIT = ("c1-short", "c1-long", "c16-short", "r12-short", "c8-mixed")
HELD_OUT = ("c4-short", "r4-short", "c4-long", "r2-long", "r6-mixed")
COMMON = ["--dataset-name", "random", "--ignore-eos", "--seed", "0", "--temperature", "0"]


def server_flags(model_dir: Path) -> list[str]:
    """The server's flags: the deployment file as vLLM's own --config, the model folder by absolute path."""
    return ["--config", str(DEPLOYMENT), "--model", str(model_dir)]


def bench_args(name: str) -> list[str]:
    return [*COMMON, *LOADS[name]]
