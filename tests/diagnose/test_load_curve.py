"""Diagnose across load (issue 24): the workload's shape offered at rising load, the highest load that fits, the
order in which the defaults bind, and a verdict that agrees with its own what-ifs."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reader.cli import app
from reader.config.context import SLO, LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.checks import rule_errors
from reader.diagnose.loadcurve import SCHEDULER_LIMITS, load_curve
from reader.diagnose.run import compute_ridge, diagnose
from reader.diagnose.scenario import build_scenario, slos_from
from reader.diagnose.slo_fit import OVERLOADED
from reader.diagnose.whatif import relieves
from reader.render.report import render_diagnosis

ROOT = Path(__file__).resolve().parents[2]
MISTRAL = ROOT / "fixtures" / "load" / "mistral-deployment-2-replicas.yaml"
COMPOSE = ROOT / "fixtures" / "load" / "compose-awq-a10g.yaml"
SMALL_CHAT = {"num_requests": 200, "seed": 3, "arrival": {"process": "poisson", "rate": 4.0},
              "prompt_len": {"dist": "lognormal", "median": 600.0, "sigma": 0.6, "min": 16, "max": 4000},
              "output_len": {"dist": "lognormal", "median": 200.0, "sigma": 0.5, "min": 8, "max": 1000}}

_CACHE: dict = {}


def diagnosed(path: Path, **options):
    key = (path, json.dumps(options, sort_keys=True, default=str))
    if key not in _CACHE:
        resolved = resolve(load_deployment(str(path), LoadOptions(**options)))
        _CACHE[key] = diagnose(resolved, slos_ms=slos_from(resolved), workers=2)
    return _CACHE[key]


def held_to_its_whatifs(d) -> None:
    """The named default is one whose relaxation, re-simulated at this load, raises goodput or throughput; every
    default set aside as refuted has no relaxation that does."""
    def relieving(limit: str) -> list:
        return [w for w in d.whatifs if w.addresses == limit and relieves(w, d.baseline, d.slos_ms)]

    if d.verdict.limit in SCHEDULER_LIMITS:
        tried = [w for w in d.whatifs if w.addresses == d.verdict.limit]
        assert not tried or relieving(d.verdict.limit), (d.verdict.limit, [(w.changes, w.status) for w in tried])
    for limit in d.verdict.refuted:
        assert not relieving(limit) and limit != d.verdict.limit


# ---- the two cases of the issue ---------------------------------------------------------------

def test_without_a_load_the_headline_is_the_capacity_per_replica_and_for_the_service():
    d = diagnosed(MISTRAL)
    curve = d.load_curve
    assert curve is not None and not curve.given and curve.replicas == 2
    assert curve.capacity is not None and curve.service_capacity == pytest.approx(2 * curve.capacity)
    text = render_diagnosis(d)
    paragraph = text.split("\n\n")[1]
    assert paragraph.startswith(f"**Capacity: about {curve.capacity:.3g} req/s per replica before the knee")
    assert "the chat preset's requests (prompts" in paragraph  # the assumed shape is in the headline
    assert f"the service's 2 replicas, {curve.service_capacity:.3g} req/s" in paragraph
    assert "(no load given), the verdict would be" in paragraph  # the preset's rate is never stated as fact
    assert "## Load curve" in text and "xychart-beta" in text


def test_a_limit_whose_relaxation_makes_things_worse_is_not_the_verdict():
    d = diagnosed(COMPOSE, gpu="A10G")
    held_to_its_whatifs(d)
    seqs = [w for w in d.whatifs if w.addresses == "admission" and w.metrics is not None]
    assert seqs and not any(relieves(w, d.baseline, d.slos_ms) for w in seqs)  # the max_num_seqs case
    assert d.verdict.limit != "admission" and "admission" in d.verdict.refuted
    assert "relaxing" in d.verdict.headline and "raises neither goodput nor throughput" in d.verdict.headline


# ---- the curve -------------------------------------------------------------------------------

def test_the_capacity_fits_and_the_next_load_simulated_does_not():
    d = diagnosed(MISTRAL)
    curve = d.load_curve
    loads = [p.load for p in curve.points]
    assert loads == sorted(loads) and len(loads) >= 5
    at_capacity = next(p for p in curve.points if p.load == curve.capacity)
    miss = next(p for p in curve.points if p.load == curve.first_miss)
    assert at_capacity.fits and not miss.fits and curve.capacity < curve.first_miss
    assert all(p.fits for p in curve.points if p.load <= curve.capacity)


def test_no_rate_beyond_what_the_replica_completes_fits():
    # issue 24's compose case: short runs at 3.75 req/s admitted every request at once (max_num_seqs 256) and
    # never showed a queue, while the replica completes at most 2.93 req/s
    curve = diagnosed(COMPOSE, gpu="A10G").load_curve
    assert curve.capacity <= OVERLOADED * curve.saturation_request_rate
    assert not any(p.fits for p in curve.points if p.load > OVERLOADED * curve.saturation_request_rate)


def test_a_short_workload_is_searched_up_to_where_the_replica_levels_off(tmp_path):
    """A served burst of 96 requests (fixtures/live/metrics/bench: the CPU build, its scrapes and its profile).
    Every load replays one seeded arrival sample stretched to its rate, and 96 Poisson arrivals can span 15% more
    than 96 / rate, so each load completes about 0.85 of its rate even where the replica keeps up. The ceiling
    on a fitting load allows for that: the search goes on to where the server levels off (the bench measured
    2,048 output tok/s on this burst) instead of stopping at twice the start rate of 1.6 req/s (96 per minute),
    where a curve said "levels off at 352 tok/s"."""
    bench = ROOT / "fixtures" / "live" / "metrics" / "bench"
    marker = "# vllm-reader-scrape "
    scrapes = gzip.decompress((bench / "saturated.prom.gz").read_bytes()).decode().split(marker)[1:]
    pair = []  # the first and the last scrape: the burst came all at once between them
    for name, scrape in (("before.prom", scrapes[0]), ("after.prom", scrapes[-1])):
        (tmp_path / name).write_text(marker + scrape)
        pair += ["--metrics", str(tmp_path / name)]
    result = CliRunner().invoke(app, ["diagnose", str(bench / "serve.sh"), *pair,
                                      "--calibration", str(ROOT / "fixtures" / "calibration" / "cpu-tiny-saturation"
                                                           / "profile.yaml"), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    curve = json.loads(result.output)["load_curve"]
    assert curve["capacity"] > 8 * 1.6 and curve["saturation_output_tok_s"] > 1500
    heaviest = max(curve["points"], key=lambda p: p["load"])
    assert not heaviest["fits"]


def test_the_defaults_are_listed_in_the_order_they_bind():
    curve = diagnosed(MISTRAL).load_curve
    assert curve.order, "a replica pushed past saturation shows at least one default binding"
    assert [b.load for b in curve.order] == sorted(b.load for b in curve.order)
    for b in curve.order:
        first = next(p for p in curve.points if b.limit in p.binding)
        assert first.load == b.load
    if curve.free_until is not None:
        assert curve.free_until < curve.order[0].load
        assert not next(p for p in curve.points if p.load == curve.free_until).binding


def test_with_slos_the_capacity_meets_them():
    d = diagnosed(MISTRAL, workload=SMALL_CHAT, slo=SLO(ttft_p99_ms=2000, itl_p99_ms=100))
    curve = d.load_curve
    assert curve.rule == "slos" and curve.given and curve.offered == pytest.approx(4.0)
    for p in curve.points:
        if p.load <= (curve.capacity or 0):
            assert p.metrics.ttft_p99_ms <= 2000 and p.metrics.itl_p99_ms <= 100
    miss = next(p for p in curve.points if p.load == curve.first_miss)
    assert miss.metrics.ttft_p99_ms > 2000 or miss.metrics.itl_p99_ms > 100 or miss.overload


def test_at_the_users_own_load_the_verdict_is_set_against_the_capacity():
    d = diagnosed(MISTRAL, workload=SMALL_CHAT, slo=SLO(ttft_p99_ms=2000, itl_p99_ms=100))
    paragraph = render_diagnosis(d).split("\n\n")[1]
    curve = d.load_curve
    ratio = 4.0 / curve.capacity
    said = (f"{100 * (1 - ratio):.0f}% below" if ratio <= 1 else f"{ratio:.1f}x") + \
        f" the {curve.capacity:.3g} req/s this replica sustains within its SLOs"
    assert paragraph.startswith("**Verdict: ") and f": at 4 req/s, {said}: " in paragraph
    assert "Across load: one replica sustains" in paragraph


def test_a_closed_loop_is_searched_in_whole_clients():
    spec = {**SMALL_CHAT, "arrival": {"process": "closed", "concurrency": 16}}
    resolved = resolve(load_deployment(str(MISTRAL), LoadOptions(workload=spec)))
    curve = load_curve(build_scenario(resolved), rule_errors, compute_ridge(resolved), workers=2)
    assert curve.kind == "clients" and curve.unit == "clients"
    assert all(p.load == int(p.load) and p.load >= 1 for p in curve.points)
    assert curve.offered == 16


def test_capacity_load_curve_in_json_and_markdown():
    runner = CliRunner()
    args = ["capacity", str(COMPOSE), "--gpu", "A10G", "--load-curve", "--workers", "2"]
    as_json = runner.invoke(app, args + ["--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    curve = json.loads(as_json.output)["load_curve"]
    assert curve["capacity"] > 0 and curve["points"] and curve["headline"].startswith("one replica sustains")
    as_md = runner.invoke(app, args + ["--format", "markdown"])
    assert as_md.exit_code == 0 and "## Load curve" in as_md.output and "xychart-beta" in as_md.output
