#!/bin/bash
# usage: abba.sh TAG PAIRS OFFFLAG ONFLAG   (order per pair alternates: off,on then on,off ...)
set -u
cd ${SRC:-.}
tag=$1; pairs=$2; off=$3; on=$4
for i in $(seq 1 $pairs); do
  order="off on"; [ $((i % 2)) = 0 ] && order="on off"
  for mode in $order; do
    flag=$off; [ $mode = on ] && flag=$on
    out=${OUT:-bench-out/events}/$tag/$mode-$i
    mkdir -p $out
    args=(burst --tenants 2 --pods 200 --nodes 10 --out $out)
    [ -n "$flag" ] && args+=(--syncer-flag="$flag")
    echo "== $(date +%T) $tag $mode-$i load $(cut -d' ' -f1-3 /proc/loadavg) flag=$flag"
    ${BENCH:-go run ./test/bench} "${args[@]}" > $out/bench.log 2>&1
    tail -1 $out/bench.log
  done
done
