#!/usr/bin/env bash
# Builds bin/vc-syncer and runs `vc-syncer dev` (arguments passed on) in this very process
# (exec): Ctrl-C, and kill -INT or -TERM sent to this script's pid, reach vc-syncer dev, which
# stops every control plane it started. Prints a progress line from the first second, also
# while Go compiles (a first build on 2 cores takes about 4 minutes; later ones seconds).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
start=$(date +%s)
log() { echo "[dev +$(( $(date +%s) - start ))s] $*" >&2; }
log "compiling bin/vc-syncer (first build ~4 min on 2 cores, then seconds)"
go build -o bin/vc-syncer ./cmd/vc-syncer &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exit 130' INT TERM
n=0
while kill -0 "$pid" 2>/dev/null; do
  sleep 1; n=$((n + 1))
  if (( n % 15 == 0 )); then log "still compiling bin/vc-syncer"; fi
done
wait "$pid"
trap - INT TERM
log "compiled; starting vc-syncer dev"
exec ./bin/vc-syncer dev "$@"
