"""Fitting a calibration profile (`vllm-reader calibrate`) to a deployment's own measurements. It replays the
simulator, the diagnosis's scenarios and vLLM logs, so it sits above them; the profiles it writes
(reader/calibration) sit below, beside the capacity model that reads them.

- `bench`: `vllm bench serve --save-result` files, read into typed results and replayable workloads;
- `optimize`: the bounded search every fit uses;
- `fit_bench` / `fit_steps` / `fit_log` / `fit_memory` / `fit_published`: the fits from bench results, measured
  step times, start-up logs and published serving runs;
- `delivery` / `coverage`: what the bench results say about the fit (streams the client read late; loads the
  fitted set lacks);
- `run`: the calibrate command's one entry.
"""
