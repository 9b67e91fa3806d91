#!/usr/bin/env python3
"""Re-fit the capacity model's shipped memory overhead estimates on the public vLLM log corpus.

Usage: python tools/fit_memory_terms.py [--write]
Reads fixtures/logs/public/INDEX.yaml (entries with a `fit` section), fits the estimates named in
reader/fitting/fit_memory.py DEFAULT_FREE, prints each log's error before and after and per release
(before: the single 0.45 GiB per GPU the capacity model shipped before the first fit; held out: each log
predicted by a fit that did not see it), and with --write puts
the fitted values, with their sources, into reader/capacity/data/vllm_memory.yaml.
With --readme it rewrites the README's figures from this run: the per-release table, the medians over all logs,
and each log's error with its own terms (tests/logs/test_logs_memory_fit.py fails when they drift).
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reader.fitting.fit_memory import (DEFAULT_FREE, FREE, by_release, corpus_cases, evaluate,  # noqa: E402
                                           fit, leave_one_out, median_abs_error, prepare)
from reader.logs.reading import GIB  # noqa: E402

FOLDER = ROOT / "fixtures" / "logs" / "public"
TABLE = ROOT / "reader" / "capacity" / "data" / "vllm_memory.yaml"


README = ROOT / "README.md"
README_HEADER = "| vLLM | logs | before | after | left out |"


@dataclass
class Run:
    before: list
    after: list
    held_out: list
    result: object
    own: list[float]  # each log's |error| with the memory terms of its own log


def run_fit() -> Run:
    cases = [prepare(c, FOLDER) for c in corpus_cases(FOLDER / "INDEX.yaml")]
    # "before": the single 0.45 GiB per GPU the capacity model shipped before the first fit (each term's start)
    before = evaluate(cases, {name: FREE[name].start for name in DEFAULT_FREE})
    result = fit(cases, DEFAULT_FREE)
    return Run(before, evaluate(cases, result.values), leave_one_out(cases, DEFAULT_FREE), result,
               own_terms_errors(cases))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the fitted values into vllm_memory.yaml")
    parser.add_argument("--readme", action="store_true", help="rewrite the README's figures from this run")
    args = parser.parse_args()
    run = run_fit()
    report(run)
    if args.write:
        write(run.result.values, run.before, median_abs_error(run.before), median_abs_error(run.after),
              median_abs_error(run.held_out))
    if args.readme:
        README.write_text(readme_with(README.read_text(), run))
        print(f"rewrote the memory-terms figures in {README.relative_to(ROOT)}")
    return 0


def report(run: Run) -> None:
    before, after, held_out = run.before, run.after, run.held_out
    print(f"{'log':58} {'release':8} {'logged GiB':>10} {'before':>8} {'after':>8} {'held out':>9}")
    for b, a, h in zip(before, after, held_out):
        print(f"{b.file[:58]:58} {b.release:8} {b.logged_available_gib:10.2f} {b.error_pct:+7.1f}% {a.error_pct:+7.1f}%"
              f" {h.error_pct:+8.1f}%")
    print(f"median |error|: before {median_abs_error(before):.1f}%, after {median_abs_error(after):.1f}%, "
          f"held out {median_abs_error(held_out):.1f}% ({len(before)} logs; {run.result.iterations} iterations)")
    for row in by_release(before, after, held_out):
        print(f"  vLLM {row['release']:8} {row['logs']} log(s): {row['before_pct']:.1f}% -> {row['after_pct']:.1f}%"
              f" (held out {row['held_out_pct']:.1f}%)")
    for name, value in run.result.values.items():
        print(f"  {name} = {value / GIB:.3f} GiB")
    print(f"each log with its own terms (calibrate --log, weights still predicted): median |error| "
          f"{statistics.median(run.own):.1f}%, worst {max(run.own):.1f}%")


def readme_table(run: Run) -> str:
    rows = [README_HEADER, "|---|---:|---:|---:|---:|"]
    rows += [f"| {r['release']} | {r['logs']} | {r['before_pct']:.1f}% | {r['after_pct']:.1f}% | "
             f"{r['held_out_pct']:.1f}% |" for r in by_release(run.before, run.after, run.held_out)]
    return "\n".join(rows)


# The README's sentences that carry this run's figures: (pattern, the figures in order). Spaces may be line breaks.
def readme_figures(run: Run) -> list[tuple[str, list[str]]]:
    medians = [median_abs_error(p) for p in (run.before, run.after, run.held_out)]
    return [
        (r"over (\d+) logs: ([\d.]+)% before", [str(len(run.before)), f"{medians[0]:.1f}"]),
        (r"every release\), ([\d.]+)% after,\s+([\d.]+)% for a log left out of the fit",
         [f"{medians[1]:.1f}", f"{medians[2]:.1f}"]),
        (r"predicted within ([\d.]+)% \(median; worst ([\d.]+)%", [f"{statistics.median(run.own):.1f}",
                                                                    f"{max(run.own):.1f}"]),
    ]


def readme_with(text: str, run: Run) -> str:
    """The README with this run's memory-terms table and figures in place."""
    start = text.index(README_HEADER)
    end = text.index("\n\n", start)
    text = text[:start] + readme_table(run) + text[end:]
    for pattern, figures in readme_figures(run):
        match = re.search(pattern.replace(" ", r"\s+"), text)
        if match is None:
            raise SystemExit(f"the README no longer says {pattern!r}")
        for i in reversed(range(len(figures))):
            text = text[:match.start(i + 1)] + figures[i] + text[match.end(i + 1):]
    return text


def own_terms_errors(cases) -> list[float]:
    """Each log's available KV memory predicted with the memory terms of that deployment's own log."""
    from reader.fitting.fit_log import deployment_terms
    from reader.fitting.fit_memory import resolved_case

    out = []
    for prepared in cases:
        resolved, _ = resolved_case(prepared.case, FOLDER)
        got = deployment_terms(resolved, [(prepared.case.file, (FOLDER / prepared.case.file).read_text())],
                               check_device=False)  # stand-in GPUs, their totals replaced by the logged ones
        error = got.terms.fit.error_of("available_kv_gib")
        if error is not None:
            out.append(error.median_abs_pct)
    return out


def term_of(point) -> str:
    """The non-torch estimate a log's prediction uses (its engine and the release's accounting scope)."""
    from reader.capacity.behaviour import behaviour
    from reader.versions import parse_version

    return behaviour("non_torch_estimate", parse_version(point.release), point.engine).value


def write(values: dict[str, float], points, before: float, after: float, held_out: float) -> None:
    text = TABLE.read_text()
    for name, value in values.items():
        logs = [p.file.removesuffix(".log") for p in points if term_of(p) == name]
        source = (f"fitted by tools/fit_memory_terms.py on the public logs of fixtures/logs/public with a `fit` "
                  f"section; this term is set by {', '.join(logs) or 'none of them'} (over all {len(points)} logs the "
                  f"median |error| of the available KV memory is {before:.1f}% before, {after:.1f}% after, "
                  f"{held_out:.1f}% for a log left out of the fit)")
        block = f"  {name}:\n    value: {int(round(value))}  # {value / GIB:.3f} GiB\n    source: >-\n      {source}\n"
        pattern = re.compile(rf"^  {re.escape(name)}:\n(?:    .*\n|      .*\n)*", re.M)
        if not pattern.search(text):
            raise SystemExit(f"{name} is not in {TABLE}")
        text = pattern.sub(block, text, count=1)
    TABLE.write_text(text)
    print(f"wrote {len(values)} values into {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
