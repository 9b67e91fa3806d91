"""Record the /metrics scrapes (and a Prometheus range query over them) that `tests/observe/` replays offline.

Runs the real vLLM CPU server (tests/live/_server.py, dummy-weight tiny Llama) under a bounded load on
127.0.0.1 while scraping /metrics every second, and, when a Prometheus server is installed
(tools/prometheus_env.sh), lets Prometheus scrape it too and saves its query_range answer. Each case
writes fixtures/live/metrics/<case>/: scrapes.prom.gz (every scrape, each after its header line),
prometheus.json.gz (when Prometheus ran), server.log.gz (vLLM's own log) and meta.json (how it was made:
flags, request lengths, the server's final counters).

    eval "$(bash tools/vllm_env.sh 0.32.0)"
    flock /tmp/live-server.lock python tools/record_observe_fixtures.py [burst-kv|light|bench|bench-kv|all]

The `bench` case runs `vllm bench serve` (tests/live/_observe_cases.py: BENCH_BURSTS) against the CPU server
configured as fixtures/live/metrics/bench/serve.sh says, and keeps per burst the scrapes from an idle one before
it to an idle one after (<burst>.prom.gz), the bench's own result (<burst>.bench.json) and, for the saturated
burst, its last scrape cut at the line boundary before the first request-success or step-count series
(saturated-cut.prom: what a scrape interrupted mid-page holds). The `bench-kv` case does the same for one
saturated burst against that server with its KV cache cut to 24 blocks (BENCH_KV_SERVER).
"""
from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reader.observe.prometheus import fetch_range  # noqa: E402
from tests.live._prometheus import prometheus_binary, prometheus_server  # noqa: E402
from tests.live._server import bench_serve, live_server, venv_for  # noqa: E402
from tests.live._observe_cases import BENCH_CASES, BURSTS, CONSTRAINED, LIGHT, PACED  # noqa: E402
from tests.live._traffic import Scraper, burst, paced, request_lengths  # noqa: E402

CASES = {
    # the bursts need the engine and the API server apart, as in tests/live/test_live_observe.py (its fixture
    # `constrained` says why); the paced light load does not
    "burst-kv": {"flags": CONSTRAINED, "traffic": "burst", "load": BURSTS, "front_apart": True},
    "light": {"flags": LIGHT, "traffic": "paced", "load": PACED},
}
SCRAPE_INTERVAL_S = 1.0


def record(case: str, out: Path, version: str = "0.32.0") -> dict:
    spec = CASES[case]
    venv = venv_for(version)
    if venv is None:
        raise SystemExit(f"no vLLM {version} environment: eval \"$(bash tools/vllm_env.sh {version})\" first")
    load = spec["load"]
    # one list of (prompt, output) lengths per burst, each drawn with the next seed
    batches = [request_lengths(load["seed"] + b, load["count"], load["prompt"], load["output"])
               for b in range(load.get("bursts", 1))]
    folder = out / case
    folder.mkdir(parents=True, exist_ok=True)
    prom_bin = prometheus_binary()
    with tempfile.TemporaryDirectory(prefix="vllm-reader-record-") as tmp:
        tmp_path = Path(tmp)
        with live_server(venv, spec["flags"], tmp_path / "server.log",
                         front_apart=spec.get("front_apart", False)) as server:
            apart = server.front_cpus is not None
            with (prometheus_server(prom_bin, [f"127.0.0.1:{server.port}"], tmp_path / "prom")
                  if prom_bin else contextlib.nullcontext()) as prom:
                if prom is not None:
                    prom.wait_scraped()
                with Scraper(server, SCRAPE_INTERVAL_S) as scraper:
                    started = time.time()
                    for b, lengths in enumerate(batches):
                        if b:
                            time.sleep(load["pause_s"])
                        if spec["traffic"] == "burst":
                            burst(server, lengths)
                        else:
                            paced(server, lengths, load["gap_s"])
                    finished = time.time()
                    time.sleep(2 * SCRAPE_INTERVAL_S)
                scraper.save(folder / "scrapes.prom.gz")
                if prom is not None:
                    time.sleep(2.0)  # its last scrape after ours
                    first, last = scraper.scrapes[0].time, scraper.scrapes[-1].time
                    payload = fetch_range(prom.url, first - 1.0, last + 1.0, 1.0, 'job="vllm"', timeout=30.0)
                    with gzip.open(folder / "prometheus.json.gz", "wt") as f:
                        json.dump({"range": {"start": first - 1.0, "end": last + 1.0, "step": 1.0,
                                             "selector": 'job="vllm"'}, "answer": payload}, f)
            log = server.log()
        with gzip.open(folder / "server.log.gz", "wt") as f:
            f.write(log)
    meta = {
        "case": case, "vllm_version": version, "recorded": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "machine": f"{platform.machine()}, {platform.system()}; shared CPU (timings are noisy, counts exact)",
        "server": {"model": "fixtures/live/tiny-llama (2-layer Llama, dummy weights)",
                   "flags": ["--load-format", "dummy", "--dtype", "bfloat16", "--enforce-eager", *spec["flags"]],
                   "env": {"VLLM_CPU_KVCACHE_SPACE": "1"}, "engine_and_api_server_apart": apart},
        "traffic": {"kind": spec["traffic"], "load": load,
                    "requests": [[list(x) for x in lengths] for lengths in batches],
                    "started": started, "finished": finished},
        "scrape_interval_s": SCRAPE_INTERVAL_S, "scrapes": len(scraper.scrapes),
        "prometheus": bool(prom_bin),
        "recorded_by": "python tools/record_observe_fixtures.py " + case,
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


CUT_BEFORE = ("vllm:request_success_total", "vllm:iteration_tokens_total")


def cut(text: str) -> str:
    """The page up to the line before the first request-success or step-count line (its HELP/TYPE included)."""
    lines = text.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if any(name in line for name in CUT_BEFORE))
    return "".join(lines[:first])


