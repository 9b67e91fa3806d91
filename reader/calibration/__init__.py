"""Calibration: fit the step-time model (and, from logs, memory terms) to a deployment's own measurements.

- `profile`: the calibration profile type (YAML) every consumer reads;
- `coefficients`: the step-time model's named coefficients;
- `bench`: `vllm bench serve --save-result` files, read into typed results and replayable workloads;
- `optimize`: the bounded search every fit uses;
- `fit_bench` / `fit_steps`: the fits from bench results and from measured step times;
- `delivery` / `coverage`: what the bench results say about the fit (streams the client read late; loads the
  fitted set lacks);
- `select`: which profile a deployment uses, and whether it may.
"""
