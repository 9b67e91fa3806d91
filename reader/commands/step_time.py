"""`vllm-reader step-time`: the predicted GPU time of one engine step, split into its parts.

    vllm-reader step-time --model M --gpu G [--tp N] [--dtype D] --batch "prefill:2048@0,decode:64@2048"

--batch items: `prefill:T@P` one request computing T new tokens with P tokens already cached (it samples
a token: its last chunk); `decode:N@C` N requests decoding one token each at context C.
"""
from __future__ import annotations

import typer

FORMATS = ("text", "json")


def register(app: typer.Typer) -> None:
    @app.command("step-time")
    def step_time(
        model: str = typer.Option(..., "--model", "-m", help="Model id/alias from the catalog, or a config.json path."),
        gpu: str = typer.Option(..., "--gpu", "-g", help="GPU id/alias from the catalog."),
        batch: str = typer.Option(..., "--batch", "-b", help='Items like "prefill:2048@0,decode:64@2048".'),
        tp: int = typer.Option(1, "--tp", help="Tensor-parallel size."),
        pp: int = typer.Option(1, "--pp", help="Pipeline-parallel size."),
        dtype: str = typer.Option("auto", "--dtype", help="auto, bfloat16, float16, float32."),
        quantization: str = typer.Option(None, "--quantization", "-q", help="e.g. fp8, awq (default: the checkpoint's)."),
        kv_cache_dtype: str = typer.Option("auto", "--kv-cache-dtype", help="auto, fp8, ..."),
        enforce_eager: bool = typer.Option(False, "--enforce-eager", help="No CUDA graphs."),
        fmt: str = typer.Option("text", "--format", "-f", metavar="text|json", help="Output format."),
    ) -> None:
        """Predict one step's GPU time (roofline calibrated on a measured H200), split into its parts."""
        typer.echo(run(model, gpu, batch, tp=tp, pp=pp, dtype=dtype, quantization=quantization,
                       kv_cache_dtype=kv_cache_dtype, enforce_eager=enforce_eager, fmt=fmt))


def parse_batch(text: str):
    """'prefill:2048@0,decode:64@2048' -> StepBatch. Errors name the bad item."""
    import numpy as np

    from reader.batch import StepBatch
    from reader.errors import ReaderError

    new, past, sampled = [], [], 0
    items = [t.strip() for t in (text or "").split(",") if t.strip()]
    if not items:
        raise ReaderError("--batch is empty", key="--batch", hint='Example: --batch "prefill:2048@0,decode:64@2048"')
    for item in items:
        try:
            kind, rest = item.split(":", 1)
            count_s, ctx_s = rest.split("@", 1)
            count, ctx = int(count_s), int(ctx_s)
            kind = kind.strip().lower()
            if count <= 0 or ctx < 0 or kind not in ("prefill", "decode"):
                raise ValueError
        except ValueError:
            raise ReaderError(f"bad --batch item '{item}': expected prefill:TOKENS@CONTEXT or decode:REQUESTS@CONTEXT "
                              "with positive counts", key="--batch") from None
        if kind == "prefill":
            new.append(count)
            past.append(ctx)
        else:
            new.extend([1] * count)
            past.extend([ctx] * count)
        sampled += 1 if kind == "prefill" else count
    return StepBatch(np.array(new, dtype=np.int64), np.array(past, dtype=np.int64), sampled)


def run(model: str, gpu: str, batch: str, *, tp: int = 1, pp: int = 1, dtype: str = "auto",
        quantization: str | None = None, kv_cache_dtype: str = "auto", enforce_eager: bool = False,
        fmt: str = "text") -> str:
    import json

    from reader.capacity.steptime import StepTimeModel
    from reader.catalog.load import get_gpu, get_model
    from reader.errors import ReaderError

    fmt = (fmt or "text").lower()
    if fmt not in FORMATS:
        raise ReaderError(f"unknown format '{fmt}': expected text or json", key="--format")
    step = parse_batch(batch)
    m, g = get_model(model), get_gpu(gpu)
    stm = StepTimeModel(m, g, tp=tp, pp=pp, quantization=quantization, dtype=dtype, kv_cache_dtype=kv_cache_dtype,
                        enforce_eager=enforce_eager, max_num_batched_tokens=max(8192, step.num_tokens))
    parts = stm.breakdown(step)
    if fmt == "json":
        return json.dumps({"model": m.id, "gpu": g.id, "tp": tp, "pp": pp, "weights": stm.wfmt.describe(),
                           "batch": {"requests": step.num_seqs, "tokens": step.num_tokens, "sampled": step.sampled},
                           "seconds": {k: v for k, v in parts.items() if k != "padded_tokens"},
                           "padded_tokens": int(parts["padded_tokens"]),
                           "calibration": "reader/calibration/profiles/h200-sxm.yaml (fitted on fixtures/gpu/h200-llama3-8b-steps.json)"},
                          indent=2)
    lines = [f"{m.id} on {g.id}, TP {tp} x PP {pp}, {stm.wfmt.describe()}",
             f"batch: {step.num_seqs} requests, {step.num_tokens} tokens ({int(parts['padded_tokens'])} after CUDA-graph "
             f"padding), {step.sampled} sampled", ""]
    total = parts["total"]
    for k in ("linear", "elementwise", "attention", "lm_head", "moe", "allreduce", "overhead"):
        if parts[k] or k in ("linear", "attention", "overhead"):
            lines.append(f"  {k:<12} {parts[k] * 1e3:9.3f} ms  {100 * parts[k] / total:5.1f}%")
    lines.append(f"  {'total':<12} {total * 1e3:9.3f} ms")
    return "\n".join(lines)
