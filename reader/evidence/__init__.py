"""Evidence: what a run of vLLM showed about its limits, whatever produced it (the simulator, a server's
metrics, a log's stats lines); the verdict reads it and nothing else. See model.py."""
