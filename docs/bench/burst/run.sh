#!/usr/bin/env bash
# Runs the burst experiments whose results are committed here, one after another (each starts
# its own control planes; about 3 minutes each on 2 cores). Run from the repository root:
#   docs/bench/burst/run.sh            # the syncer of this checkout
#   VC_SYNCER_BENCH_BIN=/path/to/vc-syncer OUT=bench-out/before docs/bench/burst/run.sh
# (a prebuilt syncer, e.g. of an earlier commit, under the same load tool).
set -euo pipefail
out=${OUT:-docs/bench/burst}
go run ./test/bench burst --out "$out/c50-2x200"                                  # the defaults: 2 × 200, 50 creators per tenant
go run ./test/bench burst --tenants 4 --pods 250 --out "$out/c50-4x250"           # 4 × 250, 50 creators per tenant
go run ./test/bench burst --concurrency 10 --out "$out/c10-2x200"                 # the gentler variant
go run ./test/bench burst --rate 100000 --out "$out/c50-2x200-from-request"       # open loop: every Pod requested at t=0
