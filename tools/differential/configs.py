"""Random vLLM configs for the differential test of `check` against the real vLLM.

Each config is a handful of scheduler, cache, parallel and speculative settings with values drawn from two
pools: typical values, and (one time in five) values at or past an edge: zero, negative, above a limit, a suffix
the release may not read, text that is no number at all. Now and then a flag the release removed. Half are written as a
`vllm serve MODEL ...` command line, half as a `vllm serve --config` YAML file. The model is always the tiny
2-layer Llama of fixtures/live/tiny-llama (4 attention heads, 2 KV heads, 4,096 positions).

A config is data (a dict), so a recorder can store it with vLLM's verdict and the default suite replay it.
"""
from __future__ import annotations

import json
import random
import shlex
from typing import Any, Optional

# option -> (typical values, values at or past an edge); the release's flag table decides whether it exists
VALUES: dict[str, tuple[list[Any], list[Any]]] = {
    "--max-num-seqs": ([1, 2, 16, 64, 128, 256, 512, 1024, 2048, 4096], [0, -1, -4, "abc", "1.5", "8k"]),
    "--max-num-batched-tokens": ([16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, "2k", "8K", "1.5k"],
                                 ["0.5K", 0, -5, "x"]),
    "--max-model-len": ([128, 256, 1024, 2048, 4096, "2k", "4K", "auto", -1], [8192, 100000, 0, -5, "abc"]),
    "--long-prefill-token-threshold": ([0, 16, 256, 1024, 4096], [5000, 100000, -5]),
    "--block-size": ([8, 16, 32, 64, 128, 256], [1, 7, 0, -16]),
    "--gpu-memory-utilization": ([0.5, 0.9, 0.95, 1.0], [0, 1.5, -0.1, 90]),
    "--kv-cache-dtype": (["auto", "fp8", "fp8_e4m3", "fp8_e5m2"], ["bogus"]),
    "--dtype": (["auto", "bfloat16", "float16", "half", "float32"], ["bogus"]),
    "--tensor-parallel-size": ([1, 2, 4], [3, 0, -1]),
    "--pipeline-parallel-size": ([1, 2], [3, 0]),
    "--data-parallel-size": ([1, 2], [0]),
    "--scheduling-policy": (["fcfs", "priority"], ["lifo"]),
    "--cpu-offload-gb": ([0, 1], [-1]),
    "--max-logprobs": ([20, 0, -1], [-5]),
    "--seed": ([0, 42], [-1]),
    "--max-num-partial-prefills": ([1, 2, 4], [0]),
    "--max-long-partial-prefills": ([1, 2], [0]),
    "--max-num-scheduled-tokens": ([16, 1024], [0]),
    "--max-num-active-seqs": ([1, 8], [0]),
    "--watermark": ([0.0, 0.01, 0.5], [1.0, -0.1]),
    "--prefill-schedule-interval": ([1, 4], [0]),
    "--stream-interval": ([1, 4], [0]),
    "--enable-chunked-prefill": ([True, False], []),
    "--enable-prefix-caching": ([True, False], []),
    "--enforce-eager": ([True], []),
    "--async-scheduling": ([True, False], []),
    "--speculative-config": (["ngram", "ngram"], ["ngram-zero", "ngram-min-above-max", "not-json", "model-number"]),
    # removed in one release or another: vLLM's parser stops on them where they are gone
    "--swap-space": ([4], []),
    "--num-scheduler-steps": ([8], []),
    "--max-seq-len-to-capture": ([8192], []),
    "--use-v2-block-manager": ([True], []),
}
EDGE_SHARE = 0.2  # how often a value is drawn from the edge pool
MODEL_PATH = "/models/tiny-llama"  # how the config names the model; both sides read fixtures/live/tiny-llama


def _speculative(kind: str, rng: random.Random) -> Any:
    if kind == "not-json":
        return '{"method": "ngram", "num_speculative_tokens": 2'
    if kind == "model-number":
        return {"model": 3, "num_speculative_tokens": 2}
    k = 0 if kind == "ngram-zero" else rng.choice([1, 2, 3, 5])
    low, high = (5, 2) if kind == "ngram-min-above-max" else (rng.choice([1, 2]), rng.choice([3, 4, 5]))
    return {"method": "ngram", "num_speculative_tokens": k, "prompt_lookup_max": high, "prompt_lookup_min": low}


def generate(count: int, seed: int, options: Optional[set[str]] = None) -> list[dict[str, Any]]:
    """`count` configs from `seed`. `options`: the ones to draw from (default all; the caller passes the
    release's own plus the removed ones it wants tried)."""
    rng = random.Random(seed)
    pool = sorted(o for o in VALUES if options is None or o in options)
    out = []
    for i in range(count):
        chosen = rng.sample(pool, k=min(len(pool), rng.choice([1, 2, 2, 3, 3, 4, 5])))
        settings = {}
        for option in chosen:
            typical, edge = VALUES[option]
            value = rng.choice(edge if edge and rng.random() < EDGE_SHARE else typical)
            if option == "--speculative-config":
                value = _speculative(value, rng)
            settings[option] = value
        form = "yaml" if rng.random() < 0.5 else "cli"
        out.append({"id": f"s{seed}-{i:04d}", "form": form, "settings": settings})
    return out


def vllm_argv(config: dict[str, Any]) -> dict[str, Any]:
    """What the driver gives vLLM: arguments after `vllm serve MODEL`, or the body of a --config YAML file."""
    if config["form"] == "cli":
        return {"id": config["id"], "argv": cli_arguments(config["settings"])}
    return {"id": config["id"], "argv": [], "config_yaml": yaml_body(config["settings"])}


def cli_arguments(settings: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for option, value in settings.items():
        if value is True:
            args.append(option)
        elif value is False:
            args.append("--no-" + option[2:])
        else:
            args += [option, value if isinstance(value, str) else json.dumps(value)]
    return args


def yaml_body(settings: dict[str, Any]) -> str:
    lines = []
    for option, value in settings.items():
        key = option[2:]
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, dict):
            text = json.dumps(value)  # a flow mapping is YAML too: vLLM gets a dict
        elif isinstance(value, str):
            text = json.dumps(value)  # quoted: '2k', 'auto' and broken JSON stay strings
        else:
            text = json.dumps(value)
        lines.append(f"{key}: {text}")
    return "\n".join(lines) + "\n"


def check_file(config: dict[str, Any]) -> tuple[str, str]:
    """(file name, text) of the same config as a user would hand it to `vllm-reader check`."""
    if config["form"] == "cli":
        words = ["vllm", "serve", MODEL_PATH, *cli_arguments(config["settings"])]
        return "serve.sh", " ".join(shlex.quote(w) for w in words) + "\n"
    return "config.yaml", f"model: {MODEL_PATH}\n" + yaml_body(config["settings"])
