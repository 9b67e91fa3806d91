"""vllm-reader: what a vLLM serving config will do before you deploy it."""

__version__ = "0.1.0"
