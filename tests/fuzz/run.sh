#!/bin/sh
# Run every libFuzzer target of BUILD (default build/fuzz) for SECONDS each
# (default 30), JOBS at a time (default: the number of CPUs; a free slot
# takes the next target, in the order given), and print one line per
# target: executions, exec/s, time, corpus size and crashes.  With
# FUZZ_RUNS=N each target stops after N executions instead (the long local
# runs: FUZZ_RUNS=10000000).
#   usage: tests/fuzz/run.sh [BUILD [SECONDS [TARGET...]]]
# Seeds are rebuilt into BUILD/seeds by tests/fuzz/seeds.py; the corpus
# each target grows is kept in BUILD/corpus/<target> between runs; a crash,
# leak, timeout or OOM input is saved in BUILD/crashes/<target>/ and makes
# the run fail.  Extra libFuzzer flags: FUZZ_FLAGS.
BUILD=${1:-build/fuzz}
SECONDS_EACH=${2:-30}
[ $# -ge 2 ] && shift 2 || shift $#
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
targets="$*"
[ -n "$targets" ] || targets=$(cd "$BUILD" && ls fuzz_* 2>/dev/null \
  | sed -n 's/^fuzz_\([a-z_]*\)$/\1/p')
[ -n "$targets" ] || { echo "no fuzz targets in $BUILD"; exit 1; }
rm -rf "$BUILD/seeds"
python3 tests/fuzz/seeds.py "$BUILD/seeds" >/dev/null || exit 1
# the targets write their input to a file: on tmpfs when there is one
tmp="$BUILD/tmp"
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp="/dev/shm/uphook-fuzz-$$"
rm -rf "$tmp" && mkdir -p "$tmp" "$BUILD/logs"

run_one() {
  t=$1
  mkdir -p "$BUILD/corpus/$t" "$BUILD/crashes/$t" "$BUILD/seeds/$t" "$tmp/$t"
  if [ -n "$FUZZ_RUNS" ]; then limit="-runs=$FUZZ_RUNS"
  else limit="-max_total_time=$SECONDS_EACH"; fi
  # The broker's inputs are message streams: long ones only repeat calls
  # and cost more per run (0.8 k exec/s at 64 KiB, stuck at 297 edges
  # over 2.7 M runs), while 4 KiB reached 497 edges in 10 M at 2.4 k/s.
  maxlen=65536
  [ "$t" = broker ] && maxlen=4096
  TMPDIR="$tmp/$t" ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  "$BUILD/fuzz_$t" "$limit" -max_len=$maxlen \
    -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="$BUILD/crashes/$t/" $FUZZ_FLAGS \
    "$BUILD/corpus/$t" "$BUILD/seeds/$t" >"$BUILD/logs/$t.log" 2>&1
  echo $? >"$BUILD/logs/$t.rc"
}

# a queue: JOBS workers, each taking the next target as it finishes one
worker() {
  while :; do
    t=$(mkdir "$tmp/.lock" 2>/dev/null && { head -1 "$tmp/queue";
      sed -i 1d "$tmp/queue"; rmdir "$tmp/.lock"; }) || { sleep 0.1; continue; }
    [ -n "$t" ] || return 0
    run_one "$t"
  done
}
for t in $targets; do echo "$t"; done >"$tmp/queue"
n=0
while [ $n -lt "$JOBS" ]; do
  worker &
  n=$((n + 1))
done
wait

failed=0
printf '%-11s %12s %8s %8s %8s %8s\n' target executions exec/s seconds corpus \
  crashes
for t in $targets; do
  log="$BUILD/logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  corpus=$(ls "$BUILD/corpus/$t" | wc -l)
  crashes=$(grep -c '^artifact_prefix=.*Test unit written to\|Test unit written to' "$log")
  rc=$(cat "$BUILD/logs/$t.rc")
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=1
    [ "$crashes" -eq 0 ] && crashes="rc=$rc"
  fi
  printf '%-11s %12s %8s %8s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" \
    "${secs:-?}" "$corpus" "$crashes"
done
if [ $failed -ne 0 ]; then
  echo "fuzzing found problems: see $BUILD/logs/ and $BUILD/crashes/"
  for t in $targets; do
    rc=$(cat "$BUILD/logs/$t.rc")
    [ "$rc" -ne 0 ] && { echo "== $t"; grep -A25 '==ERROR\|property violated\|runtime error\|deadly signal' "$BUILD/logs/$t.log" | head -40; }
  done
fi
rm -rf "$tmp"
exit $failed
