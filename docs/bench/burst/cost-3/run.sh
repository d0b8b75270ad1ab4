#!/usr/bin/env bash
# What one Pod costs through vc-syncer before and after two changes, from interleaved runs of
# the same command on the 2-core machine, nothing else running (2026-12-07). Run from the
# repository root:
#   BEFORE=/path/to/vc-syncer-6bae936 GZIP=/path/to/vc-syncer-b6d22ed ALLOC=/path/to/vc-syncer-6b793d1 \
#     BIND=/path/to/vc-syncer-25fc25f docs/bench/burst/cost-3/run.sh
# BEFORE: the syncer before the change (6bae936); GZIP: the tenant and super clients ask for no
# gzip (b6d22ed); ALLOC: GZIP plus the kept core informers and the pod writes that skip the
# answer (6b793d1); BIND: ALLOC plus a super Pod's binding enqueued upward only (25fc25f). The
# bench harness is the one of this commit (go run ./test/bench).
set -euo pipefail
out=${OUT:-docs/bench/burst/cost-3}
burst=(go run ./test/bench burst --cpu-profile 15s)
# gzip-400: the default burst (2 tenants × 200 Pods, 50 creators each) and the held run
# (2 × 100 Pods open loop at half the ceiling).
for run in before-1 after-1 before-2 after-2; do
  bin=$GZIP; [[ $run == before-* ]] && bin=$BEFORE
  VC_SYNCER_BENCH_BIN=$bin "${burst[@]}" --out "$out/gzip-400/$run"
done
# gzip-1000: 2 × 500 Pods, no held run (a longer burst: less noise in CPU per Pod).
for run in before-3 after-3 before-4 after-4; do
  bin=$GZIP; [[ $run == before-* ]] && bin=$BEFORE
  VC_SYNCER_BENCH_BIN=$bin "${burst[@]}" --pods 500 --held-pods 0 --out "$out/gzip-1000/$run"
done
# alloc-1000: the same, GZIP against ALLOC.
for run in gz-1 alloc-1 gz-2 alloc-2; do
  bin=$ALLOC; [[ $run == gz-* ]] && bin=$GZIP
  VC_SYNCER_BENCH_BIN=$bin "${burst[@]}" --pods 500 --held-pods 0 --out "$out/alloc-1000/$run"
done
# bind-1000: ALLOC against BIND, with the syncer's metrics (downward Pod reconciles per Pod).
for run in alloc-3 bind-1 alloc-4 bind-2; do
  bin=$BIND; [[ $run == alloc-* ]] && bin=$ALLOC
  VC_SYNCER_BENCH_BIN=$bin "${burst[@]}" --pods 500 --held-pods 0 --out "$out/bind-1000/$run"
done
# final-400: BEFORE against BIND, the default burst and the held run.
for run in before-5 final-1 before-6 final-2; do
  bin=$BIND; [[ $run == before-* ]] && bin=$BEFORE
  VC_SYNCER_BENCH_BIN=$bin "${burst[@]}" --out "$out/final-400/$run"
done
# addr-1000: BIND against a build of it with podcache.AddressesOf (dropped, not merged; the
# binary was built from a local commit on top of 25fc25f).
