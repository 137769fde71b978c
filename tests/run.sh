#!/bin/sh
# Run every test suite and end with one line "N passed, N failed".
# A suite is: a C unit binary (build/tests/test_*), a script
# tests/*/*_test.sh or tests/*/*_test.py, or `uphook test` over the Lua
# test files.  Each prints its own "N passed, N failed" line last; then
# tests/cli/events_schema.py checks every --output json event they made.
# Suites run TEST_JOBS at a time (TEST_JOBS=1: one after another).  The
# default is two per CPU: the suites wait (for timeouts, servers, child
# processes) more than they compute: one at a time on 2 CPUs, make test
# took 13.5 minutes for 4.6 minutes of CPU time.  Each suite has its
# own temporary folder and loopback addresses, so they do not meet, and
# holds the limits it tests (memory, output, time) with a margin for a
# busy machine.  A suite's output is printed whole when it ends: "== NAME",
# what it printed but its "ok" lines, then its time "(N s)".
BUILD=${1:-build}
UPHOOK=$(cd "$(dirname "$BUILD/uphook")" && pwd)/uphook
# every --output json event of every suite, for the schema check at the
# end (docs/output.md; test-only)
UPHOOK_TEST_EVENT_LOG=$(cd "$BUILD" && pwd)/events.log
rm -f "$UPHOOK_TEST_EVENT_LOG"
export UPHOOK BUILD UPHOOK_TEST_EVENT_LOG
JOBS=${TEST_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
total_p=0; total_f=0; broken=""; n=0; running=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
# a suite that ends writes "N RC SECONDS" here (one short write: lines
# from suites ending together do not mix)
mkfifo "$work/done"
exec 3<>"$work/done"

# report N RC SECONDS: print suite N's output and add up its counts
report() {
  name=$(cat "$work/$1.name"); out="$work/$1.out"
  echo "== $name"
  grep -v '^ok ' "$out" | tail -n 40
  echo "   ($3 s)"
  line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
  p=$(echo "$line" | sed -n 's/.*\b\([0-9]\+\) passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.* \([0-9]\+\) failed.*/\1/p')
  if [ -z "$p" ]; then p=0; f=1; broken="$broken $name"; fi
  if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; broken="$broken $name(rc=$2)"; fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
}
# wait_one: wait for any running suite to end, and report it
wait_one() {
  read -r i rc secs <&3
  report "$i" "$rc" "$secs"
  running=$((running - 1))
}
wait_all() { while [ "$running" -gt 0 ]; do wait_one; done; }
# run_suite NAME CMD...: start CMD once fewer than JOBS suites run
run_suite() {
  while [ "$running" -ge "$JOBS" ]; do wait_one; done
  n=$((n + 1)); running=$((running + 1))
  echo "$1" >"$work/$n.name"; shift
  (
    start=$(date +%s)
    "$@" >"$work/$n.out" 2>&1 3>&- </dev/null
    rc=$?
    echo "$n $rc $(($(date +%s) - start))" >&3
  ) &
}

# the longest suites (two minutes or more on a busy 2-CPU machine) start
# first, and the rest fill the other slots around them
LONG="tests/cli/crash_test.sh tests/nodes/nodes_test.sh tests/nodes/crash_test.sh
  tests/hostile/hostile_test.sh tests/microk8s/upgrade_patch_test.py"
script() {
  case "$1" in *.py) run_suite "$1" python3 "$1" ;; *) run_suite "$1" sh "$1" ;; esac
}
for s in $LONG; do
  [ -f "$s" ] && script "$s"
done
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] && run_suite "$(basename "$t")" "$t"
done
# the stdlib's, the hooks' and the hook API's compatibility tests
# (tests/compat) run confined, as an addon repository's do; the engine's
# own (tests/lua) unconfined, with the engine's modules
lua_paths=""
for d in stdlib hooks tests/compat; do
  [ -n "$(find $d -name '*_test.lua' 2>/dev/null | head -1)" ] && lua_paths="$lua_paths $d"
done
# the Helm of `make helm` renders what helm.* renders in the hooks' tests
# and the engine's (tests/lua/helm_test.lua says it skips them, and why,
# when there is none)
# $BUILD's Helm, else build/'s: a sanitizer build's tree (build/asan) has
# none of its own, and `make helm` fetches into build/helm
helm_dir=$(cd "$BUILD" && pwd)/helm/v3
[ -x "$helm_dir/helm" ] || helm_dir=$(pwd)/build/helm/v3
HELM_PATH="$helm_dir:$PATH"
[ -n "$lua_paths" ] && run_suite "uphook test$lua_paths" \
  env PATH="$HELM_PATH" "$UPHOOK" test $lua_paths
run_suite "uphook test tests/lua (unconfined)" \
  env UPHOOK_TEST_UNCONFINED=1 PATH="$HELM_PATH" "$UPHOOK" test tests/lua
for s in tests/*/*_test.sh tests/*/*_test.py; do
  case " $(echo $LONG) " in *" $s "*) continue ;; esac
  [ -f "$s" ] && script "$s"
done
# the schema check reads what every other suite wrote: it runs after them
wait_all
run_suite "events schema (docs/output.md)" \
  python3 tests/cli/events_schema.py "$UPHOOK_TEST_EVENT_LOG"
wait_all
[ -n "$broken" ] && echo "suites that failed or printed no count:$broken"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
