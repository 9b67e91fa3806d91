#!/usr/bin/env python3
"""Re-fit the capacity model's shipped memory overhead estimates on the public vLLM log corpus.

Usage: python tools/fit_memory_terms.py [--write]
Reads fixtures/logs/public/INDEX.yaml (entries with a `fit` section), fits the estimates named in
reader/calibration/fit_memory.py DEFAULT_FREE, prints each log's error before and after and per release
(before: the single 0.45 GiB per GPU the capacity model shipped before the first fit; held out: each log
predicted by a fit that did not see it), and with --write puts
the fitted values, with their sources, into reader/capacity/data/vllm_memory.yaml.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reader.calibration.fit_memory import (DEFAULT_FREE, FREE, by_release, corpus_cases, evaluate,  # noqa: E402
                                           fit, leave_one_out, median_abs_error, prepare)
from reader.logs.reading import GIB  # noqa: E402

FOLDER = ROOT / "fixtures" / "logs" / "public"
TABLE = ROOT / "reader" / "capacity" / "data" / "vllm_memory.yaml"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the fitted values into vllm_memory.yaml")
    args = parser.parse_args()
    cases = [prepare(c, FOLDER) for c in corpus_cases(FOLDER / "INDEX.yaml")]
    # "before": the single 0.45 GiB per GPU the capacity model shipped before the first fit (each term's start)
    before = evaluate(cases, {name: FREE[name].start for name in DEFAULT_FREE})
    result = fit(cases, DEFAULT_FREE)
    after = evaluate(cases, result.values)
    held_out = leave_one_out(cases, DEFAULT_FREE)
    print(f"{'log':58} {'release':8} {'logged GiB':>10} {'before':>8} {'after':>8} {'held out':>9}")
    for b, a, h in zip(before, after, held_out):
        print(f"{b.file[:58]:58} {b.release:8} {b.logged_available_gib:10.2f} {b.error_pct:+7.1f}% {a.error_pct:+7.1f}%"
              f" {h.error_pct:+8.1f}%")
    print(f"median |error|: before {median_abs_error(before):.1f}%, after {median_abs_error(after):.1f}%, "
          f"held out {median_abs_error(held_out):.1f}% ({len(before)} logs; {result.iterations} iterations)")
    for row in by_release(before, after, held_out):
        print(f"  vLLM {row['release']:8} {row['logs']} log(s): {row['before_pct']:.1f}% -> {row['after_pct']:.1f}%"
              f" (held out {row['held_out_pct']:.1f}%)")
    for name, value in result.values.items():
        print(f"  {name} = {value / GIB:.3f} GiB")
    own = own_terms_errors(cases)
    print(f"each log with its own terms (calibrate --log, weights still predicted): median |error| "
          f"{statistics.median(own):.1f}%, worst {max(own):.1f}%")
    if args.write:
        write(result.values, before, median_abs_error(before), median_abs_error(after), median_abs_error(held_out))
    return 0


def own_terms_errors(cases) -> list[float]:
    """Each log's available KV memory predicted with the memory terms of that deployment's own log."""
    from reader.calibration.fit_log import deployment_terms
    from reader.calibration.fit_memory import resolved_case

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
