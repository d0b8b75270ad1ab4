#!/usr/bin/env bash
# What one Pod costs through vc-syncer before and after a new Pod is reconciled downward once
# (its own super create and its tenant binding no longer queue it again), from interleaved runs
# of the same command on the 2-core machine, nothing else running (2026-12-07). Run from the
# repository root:
#   BEFORE=/path/to/vc-syncer-d670284 AFTER=/path/to/vc-syncer-50215ea FINAL=/path/to/vc-syncer-0e1350f \
#     docs/bench/burst/cost-4/run.sh
# BEFORE: the syncer before the change (d670284); AFTER: the Add of a super Pod the reconciler
# created and the tenant binding to its super Pod's node no longer queue it downward (50215ea);
# FINAL: AFTER with the tenant Pod's update decoded once for both checks (0e1350f).
set -euo pipefail
out=${OUT:-docs/bench/burst/cost-4}

source docs/bench/burst/pair.sh  # pair DIR A-NAME A-BIN B-NAME B-BIN [burst flags]: A, B, A, B

# 2 × 500 Pods, no held run (a longer burst: less noise in CPU per Pod).
pair echo-1000 before "$BEFORE" after "$AFTER" --cpu-profile 15s --pods 500 --held-pods 0
# The default burst (2 tenants × 200 Pods, 50 creators each) and the held run (2 × 100 Pods
# open loop at half the ceiling); run twice (before-1..4, after-1..4).
pair echo-400 before "$BEFORE" after "$AFTER" --cpu-profile 15s
pair echo-400 before "$BEFORE" after "$AFTER" --cpu-profile 15s
pair final-400 before "$BEFORE" final "$FINAL" --cpu-profile 15s
