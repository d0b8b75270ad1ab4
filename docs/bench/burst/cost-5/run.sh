#!/usr/bin/env bash
# What one Pod costs through vc-syncer before and after a new Pod's service-account tokens are
# requested as it arrives, not by its downward worker (pod.TokenPrefetcher), from interleaved
# runs of the same command on the 2-core machine, nothing else running (2026-12-07). Run from
# the repository root:
#   BEFORE=/path/to/vc-syncer-0648bc9 AFTER=/path/to/vc-syncer-bebf309 docs/bench/burst/cost-5/run.sh
set -euo pipefail
out=${OUT:-docs/bench/burst/cost-5}

source docs/bench/burst/pair.sh  # pair DIR A-NAME A-BIN B-NAME B-BIN [burst flags]: A, B, A, B

# The default burst (2 tenants × 200 Pods, 50 creators each) and the held run (2 × 100 Pods
# open loop at half the ceiling), twice each way (before-1..4, after-1..4).
pair prefetch-400 before "$BEFORE" after "$AFTER"
pair prefetch-400 before "$BEFORE" after "$AFTER"
