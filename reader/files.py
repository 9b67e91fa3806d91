"""Writing a report, a profile or saved scrapes whole or not at all: into a temporary file beside the target,
renamed over it once complete, so that Ctrl-C (or a full disk) mid-write leaves no partial file behind."""
from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path


def write_whole(path: str | Path, text: str, compress: bool = False) -> None:
    target = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent or ".")
    try:
        with os.fdopen(handle, "wb") as out:
            data = text.encode()
            out.write(gzip.compress(data) if compress else data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
