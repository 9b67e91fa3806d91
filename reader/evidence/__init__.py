"""Evidence: what a run of vLLM showed about its limits, whatever produced it (the simulator, a server's
metrics, a log's stats lines); the verdict reads it and nothing else.

- model.py: `Evidence` (typed figures the scoring rules read; None = the source cannot see it) and `Figure`
  (any further named quantity, for the comparison).
- from_sim.py: a simulation's result as Evidence.
- verdict.py: `decide(evidence, slos_ms, compute_ridge_tokens)` -> the limiting default, every signal with its
  numbers (the same rules for every source).
- compare.py: `compare(predicted, observed, draws=None, reasons=None, notes=None)` -> `Comparison`: the
  standard rows from Evidence's fields, then every Figure either side carries, joined by key.

A new source (a log, say) builds `Evidence(source="log", ...)` with what it sees, adds what Evidence has no
field for as `Figure`s (e.g. key "memory.weights_gib", group "memory", a tolerance and an `if_off` reason),
and the predicted side adds figures with the same keys: the comparison, the diagnosis report (Markdown table,
JSON `observed` / `observed_verdict` / `comparison`, SARIF DX400 per disagreement) take them without a change.
"""
