"""Published real-vLLM runs: read as their layout says, and a fit that recovers known coefficients."""
from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from reader.fitting import fit_published
from reader.fitting.fit_published import Case, fit, response_delay_s, surrogate
from reader.fitting.optimize import Free
from reader.calibration.profile import default_profile
from reader.fitting.published import PublishedRun, read_published, resolve_run
from reader.errors import ReaderError
from reader.pipeline import step_time_model

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "fixtures" / "gpu" / "silicon" / "vllm_silicon_dev.csv"
RESERVED = ("gpt-oss-120b", "MiniMax-M2.5")


def test_the_development_split_holds_no_reserved_model():
    text = DEV.read_text()
    assert not any(name in text for name in RESERVED)


def test_runs_are_read_with_their_clients_layout_and_checkpoint():
    runs = read_published(DEV, max_concurrency=64)
    assert runs and all(r.concurrency <= 64 for r in runs)
    dp = next(r for r in runs if r.dp == 4)
    assert dp.clients_per_engine == dp.concurrency // 4 and "--data-parallel-size 4" in dp.command()
    fp4 = next(r for r in runs if r.source_model == "moonshotai/Kimi-K2.5" and r.precision == "fp4")
    assert fp4.model == "nvidia/Kimi-K2.5-NVFP4"
    assert "--enable-expert-parallel" not in next(r for r in runs if not r.ep).command()


def test_copies_of_one_measurement_are_read_as_the_deployment_their_ids_name():
    """Kimi-K2.5 NVFP4 on B200, 4 clients, 1,024 x 1,024 tokens: one measurement in three collections, two of whose
    ids name TP4 with EP4; the config-635 copy's columns (4 attention-DP ranks, EP 16) are read as the ids say."""
    copies = [r for r in read_published(DEV) if r.source_model == "moonshotai/Kimi-K2.5" and r.gpu == "B200"
              and r.precision == "fp4" and (r.isl, r.osl, r.concurrency) == (1024, 1024, 4)
              and round(r.ttft_ms, 2) == 169.94]
    assert len(copies) == 3 and any("cfg635" in r.label for r in copies)
    assert {(r.tp, r.dp, r.ep) for r in copies} == {(4, 1, True)}


def test_a_file_of_another_layout_is_refused_naming_the_column(tmp_path):
    bad = tmp_path / "runs.csv"
    bad.write_text("id,model\nx,y\n")
    with pytest.raises(ReaderError, match="column 'silicon_data_source' is missing"):
        read_published(bad)


def _run(tp: int, clients: int, isl: int, osl: int) -> PublishedRun:
    return PublishedRun(label=f"tp{tp}-c{clients}-{isl}x{osl}", model="Qwen/Qwen3-32B", quantization=None,
                        source_model="Qwen/Qwen3-32B", gpu="H100-SXM", precision="", tp=tp, dp=1, ep=False,
                        release="0.12.0", release_assumed=False, isl=isl, osl=osl, concurrency=clients,
                        ttft_ms=1.0, tpot_ms=1.0)


@pytest.mark.slow
def test_the_fit_recovers_known_communication_and_host_terms():
    """Runs made by the steady-state account itself at known coefficients are fitted back to them. A TP1 run
    tells the host's time per step from the all-reduces' fixed time (with one model every TP size pays the same
    number of all-reduces per step), 8,192-token prompts show the all-reduce's bandwidth, and runs at 4 to 64
    clients split the response path's fixed delay from its part per request in flight; TP sizes from 1 to 8
    show how a GEMM's efficiency falls as tensor parallelism narrows it."""
    truth = {"allreduce_latency_s": 2.0e-5, "allreduce_latency_per_peer_s": 3.0e-6, "host_overhead_s": 4.0e-4,
             "response_latency_s": 0.05, "response_latency_per_request_s": 1.0e-3, "link_eff": 1.3,
             "gemm_shape_dim": 2048.0}
    base = default_profile().coefficients()
    known = base.replace(**truth)

    def model_for(case, coefficients):
        return step_time_model(case.resolved, coefficients=coefficients, table_tokens=64)

    cases = []
    for tp, clients, isl, osl in [(2, 4, 1024, 512), (2, 32, 1024, 128), (4, 8, 4096, 512), (8, 4, 1024, 1024),
                                  (8, 64, 1024, 512), (4, 16, 1024, 1024), (8, 4, 8192, 256), (1, 8, 1024, 512)]:
        run = _run(tp, clients, isl, osl)
        case = Case(run=run, resolved=resolve_run(run), budget=8192)
        m = surrogate(case, model_for(case, known), known.host_overhead_s, response_delay_s(case, known))
        run = PublishedRun(**{**run.__dict__, "ttft_ms": m["mean_ttft_ms"], "tpot_ms": m["mean_tpot_ms"]})
        cases.append(Case(run=run, resolved=case.resolved, budget=8192))
    free = [f for f in fit_published.free_terms(cases, measured_steps=True)]
    assert [f.name for f in free] == ["host_overhead_s", "response_latency_s", "response_latency_per_request_s",
                                      "allreduce_latency_s", "link_eff", "allreduce_latency_per_peer_s",
                                      "gemm_shape_dim"]
    values, result = fit(cases, base, free, model_for, tolerance=1e-12, max_iterations=3000)
    assert result.converged
    for name, value in truth.items():
        assert math.isclose(values[name], value, rel_tol=0.1), (name, values[name], value)


