#!/usr/bin/env bash
# Install, once, a Prometheus server for the observe live tests: Debian's `prometheus` package (the
# distribution's own build; apt-get is the only source used). Idempotent: an installed binary is reused.
# Prints `export VLLM_READER_PROMETHEUS=PATH` when one is ready, so callers can eval its output; prints
# nothing (and says why on stderr) when none can be had, and the Prometheus live test then skips outside CI.
# The package's service is not started (the tests start their own server on a free 127.0.0.1 port).
set -uo pipefail

log() { echo "prometheus_env: $*" >&2; }

found="$(command -v prometheus || true)"
if [ -z "$found" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  log "installing Debian's prometheus package (about a minute)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache show prometheus >/dev/null 2>&1; then
    apt-get update -qq >&2 || log "apt-get update failed"
  fi
  # policy-rc.d 101: the package's service must not start here
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1; fi
  apt-get install -y -qq --no-install-recommends prometheus >&2 || log "apt-get install prometheus failed"
  if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi
  found="$(command -v prometheus || true)"
fi
if [ -n "$found" ]; then
  echo "export VLLM_READER_PROMETHEUS=$found"
else
  log "no Prometheus server available; the Prometheus live test will skip"
fi
