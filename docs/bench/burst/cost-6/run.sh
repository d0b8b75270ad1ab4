#!/usr/bin/env bash
# What one Pod costs the super cluster with and without pods in the backstop ResourceQuota of
# each super namespace, from interleaved runs of the same command on the 2-core machine,
# nothing else running (2026-12-07). Run from the repository root:
#   BEFORE=/path/to/vc-syncer-eb38fe3 AFTER=/path/to/vc-syncer-<the change> docs/bench/burst/cost-6/run.sh
set -euo pipefail
out=${OUT:-docs/bench/burst/cost-6}
source docs/bench/burst/pair.sh

# The default burst (2 tenants × 200 Pods, 50 creators each) and the held run (2 × 100 Pods
# open loop at half the ceiling, then as many straight into the super cluster): before-1,
# after-1, … before-3, after-3.
PAIRS=3 pair backstop before "$BEFORE" after "$AFTER"
