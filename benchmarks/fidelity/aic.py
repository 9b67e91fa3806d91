"""Predict published vLLM silicon rows with NVIDIA aiconfigurator, for side-by-side error reporting.

Runs aiconfigurator's own single-point aggregated estimate (``aiconfigurator.cli.api.cli_estimate``,
``mode="agg"``, ``backend_name="vllm"``; the same entry point as ``aiconfigurator cli estimate``) on
every ``agg`` vLLM row of a silicon CSV (the column layout of aiconfigurator's ``silicon_sample.csv``)
whose load concurrency is at most ``--max-concurrency`` (64), and writes a JSON list of
``{"id", "ttft_ms", "tpot_ms", "note", "aic"}``. ``note`` is null when the row was predicted, else why
not (the prediction fields are then null); ``aic`` records what was actually asked of aiconfigurator.

aiconfigurator is an optional dependency of the benchmark only; run this with an environment that has it:

    /work/aic-venv/bin/python benchmarks/fidelity/aic.py ROWS.csv -o OUT.json

Per row:
  * concurrency = ``silicon_concurrency=N`` from ``silicon_data_source``, else ``batch_size``; the
    batch size given to aiconfigurator is concurrency / attention_dp_size (its agg batch is per
    attention-DP rank, as the row's own ``batch_size`` is);
  * parallel layout, isl, osl, gemm and MoE quant modes come from the row; everything the row is silent
    on (KV-cache / FMHA / comm quant, ctx-token budget = isl, max_seq_len = isl+osl, KV memory
    fraction) is left to aiconfigurator's defaults;
  * the row's vLLM version is tried first; aiconfigurator 0.12.0 only answers for its queryable
    database slots, so a rejected version falls back to the default (latest) vLLM database of that
    system, as NVIDIA's own tools/accuracy_regression_testing/predict_silicon_sample.py does;
  * a model id whose config the package does not ship (and cannot download offline) is retried with
    the shipped config of the same architecture listed in CONFIG_ALIASES (quant modes stay the row's).
Each estimate is guarded: a failure becomes a note on that row, never a crash.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import logging
import re
import sys
from pathlib import Path

RESERVED = {"openai/gpt-oss-120b", "MiniMaxAI/MiniMax-M2.5"}  # held-out models: never estimated here
# Same architecture, shipped in aiconfigurator_core/model_configs (HF renamed the 3.1 repos).
CONFIG_ALIASES = {
    "meta-llama/Llama-3.1-70B": "meta-llama/Meta-Llama-3.1-70B",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "meta-llama/Meta-Llama-3.1-8B",
}


def concurrency(row: dict) -> int | None:
    found = re.search(r"silicon_concurrency=(\d+)", row.get("silicon_data_source") or "")
    if found:
        return int(found.group(1))
    return int(row["batch_size"]) if (row.get("batch_size") or "").strip() else None


def _int(row: dict, key: str, default: int | None = None) -> int | None:
    value = (row.get(key) or "").strip()
    return int(float(value)) if value else default


class Estimator:
    """Calls aiconfigurator once per row, remembering versions and model ids it has rejected."""

    def __init__(self) -> None:
        from aiconfigurator.cli.api import cli_estimate
        from aiconfigurator.sdk.perf_database import get_latest_database_version

        self._estimate = cli_estimate
        self._latest = get_latest_database_version
        self._default_version: dict[str, str | None] = {}
        self._bad_versions: set[tuple[str, str]] = set()
        self._bad_models: set[str] = set()

    def default_version(self, system: str) -> str | None:
        # Resolving it once per system spares cli_estimate a slow metadata scan on every call.
        if system not in self._default_version:
            with contextlib.redirect_stdout(sys.stderr):
                self._default_version[system] = self._latest(system=system, backend="vllm")
        return self._default_version[system]

    def _call(self, model: str, version: str | None, kwargs: dict):
        with contextlib.redirect_stdout(sys.stderr):
            return self._estimate(model, backend_version=version, **kwargs)

    def run(self, row: dict, batch: int) -> tuple[object, dict]:
        system = row["system"]
        kwargs = dict(
            system_name=system, mode="agg", backend_name="vllm",
            isl=int(row["isl"]), osl=int(row["osl"]), batch_size=batch,
            tp_size=_int(row, "tp_size", 1), pp_size=_int(row, "pp_size", 1),
            attention_dp_size=_int(row, "attention_dp_size", 1),
            moe_tp_size=_int(row, "moe_tp_size"), moe_ep_size=_int(row, "moe_ep_size"),
            gemm_quant_mode=(row.get("gemm_quant_mode") or None),
            moe_quant_mode=(row.get("moe_quant_mode") or None),
        )
        model = row["model_path"]
        if model in self._bad_models and model in CONFIG_ALIASES:
            model = CONFIG_ALIASES[model]
        version = (row.get("backend_version") or "").strip() or None
        if version and (system, version) in self._bad_versions:
            version = None
        for _ in range(3):
            asked = version or self.default_version(system)
            try:
                result = self._call(model, asked, kwargs)
                return result, {"model": model, "db_version": asked, "row_version": row.get("backend_version") or None,
                                "batch_size": batch, "quant": {k: result.raw.get(k) for k in
                                                               ("gemm", "kvcache", "fmha", "moe", "comm")}}
            except Exception as err:  # noqa: BLE001 - retried once per cause, then reported
                text = f"{type(err).__name__}: {err}"
                if version and "version" in text.lower() and asked == version:
                    self._bad_versions.add((system, version))
                    version = None
                elif "HuggingFace" in text and model in CONFIG_ALIASES:
                    self._bad_models.add(model)
                    model = CONFIG_ALIASES[model]
                else:
                    raise
        raise RuntimeError("no estimate after retries")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=Path, help="silicon CSV (aiconfigurator silicon_sample.csv columns)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="JSON list written here")
    parser.add_argument("--max-concurrency", type=int, default=64)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # aiconfigurator logs every fallback table it loads

    with args.rows.open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle)
                if r.get("mode") == "agg" and (r.get("backend") or "vllm") == "vllm"
                and r.get("model_path") not in RESERVED]
    estimator = Estimator()
    out = []
    for index, row in enumerate(rows):
        conc = concurrency(row)
        if conc is None or conc > args.max_concurrency:
            continue
        record = {"id": row["id"], "ttft_ms": None, "tpot_ms": None, "note": None, "aic": None}
        dp = _int(row, "attention_dp_size", 1) or 1
        if conc % dp:
            record["note"] = f"concurrency {conc} not divisible by attention_dp_size {dp}"
        else:
            try:
                result, asked = estimator.run(row, conc // dp)
                record["ttft_ms"], record["tpot_ms"] = float(result.ttft), float(result.tpot)
                if result.kv_cache_warning:
                    asked["kv_cache_warning"] = result.kv_cache_warning
                record["aic"] = asked
            except Exception as err:  # noqa: BLE001 - one bad row must not stop the run
                record["note"] = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
        out.append(record)
        print(f"[{index + 1}/{len(rows)}] {row['id']}: "
              f"{record['note'] or '%.1f ms / %.2f ms' % (record['ttft_ms'], record['tpot_ms'])}",
              file=sys.stderr, flush=True)
    args.output.write_text(json.dumps(out, indent=1) + "\n")
    done = sum(r["note"] is None for r in out)
    print(f"{done} of {len(out)} rows predicted -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
