"""Ask the real vLLM whether it would start with each config: its own argument parser, the `vllm serve`
argument checks and EngineArgs.create_engine_config(), in one process, no weights and no GPU.

Run with a vLLM environment's python (tools/vllm_env.sh). Reads JSON lines on stdin, one config each:
    {"id": "...", "argv": ["--max-num-seqs", "0", ...], "config_yaml": "...", "env": {"NAME": "value"},
     "model": "/path/to/a/model/folder"}
`argv` are the arguments after `vllm serve MODEL` (MODEL: the item's `model`, else the driver's argument); `config_yaml`, when given, is written to a file and passed
as `--config FILE` (vLLM's own YAML reader). Writes one JSON line per config:
    {"id": "...", "verdict": "ok" | "refused", "stage": "parse" | "serve-args" | "engine-args" | "config" | "kv-cache",
     "error": "ExceptionType", "message": "vLLM's message, on one line"}
The first line written is {"ready": true, "vllm": "<version>"} once vLLM is imported.

Memory. A config whose `env` sets VLLM_CPU_KVCACHE_SPACE (GiB) gets one more stage, "kv-cache": vLLM's own
start-up check that the KV cache holds one request at max_model_len (vllm/v1/core/kv_cache_utils.py
check_enough_kv_cache_memory, which EngineCore reaches through get_kv_cache_configs after the workers report their
memory), asked with the KV space the CPU worker would report and the KV-cache spec of the model's layers. On the
CPU build the worker's available memory is that space as set, whatever the weights take
(vllm/v1/worker/cpu_worker.py determine_available_memory: `cpu_kvcache_space_bytes` @ v0.18.0; the platform turns
the variable into `kv_cache_memory_bytes`, vllm/platforms/cpu.py check_and_update_config, and the worker returns
it @ v0.32.0), so no weights are loaded. The spec is what each attention layer of a plain full-attention decoder
reports (FullAttentionSpec: the release's block size, KV heads per TP rank, head size, KV dtype), built here
from the engine config instead of by instantiating the model; configs of other models skip the stage.
Weights that do not fit a GPU cannot be asked this way: the CPU build never compares weights with a device's
memory.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")


def build_parser():
    from vllm.entrypoints.cli.serve import ServeSubcommand

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:  # releases before the utils package was split
        from vllm.utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(description="vLLM CLI")
    subparsers = top.add_subparsers(required=False, dest="subparser")
    serve = ServeSubcommand()
    serve.subparser_init(subparsers).set_defaults(dispatch_function=serve.cmd)
    return top, serve


class _ParseError(Exception):
    pass


def _one(top, serve, item: dict, model: str) -> dict:
    import vllm
    from vllm.usage.usage_lib import UsageContext

    argv = ["serve", item.get("model") or model, *item.get("argv", [])]
    stage = "parse"
    saved_env = {k: os.environ.get(k) for k in item.get("env", {})}
    os.environ.update(item.get("env", {}))
    tmp = None
    try:
        if item.get("config_yaml") is not None:
            tmp = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
            tmp.write(item["config_yaml"])
            tmp.close()
            argv += ["--config", tmp.name]
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                args = top.parse_args(argv)
        except SystemExit:
            # argparse ends with its own 'error:' line; a config class's ValidationError raised while argparse
            # converts a JSON option ends with pydantic's 'For further information' line, after its message
            lines = [ln.strip() for ln in err.getvalue().splitlines()
                     if ln.strip() and not ln.strip().startswith("For further information")]
            return {"verdict": "refused", "stage": stage, "error": "SystemExit",
                    "message": " ".join(lines[-2:])[:600] if lines else ""}
        stage = "serve-args"
        serve.validate(args)
        if getattr(args, "model_tag", None) is not None:
            args.model = args.model_tag
        stage = "engine-args"
        engine_args = vllm.AsyncEngineArgs.from_cli_args(args)
        stage = "config"
        vllm_config = engine_args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
        if os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
            stage = "kv-cache"
            _check_kv_cache(vllm_config)
        return {"verdict": "ok", "stage": stage}
    except Exception as exc:  # what vLLM raises is the verdict
        text = " ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())
        text = text.split(" For further information visit")[0]
        return {"verdict": "refused", "stage": stage, "error": type(exc).__name__, "message": text[:600]}
    finally:
        if tmp is not None:
            os.unlink(tmp.name)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _check_kv_cache(vllm_config) -> None:
    """vLLM's start-up check of the KV space against one request at max_model_len (see the module's doc)."""
    from vllm.v1.core.kv_cache_utils import check_enough_kv_cache_memory
    from vllm.v1.kv_cache_interface import FullAttentionSpec

    try:
        from vllm.utils.torch_utils import STR_DTYPE_TO_TORCH_DTYPE
    except ImportError:  # releases before the utils package was split
        from vllm.utils import STR_DTYPE_TO_TORCH_DTYPE

    model, cache, parallel = vllm_config.model_config, vllm_config.cache_config, vllm_config.parallel_config
    if model.use_mla or getattr(model.hf_text_config, "sliding_window", None) or model.is_hybrid:
        return  # not a plain full-attention decoder: its spec is not built here
    available = getattr(cache, "cpu_kvcache_space_bytes", None) or cache.kv_cache_memory_bytes
    dtype = model.dtype if cache.cache_dtype == "auto" else STR_DTYPE_TO_TORCH_DTYPE[cache.cache_dtype]
    spec = FullAttentionSpec(block_size=cache.block_size, num_kv_heads=model.get_num_kv_heads(parallel),
                             head_size=model.get_head_size(), dtype=dtype)
    specs = {f"model.layers.{i}.self_attn.attn": spec for i in range(model.get_num_layers(parallel))}
    if hasattr(cache, "kv_cache_layout") and cache.kv_cache_layout is None:
        # releases that resolve one KV cache layout in the engine core before the check (EngineCore
        # _initialize_kv_caches @ v0.32.0), from the layouts the platform's attention backend supports
        from vllm.distributed.kv_transfer.kv_connector.utils import get_current_attn_backends
        from vllm.v1.attention.backends.utils import (get_supported_kv_cache_layouts, record_kv_cache_layout,
                                                      resolve_kv_cache_layout)

        names = [layout.name for layout in get_supported_kv_cache_layouts(get_current_attn_backends(vllm_config))]
        layout = resolve_kv_cache_layout(vllm_config, [names], list(specs.values()))
        record_kv_cache_layout(cache, layout.name)
    check_enough_kv_cache_memory(vllm_config, specs, available)


def main() -> None:
    model = sys.argv[1]
    out = sys.stdout
    sys.stdout = sys.stderr  # vLLM's prints stay off the verdict stream
    logging.disable(logging.WARNING)
    import vllm

    top, serve = build_parser()
    out.write(json.dumps({"ready": True, "vllm": vllm.__version__}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        item = json.loads(line)
        result = _one(top, serve, item, model)
        result["id"] = item.get("id")
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