def test_a_free_term_needs_runs_that_show_it():
    """One TP size cannot split the all-reduce's fixed time from its growth with the group, and 1,024-token
    prompts do not show its bandwidth."""
    runs = [_run(2, 4, 1024, 512), _run(2, 16, 1024, 512)]
    cases = [Case(run=r, resolved=resolve_run(r), budget=8192) for r in runs]
    names = [f.name for f in fit_published.free_terms(cases, measured_steps=False)]
    assert "allreduce_latency_s" in names and "allreduce_latency_per_peer_s" not in names
    assert "moe_gemm_eff" not in names and "lowbit_memory_eff" not in names and "alltoall_latency_s" not in names
    assert "link_eff" not in names
    assert any(why.startswith("allreduce_latency_per_peer_s") for why in fit_published.unfitted(cases, False))
    assert any(why.startswith("link_eff") for why in fit_published.unfitted(cases, False))
    assert isinstance(fit_published.HOST, Free)


def test_the_measured_phase_starts_with_every_client_sending_at_once_then_spreads():
    """AIPerf measures after its warm-up has drained: the first wave leaves together, later requests leave as a
    Poisson stream from when the clients are free again (published.ASSUMED, 'send schedule')."""
    from reader.fitting.published import profiling_phase
    from reader.sim.api import load_workload, make_workload

    run = _run(2, 8, 1024, 512)
    rate = 4.0  # requests per second the clients complete
    spec = load_workload(run.workload(rate))
    sent = profiling_phase(make_workload(spec, spec.seed), run.clients_per_engine, rate).arrival
    assert len(sent) == 10 * 8
    assert list(sent[:8]) == [0.0] * 8
    assert sent[8] == pytest.approx(8 / rate)  # by default one lifetime of 8 clients at 4 requests/s
    assert profiling_phase(make_workload(spec, spec.seed), 8, rate, start=5.0).arrival[8] == pytest.approx(5.0)
    assert all(b >= a for a, b in zip(sent[8:], sent[9:])) and sent[-1] > sent[9]


def test_the_steady_stream_starts_once_the_first_wave_has_finished_and_never_leaves_in_bunches():
    """A stream started before the first wave is done queues behind the busy clients and leaves in lock-step
    bunches as the wave finishes (16 clients of 1,024 x 1,024: bunches of 8 sent in the same instant, their
    prompts sharing one step). Started as the wave ends, at most the clients one step frees leave together."""
    from reader.fitting.published import replay_scenario

    run = _run(2, 16, 1024, 256)
    result = replay_scenario(run, resolve_run(run)).run(keep_requests=True)
    q = result.requests
    first_wave_half_done = sorted(q.finish_s[:16])[7]
    later = sorted(q.send_time_s[16:])
    assert later[0] >= first_wave_half_done
    bunch = max(Counter(later).values())
    assert bunch <= 2, bunch  # two clients freed by one step's completions; the early stream sent 8 at once


def test_a_wave_that_would_not_start_has_no_replay():
    from reader.fitting.published import replay

    big = PublishedRun(**{**_run(1, 4, 1024, 128).__dict__, "model": "meta-llama/Llama-3.1-405B",
                          "source_model": "meta-llama/Llama-3.1-405B"})
    got = replay(big)
    assert got.ttft_ms is None and got.note.startswith("vLLM would not start")


