#!/usr/bin/env bash
# Issue 36, items 1 and 2: what one Pod costs through vc-syncer, before and after the cut of the
# tenant Pod GET, from interleaved runs of the same command. Run from the repository root.
#   BEFORE=/path/to/vc-syncer-before AFTER=/path/to/vc-syncer-after docs/bench/burst/cost/run.sh
# BEFORE is the syncer built at the commit that adds vcsyncer_pod_creation_syncer_held_seconds
# (720a888), AFTER at the commit that caches unbound tenant Pods whole (the GET cut). Without
# them, each run builds ./cmd/vc-syncer of this checkout. On the shared 2-core machine each run
# went through /work/bin/cp-run (one of two control-plane slots).
set -euo pipefail
out=${OUT:-docs/bench/burst/cost}
cmd=(go run ./test/bench burst --cpu-profile 15s)   # 2 tenants × 200 Pods, 50 creators, then 2 × 100 open loop at half the ceiling
for run in before-1 after-1 before-2 after-2; do
  bin=${AFTER:-}; [[ $run == before-* ]] && bin=${BEFORE:-}
  VC_SYNCER_BENCH_BIN=$bin "${cmd[@]}" --out "$out/$run"
done
