"""observe: what a running vLLM server really did, from its Prometheus metrics (live, saved, or a Prometheus
server), as the same Evidence the simulator produces."""
