"""Published real-vLLM serving runs: the vLLM rows of NVIDIA aiconfigurator's `silicon_sample.csv` layout.

A row is one aggregated vLLM deployment (model, GPU, TP / attention-DP / EP, weight format, release) measured
closed loop at a fixed concurrency with fixed input and output lengths: its mean TTFT and mean TPOT (columns
`silicon_ttft_ms`, `silicon_tpot_ms`). The file gives no serving settings; what a replay assumes in their
place is in ASSUMED. Disaggregated rows (`mode` disagg) are left out: one aggregated engine is what vllm-reader
simulates.
"""
from __future__ import annotations

import csv
import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import ReaderError
from ..calibration.profile import read_input

GPU_OF = {"h100_sxm": "H100-SXM", "h200_sxm": "H200-SXM", "b200_sxm": "B200", "b300_sxm": "B300",
          "a100_sxm": "A100-80GB-SXM", "l40s": "L40S"}

# The checkpoint a row was served from: its model path, or (fp4 / fp8 rows of a base model path) the
# published checkpoint of that format; the second item is the --quantization a replay passes (None: the
# checkpoint's own). nvidia/Llama-3.1-8B-Instruct-FP8 is a ModelOpt FP8 export of Llama-3.1-8B-Instruct:
# every linear layer but the LM head in fp8, as `--quantization fp8` over the 16-bit shape.
CHECKPOINT = {
    ("meta-llama/Llama-3.1-70B", "fp8"): ("nvidia/Llama-3.1-70B-Instruct-FP8", None),
    ("meta-llama/Llama-3.1-70B", "fp4"): ("meta-llama/Llama-3.1-70B", "modelopt_fp4"),
    ("moonshotai/Kimi-K2.5", "fp4"): ("nvidia/Kimi-K2.5-NVFP4", None),
    ("moonshotai/Kimi-K2.5", "int4"): ("moonshotai/Kimi-K2.5", None),
    ("Qwen/Qwen3-32B", "fp8"): ("Qwen/Qwen3-32B-FP8", None),
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "fp8"): ("meta-llama/Llama-3.1-8B", "fp8"),
}

PROMPTS_PER_CLIENT = 10  # measured requests per client

# What a replay assumes where the source is silent.
ASSUMED = {
    "release": "0.12.0 where the row names none (the release of the other rows of that collection)",
    "serving settings": "vLLM's defaults for the release, GPU and usage (max_num_seqs, max_num_batched_tokens, "
                        "chunked prefill, prefix caching: random prompts share no prefix)",
    "kv_cache_dtype": "auto (the checkpoint's dtype)",
    "max_model_len": "input + output length rounded up to 1,024 tokens",
    "gpu_memory_utilization": "0.9 (vLLM's default)",
    "client": f"AIPerf closed loop, {PROMPTS_PER_CLIENT} measured requests per client (aiconfigurator's own "
              "benchmark recipe uses aiperf with 2 x concurrency warm-up requests; the source does not name its "
              "client). AIPerf waits for every warm-up response before its profiling phase starts (its warm-up "
              "guide, 'Grace Period'), so the warm-up is not replayed: the engine is idle when the measured "
              "requests begin",
    "send schedule": "the profiling phase's first wave leaves at once (every client sends together, so its "
                     "prompts queue for the token budget) and is measured; once that wave has finished (a replay of "
                     "the wave alone says when), later requests leave as a Poisson stream at the rate the clients "
                     "complete them (clients / a request's lifetime: the wave's decode plus a lone prefill), capped "
                     "at the concurrency: the clients' phases spread as a desynchronised closed loop's do. Later "
                     "waves in lock-step are ruled out by the measured TTFTs (at 4 clients a lock-step prefill of "
                     "4 x 1,024 tokens of Llama-3.1-70B FP8 on 1 x B200 needs 128 ms at the FP8 datasheet peak; "
                     "122 ms was measured, the first wave included; at 16 clients on 1,024 x 1,024 runs a stream "
                     "started before the wave had finished queued behind the clients and left in bunches of 8, "
                     "predicting 353 ms against 199 ms measured)",
    "layout": "the deployment a row's id names (`_tp4_ep4_`) where its columns say otherwise, and every copy of one "
              "measurement read alike (_one_layout_per_measurement)",
    "data parallel": "an attention-DP row is one engine per DP rank with its share of the clients: one rank "
                     "is replayed",
}


