"""Random vLLM configs for the differential test of `check` against the real vLLM.

Each config is a handful of settings with values drawn from two pools: typical values, and (one time in five)
values at or past an edge: zero, negative, above a limit, a suffix the release may not read, text that is no
number at all, a JSON key the config class does not take or of the wrong type. Now and then a flag the release
removed. The settings span the scheduler, cache, parallel, speculative, compilation and API-server options, and
the settings that only refuse in combination with the model: the model is the tiny 2-layer Llama of
fixtures/live/tiny-llama (4 attention heads, 2 KV heads, 4,096 positions) or, one time in three, one of the
variants in fixtures/differential/models/ (6 or 8 heads, one KV head, 1,024 positions, sliding window, MoE, MLA,
Gemma 2). Speculative configs name local draft models from the same folders. Half the configs are a
`vllm serve MODEL ...` command line, half a `vllm serve --config` YAML file; a command line sometimes carries an
environment variable vLLM reads (VLLM_ALLOW_LONG_MAX_MODEL_LEN).

String-valued options (quantization, load format, attention backend, distributed executor backend, dtype, KV-cache
dtype) are drawn, when the release is given, from the release's own values (its registries in
rules/flags/_registries.json, extracted from its source, or the argparse choices of its flag table) and from
plausible misspellings of them (case, `-` for `_`, a letter dropped, doubled or swapped) that are not values.

Memory-bound configs (MEMORY_SHARE of them) run the shape of Llama-3.1-8B (its shipped config.json,
fixtures/differential/models/llama-3.1-8b-shape; 128 KiB of bf16 KV cache per token) with a KV space of 1, 2 or 4
GiB and a max_model_len drawn around what that space holds (from half to one and a half times, most within
0.2%): `--kv-cache-memory-bytes` for `check`, and the same space as VLLM_CPU_KVCACHE_SPACE (whole GiB) for the
CPU build (`cpu_env`), whose driver then asks vLLM's own KV-cache start-up check (tools/differential/driver.py).

A config is data (a dict), so a recorder can store it with vLLM's verdict and the default suite replay it. Local
model paths are written `@models/NAME` and made absolute where the config is used (vllm_argv, check_file).
"""
from __future__ import annotations

import json
import random
import shlex
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIRS = {"tiny-llama": ROOT / "fixtures" / "live" / "tiny-llama"}
for _path in sorted((ROOT / "fixtures" / "differential" / "models").glob("*/config.json")):
    MODEL_DIRS[_path.parent.name] = _path.parent
DEFAULT_MODEL = "tiny-llama"
MODEL_SHARE = 1 / 3  # how often a config runs one of the variants instead of the tiny Llama
ENV_SHARE = 0.08  # how often a command line carries VLLM_ALLOW_LONG_MAX_MODEL_LEN=1

