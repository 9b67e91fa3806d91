"""`read_log(text) -> LogReading`: every fact a vLLM log states, whatever its release and wrapping."""
from __future__ import annotations

import re
from datetime import datetime
from typing import Callable, Optional

from ..versions import parse_version
from .lines import LogLine, records
from .patterns import FORMATS, release_range
from .reading import (Figure, LoggedValues, LogReading, Refusal, StatsSample, WorkerMemory)
from .values import parse_assignments, parse_mapping

# Lines only a server that finished starting prints.
_STARTED = re.compile(r"Starting vLLM (?:API )?server|Application startup complete|init engine \(profile, create kv "
                      r"cache, warmup model\) took|Avg prompt throughput")
_DEVICE_NAME = re.compile(r"device_name=NVIDIA_([A-Za-z0-9_\-]+?)(?:,|\.json)|\bNVIDIA_([A-Z][A-Za-z0-9_\-]+?)\.json")
# "Automatically detected platform cpu." (vllm/platforms/__init__.py), or the engine config's device_config=cpu.
_PLATFORM = re.compile(r"detected platform (\w+)|\bdevice_config=(\w+)")
_NAMESPACE_FRAGMENT = re.compile(r"(?:^|, )(?:max_num_seqs|gpu_memory_utilization|tensor_parallel_size|"
                                 r"max_model_len|enable_prefix_caching)=")
_SHORT = 160


def read_log(text: str, source: str = "<log>") -> LogReading:
    state = _State(LogReading(source=source, records=0, recognised=0))
    for record in records(text):
        state.reading.records += 1
        state.take(record)
    return state.finish()


