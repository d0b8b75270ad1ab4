#!/usr/bin/env bash
# What one Pod costs through vc-syncer before and after the cached-Pod reads of the Pod event
# handlers (podcache.NodeNameOf/MetaOf), from interleaved runs of the same command. Run from the
# repository root:
#   BEFORE=/path/to/vc-syncer-before AFTER=/path/to/vc-syncer-after docs/bench/burst/cost-2/run.sh
# BEFORE was built at da8bf43 (before the change), AFTER at the commit these results were
# committed with. On the 2-core machine each run went through /work/bin/cp-run, nothing else
# running.
set -euo pipefail
out=${OUT:-docs/bench/burst/cost-2}
cmd=(go run ./test/bench burst --cpu-profile 15s)   # 2 tenants × 200 Pods, 50 creators, then 2 × 100 open loop at half the ceiling
for run in before-1 after-1 before-2 after-2; do
  bin=${AFTER:-}; [[ $run == before-* ]] && bin=${BEFORE:-}
  VC_SYNCER_BENCH_BIN=$bin "${cmd[@]}" --out "$out/$run"
done
