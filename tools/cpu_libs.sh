#!/usr/bin/env bash
# The CPU build of vLLM 0.18.0 refuses to start unless LD_PRELOAD names libtcmalloc (and libiomp, which its
# venv ships): vllm/v1/worker/cpu_worker.py init_device @ v0.18.0. This installs tcmalloc once (Debian/Ubuntu,
# as root); elsewhere it says what is missing and the 0.18.0 live log tests skip with that reason.
set -uo pipefail
if ldconfig -p 2>/dev/null | grep -q libtcmalloc; then exit 0; fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  (apt-get install -y -q libgoogle-perftools4 >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && \
    apt-get install -y -q libgoogle-perftools4 >/dev/null 2>&1; }) && exit 0
fi
echo "cpu_libs: libtcmalloc not found and not installable here; vLLM 0.18.0's CPU server will not start" >&2
exit 0
