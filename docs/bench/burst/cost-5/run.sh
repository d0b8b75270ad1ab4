#!/usr/bin/env bash
# What one Pod costs through vc-syncer before and after a new Pod's service-account tokens are
# requested as it arrives, not by its downward worker (pod.TokenPrefetcher), from interleaved
# runs of the same command on the 2-core machine, nothing else running (2026-12-07). Run from
# the repository root:
#   BEFORE=/path/to/vc-syncer-0648bc9 AFTER=/path/to/vc-syncer-bebf309 docs/bench/burst/cost-5/run.sh
set -euo pipefail
out=${OUT:-docs/bench/burst/cost-5}

# pair DIR A-NAME A-BIN B-NAME B-BIN [burst flags]: A-NAME-1, B-NAME-1, A-NAME-2, B-NAME-2 in
# turn.
pair() {
  local dir=$1 a=$2 abin=$3 b=$4 bbin=$5; shift 5
  for run in "$a" "$b" "$a" "$b"; do
    local bin=$abin; [[ $run == "$b" ]] && bin=$bbin
    mkdir -p "$out/$dir"
    n=$(( $(find "$out/$dir" -mindepth 1 -maxdepth 1 -name "$run-*" | wc -l) + 1 ))
    VC_SYNCER_BENCH_BIN=$bin go run ./test/bench burst "$@" --out "$out/$dir/$run-$n"
  done
}

# The default burst (2 tenants × 200 Pods, 50 creators each) and the held run (2 × 100 Pods
# open loop at half the ceiling), twice each way (before-1..4, after-1..4).
pair prefetch-400 before "$BEFORE" after "$AFTER"
pair prefetch-400 before "$BEFORE" after "$AFTER"