@dataclass(frozen=True)
class PublishedRun:
    """One published measurement and the deployment it was measured on."""

    label: str
    model: str  # the checkpoint replayed (catalog id)
    quantization: Optional[str]
    source_model: str
    gpu: str
    precision: str
    tp: int
    dp: int
    ep: bool
    release: str
    release_assumed: bool
    isl: int
    osl: int
    concurrency: int  # clients in all (over every DP rank)
    ttft_ms: float
    tpot_ms: float

    @property
    def gpus(self) -> int:
        return self.tp * self.dp

    @property
    def clients_per_engine(self) -> int:
        return max(1, self.concurrency // self.dp)

    @property
    def max_model_len(self) -> int:
        return int(math.ceil((self.isl + self.osl) / 1024.0) * 1024)

    @property
    def weight_format(self) -> str:
        return self.precision or "bf16"

    @property
    def layout(self) -> str:
        return f"TP{self.tp}" + (f"xDP{self.dp}" if self.dp > 1 else "") + ("+EP" if self.ep else "")

    def command(self) -> str:
        """The `vllm serve` line a replay reads (one engine)."""
        parts = ["vllm serve", self.model, f"--tensor-parallel-size {self.tp}", f"--max-model-len {self.max_model_len}"]
        if self.dp > 1:
            parts.append(f"--data-parallel-size {self.dp}")
        if self.ep:
            parts.append("--enable-expert-parallel")
        if self.quantization:
            parts.append(f"--quantization {self.quantization}")
        return " ".join(parts)

    def workload(self, rate: float) -> dict:
        """One engine's measured load: PROMPTS_PER_CLIENT requests per client, of fixed lengths, sent at `rate`
        requests per second while fewer than the clients are in flight (the first wave: profiling_phase)."""
        clients = self.clients_per_engine
        return {"num_requests": PROMPTS_PER_CLIENT * clients, "seed": 0,
                "arrival": {"process": "poisson", "rate": rate, "concurrency": clients},
                "prompt_len": {"dist": "fixed", "value": self.isl},
                "output_len": {"dist": "fixed", "value": self.osl}}


_COLUMNS = ("id", "silicon_data_source", "backend", "backend_version", "model_path", "system", "precision", "mode",
            "isl", "osl", "batch_size", "tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size", "silicon_ttft_ms",
            "silicon_tpot_ms")


def read_published(path: str | Path, max_concurrency: Optional[int] = None) -> list[PublishedRun]:
    """The aggregated vLLM rows of a silicon_sample.csv-layout file (at most max_concurrency clients)."""
    text = read_input(path, "the published runs")
    rows = list(csv.DictReader(text.splitlines()))
    missing = [c for c in _COLUMNS if rows and c not in rows[0]]
    if not rows or missing:
        raise ReaderError(f"not a published-runs file (aiconfigurator silicon_sample.csv layout): column "
                          f"'{missing[0] if missing else 'id'}' is missing.", file=str(path))
    runs = [_run(row, str(path), line) for line, row in enumerate(rows, start=2)
            if row["mode"] == "agg" and row["backend"] == "vllm"]
    return [r for r in _one_layout_per_measurement(runs) if max_concurrency is None or r.concurrency <= max_concurrency]


def _named_layout(label: str) -> Optional[tuple[int, int, bool]]:
    """(tp, dp, ep) where a row's id names its deployment (`_tp4_ep4_`, `_tp8_0_ep1_0_`): GPUs beyond the TP
    group in the EP size are data-parallel ranks."""
    m = re.search(r"_tp(\d+)(?:_0)?_ep(\d+)(?:_0)?_", label)
    if not m:
        return None
    tp, ep = int(m.group(1)), int(m.group(2))
    if tp < 1:  # no deployment: the columns say what the row ran
        return None
    return tp, max(1, ep // tp), ep > 1


def _one_layout_per_measurement(runs: list[PublishedRun]) -> list[PublishedRun]:
    """Runs that repeat one measurement (several collections copy the same run: equal lengths, clients, TTFT and
    TPOT) read with the deployment the ids name: Kimi-K2.5 NVFP4 on B200 is named tp4_ep4 by its gap-analysis
    and 2026-04-06 rows, whose values the config-635 rows repeat with the columns of 4 attention-DP ranks of TP4
    (16 GPUs, EP 16); one run cannot have been both, and the ids are what the collections agree on."""
    own = [_named_layout(r.label) for r in runs]
    named: dict[tuple, tuple[int, int, bool]] = {}
    for r, layout in zip(runs, own):
        if layout is not None:
            named.setdefault(_measurement(r), layout)
    out = []
    for r, layout in zip(runs, own):
        layout = layout or named.get(_measurement(r))
        if layout is not None and layout != (r.tp, r.dp, r.ep):
            r = dataclasses.replace(r, tp=layout[0], dp=layout[1], ep=layout[2])
        out.append(r)
    return out


def _measurement(r: PublishedRun) -> tuple:
    return (r.source_model, r.gpu, r.precision, r.isl, r.osl, r.concurrency, round(r.ttft_ms, 2), round(r.tpot_ms, 2))


def _run(row: dict, file: str, line: int) -> PublishedRun:
    key = (row["model_path"], row["precision"])
    model, quant = CHECKPOINT.get(key, (row["model_path"], None))
    release, assumed = _release(row)
    try:
        return PublishedRun(
            label=row["id"], model=model, quantization=quant, source_model=row["model_path"],
            gpu=GPU_OF.get(row["system"], row["system"]), precision=row["precision"], tp=int(row["tp_size"]),
            dp=_data_parallel(row), ep=int(row["moe_ep_size"] or 1) > 1, release=release,
            release_assumed=assumed, isl=int(row["isl"]), osl=int(row["osl"]), concurrency=_concurrency(row),
            ttft_ms=float(row["silicon_ttft_ms"]), tpot_ms=float(row["silicon_tpot_ms"]))
    except ValueError as err:
        raise ReaderError(f"published run '{row['id']}' has a value that is not a number ({err}).", file=file,
                          line=line) from None


def _data_parallel(row: dict) -> int:
    """Engines (attention data-parallel ranks). A row whose MoE layers span more GPUs than its attention TP
    (tp 1, moe_tp 4) ran vLLM's data parallelism, whose MoE layers shard over every rank of every engine."""
    tp = int(row["tp_size"])
    dp = max(int(row["attention_dp_size"] or 1), 1)
    moe_gpus = max(int(row.get("moe_tp_size") or 1), 1) * max(int(row["moe_ep_size"] or 1), 1)
    return max(dp, moe_gpus // tp if moe_gpus > tp * dp else dp)


def _concurrency(row: dict) -> int:
    """Clients in all: `silicon_concurrency=N` in the source column, else the row id's `_cN_`, else batch_size
    (which is per attention-DP rank in some rows)."""
    m = re.search(r"silicon_concurrency=(\d+)", row["silicon_data_source"]) or re.search(r"_c(\d+)_", row["id"])
    return int(m.group(1)) if m else int(row["batch_size"])


def _release(row: dict) -> tuple[str, bool]:
    m = (re.match(r"v?(\d+\.\d+\.\d+)", row["backend_version"].strip())
         or re.search(r"vllm-openai:v(\d+\.\d+\.\d+)", row["silicon_data_source"]))
    return (m.group(1), False) if m else ("0.12.0", True)


@dataclass(frozen=True)
class Replayed:
    """A run's replay: its mean TTFT and TPOT (ms), or why it has none."""

    ttft_ms: Optional[float]
    tpot_ms: Optional[float]
    output_tok_s: Optional[float]
    note: str = ""


def resolve_run(run: PublishedRun, calibration=None, calibration_path: Optional[str] = None):
    """The run's deployment, read from its `vllm serve` line as a user's config is."""
    from ..config.context import LoadOptions
    from ..config.load import load_command_line
    from ..config.resolve import resolve

    if calibration is None and calibration_path:
        from ..calibration.profile import load_profile
        calibration = load_profile(calibration_path)
    options = LoadOptions(vllm_version=run.release, gpu=run.gpu, gpu_count=run.gpus)
    return resolve(load_command_line(run.command(), options), calibration=calibration,
                   calibration_path=calibration_path)


def replay(run: PublishedRun, calibration=None, calibration_path: Optional[str] = None) -> Replayed:
    """The run replayed by the simulator with its deployment's own capacity and scheduler settings."""
    try:
        sc = replay_scenario(run, resolve_run(run, calibration, calibration_path))
    except ReaderError as exc:
        return Replayed(None, None, None, f"not read: {exc.message}")
    if not sc.starts:
        return Replayed(None, None, None, f"vLLM would not start: {sc.capacity.startup_error.message}")
    result = sc.run(keep_requests=True)
    return _measured_means(result.requests, result.output_throughput)


def replay_scenario(run: PublishedRun, resolved):
    """The scenario that replays the run's profiling phase (profiling_phase, started as its first wave ends);
    where vLLM would not start, the first wave's scenario, which says why."""
    import numpy as np

    from ..sim.api import load_workload, make_workload

    c = run.clients_per_engine
    spec = load_workload(dict(run.workload(1.0), num_requests=c))
    generated = make_workload(spec, spec.seed)
    wave = _scenario(resolved, spec, dataclasses.replace(generated, arrival=np.zeros_like(generated.arrival)))
    if not wave.starts:
        return wave
    start, rate = _after_first_wave(run, wave)
    spec = load_workload(run.workload(rate))
    return _scenario(resolved, spec, profiling_phase(make_workload(spec, spec.seed), c, rate, start))


def _scenario(resolved, spec, generated):
    from ..diagnose.scenario import build_scenario

    return build_scenario(resolved, spec=spec, generated=generated)


def _after_first_wave(run: PublishedRun, wave) -> tuple[float, float]:
    """When the first wave's clients are free again and the rate they then complete requests at, from a replay of
    that wave alone: the steady stream starts as the wave finishes, at the pace of its decode (ASSUMED, 'send
    schedule'). An estimate from step times alone misjudged a request's lifetime by up to 40%, and a stream
    that starts before the wave is done piles up behind the clients and leaves in lock-step bursts."""
    import numpy as np

    c = run.clients_per_engine
    q = wave.run(keep_requests=True).requests
    done = [i for i in range(c) if q.finish_s[i] is not None and q.first_token_s[i] is not None]
    if not done:  # a wave that never finishes: the stream follows the step-time estimate
        rate = completion_rate(run, wave.step_time)
        return c / rate, rate
    finish = float(np.median([q.finish_s[i] for i in done]))
    decode = float(np.median([q.finish_s[i] - q.first_token_s[i] for i in done]))
    return finish, c / max(decode + lone_prefill_s(run, wave.step_time), 1e-6)


def completion_rate(run: PublishedRun, step_time) -> float:
    """Requests per second one engine's clients complete in steady state: clients / (a lone prefill + the output's
    decode steps at full concurrency)."""
    import numpy as np

    from ..batch import StepBatch

    c, mid = run.clients_per_engine, run.isl + run.osl // 2
    decode = step_time(StepBatch(np.ones(c, np.int64), np.full(c, mid, np.int64), c))
    return c / max(lone_prefill_s(run, step_time) + run.osl * decode, 1e-6)


def lone_prefill_s(run: PublishedRun, step_time) -> float:
    """GPU seconds of one request's prompt in a step of its own."""
    import numpy as np

    from ..batch import StepBatch

    return step_time(StepBatch(np.array([run.isl]), np.array([0]), 1))


def profiling_phase(generated, clients: int, rate: float, start: Optional[float] = None):
    """The measured requests' send times: the profiling phase starts once the warm-up has drained, so every
    client sends its first request at once; later requests leave as a Poisson stream at the clients' completion
    rate from `start` on (by default one request lifetime at that rate; the phases a desynchronised closed loop
    settles into; ASSUMED)."""
    arrival = generated.arrival.copy()
    if arrival.size > clients:
        first = clients / rate if start is None else start
        arrival[clients:] = first + arrival[clients:] - arrival[clients]
    arrival[:clients] = 0.0
    return dataclasses.replace(generated, arrival=arrival)


def _measured_means(q, output_tok_s: float) -> Replayed:
    """Mean TTFT and TPOT (ms) over every request of the profiling phase, as the client reports them."""
    import numpy as np

    keep = [i for i in range(len(q.send_time_s)) if q.finish_s[i] is not None and q.send_time_s[i] is not None]
    if not keep:
        return Replayed(None, None, None, "no measured request finished")
    ttft = [q.first_token_s[i] - q.send_time_s[i] for i in keep]
    tpot = [(q.finish_s[i] - q.first_token_s[i]) / (q.output_tokens[i] - 1) for i in keep if q.output_tokens[i] > 1]
    return Replayed(1e3 * float(np.mean(ttft)), 1e3 * float(np.mean(tpot)) if tpot else None, output_tok_s)
