#!/usr/bin/env bash
# What one Pod costs through vc-syncer before and after three changes, from interleaved runs of
# the same command on the 2-core machine, nothing else running (2026-12-07). Run from the
# repository root:
#   BEFORE=/path/to/vc-syncer-6bae936 GZIP=/path/to/vc-syncer-b6d22ed ALLOC=/path/to/vc-syncer-6b793d1 \
#     BIND=/path/to/vc-syncer-25fc25f docs/bench/burst/cost-3/run.sh
# BEFORE: the syncer before the changes (6bae936); GZIP: the tenant and super clients ask for no
# gzip (b6d22ed); ALLOC: GZIP plus the kept core informers and the pod writes that skip the
# answer (6b793d1); BIND: ALLOC plus a super Pod's binding enqueued upward only (25fc25f). The
# bench harness is the one of this commit (go run ./test/bench). addr-1000/ compared BIND with a
# build of it with podcache.AddressesOf (dropped, not merged: a local commit on top of 25fc25f).
set -euo pipefail
out=${OUT:-docs/bench/burst/cost-3}

source docs/bench/burst/pair.sh  # pair DIR A-NAME A-BIN B-NAME B-BIN [burst flags]: A, B, A, B

# The default burst (2 tenants × 200 Pods, 50 creators each) and the held run (2 × 100 Pods
# open loop at half the ceiling); the committed runs are before-1..2 and after-1..2.
pair gzip-400 before "$BEFORE" after "$GZIP" --cpu-profile 15s
# 2 × 500 Pods, no held run (a longer burst: less noise in CPU per Pod); committed: before-3..4
# and after-3..4.
pair gzip-1000 before "$BEFORE" after "$GZIP" --cpu-profile 15s --pods 500 --held-pods 0
pair alloc-1000 gz "$GZIP" alloc "$ALLOC" --cpu-profile 15s --pods 500 --held-pods 0     # committed: gz-1..2, alloc-1..2
pair bind-1000 alloc "$ALLOC" bind "$BIND" --cpu-profile 15s --pods 500 --held-pods 0    # committed: alloc-3..4, bind-1..2
# All three against the syncer before them, default burst and held run; committed: before-5..6,
# final-1..2.
pair final-400 before "$BEFORE" final "$BIND" --cpu-profile 15s
