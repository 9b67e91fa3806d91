"""Run several `vllm bench serve` invocations in one process of a vLLM environment (its python runs this file).

    VENV/bin/python tests/live/_bench_driver.py < runs.json       (a JSON list of argument lists)

Each run is what `vllm bench serve ARGS...` does (vllm/entrypoints/cli/benchmark/serve.py, v0.32.0: parse
with the benchmark's own add_cli_args, then vllm.benchmarks.serve.main), but vLLM is imported once for all
of them: on a busy 2-core machine the CLI's start-up alone takes half a minute, which would stretch a sitting
of recordings (and the drift of the machine's load during it) several times over.

With BENCH_DRIVER_RESET_PREFIX_CACHE=1 in its environment, the server's prefix cache is emptied before each run
(POST /reset_prefix_cache, served when the server runs with VLLM_SERVER_DEV_MODE=1). The random dataset draws
the same prompts for the same seed and lengths, so without it every run after the first found its prompts'
leading blocks cached by the runs before it (measured on the saturation deployment: a second run of 16
256-token prompts hit 2,048 of its 4,096 prompt tokens), and each run's result described a warm cache that no
replay of that run alone can know of.
"""
import json
import os
import sys
import urllib.request


def reset_prefix_cache(argv: list[str]) -> None:
    """Empty the server's prefix cache (the run's --base-url); a server that refuses stops the sitting."""
    url = argv[argv.index("--base-url") + 1].rstrip("/") + "/reset_prefix_cache"
    with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=30) as answer:
        if answer.status != 200:
            raise SystemExit(f"{url} answered {answer.status}")


def main() -> None:
    from vllm import platforms
    from vllm.benchmarks.serve import add_cli_args, main as bench_main
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    if platforms.current_platform.is_unspecified():  # as the CLI does for `vllm bench`
        from vllm.platforms.cpu import CpuPlatform

        platforms.current_platform = CpuPlatform()
    reset = os.environ.get("BENCH_DRIVER_RESET_PREFIX_CACHE") == "1"
    for argv in json.load(sys.stdin):
        if reset:
            reset_prefix_cache(argv)
        parser = FlexibleArgumentParser()
        add_cli_args(parser)
        bench_main(parser.parse_args(argv))
        path = os.path.join(argv[argv.index("--result-dir") + 1], argv[argv.index("--result-filename") + 1])
        print("bench-driver: done " + path, flush=True)


if __name__ == "__main__":
    main()