# option -> (typical values, values at or past an edge); the release's flag table decides whether it exists
VALUES: dict[str, tuple[list[Any], list[Any]]] = {
    "--max-num-seqs": ([1, 2, 16, 64, 128, 256, 512, 1024, 2048, 4096], [0, -1, -4, "abc", "1.5", "8k"]),
    "--max-num-batched-tokens": ([16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, "2k", "8K", "1.5k"],
                                 ["0.5K", 0, -5, "x", 1, 2]),
    "--max-model-len": ([128, 256, 1024, 2048, 4096, "2k", "4K", "auto", -1], [8192, 100000, 0, -5, "abc"]),
    "--long-prefill-token-threshold": ([0, 16, 256, 1024, 4096], [5000, 100000, -5]),
    "--block-size": ([8, 16, 32, 64, 128, 256], [1, 7, 0, -16]),
    "--gpu-memory-utilization": ([0.5, 0.9, 0.95, 1.0], [0, 1.5, -0.1, 90]),
    "--kv-cache-dtype": (["auto", "auto", "fp8", "bfloat16"], ["bogus", "nvfp4", "float16", "fp8_e4m3", "fp8_e5m2"]),
    "--dtype": (["auto", "bfloat16", "float16", "half", "float32"], ["bogus"]),
    "--tensor-parallel-size": ([1, 2, 4], [3, 0, -1, 8]),
    "--pipeline-parallel-size": ([1, 2], [3, 0]),
    "--data-parallel-size": ([1, 2], [0]),
    "--data-parallel-size-local": ([1], [2]),
    "--decode-context-parallel-size": ([1, 2], [3, 4]),
    # (above 1 the CPU build refuses prefill context parallelism outright: rules/differential, cpu-model-runner-v1)
    "--prefill-context-parallel-size": ([1], []),
    "--dcp-comm-backend": (["ag_rs"], ["a2a"]),
    "--enable-expert-parallel": ([True], []),
    "--eplb-config": ([{"window_size": 1000}], [{"num_redundant_experts": 2}, {"window_size": "big"}]),
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
    "--kv-sharing-fast-prefill": ([True], []),
    "--speculative-config": (["ngram", "ngram", "draft", "ngram-no-lookup"],
                             ["ngram-zero", "ngram-min-above-max", "not-json", "model-number", "method-typo",
                              "tokens-only", "eagle-no-model", "ngram-no-tokens", "draft-no-tokens",
                              "draft-vocab", "draft-npredict", "draft-heads", "draft-max-len", "unknown-key",
                              "custom-class", "tp-key", "draft-tp-3", "padded-drafter", "synthetic"]),
    "--compilation-config": (["mode3", "sizes", "custom-ops", "max-size", "mode-name"],
                             ["mode-unknown", "mode-7", "cudagraph-mode-bogus", "custom-ops-bad", "custom-ops-both",
                              "backend-bad", "level", "sizes-text", "cache-format"]),
    "--attention-config": ([{"backend": "FLASH_ATTN"}], []),
    # names outside every release's quantization registry (rules/flags/_registries.json): formats rather than
    # methods and plausible misspellings of real ones. With a release given, STRING_OPTIONS also draws the
    # release's real methods (on unquantized models: rules/differential, quantization-without-checkpoint-config).
    "--quantization": ([], ["int4", "fp4", "awq-marlin", "FP8", "gptq_marlin24", "compressed_tensors", "nf4"]),
    "--attention-backend": (["FLASH_ATTN"], []),
    "--enable-auto-tool-choice": ([True], []),
    "--tool-call-parser": (["hermes"], []),
    "--enable-log-outputs": ([True], []),
    "--enable-log-requests": ([True], []),
    "--collect-detailed-traces": ([], ["all"]),
    "--sse-keep-alive-interval": ([0, 15], [-1]),
    # removed in one release or another: vLLM's parser stops on them where they are gone
    "--swap-space": ([4], []),
    "--num-scheduler-steps": ([8], []),
    "--max-seq-len-to-capture": ([8192], []),
    "--use-v2-block-manager": ([True], []),
}
REMOVED = {"--swap-space", "--num-scheduler-steps", "--max-seq-len-to-capture", "--use-v2-block-manager"}
EDGE_SHARE = 0.2  # how often a value is drawn from the edge pool
FAVOURED = {"--speculative-config": 0.2, "--compilation-config": 0.1}  # added to a config this often besides
MODEL_PATH = "/models/{model}"
GiB = 2**30
MEMORY_SHARE = 0.12  # how often a config is memory-bound (see the module's doc)
MEMORY_MODEL = "llama-3.1-8b-shape"
MEMORY_KV_PER_TOKEN = 32 * 2 * 8 * 128 * 2  # its layers x (K, V) x KV heads x head size x bf16 bytes
MEMORY_RATIOS = [0.5, 0.9, 0.98, 0.998, 0.999, 1.0, 1.0, 1.001, 1.002, 1.02, 1.1, 1.5]
# string-valued options: where the release's values come from (a registry of _registries.json, else the choices
# of its flag table)
STRING_OPTIONS = ("--quantization", "--load-format", "--attention-backend", "--distributed-executor-backend",
                  "--dtype", "--kv-cache-dtype")
STRING_SHARE = 0.25  # how often a config also draws one string-valued option from the release's values  # how the config names the model; both sides read the model's own folder


