"""The --api-server-count what-if (issue 25): offered where the front end's time for a full batch's streamed
tokens is longer than the engine's step for it (the front end sets the pace), simulated as a change of its
own, and not offered where the engine sets the pace."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.calibration.profile import load_profile
from reader.calibration.select import standin_gpu
from reader.config.from_cli import load_options
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.checks import rule_errors
from reader.diagnose.metrics import Metrics
from reader.diagnose.scenario import build_scenario, rebuild
from reader.diagnose.trials import same_simulation
from reader.diagnose.whatif import _for_front_end, evaluate_all
from reader.sim.api import make_workload

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "fixtures" / "calibration" / "cpu-tiny-saturation"  # 32 sequences on the CPU, its fitted profile
TINY = str(ROOT / "fixtures" / "live" / "tiny-llama")
SATURATING = {"num_requests": 60, "arrival": {"process": "poisson", "rate": 30.0}, "prompt_len": 256,
              "output_len": 128}


def scenario(token_s: float | None = None):
    profile = load_profile(FOLDER / "profile.yaml")
    if token_s is not None:
        terms = dict(profile.step_time)
        terms["front_end_token_s"] = terms["front_end_token_s"].model_copy(update={"value": token_s})
        profile = profile.model_copy(update={"step_time": terms})
    r = resolve(load_deployment(str(FOLDER / "deployment.yaml"), load_options(model=TINY)), model_override=TINY,
                calibration=profile, device=standin_gpu(profile.device))
    return build_scenario(r, generated=make_workload(SATURATING, 0))


def test_where_the_engine_sets_the_pace_no_api_servers_are_offered():
    assert _for_front_end(scenario()) == []  # the fitted 135 us a token: 4.3 ms for 32 tokens, under a step


def test_where_the_front_end_sets_the_pace_more_api_servers_are_offered_and_simulated():
    base = scenario(token_s=0.001)  # 32 ms for a full batch's tokens against a step of about 8 ms
    (offer,) = _for_front_end(base)
    assert offer.changes == {"api_server_count": 4} and offer.addresses == "front_end"
    assert "sets the pace" in offer.reason
    assert not same_simulation(base, rebuild(base, offer.changes))
    baseline = Metrics.of(base.run())
    (tried,) = evaluate_all(base, [offer], baseline, rule_errors, 1)
    assert tried.status == "simulated" and tried.metrics.output_throughput > 2 * baseline.output_throughput


@pytest.mark.parametrize("servers", [1, 4])
def test_the_server_count_reaches_the_simulation(servers):
    base = scenario(token_s=0.001)
    assert rebuild(base, {"api_server_count": servers}).host_times["api_servers"] == servers
