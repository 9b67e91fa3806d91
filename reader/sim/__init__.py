"""The step-exact vLLM V1 scheduler simulator (entry points in reader.sim.api)."""