def _draft(name: str, k: Optional[int], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": f"@models/{name}"}
    if k is not None:
        out["num_speculative_tokens"] = k
    out.update(extra)
    return out


def _speculative(kind: str, rng: random.Random) -> Any:
    k = rng.choice([1, 2, 3, 5])
    ngram = {"method": "ngram", "num_speculative_tokens": k, "prompt_lookup_max": rng.choice([3, 4, 5]),
             "prompt_lookup_min": rng.choice([1, 2])}
    table: dict[str, Any] = {
        "ngram": ngram,
        "ngram-no-lookup": {"method": "ngram", "num_speculative_tokens": k},
        "draft": _draft("tiny-llama", k),
        "not-json": '{"method": "ngram", "num_speculative_tokens": 2',
        "model-number": {"model": 3, "num_speculative_tokens": 2},
        "method-typo": {"method": "ngramm", "num_speculative_tokens": 2},
        "tokens-only": {"num_speculative_tokens": k},
        "eagle-no-model": {"method": "eagle", "num_speculative_tokens": k},
        "ngram-no-tokens": {"method": "ngram", "prompt_lookup_max": 4},
        "draft-no-tokens": _draft("tiny-llama", None),
        "draft-vocab": _draft("tiny-llama-vocab2048", k),
        "draft-npredict": _draft("tiny-llama-npredict2", rng.choice([1, 2, 3, 4])),
        "draft-heads": _draft("tiny-llama-h6", k),
        "draft-max-len": _draft("tiny-llama-short", k, max_model_len=rng.choice([512, 2048])),
        "unknown-key": {**ngram, "lookahead": 3},
        "custom-class": {"method": "custom_class", "num_speculative_tokens": k},
        "tp-key": {**ngram, "tensor_parallel_size": 1},
        "draft-tp-3": _draft("tiny-llama", k, draft_tensor_parallel_size=3),
        "padded-drafter": {**ngram, "disable_padded_drafter_batch": True},
        "synthetic": {**ngram, "synthetic_acceptance_length": 1.5},
        "ngram-zero": {**ngram, "num_speculative_tokens": 0},
        "ngram-min-above-max": {**ngram, "prompt_lookup_max": 2, "prompt_lookup_min": 5},
    }
    return table[kind]


COMPILATION: dict[str, Any] = {
    "mode3": {"mode": 3},
    "mode-name": {"mode": "VLLM_COMPILE"},
    "sizes": {"cudagraph_capture_sizes": [1, 2, 4, 8]},
    "custom-ops": {"custom_ops": ["none", "+rms_norm"]},
    "max-size": {"max_cudagraph_capture_size": 16},
    "mode-unknown": {"mode": "max"},
    "mode-7": {"mode": 7},
    "cudagraph-mode-bogus": {"cudagraph_mode": "full_decode"},
    "custom-ops-bad": {"custom_ops": ["rms_norm"]},
    "custom-ops-both": {"custom_ops": ["all", "none"]},
    "backend-bad": {"mode": 3, "backend": "cudagraphs"},
    "level": {"level": 3},
    "sizes-text": {"cudagraph_capture_sizes": "8"},
    "cache-format": {"compile_cache_save_format": "zip"},
    # not drawn: the CPU build never captures CUDA graphs, so it cannot judge an empty capture list or piecewise
    # graphs without mode 3 (VR706, VR708; rules/differential, cpu-no-cuda-graphs)
    "sizes-empty": {"cudagraph_capture_sizes": []},
    "mode0-piecewise": {"mode": 0, "cudagraph_mode": "PIECEWISE"},
}


def release_values(option: str, version: str) -> list[str]:
    """The values `option` takes at `version`: its registry (rules/flags/_registries.json), else the argparse
    choices of the release's flag table; [] when neither is known."""
    from reader.config.flagtable import _registries, flag_table
    from reader.versions import parse_version

    for entry in _registries().values():
        if entry.get("option") == option and version in entry["releases"]:
            return list(entry["releases"][version]["values"])
    spec = flag_table(parse_version(version)).options.get(option) or {}
    return [str(c) for c in spec.get("choices") or []]


def misspellings(value: str, valid: set[str]) -> list[str]:
    """Plausible misspellings of `value` that are not values: case, `-` for `_`, a letter dropped, doubled or
    swapped with the next."""
    out = [value.upper(), value.lower(), value.replace("_", "-"), value.replace("-", "_"), value[:-1],
           value + value[-1], value + "s"]
    if len(value) > 2:
        out.append(value[0] + value[2] + value[1] + value[3:])
    return sorted({m for m in out if m and m != value and m not in valid})


def _string_option(option: str, version: str, rng: random.Random) -> Optional[str]:
    values = release_values(option, version)
    if not values:
        return None
    value = rng.choice(values)
    if rng.random() < 0.5:
        wrong = misspellings(value, set(values))
        if wrong:
            return rng.choice(wrong)
    return value


def _memory_config(rng: random.Random) -> tuple[dict[str, Any], dict[str, str]]:
    """Settings near the KV-cache limit of the Llama-3.1-8B shape, and the CPU build's environment."""
    space = rng.choice([1, 1, 2, 4])
    tp = rng.choice([1, 1, 1, 2])
    dtype = rng.choice([None, None, None, "float32", "float16"])
    per_token = MEMORY_KV_PER_TOKEN // tp * (2 if dtype == "float32" else 1)
    block = rng.choice([16, 16, 32, 64, 128])
    length = max(block, int(space * GiB / per_token * rng.choice(MEMORY_RATIOS)))
    if rng.random() < 0.3:
        length = length // block * block  # on a block boundary
    settings: dict[str, Any] = {"--kv-cache-memory-bytes": space * GiB, "--max-model-len": length,
                                "--block-size": block}
    if tp > 1:
        settings["--tensor-parallel-size"] = tp
    if dtype:
        settings["--dtype"] = dtype
    if rng.random() < 0.3:
        settings["--enable-chunked-prefill"] = rng.choice([True, False])
    if rng.random() < 0.3:
        settings["--max-num-seqs"] = rng.choice([1, 16, 256])
    return settings, {"VLLM_CPU_KVCACHE_SPACE": str(space)}


def generate(count: int, seed: int, options: Optional[set[str]] = None,
             version: Optional[str] = None) -> list[dict[str, Any]]:
    """`count` configs from `seed`. `options`: the ones to draw from (default all; the caller passes the
    release's own plus the removed ones it wants tried). `version`: the release whose registries the
    string-valued options are drawn from, and with it the memory-bound configs; without it, neither."""
    rng = random.Random(seed)
    pool = sorted(o for o in VALUES if options is None or o in options)
    variants = sorted(m for m in MODEL_DIRS if m.startswith("tiny-") and not m.startswith(("tiny-llama-vocab",
                                                                                             "tiny-llama-npredict")))
    strings = [o for o in STRING_OPTIONS if options is None or o in options] if version else []
    out = []
    for i in range(count):
        if version and rng.random() < MEMORY_SHARE:
            settings, cpu_env = _memory_config(rng)
            form = "yaml" if rng.random() < 0.5 else "cli"
            out.append({"id": f"s{seed}-{i:04d}", "form": form, "settings": settings, "model": MEMORY_MODEL,
                        "cpu_env": cpu_env})
            continue
        chosen = rng.sample(pool, k=min(len(pool), rng.choice([1, 2, 2, 3, 3, 4, 5])))
        for option, share in FAVOURED.items():  # the options whose keys hold most refusals, more often
            if option in pool and option not in chosen and rng.random() < share:
                chosen.append(option)
        settings = {}
        for option in chosen:
            typical, edge = VALUES[option]
            value = rng.choice(edge if edge and (rng.random() < EDGE_SHARE or not typical) else typical)
            if option == "--speculative-config":
                value = _speculative(value, rng)
            elif option == "--compilation-config":
                value = COMPILATION[value]
            settings[option] = value
        if strings and rng.random() < STRING_SHARE:
            option = rng.choice(strings)
            value = _string_option(option, version, rng)
            if value is not None:
                settings[option] = value
        form = "yaml" if rng.random() < 0.5 else "cli"
        config: dict[str, Any] = {"id": f"s{seed}-{i:04d}", "form": form, "settings": settings}
        if rng.random() < MODEL_SHARE:
            config["model"] = rng.choice(variants)
        if form == "cli" and rng.random() < ENV_SHARE:
            config["env"] = {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
        out.append(config)
    return out


def model_dir(config: dict[str, Any]) -> Path:
    return MODEL_DIRS[config.get("model", DEFAULT_MODEL)]


def _local(value: Any) -> Any:
    """`@models/NAME` -> the absolute path of that model's folder, inside JSON values too."""
    if isinstance(value, str) and value.startswith("@models/"):
        return str(MODEL_DIRS[value[len("@models/"):]])
    if isinstance(value, dict):
        return {k: _local(v) for k, v in value.items()}
    return value


def vllm_argv(config: dict[str, Any]) -> dict[str, Any]:
    """What the driver gives vLLM: the model folder, the arguments after `vllm serve MODEL` or the body of a
    --config YAML file, and the environment."""
    settings = _local(config["settings"])
    item: dict[str, Any] = {"id": config["id"], "model": str(model_dir(config)),
                            "env": {**config.get("env", {}), **config.get("cpu_env", {})}}
    if config["form"] == "cli":
        return {**item, "argv": cli_arguments(settings)}
    return {**item, "argv": [], "config_yaml": yaml_body(settings)}


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
        else:
            text = json.dumps(value)  # a flow mapping is YAML too; strings quoted: '2k', 'auto', broken JSON
        lines.append(f"{key}: {text}")
    return "\n".join(lines) + "\n"


def check_file(config: dict[str, Any]) -> tuple[str, str]:
    """(file name, text) of the same config as a user would hand it to `vllm-reader check`."""
    settings = _local(config["settings"])
    model = MODEL_PATH.format(model=config.get("model", DEFAULT_MODEL))
    if config["form"] == "cli":
        env = [f"{k}={shlex.quote(v)}" for k, v in config.get("env", {}).items()]
        words = ["vllm", "serve", model, *cli_arguments(settings)]
        return "serve.sh", " ".join(env + [shlex.quote(w) for w in words]) + "\n"
    return "config.yaml", f"model: {model}\n" + yaml_body(settings)
