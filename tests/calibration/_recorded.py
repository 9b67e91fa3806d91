"""A recorded fixture folder (fixtures/calibration/cpu-tiny-*) with its fitted profile, set up to replay its loads."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from reader.fitting.fit_bench import Setup, setup
from reader.calibration.profile import CalibrationProfile
from reader.calibration.select import standin_gpu
from reader.config.from_cli import load_options
from reader.config.load import load_deployment
from reader.config.resolve import resolve

TINY = str(Path(__file__).resolve().parents[2] / "fixtures" / "live" / "tiny-llama")


def profile_setup(folder: Path, profile: CalibrationProfile, fitted: Sequence[Any] = ()) -> tuple[Setup, dict]:
    """The folder's deployment.yaml resolved on the profile's device, the fit's setup for it (with `fitted`,
    the results a fit would see), and the profile's values of that setup's free coefficients."""
    r = resolve(load_deployment(str(folder / "deployment.yaml"), load_options(model=TINY)), model_override=TINY,
                calibration=profile, device=standin_gpu(profile.device))
    s = setup(r, profile.device, fitted=fitted)
    values = {f.name: (getattr(profile.device, f.name.split(".", 1)[1]) if f.name.startswith("device.")
                       else profile.step_time[f.name].value) for f in s.free}
    return s, values