def record_bench(out: Path, case: str = "bench", version: str = "0.32.0") -> dict:
    venv = venv_for(version)
    if venv is None:
        raise SystemExit(f"no vLLM {version} environment: eval \"$(bash tools/vllm_env.sh {version})\" first")
    flags, bursts = BENCH_CASES[case]
    folder = out / case
    folder.mkdir(parents=True, exist_ok=True)
    runs: dict = {}
    with tempfile.TemporaryDirectory(prefix="vllm-reader-record-") as tmp:
        tmp_path = Path(tmp)
        with live_server(venv, flags, tmp_path / "server.log") as server:
            for name, args in bursts.items():
                time.sleep(2 * SCRAPE_INTERVAL_S)
                result = tmp_path / f"{name}.json"
                with Scraper(server, SCRAPE_INTERVAL_S) as scraper:
                    started = time.time()
                    bench_serve(venv, server, [(result, args)])
                    finished = time.time()
                    time.sleep(2 * SCRAPE_INTERVAL_S)
                scraper.save(folder / f"{name}.prom.gz")
                bench = json.loads(result.read_text())
                # the per-request lists make the file large; the summary figures are what the tests compare
                summary = {k: v for k, v in bench.items() if not isinstance(v, list)}
                (folder / f"{name}.bench.json").write_text(json.dumps(summary, indent=1) + "\n")
                runs[name] = {"bench_args": args, "started": started, "finished": finished,
                              "scrapes": len(scraper.scrapes)}
                if name == "saturated":
                    (folder / "saturated-cut.prom").write_text(
                        f"# vllm-reader-scrape time={scraper.scrapes[-1].time:.3f} source={server.url}/metrics\n"
                        + cut(scraper.scrapes[-1].text))
            log = server.log()
        with gzip.open(folder / "server.log.gz", "wt") as f:
            f.write(log)
    meta = {"case": case, "vllm_version": version,
            "recorded": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "machine": f"{platform.machine()}, {platform.system()}; shared CPU (timings are noisy, counts exact)",
            "server": {"model": "fixtures/live/tiny-llama (2-layer Llama, dummy weights)",
                       "flags": ["--load-format", "dummy", "--dtype", "bfloat16", "--enforce-eager", *flags],
                       "env": {"VLLM_CPU_KVCACHE_SPACE": "1"}},
            "runs": runs, "scrape_interval_s": SCRAPE_INTERVAL_S,
            "recorded_by": "python tools/record_observe_fixtures.py " + case}
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", nargs="?", default="all", choices=[*CASES, *BENCH_CASES, "all"])
    parser.add_argument("--out", type=Path, default=ROOT / "fixtures" / "live" / "metrics")
    args = parser.parse_args()
    for case in (list(BENCH_CASES) if args.case == "all" else [args.case] if args.case in BENCH_CASES else []):
        meta = record_bench(args.out, case)
        print(f"{case}: " + ", ".join(f"{k} {v['scrapes']} scrapes in {v['finished'] - v['started']:.1f} s"
                                      for k, v in meta["runs"].items()), flush=True)
    if args.case in BENCH_CASES:
        return
    for case in (list(CASES) if args.case == "all" else [args.case]):
        meta = record(case, args.out)
        print(f"{case}: {meta['scrapes']} scrapes, {sum(map(len, meta['traffic']['requests']))} requests in "
              f"{meta['traffic']['finished'] - meta['traffic']['started']:.1f} s", flush=True)


if __name__ == "__main__":
    main()
