#!/usr/bin/env bash
# Unpack the Python source of every vLLM release the flag tables cover, for tools/import_flags.py to read.
#
# Usage: tools/vllm_sources.sh [VERSION...]      (default: every release in rules/flags/_history.json)
# Prints the folder that holds them (VLLM_READER_CACHE/vllm-src, default ~/.cache/vllm-reader/vllm-src):
# one `v<X.Y.Z>/vllm/` tree of .py files per release. Nothing is imported or run.
#
# The source is the release's sdist from the package registry, fetched with pip itself: `pip download
# --no-binary :all:` unpacks the sdist, then fails to build its metadata (vLLM's setup.py needs torch and a
# compiler); `--no-clean` leaves the unpacked tree behind, and only its `vllm/**/*.py` files are kept.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${VLLM_READER_CACHE:-$HOME/.cache/vllm-reader}/vllm-src"
mkdir -p "$CACHE"

if [ "$#" -gt 0 ]; then
  versions=("$@")
else
  mapfile -t versions < <(python3 -c "import json,sys; print('\n'.join(json.load(open(sys.argv[1]))['tags']))" \
    "$HERE/../rules/flags/_history.json")
fi

for v in "${versions[@]}"; do
  dest="$CACHE/v$v"
  if [ -f "$dest/.ready" ]; then continue; fi
  work="$(mktemp -d)"
  echo "vllm_sources: fetching vllm $v" >&2
  TMPDIR="$work" pip download --quiet --no-deps --no-binary :all: --no-build-isolation --no-clean \
    "vllm==$v" -d "$work/dl" >/dev/null 2>&1 || true
  tree="$(find "$work" -maxdepth 3 -type d -name vllm -path '*pip-download-*' | head -n 1)"
  if [ -z "$tree" ] || [ ! -f "$tree/__init__.py" ]; then
    echo "vllm_sources: no source for vllm $v (no sdist?)" >&2
    rm -rf "$work"
    continue
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  (cd "$(dirname "$tree")" && find vllm -name '*.py' -print0 | tar --null -T - -cf -) | tar -xf - -C "$dest"
  touch "$dest/.ready"
  rm -rf "$work"
done
echo "$CACHE"
