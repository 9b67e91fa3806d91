"""How close vllm-reader's replay comes to published real-vLLM serving runs.

    python benchmarks/fidelity/run.py [RUNS.csv] [--every N] [--max-concurrency 64] [--aiconfigurator AIC.json]
                                      [-o outputs/fidelity.md]

Replays every aggregated vLLM run of the file (default: the development split of aiconfigurator's
silicon_sample.csv, fixtures/gpu/silicon/) through the tool's own stages, with the GPU type's shipped profile,
and prints per group (model, GPU, layout, weight format, release), per (GPU, TP) and overall the median and
worst |error| of mean TTFT and mean TPOT, the five worst runs, and what every replay assumed for the settings
the source does not give. Beside each figure, aiconfigurator 0.12.0's error on the same runs (its predictions
recorded by benchmarks/fidelity/aic.py, an optional dependency of this benchmark only, in
fixtures/gpu/silicon/aiconfigurator_0.12.0_dev.json), over the runs both predicted. The rows of the two
reserved models are not in that file and are never read here.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reader.fitting.published import ASSUMED, PublishedRun, Replayed, read_published, replay  # noqa: E402

DEV_SPLIT = ROOT / "fixtures" / "gpu" / "silicon" / "vllm_silicon_dev.csv"
AIC = ROOT / "fixtures" / "gpu" / "silicon" / "aiconfigurator_0.12.0_dev.json"


@dataclass(frozen=True)
class Outcome:
    run: PublishedRun
    got: Replayed
    aic: Optional[dict] = None  # aiconfigurator's prediction of the same run (ttft_ms, tpot_ms), if it made one

    def error(self, metric: str, who: str = "ours") -> Optional[float]:
        key = f"{metric}_ms"
        predicted = getattr(self.got, key) if who == "ours" else (self.aic or {}).get(key)
        return None if predicted is None else 100.0 * (predicted / getattr(self.run, key) - 1.0)


def replay_all(runs: list[PublishedRun], aic: dict[str, dict]) -> list[Outcome]:
    return [Outcome(run, replay(run), aic.get(run.label)) for run in runs]


def read_aic(path: Optional[str]) -> dict[str, dict]:
    if not path or not Path(path).is_file():
        return {}
    return {row["id"]: row for row in json.loads(Path(path).read_text()) if row.get("tpot_ms") is not None}


def _median(outcomes: list[Outcome], metric: str, who: str) -> Optional[float]:
    errs = [abs(e) for o in outcomes if (e := o.error(metric, who)) is not None]
    return median(errs) if errs else None


def _cell(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _table(title: str, groups: dict, head: str) -> list[str]:
    lines = [f"### {title}", "", f"| {head} | runs | TTFT median | TTFT worst | TPOT median | TPOT worst | "
             "runs both | TTFT ours / aic | TPOT ours / aic |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key in sorted(groups):
        items = groups[key]
        worst = {m: max((abs(e) for o in items if (e := o.error(m)) is not None), default=None) for m in ("ttft", "tpot")}
        both = [o for o in items if o.aic is not None]
        pair = {m: f"{_cell(_median(both, m, 'ours'))} / {_cell(_median(both, m, 'aic'))}" if both else "-"
                for m in ("ttft", "tpot")}
        lines.append(f"| {key} | {len(items)} | {_cell(_median(items, 'ttft', 'ours'))} | {_cell(worst['ttft'])} | "
                     f"{_cell(_median(items, 'tpot', 'ours'))} | {_cell(worst['tpot'])} | {len(both)} | "
                     f"{pair['ttft']} | {pair['tpot']} |")
    return lines + [""]


def render(outcomes: list[Outcome], source: str) -> str:
    replayed = [o for o in outcomes if o.got.tpot_ms is not None]
    lines = [f"## Fidelity against published real-vLLM runs ({source})", "",
             f"{len(outcomes)} runs, {len(replayed)} replayed; errors are |predicted / measured - 1| of the mean. "
             "aic: aiconfigurator 0.12.0 on the runs both predicted.", ""]
    lines += _table("Overall", {"all": replayed}, "set")
    by_gpu_tp, by_group = defaultdict(list), defaultdict(list)
    for o in replayed:
        r = o.run
        by_gpu_tp[f"{r.gpu} TP{r.tp}"].append(o)
        by_group[f"{r.source_model.split('/')[-1]} / {r.gpu} / {r.layout} / {r.weight_format} / "
                 f"{r.release}{' (assumed)' if r.release_assumed else ''}"].append(o)
    lines += _table("Per (GPU, TP)", by_gpu_tp, "GPU, TP")
    lines += _table("Per group (model / GPU / layout / weights / release)", by_group, "group")
    worst = sorted(replayed, key=lambda o: -max(abs(o.error("ttft") or 0), abs(o.error("tpot") or 0)))[:5]
    lines += ["### Five worst runs", "", "| run | clients | ISL x OSL | TTFT meas / pred ms | TPOT meas / pred ms |",
              "|---|---:|---|---:|---:|"]
    lines += [f"| {o.run.label} | {o.run.concurrency} | {o.run.isl}x{o.run.osl} | {o.run.ttft_ms:.0f} / "
              f"{o.got.ttft_ms:.0f} | {o.run.tpot_ms:.2f} / {o.got.tpot_ms:.2f} |" for o in worst]
    missing = [o for o in outcomes if o.got.tpot_ms is None]
    if missing:
        lines += ["", "### Not replayed", ""] + [f"- {o.run.label}: {o.got.note}" for o in missing]
    lines += ["", "### Assumed where the source is silent", ""] + [f"- {k}: {v}" for k, v in ASSUMED.items()]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="?", default=str(DEV_SPLIT))
    ap.add_argument("--every", type=int, default=1, help="replay every Nth run (a quick look)")
    ap.add_argument("--max-concurrency", type=int, default=64)
    ap.add_argument("--aiconfigurator", default=str(AIC), help="aiconfigurator's predictions (benchmarks/fidelity/aic.py)")
    ap.add_argument("-o", "--output")
    ap.add_argument("--readme", action="store_true", help="print the README's table (the shipped profiles' errors)")
    args = ap.parse_args(argv)
    if args.readme:
        print("\n".join(readme_rows(args.aiconfigurator)))
        return 0
    runs = read_published(args.runs, args.max_concurrency)[::args.every]
    text = render(replay_all(runs, read_aic(args.aiconfigurator)), Path(args.runs).name)
    if args.output:
        Path(args.output).write_text(text)
    sys.stdout.write(text)
    return 0



def readme_rows(aic_path: str = str(AIC)) -> list[str]:
    """The README's table of the shipped profiles' recorded replay errors (from their fit points, which
    `calibrate --published` writes), beside aiconfigurator's on the runs it predicted too: overall, then per
    (GPU, TP). tests/calibration/test_fidelity_published.py checks that the README holds exactly these rows."""
    from reader.calibration.profile import PUBLISHED_DIR, read_profile

    runs = {r.label: r for r in read_published(DEV_SPLIT, 64)}
    aic = read_aic(aic_path)
    ours: dict = defaultdict(lambda: defaultdict(list))
    pair: dict = defaultdict(lambda: defaultdict(list))
    for path in sorted(PUBLISHED_DIR.glob("*.yaml")):
        for p in read_profile(path).fit.points:
            run = runs[p.source]
            theirs = (aic.get(p.source) or {}).get(p.metric.replace("mean_", ""))
            for key in ("all runs", f"{run.gpu} TP{run.tp}"):
                ours[key][p.metric].append(abs(p.error_pct))
                if theirs is not None:
                    pair[key][p.metric].append((abs(p.error_pct), abs(100.0 * (theirs / p.measured - 1.0))))
    rows = []
    for key in ["all runs"] + sorted(k for k in ours if k != "all runs"):
        cells = [f"{median(ours[key][m]):.1f}%" for m in ("mean_tpot_ms", "mean_ttft_ms")]
        for m in ("mean_tpot_ms", "mean_ttft_ms"):
            both = pair[key][m]
            cells.append(f"{median(a for a, _ in both):.1f}% / {median(b for _, b in both):.1f}%" if both else "-")
        rows.append(f"| {key} | {len(ours[key]['mean_tpot_ms'])} | {cells[0]} | {cells[1]} | "
                    f"{len(pair[key]['mean_tpot_ms'])} | {cells[2]} | {cells[3]} |")
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