def test_fp8_and_16_bit_gemms_are_told_apart_only_where_the_runs_hold_both():
    """lowbit_compute_eff scales the fp8/fp4 GEMMs' efficiency against 16-bit ones: free where a GPU's runs have
    both kinds (or measured 16-bit steps fix the rest); with one kind, gemm_compute_eff takes it."""
    bf16 = Case(run=_run(2, 4, 1024, 512), resolved=resolve_run(_run(2, 4, 1024, 512)), budget=8192)
    fp8 = Case(run=bf16.run, resolved=bf16.resolved, budget=8192, lowbit_compute=True)
    names = lambda cases, measured: [f.name for f in fit_published.free_terms(cases, measured)]  # noqa: E731
    assert "lowbit_compute_eff" in names([bf16, fp8], False)
    assert "lowbit_compute_eff" in names([fp8], True)
    assert "lowbit_compute_eff" not in names([fp8], False)
    assert "lowbit_compute_eff" not in names([bf16], True)
    assert any(why.startswith("lowbit_compute_eff") for why in fit_published.unfitted([fp8], False))


def test_with_async_scheduling_the_host_time_hides_behind_the_gpu_as_in_the_simulator():
    """The fit's steady-state account steps as sim/clock.py does: max(GPU, host) with async scheduling,
    GPU + host without."""
    resolved = resolve_run(_run(2, 8, 1024, 512))
    model = step_time_model(resolved, table_tokens=64)
    cases = {overlapped: Case(run=_run(2, 8, 1024, 512), resolved=resolved, budget=8192, overlapped=overlapped)
             for overlapped in (False, True)}
    small_host = 1e-5  # far below a decode step of a 32B model on 2 x H100
    hidden = surrogate(cases[True], model, small_host)["mean_tpot_ms"]
    assert hidden == pytest.approx(surrogate(cases[True], model, 0.0)["mean_tpot_ms"])
    added = surrogate(cases[False], model, small_host)["mean_tpot_ms"]
    assert added == pytest.approx(hidden + small_host * 1e3, rel=1e-3)


def test_a_moe_layers_fixed_time_is_paid_once_per_moe_layer_per_step():
    from reader.batch import StepBatch
    import numpy as np

    moe = read_published(DEV, max_concurrency=64)
    kimi = next(r for r in moe if r.source_model == "moonshotai/Kimi-K2.5" and r.tp == 8)
    dense = _run(2, 8, 1024, 512)
    batch = StepBatch(np.ones(4, np.int64), np.full(4, 1500, np.int64), 4)
    base = default_profile().coefficients()
    for run, layers in ((kimi, 60), (dense, 0)):  # Kimi-K2.5: 61 layers, the first dense
        resolved = resolve_run(run)
        without = step_time_model(resolved, coefficients=base, table_tokens=64)(batch)
        with_fixed = step_time_model(resolved, coefficients=base.replace(moe_layer_latency_s=1e-4),
                                     table_tokens=64)(batch)
        assert with_fixed - without == pytest.approx(layers * 1e-4, rel=1e-6, abs=1e-12), run.label


def test_a_profile_named_by_its_path_is_the_one_replayed(tmp_path):
    from reader.calibration.profile import PUBLISHED_DIR, load_profile
    from reader.fitting.published import replay

    run = _run(2, 4, 1024, 512)
    slow = load_profile(PUBLISHED_DIR / "h100-sxm.yaml")
    slow = slow.model_copy(update={"step_time": {**slow.step_time, "response_latency_s": slow.step_time[
        "response_latency_s"].model_copy(update={"value": 0.5})}})
    path = tmp_path / "slow.yaml"
    from reader.calibration.profile import write_profile
    write_profile(slow, path)
    by_path, shipped = replay(run, calibration_path=str(path)), replay(run)
    assert by_path.ttft_ms == pytest.approx(replay(run, calibration=load_profile(path)).ttft_ms)
    assert by_path.ttft_ms > shipped.ttft_ms + 400  # half a second more per first token


def test_a_fitted_term_on_the_edge_of_its_range_is_named_in_the_fits_warnings():
    """A term the runs push to its bound (H100's all-reduce bandwidth at twice a ring's) is a limit of the model,
    not a measurement: the profile says so."""
    said = fit_published.at_bounds([fit_published.LINK, fit_published.HOST],
                                   {"link_eff": fit_published.LINK.high, "host_overhead_s": 1e-3})
    assert len(said) == 1 and said[0].startswith("link_eff: at the edge of its range")
    assert "ask for more than" in said[0]
    floor = fit_published.at_bounds([fit_published.HOST], {"host_overhead_s": fit_published.HOST.low})
    assert len(floor) == 1 and "ask for less than" in floor[0]
    assert fit_published.at_bounds([fit_published.LINK], {"link_eff": 1.0}) == []

