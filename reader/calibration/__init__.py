"""Calibration profiles: what the capacity model, the simulator and every report read of a deployment's own
measurements (the fitting itself is reader/fitting, which replays the simulator and so sits above it).

- `profile`: the calibration profile type (YAML) every consumer reads;
- `select`: which profile a deployment uses, and whether it may.
"""
