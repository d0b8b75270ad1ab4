#!/usr/bin/env bash
# The noisy-neighbour measurement: tenant B's Pod latency (create → Running in tenant B) alone and
# beside tenant A's attack, for two attacks (A's ConfigMap replace loop; A's 25 s webhook), from
# the isolation suite's share-* subtests, which write their figures when VCSYNCER_NEIGHBOURS_OUT
# names a directory. LABEL names the run (before/after a change). Run from the repository root.
set -euo pipefail
out=${OUT:-docs/bench/noisy-neighbour/raw}
label=${LABEL:-run}
cd test/integration/isolation
VCSYNCER_NEIGHBOURS_OUT=$(cd ../../.. && mkdir -p "$out" && cd "$out" && pwd) VCSYNCER_NEIGHBOURS_LABEL=$label \
  go test -count=1 -timeout 40m -run 'TestIsolation/share-' . -v