class _State:
    def __init__(self, reading: LogReading):
        self.reading = reading
        self.workers: dict[str, WorkerMemory] = {}
        self.first_stamp: Optional[datetime] = None
        self.handlers: dict[str, Callable[[LogLine, re.Match], None]] = {
            "engine_config": self._engine_config, "server_version": self._version, "banner_version": self._version,
            "namespace_args": self._namespace, "non_default_args": self._non_default,
            "command_line": self._command, "max_model_len": self._resolved_int("max_model_len"),
            "chunked_prefill": self._resolved_int("max_num_batched_tokens"),
            "num_blocks_override": self._override,
            "weights_gb": self._weights, "weights_v1": self._weights,
            "profile_oneline": self._profile_oneline, "profile_total": self._profile_total,
            "profile_breakdown": self._profile_breakdown,
            "profile_table_total": self._worker_figure("total", "GiB"),
            "profile_table_util": self._worker_figure("utilization", "fraction"),
            "profile_table_weights": self._worker_figure("weights", "GiB"),
            "profile_table_non_torch": self._worker_figure("non_torch", "GiB"),
            "profile_table_activation": self._worker_figure("activation_peak", "GiB"),
            "profile_table_kv": self._worker_figure("available_kv", "GiB"),
            "blocks_v0": self._blocks_v0, "blocks_v1_early": self._blocks_v1, "cache_config_blocks": self._blocks_v1,
            "available_kv": self._worker_figure("available_kv", "GiB"), "kv_tokens": self._kv_tokens,
            "max_concurrency": self._concurrency, "graph_capture": self._graph_capture,
            "cudagraph_pool": self._cudagraph_pool, "memory_summary": self._memory_summary,
            "kv_memory_given": self._kv_memory_given, "cpu_kv_space": self._cpu_kv_space,
            "refusal_max_len_v1": self._refusal_max_len_v1, "refusal_max_len_v0": self._refusal_max_len_v0,
            "refusal_no_kv_memory": self._refusal_simple("no_kv_memory"),
            "refusal_free_memory": self._refusal_free_memory, "refusal_oom": self._refusal_oom,
            "refusal_other": self._refusal_other, "refusal_engine_failed": self._engine_failed,
            "stats_v1": self._stats_v1, "stats_v0": self._stats_v0, "preempted_v0": self._preempted,
        }

    # ---- dispatch --------------------------------------------------------------------------------

    def take(self, line: LogLine) -> None:
        r = self.reading
        if line.stamp is not None and line.where is not None:
            r.headers += 1
        if line.role and line.role not in r.processes:
            r.processes.append(line.role)
        matched = False
        for fmt in FORMATS:
            m = fmt.regex.search(line.text)
            if m is None:
                continue
            if fmt.name.startswith("refusal") and line.level == "WARNING":
                continue  # a handled error quoted in a warning's traceback, not a refusal
            if fmt.name == "refusal_other" and (matched or r.refusal is not None):
                continue
            matched = True
            if fmt.name not in r.formats:
                r.formats.append(fmt.name)
            self.handlers[fmt.name](line, m)
        if not matched and r.args is None and _NAMESPACE_FRAGMENT.search(line.text) and line.text.count("=") >= 5:
            matched = self._namespace_fragment(line)
        if _STARTED.search(line.text):
            r.started = True
        self._platform(line)
        name = _DEVICE_NAME.search(line.text)
        if name and r.gpu_name is None:
            r.gpu_name, r.gpu_name_line = (name.group(1) or name.group(2)).replace("_", " "), line.number
        if matched:
            r.recognised += 1

    def _platform(self, line: LogLine) -> None:
        m = _PLATFORM.search(line.text) if self.reading.platform is None else None
        named = (m.group(1) or m.group(2)).lower() if m else None
        if named and named not in ("auto", "none"):
            self.reading.platform = named
            self.reading.platform_how = f"'{m.group(0)}' (line {line.number})"

    def finish(self) -> LogReading:
        r = self.reading
        r.workers = sorted(self.workers.values(), key=_worker_order)
        if r.release is None:
            allowed = release_range(set(r.formats))
            if allowed is not None and (allowed.low or allowed.high):
                r.release_range = str(allowed)
        if r.engine is None:
            engines = {fmt.engine for fmt in FORMATS if fmt.name in r.formats and fmt.engine}
            if len(engines) == 1:
                r.engine = engines.pop()
                r.engine_how = "from the message formats only that engine prints"
        if r.refusal is not None and r.started and r.refusal.kind == "other":
            r.refusal = None  # an error the server survived
        _note_gaps(r)
        return r

    # ---- arguments and config --------------------------------------------------------------------

    def _engine_config(self, line: LogLine, m: re.Match) -> None:
        r = self.reading
        label, printed, body = m.group(1), m.group(2).strip(), m.group(3)
        if r.engine is None:
            r.engine = "v1" if label == "V1" else "v0"
            r.engine_how = f"'Initializing {'a ' + label if label else 'an'} LLM engine' (line {line.number})"
        self._set_release(printed, line.number)
        kv = parse_assignments(body)
        r.engine_config = LoggedValues(values=kv.values, line=line.number, form="engine config",
                                       truncated=kv.truncated, dropped=kv.dropped[:_SHORT])

    def _version(self, line: LogLine, m: re.Match) -> None:
        self._set_release(m.group(1), line.number)

    def _set_release(self, printed: str, number: int) -> None:
        r = self.reading
        try:
            version = parse_version(printed)
        except ValueError:
            r.notes.append(f"line {number}: the release is printed as '{printed}', which names no version")
            return
        text = f"{version[0]}.{version[1]}.{version[2]}"
        if r.release is None:
            r.release, r.release_printed, r.release_line = text, printed, number
        elif r.release != text:
            r.notes.append(f"line {number} says vLLM {printed} but line {r.release_line} said {r.release_printed}: "
                           "two releases in one log (several runs pasted together?); the first is used")

    def _command(self, line: LogLine, m: re.Match) -> None:
        if self.reading.command is None and not line.has_header:
            self.reading.command, self.reading.command_line = m.group(1), line.number

    def _non_default(self, line: LogLine, m: re.Match) -> None:
        if self.reading.args is not None and self.reading.args.form == "non-default args":
            return
        kv = parse_mapping(m.group(1))
        self.reading.args = LoggedValues(values=kv.values, line=line.number, form="non-default args",
                                         truncated=kv.truncated, dropped=kv.dropped[:_SHORT])

    def _namespace(self, line: LogLine, m: re.Match) -> None:
        if self.reading.args is not None:
            return
        kv = parse_assignments(m.group(1), closer=")")
        self.reading.args = LoggedValues(values=kv.values, line=line.number, form="args Namespace",
                                         truncated=kv.truncated, dropped=kv.dropped[:_SHORT])

    def _namespace_fragment(self, line: LogLine) -> bool:
        """A piece of an args Namespace whose start was cut off: its complete items are still the args."""
        kv = parse_assignments(line.text.split(", ", 1)[-1], closer=")")  # the first item is cut mid-word
        if len(kv.values) < 5:
            return False
        self.reading.args = LoggedValues(values=kv.values, line=line.number, form="args Namespace", truncated=True,
                                         dropped=kv.dropped[:_SHORT])
        self.reading.notes.append(f"line {line.number}: a piece of an args Namespace whose start is cut off; "
                                  "only its complete items are read")
        if "args_fragment" not in self.reading.formats:
            self.reading.formats.append("args_fragment")
        return True

    def _resolved_int(self, name: str) -> Callable[[LogLine, re.Match], None]:
        def handle(line: LogLine, m: re.Match) -> None:
            self.reading.resolved.setdefault(name, Figure(value=int(m.group(1)), unit="tokens", line=line.number,
                                                          text=_short(line.text)))
        return handle

    def _override(self, line: LogLine, m: re.Match) -> None:
        self.reading.resolved["num_gpu_blocks_override"] = Figure(value=int(m.group(2)), unit="blocks",
                                                                  line=line.number, text=_short(line.text))

    # ---- memory ------------------------------------------------------------------------------------

    def _worker(self, line: LogLine) -> WorkerMemory:
        key = _worker_key(line)
        if key not in self.workers:
            self.workers[key] = WorkerMemory(worker=key)
        return self.workers[key]

    def _set(self, line: LogLine, field: str, value: float, unit: str) -> None:
        worker = self._worker(line)
        if getattr(worker, field) is None:
            setattr(worker, field, Figure(value=value, unit=unit, line=line.number, text=_short(line.text)))

    def _worker_figure(self, field: str, unit: str) -> Callable[[LogLine, re.Match], None]:
        def handle(line: LogLine, m: re.Match) -> None:
            self._set(line, field, float(m.group(1)), unit)
        return handle

    def _weights(self, line: LogLine, m: re.Match) -> None:
        self._set(line, "weights", float(m.group(1)), "GiB")  # vLLM divides by 2**30 even where it prints "GB"

    def _profile_oneline(self, line: LogLine, m: re.Match) -> None:
        total, initial, peak_torch, _, non_torch, kv, util = (float(x) for x in m.groups())
        weights = self._worker(line).weights
        self._set(line, "total", total, "GiB")
        self._set(line, "utilization", util, "fraction")
        self._set(line, "non_torch", non_torch, "GiB")
        self._set(line, "available_kv", kv, "GiB")
        if weights is not None:  # 0.6.4's torch peak counts the weights too
            self._set(line, "activation_peak", round(peak_torch - weights.value, 4), "GiB")

    def _profile_total(self, line: LogLine, m: re.Match) -> None:
        self._set(line, "total", float(m.group(1)), "GiB")
        self._set(line, "utilization", float(m.group(2)), "fraction")
        self._set(line, "requested", float(m.group(3)), "GiB")

    def _profile_breakdown(self, line: LogLine, m: re.Match) -> None:
        weights, non_torch, activation, kv = m.groups()
        self._set(line, "weights", float(weights), "GiB")
        self._set(line, "non_torch", float(non_torch), "GiB")
        self._set(line, "activation_peak", float(activation), "GiB")
        if kv is not None:  # a cut paste may stop before it
            self._set(line, "available_kv", float(kv), "GiB")

    def _memory_summary(self, line: LogLine, m: re.Match) -> None:
        free, total, util, requested, consumed, peak, graphs, kv = (float(x) for x in m.groups())
        for field, value, unit in (("free_at_start", free, "GiB"), ("total", total, "GiB"),
                                   ("utilization", util, "fraction"), ("requested", requested, "GiB"),
                                   ("consumed", consumed, "GiB"), ("activation_peak", peak, "GiB"),
                                   ("cudagraph", graphs, "GiB"), ("available_kv", kv, "GiB")):
            self._set(line, field, value, unit)

    def _kv_memory_given(self, line: LogLine, m: re.Match) -> None:
        self._set(line, "free_at_start", float(m.group(1)), "GiB")
        self._set(line, "available_kv", float(m.group(2)), "GiB")
        self.reading.resolved["kv_cache_memory_bytes"] = Figure(value=float(m.group(2)), unit="GiB",
                                                                line=line.number, text=_short(line.text))

    def _cpu_kv_space(self, line: LogLine, m: re.Match) -> None:
        self._set(line, "available_kv", float(m.group(1)), "GiB")
        self._set(line, "total", float(m.group(2)), "GiB")
        self.reading.kv.device = "CPU"
        if self.reading.platform is None:
            self.reading.platform, self.reading.platform_how = "cpu", f"the CPU KV cache space (line {line.number})"

    def _graph_capture(self, line: LogLine, m: re.Match) -> None:
        self._set(line, "cudagraph", float(m.group(2)), "GiB")

    def _cudagraph_pool(self, line: LogLine, m: re.Match) -> None:
        self._set(line, "cudagraph", float(m.group(1)), "GiB")
        self._set(line, "cudagraph_estimate", float(m.group(2)), "GiB")

    def _blocks_v0(self, line: LogLine, m: re.Match) -> None:
        kv = self.reading.kv
        kv.num_gpu_blocks = kv.num_gpu_blocks or Figure(value=int(m.group(1)), unit="blocks", line=line.number,
                                                        text=_short(line.text))
        kv.num_cpu_blocks = kv.num_cpu_blocks or Figure(value=int(m.group(2)), unit="blocks", line=line.number,
                                                        text=_short(line.text))

    def _blocks_v1(self, line: LogLine, m: re.Match) -> None:
        kv = self.reading.kv
        kv.num_gpu_blocks = kv.num_gpu_blocks or Figure(value=int(m.group(1)), unit="blocks", line=line.number,
                                                        text=_short(line.text))

    def _kv_tokens(self, line: LogLine, m: re.Match) -> None:
        kv = self.reading.kv
        kv.device = m.group(1)
        kv.kv_tokens = kv.kv_tokens or Figure(value=int(m.group(2).replace(",", "")), unit="tokens",
                                              line=line.number, text=_short(line.text))

    def _concurrency(self, line: LogLine, m: re.Match) -> None:
        kv = self.reading.kv
        if kv.max_concurrency is None:
            kv.concurrency_for_len = int(m.group(1).replace(",", ""))
            kv.max_concurrency = Figure(value=float(m.group(2)), unit="x", line=line.number, text=_short(line.text))
            self.reading.resolved.setdefault("max_model_len", Figure(value=kv.concurrency_for_len, unit="tokens",
                                                                     line=line.number, text=_short(line.text)))

    # ---- refusals ----------------------------------------------------------------------------------

    def _refuse(self, refusal: Refusal) -> None:
        if self.reading.refusal is None or self.reading.refusal.kind == "other":
            self.reading.refusal = refusal

    def _refusal_max_len_v1(self, line: LogLine, m: re.Match) -> None:
        est = m.group(4)
        self._refuse(Refusal(kind="max_len_too_long", message=_error_text(line.text), line=line.number,
                             max_model_len=int(m.group(1)), needed_gib=float(m.group(2)),
                             available_gib=float(m.group(3)), estimated_max_model_len=int(est) if est else None))
        self._set(line, "available_kv", float(m.group(3)), "GiB")  # the refusal states what was available
        self._resolved_int("max_model_len")(line, m)

    def _refusal_max_len_v0(self, line: LogLine, m: re.Match) -> None:
        self._refuse(Refusal(kind="max_len_too_long", message=_error_text(line.text), line=line.number,
                             max_model_len=int(m.group(1)), kv_tokens=int(m.group(2))))
        self._resolved_int("max_model_len")(line, m)
        kv = self.reading.kv  # the refusal states how many tokens the cache holds
        kv.kv_tokens = kv.kv_tokens or Figure(value=int(m.group(2)), unit="tokens", line=line.number,
                                              text=_short(line.text))

    def _refusal_simple(self, kind: str) -> Callable[[LogLine, re.Match], None]:
        def handle(line: LogLine, m: re.Match) -> None:
            self._refuse(Refusal(kind=kind, message=_error_text(line.text), line=line.number))
        return handle

    def _refusal_free_memory(self, line: LogLine, m: re.Match) -> None:
        free, total, util, requested = (float(x) for x in m.groups())
        self._refuse(Refusal(kind="free_memory", message=_error_text(line.text), line=line.number, free_gib=free,
                             total_gib=total, utilization=util, requested_gib=requested))

    def _refusal_oom(self, line: LogLine, m: re.Match) -> None:
        self._refuse(Refusal(kind="oom", message=_error_text(line.text), line=line.number,
                             error_type="OutOfMemoryError"))

    def _refusal_other(self, line: LogLine, m: re.Match) -> None:
        if line.level not in (None, "ERROR", "CRITICAL"):
            return
        if self.reading.refusal is None:
            self.reading.refusal = Refusal(kind="other", message=_error_text(line.text), line=line.number,
                                           error_type=m.group(1))

    def _engine_failed(self, line: LogLine, m: re.Match) -> None:
        if self.reading.refusal is None:
            self.reading.refusal = Refusal(kind="other", line=line.number, error_type="RuntimeError",
                                           message=f"{m.group(0)} (the cause is not in this part of the log)")

    # ---- serving -----------------------------------------------------------------------------------

    def _seconds(self, line: LogLine) -> Optional[float]:
        if line.stamp is None:
            return None
        try:
            stamp = datetime.strptime("2000-" + line.stamp, "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return None
        if self.first_stamp is None:
            self.first_stamp = stamp
        return (stamp - self.first_stamp).total_seconds()

    def _stats_v1(self, line: LogLine, m: re.Match) -> None:
        engine, prompt, gen, running, waiting, usage, hit = m.groups()
        self.reading.stats.append(StatsSample(
            line=line.number, seconds=self._seconds(line), engine=int(engine) if engine else None,
            prompt_tps=float(prompt), generation_tps=float(gen), running=int(running), waiting=int(waiting),
            kv_usage_pct=float(usage), prefix_hit_pct=float(hit) if hit is not None else None))

    def _stats_v0(self, line: LogLine, m: re.Match) -> None:
        prompt, gen, running, swapped, pending, usage, _ = m.groups()
        self.reading.stats.append(StatsSample(
            line=line.number, seconds=self._seconds(line), prompt_tps=float(prompt), generation_tps=float(gen),
            running=int(running), waiting=int(pending), swapped=int(swapped), kv_usage_pct=float(usage)))

    def _preempted(self, line: LogLine, m: re.Match) -> None:
        p = self.reading.preemptions
        p.warnings += 1
        p.cumulative = max(p.cumulative, int(m.group(3)))
        p.mode = p.mode or m.group(2)
        p.first_line = p.first_line or line.number


def _worker_key(line: LogLine) -> str:
    """Workers by their tag without the pid: 'Worker_TP1', 'VllmWorker rank=1'; the driver is 'main'."""
    if not line.process:
        return "main"
    role, _, rest = line.process.partition(" ")
    rank = re.search(r"rank=(\d+)", rest)
    if role in ("APIServer", "EngineCore", "EngineCore_0", "EngineCore_DP0", "Worker", "Worker_TP0"):
        return "main"  # one-process engines and the rank-0 worker report the engine's own figures
    return f"{role} rank={rank.group(1)}" if rank else line.process


def _worker_order(worker: WorkerMemory) -> tuple[int, str]:
    return (0 if worker.worker == "main" else 1, worker.worker)


def _error_text(text: str) -> str:
    at = re.search(r"(?:\w+Error|\w+Exception): ", text)
    message = text[at.start():] if at else text
    return message.split(" [type=", 1)[0].strip()  # pydantic appends the input it rejected


def _short(text: str) -> str:
    return text if len(text) <= _SHORT else text[:_SHORT - 3] + "..."


def _note_gaps(r: LogReading) -> None:
    if not r.is_vllm_log:
        return
    if r.engine_config is None and r.args is None and r.command is None:
        r.notes.append("no engine config line and no argument line: the log starts after them (cut, or a later part "
                       "of the log); the deployment cannot be rebuilt from it alone")
    for part in (r.engine_config, r.args):
        if part is not None and part.truncated:
            r.notes.append(f"line {part.line}: the {part.form} text is cut short; its unfinished last item "
                           f"('{part.dropped[:60]}') is not read")
    if r.release is None:
        r.notes.append("the log does not print its release" + (f"; its message formats fit vLLM {r.release_range}"
                                                               if r.release_range else ""))
    if r.refusal is None and not r.started and not r.stats and r.workers:
        r.notes.append("the log ends during start-up: no refusal and no sign the server finished starting")
