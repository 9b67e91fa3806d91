"""Rules as data (rules/validation/*.yaml, rules/compat-matrix.yaml) and the engine that checks them.

`loader.load_rules()` reads and validates the rule files, `engine.check_resolved()` evaluates them
against one resolved deployment, `findings` holds the models of what `vllm-reader check` reports.
Nothing here imports heavy modules at import time.
"""
