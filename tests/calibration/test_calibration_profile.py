"""The calibration profile type: what it holds, how it is read and written, and what a bad one gets."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reader.capacity.coefficients import MEANING, StepTimeCoefficients
from reader.calibration.profile import (DEFAULT_PROFILE, CalibrationProfile, dump_profile, load_profile,
                                        write_profile)
from reader.errors import ReaderError


def shipped() -> CalibrationProfile:
    return load_profile(DEFAULT_PROFILE)


def test_every_coefficient_has_a_meaning_and_a_value_in_the_shipped_profile():
    assert set(MEANING) == set(StepTimeCoefficients.names())
    profile = shipped()
    assert set(profile.step_time) == set(StepTimeCoefficients.names())
    assert profile.coefficients().as_dict() == {k: c.value for k, c in profile.step_time.items()}
    assert profile.memory.activation_peak_bytes is None  # the memory terms wait for a log fit


def test_a_profile_reads_back_exactly_as_written(tmp_path):
    profile = shipped()
    path = tmp_path / "p.yaml"
    write_profile(profile, path)
    assert load_profile(path) == profile
    assert dump_profile(profile).startswith("# vllm-reader calibration profile")


def _broken(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load(DEFAULT_PROFILE.read_text())
    edit(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("edit, words", [
    (lambda d: d.pop("kind"), "not a calibration profile"),
    (lambda d: d["step_time"].pop("knee_p"), "'knee_p' is missing"),
    (lambda d: d["step_time"].update(warp_factor={"value": 9, "source": "x"}), "unknown step-time coefficient"),
    (lambda d: d["fitted_on"].update(tensor_parallel_size=0), "greater than or equal to 1"),
    (lambda d: d.update(colour="blue"), "unknown key"),
    # an efficiency the step time divides by, and a time, out of their ranges: refused, not simulated into NaNs
    (lambda d: d["step_time"]["gemm_compute_eff"].update(value=0.0), "'gemm_compute_eff' is 0: it must be above 0"),
    (lambda d: d["step_time"]["host_overhead_s"].update(value=-1e-3), "'host_overhead_s' is -0.001: it must be at "
                                                                      "least 0"),
    # a wrong type says what was expected and what came, in our words, not pydantic's
    (lambda d: d["step_time"]["link_eff"].update(value="abc"), "expects a number, got 'abc'"),
])
def test_a_bad_profile_is_one_sentence_naming_the_key(tmp_path, edit, words):
    path = _broken(tmp_path, edit)
    with pytest.raises(ReaderError) as err:
        load_profile(path)
    assert words in err.value.render() and str(path) in err.value.render()
    assert "Value error" not in err.value.render()


def test_a_bad_profile_names_the_line_of_its_key(tmp_path):
    path = _broken(tmp_path, lambda d: d["fitted_on"].update(tensor_parallel_size="two"))
    with pytest.raises(ReaderError) as err:
        load_profile(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "tensor_parallel_size" in text)
    assert err.value.key == "fitted_on.tensor_parallel_size" and err.value.line == line


@pytest.mark.parametrize("text", ["", "[1, 2", "!!python/object:os.system {}", "kind: 3"])
def test_not_a_profile_at_all(tmp_path, text):
    path = tmp_path / "x.yaml"
    path.write_text(text)
    with pytest.raises(ReaderError):
        load_profile(path)


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    target = tmp_path / "dir-as-file"
    target.write_text("not a folder")
    with pytest.raises(ReaderError):
        write_profile(shipped(), target / "p.yaml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir-as-file"]


def test_ctrl_c_while_writing_leaves_the_old_profile_and_no_temporary_file(tmp_path, monkeypatch):
    import os

    target = tmp_path / "p.yaml"
    target.write_text("the profile from before")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_profile(shipped(), target)
    assert [p.name for p in tmp_path.iterdir()] == ["p.yaml"] and target.read_text() == "the profile from before"
