"""Write a per-release table read from each release's unpacked source: the shared tail of the importers whose
tables the rules consult at run time (import_removed_architectures.py, import_quant_dtypes.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[1]


def write_releases(out: Path, source_note: str, read_release: Callable[[Path], Optional[dict]]) -> None:
    """Ask `read_release` of every checked release's source tree (SRC_DIR/v<tag>) and write what it found;
    a release it answers None for (no source, no such table) is left out."""
    src = _source_dir()
    tags = json.loads((ROOT / "rules" / "flags" / "_history.json").read_text())["tags"]
    releases = {}
    for tag in tags:
        found = read_release(src / f"v{tag}")
        if found is not None:
            releases[tag] = found
    out.write_text(json.dumps({"schema": 1, "_source": source_note, "releases": releases}, indent=1) + "\n")
    print(f"wrote {out}: {len(releases)} releases")


def _source_dir() -> Path:
    """SRC_DIR from the command line, else the folder tools/vllm_sources.sh unpacks the releases into."""
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    done = subprocess.run(["bash", str(ROOT / "tools" / "vllm_sources.sh")], capture_output=True, text=True,
                          check=True)
    return Path(done.stdout.strip().splitlines()[-1])
