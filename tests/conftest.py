"""Suite-wide set-up: subprocesses the tests start run this checkout's code, installed or not."""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# `python -m reader` started from a temporary directory must import the checkout under test, not
# whatever copy (or none) the interpreter has installed: several worktrees share one interpreter.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
# The tools' modules (the corpus listing, the differential harness) are shared with the tests: one place adds them.
sys.path.insert(0, str(ROOT / "tools"))

# The suite never reaches the real Hugging Face Hub and never reads the user's own cache: model
# resolution sees an empty cache and offline mode. Tests of the cache and of the Hub set their own
# (a fixture cache; a stand-in Hub on 127.0.0.1 through HF_ENDPOINT).
_EMPTY_HF_CACHE = Path(tempfile.mkdtemp(prefix="vllm-reader-tests-hf-"))
atexit.register(shutil.rmtree, _EMPTY_HF_CACHE, ignore_errors=True)
for _key in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT", "HF_HOME", "HUGGINGFACE_HUB_CACHE"):
    os.environ.pop(_key, None)
os.environ["HF_HUB_CACHE"] = str(_EMPTY_HF_CACHE)
os.environ["HF_HUB_OFFLINE"] = "1"
