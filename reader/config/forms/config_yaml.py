"""`vllm serve --config` files: a mapping whose keys are vLLM options, each key a flag."""
from __future__ import annotations

import json
from typing import Any, Optional

from ...errors import ReaderError
from ..flagtable import history_prefix_matches, option_history
from ..invocation import ConfigEntry, Invocation
from ..model import SourceLoc
from ..yamlsafe import YamlDoc


def is_vllm_config(data: Any) -> bool:
    """A mapping whose keys are mostly vLLM options (of any release): a `vllm serve --config` file. Chart values
    (`enabled:`, `resources:`, `storage:`) are not, even when one of their keys (`model:`) is an option name."""
    if not isinstance(data, dict) or not data:
        return False
    known = sum(1 for key in data if _names_an_option(str(key)))
    return known >= 1 and known * 2 >= len(data)


def _names_an_option(key: str) -> bool:
    option = "--" + key.replace("_", "-")
    return option_history(option) is not None or len({h.canonical for h in history_prefix_matches(option)}) == 1


def config_entries(doc: YamlDoc, file: Optional[str]) -> Invocation:
    """A `vllm serve --config` file: every top-level key is a flag name."""
    inv = Invocation(form="vllm-config-yaml", label="config file", line=1)
    model = doc.data.get("model")
    if isinstance(model, dict):
        # vLLM turns a mapping value into `--key json.dumps(value)` (load_config_file, vllm/utils/argparse_utils.py
        # @ v0.32.0): --model gets the JSON text, which names no model
        raise ReaderError(
            "'model' is a mapping here, but a vLLM --config file holds one command-line option per key, so vLLM "
            f"would pass {json.dumps(model)} as the model's name and find no such model. Give the model as its "
            "Hugging Face id or path, a string (model: Qwen/Qwen3-8B).",
            file=file, line=doc.line(("model",)), key="model")
    for key, value in doc.data.items():
        inv.entries.append(ConfigEntry(str(key), value, SourceLoc(file=file, line=doc.line((str(key),)))))
    return inv
