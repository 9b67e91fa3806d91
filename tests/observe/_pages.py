"""Small vLLM /metrics pages for the tests, written the way prometheus_client writes them (HELP/TYPE lines,
_total counters, cumulative histogram buckets), from a few numbers per engine."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "fixtures" / "live" / "metrics"


@dataclass
class Engine:
    preemptions: float = 0
    finished: float = 0
    steps: float = 0
    step_tokens: float = 0
    running: float = 0
    waiting: float = 0
    kv: float = 0.0
    prompt_tokens: float = 0
    generation_tokens: float = 0
    blocks: int = 1000
    block_size: int = 16
    engine: str = "0"
    model: str = "m"
    kv_name: str = "vllm:kv_cache_usage_perc"
    extra: dict[str, float] = field(default_factory=dict)


def _labels(e: Engine, **more: str) -> str:
    items = {"engine": e.engine, "model_name": e.model, **more}
    return "{" + ",".join(f'{k}="{v}"' for k, v in items.items()) + "}"


def page(*engines: Engine) -> str:
    out: list[str] = []

    def family(name: str, kind: str, rows: list[str]) -> None:
        out.append(f"# HELP {name} test\n# TYPE {name} {kind}")
        out.extend(rows)

    family("vllm:num_preemptions_total", "counter",
           [f"vllm:num_preemptions_total{_labels(e)} {e.preemptions}" for e in engines])
    family("vllm:request_success_total", "counter",
           [f"vllm:request_success_total{_labels(e, finished_reason='length')} {e.finished}" for e in engines])
    family("vllm:prompt_tokens_total", "counter",
           [f"vllm:prompt_tokens_total{_labels(e)} {e.prompt_tokens}" for e in engines])
    family("vllm:generation_tokens_total", "counter",
           [f"vllm:generation_tokens_total{_labels(e)} {e.generation_tokens}" for e in engines])
    for name, attr in (("vllm:num_requests_running", "running"), ("vllm:num_requests_waiting", "waiting")):
        family(name, "gauge", [f"{name}{_labels(e)} {getattr(e, attr)}" for e in engines])
    kv_names = sorted({e.kv_name for e in engines})
    for kv_name in kv_names:
        family(kv_name, "gauge", [f"{kv_name}{_labels(e)} {e.kv}" for e in engines if e.kv_name == kv_name])
    rows = []
    for e in engines:
        for bound in ("1.0", "64.0", "512.0", "+Inf"):
            count = e.steps if bound != "1.0" else 0
            rows.append(f"vllm:iteration_tokens_total_bucket{_labels(e, le=bound)} {count}")
        rows.append(f"vllm:iteration_tokens_total_count{_labels(e)} {e.steps}")
        rows.append(f"vllm:iteration_tokens_total_sum{_labels(e)} {e.step_tokens}")
    family("vllm:iteration_tokens_total", "histogram", rows)
    family("vllm:cache_config_info", "gauge",
           [f'vllm:cache_config_info{{block_size="{e.block_size}",engine="{e.engine}",num_gpu_blocks="{e.blocks}"}} 1.0'
            for e in engines])
    for name, value in (engines[0].extra or {}).items():
        family(name, "gauge", [f"{name}{_labels(engines[0])} {value}"])
    return "\n".join(out) + "\n"


def scrape_file(path: Path, pages: list[tuple[float, str]]) -> Path:
    """Several pages in one file, each after the header observe writes."""
    path.write_text("".join(f"# vllm-reader-scrape time={t:.3f} source=test\n{text}" for t, text in pages))
    return path


def raw_counter(text: str, name: str) -> float:
    """A counter's value summed over a page's series, read with nothing but string splitting (the check on
    observe's reading)."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def last_page(path: Path) -> str:
    import gzip
    text = gzip.open(path, "rt").read() if path.name.endswith(".gz") else path.read_text()
    return text.rsplit("# vllm-reader-scrape", 1)[1]


def first_page(path: Path) -> str:
    import gzip
    text = gzip.open(path, "rt").read() if path.name.endswith(".gz") else path.read_text()
    return text.split("# vllm-reader-scrape")[1]
