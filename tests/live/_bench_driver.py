"""Run several `vllm bench serve` invocations in one process of a vLLM environment (its python runs this file).

    VENV/bin/python tests/live/_bench_driver.py < runs.json       (a JSON list of argument lists)

Each run is what `vllm bench serve ARGS...` does (vllm/entrypoints/cli/benchmark/serve.py, v0.32.0: parse
with the benchmark's own add_cli_args, then vllm.benchmarks.serve.main), but vLLM is imported once for all
of them: on a busy 2-core machine the CLI's start-up alone takes half a minute, which would stretch a sitting
of recordings (and the drift of the machine's load during it) several times over.
"""
import json
import os
import sys


def main() -> None:
    from vllm import platforms
    from vllm.benchmarks.serve import add_cli_args, main as bench_main
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    if platforms.current_platform.is_unspecified():  # as the CLI does for `vllm bench`
        from vllm.platforms.cpu import CpuPlatform

        platforms.current_platform = CpuPlatform()
    for argv in json.load(sys.stdin):
        parser = FlexibleArgumentParser()
        add_cli_args(parser)
        bench_main(parser.parse_args(argv))
        path = os.path.join(argv[argv.index("--result-dir") + 1], argv[argv.index("--result-filename") + 1])
        print("bench-driver: done " + path, flush=True)


if __name__ == "__main__":
    main()
