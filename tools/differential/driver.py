"""Ask the real vLLM whether it would start with each config: its own argument parser, the `vllm serve`
argument checks and EngineArgs.create_engine_config(), in one process, no weights and no GPU.

Run with a vLLM environment's python (tools/vllm_env.sh). Reads JSON lines on stdin, one config each:
    {"id": "...", "argv": ["--max-num-seqs", "0", ...], "config_yaml": "...", "env": {"NAME": "value"}}
`argv` are the arguments after `vllm serve MODEL`; `config_yaml`, when given, is written to a file and passed
as `--config FILE` (vLLM's own YAML reader). Writes one JSON line per config:
    {"id": "...", "verdict": "ok" | "refused", "stage": "parse" | "serve-args" | "engine-args" | "config",
     "error": "ExceptionType", "message": "vLLM's message, on one line"}
The first line written is {"ready": true, "vllm": "<version>"} once vLLM is imported.
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

    argv = ["serve", model, *item.get("argv", [])]
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
            lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
            return {"verdict": "refused", "stage": stage, "error": "SystemExit",
                    "message": lines[-1] if lines else ""}
        stage = "serve-args"
        serve.validate(args)
        if getattr(args, "model_tag", None) is not None:
            args.model = args.model_tag
        stage = "engine-args"
        engine_args = vllm.AsyncEngineArgs.from_cli_args(args)
        stage = "config"
        engine_args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
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
