"""Rewrite reader/config/forms/release_dates.yaml: the day each release this tool has flag tables for first
appeared on PyPI (the earliest `upload-time` of its files in PyPI's JSON simple API, PEP 691/700).

    python tools/release_dates.py            # needs network; writes the file
"""
from __future__ import annotations

import datetime
import json
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reader.versions import format_version, known_versions  # noqa: E402

OUT = ROOT / "reader" / "config" / "forms" / "release_dates.yaml"
URL = "https://pypi.org/simple/vllm/"
HEADER = """\
# When each vLLM release this tool has flag tables for was published, for image tags that carry a build date
# instead of a release (Vertex AI Model Garden's pytorch-vllm-serve:20250312_0916_RC01). Read by
# reader/config/forms/images.py.
#
# Each date is the day (UTC) the release's first file was uploaded to PyPI: the earliest `upload-time` among
# its files in PyPI's JSON simple API, {url} (PEP 700), fetched {fetched} by tools/release_dates.py.
# A build date on or after the last listed release maps to no release (the newest known release is assumed,
# and said), because a later release may have come out since.
schema: 1
releases:
"""


def first_uploads() -> dict[str, datetime.date]:
    request = urllib.request.Request(URL, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        files = json.load(response)["files"]
    days: dict[str, datetime.date] = {}
    for entry in files:
        name, when = entry["filename"], entry.get("upload-time")
        if not when or not name.startswith("vllm-"):
            continue
        release = name[len("vllm-"):].split("-")[0].removesuffix(".tar.gz")
        day = datetime.date.fromisoformat(when[:10])
        days[release] = min(day, days.get(release, day))
    return days


def main() -> None:
    days = first_uploads()
    lines = [HEADER.format(url=URL, fetched=datetime.date.today().isoformat())]
    for version in known_versions():
        release = format_version(version)
        if release in days:
            lines.append(f"  v{release}: {days[release].isoformat()}\n")
        else:
            print(f"not on PyPI: {release}", file=sys.stderr)
    OUT.write_text("".join(lines), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
