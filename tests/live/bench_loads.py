"""The loads `vllm bench serve` runs against the CPU vLLM for the calibration proof, and their split.

Shared by the fixture recorder (tools/record_bench_fixtures.py) and the live test
(tests/live/test_live_calibration.py). Two sets, each with its own deployment and fixture folder:

- STEPS (fixtures/calibration/cpu-tiny-llama): what the step-time model must get right: concurrency (1 to
  16 in flight), open-loop request rates, short (256) and long (1,024, chunked by the 512-token budget)
  prompts, and mixed lengths. Its FIT half holds one request at a time at both prompt lengths (c1-short,
  c1-long): only that pair tells a prefill's fixed cost from its cost per prompt token
  (reader/fitting/coverage.py). Until 2026-12-02 c4-long was fitted and c1-long held out; that fit
  predicted the lone 1,024-token prompt 55% slow (README, "The proof on a real engine").
- SATURATION (fixtures/calibration/cpu-tiny-saturation, issue 25): the benchmarks users run to find a
  server's ceiling, on the issue's deployment (served as `tiny`, 32 sequences, 1,024-token budget): open
  loops past what the engine can serve with 256-token outputs, where the API server streams thousands of
  tokens a second on the engine's cores. Its FIT half has a full closed loop (what tells the front end's
  cost per streamed token from the engine's), an open loop past the server's limit (45 requests/s: a
  backlog growing while the front end streams, which no closed loop shows) and one request at a time at
  256- and 1,024-token prompts (a prefill's fixed cost from its cost per prompt token); the HELD_OUT half
  has the issue's 30 requests/s of 256-token outputs and of mixed prompts, both past what the server
  delivers once every prompt is computed, and 15 requests/s below it. Until 2026-12-03 r15-out256 was
  fitted and r45-out256 held out; that fit predicted the issue's load +30% in TTFT P50, this one +16%
  (reader/fitting/coverage.py open_loop_warnings).

A profile is fitted on a set's FIT loads and predicts its HELD_OUT loads. Every load uses the random dataset
under `--seed 0`, which draws the same prompts for the same seed and lengths, so the recorder and the live test
empty the server's prefix cache before each run (tests/live/_bench_driver.py): otherwise each run meets the
prompts of the runs before it in the cache, and its result says nothing a replay of it alone can reach.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICE = "cpu-xeon-2c"
COMMON = ["--dataset-name", "random", "--ignore-eos", "--seed", "0", "--temperature", "0"]


def _random(prompt: int, output: int, prompts: int, *traffic: str, ratio: float = 0.0) -> list[str]:
    lengths = ["--random-input-len", str(prompt), "--random-output-len", str(output)]
    return lengths + (["--random-range-ratio", f"{ratio:g}"] if ratio else []) + ["--num-prompts", str(prompts),
                                                                                  *traffic]


@dataclass(frozen=True)
class LoadSet:
    """A deployment, the loads run against it (name -> vllm bench serve arguments; the random dataset, every
    run seeded), and which of them a profile is fitted on."""

    name: str
    folder: Path
    loads: dict[str, list[str]]
    fit: tuple[str, ...]
    held_out: tuple[str, ...]

    @property
    def deployment(self) -> Path:
        return self.folder / "deployment.yaml"

    @property
    def bench_dir(self) -> Path:
        return self.folder / "bench"

    @property
    def served_name(self) -> str:
        """The name the server answers to (the deployment's served-model-name), which the client must send."""
        for line in self.deployment.read_text().splitlines():
            if line.startswith("served-model-name:"):
                return line.split(":", 1)[1].strip()
        raise ValueError(f"{self.deployment} names no served-model-name")

    def server_flags(self, model_dir: Path) -> list[str]:
        """The deployment file as vLLM's own --config, the model folder by absolute path."""
        return ["--config", str(self.deployment), "--model", str(model_dir)]

    def bench_args(self, name: str) -> list[str]:
        return [*COMMON, *self.loads[name]]


STEPS = LoadSet(
    name="steps", folder=ROOT / "fixtures" / "calibration" / "cpu-tiny-llama",
    loads={"c1-short": _random(256, 64, 12, "--max-concurrency", "1"),
           "c4-short": _random(256, 64, 32, "--max-concurrency", "4"),
           "c16-short": _random(256, 64, 64, "--max-concurrency", "16"),
           "r4-short": _random(256, 64, 40, "--request-rate", "4"),
           "r12-short": _random(256, 64, 60, "--request-rate", "12"),
           "c1-long": _random(1024, 128, 8, "--max-concurrency", "1"),
           "c4-long": _random(1024, 128, 24, "--max-concurrency", "4"),
           "r2-long": _random(1024, 128, 24, "--request-rate", "2"),
           "c8-mixed": _random(512, 96, 40, "--max-concurrency", "8", ratio=0.5),
           "r6-mixed": _random(512, 96, 40, "--request-rate", "6", ratio=0.5)},
    fit=("c1-short", "c1-long", "c16-short", "r12-short", "c8-mixed"),
    held_out=("c4-short", "r4-short", "c4-long", "r2-long", "r6-mixed"))

SATURATION = LoadSet(
    name="saturation", folder=ROOT / "fixtures" / "calibration" / "cpu-tiny-saturation",
    loads={"c1-out128": _random(256, 128, 8, "--max-concurrency", "1"),
           "r10-out128": _random(256, 128, 60, "--request-rate", "10"),
           "r5-out128": _random(256, 128, 40, "--request-rate", "5"),
           "c16-out128": _random(256, 128, 64, "--max-concurrency", "16"),
           "c8-out128": _random(256, 128, 48, "--max-concurrency", "8"),
           "r30-out256": _random(256, 256, 150, "--request-rate", "30"),
           "c32-out256": _random(256, 256, 96, "--max-concurrency", "32"),
           "r30-mixed": _random(512, 256, 150, "--request-rate", "30", ratio=0.5),
           "r15-out256": _random(256, 256, 90, "--request-rate", "15"),
           "c1-in1024": _random(1024, 128, 8, "--max-concurrency", "1"),
           "r45-out256": _random(256, 256, 180, "--request-rate", "45")},
    fit=("c1-out128", "c1-in1024", "r5-out128", "c8-out128", "c32-out256", "r45-out256"),
    held_out=("r10-out128", "c16-out128", "r15-out256", "r30-out256", "r30-mixed"))

SETS = {s.name: s for s in (STEPS, SATURATION)}
