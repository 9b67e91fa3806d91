"""Suite-wide set-up: subprocesses the tests start run this checkout's code, installed or not."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# `python -m reader` started from a temporary directory must import the checkout under test, not
# whatever copy (or none) the interpreter has installed: several worktrees share one interpreter.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
