# Sourced by the run.sh of a burst comparison (bash). pair DIR A-NAME A-BIN B-NAME B-BIN
# [burst flags]: runs `go run ./test/bench burst [flags]` with VC_SYNCER_BENCH_BIN=A-BIN, then
# with B-BIN, $PAIRS times (default 2), into $out/DIR/A-NAME-n and $out/DIR/B-NAME-n (n counts on
# from the runs already there), so that the two runs of a pair share the machine's state of the
# moment.
pair() {
  local dir=$1 a=$2 abin=$3 b=$4 bbin=$5; shift 5
  local i run bin n
  for i in $(seq "${PAIRS:-2}"); do
    for run in "$a" "$b"; do
      bin=$abin; [[ $run == "$b" ]] && bin=$bbin
      mkdir -p "$out/$dir"
      n=$(( $(find "$out/$dir" -mindepth 1 -maxdepth 1 -name "$run-*" | wc -l) + 1 ))
      VC_SYNCER_BENCH_BIN=$bin go run ./test/bench burst "$@" --out "$out/$dir/$run-$n"
    done
  done
}
