#!/bin/sh
# Run every test suite and end with one line "N passed, N failed".
# A suite is: a C unit binary (build/tests/test_*), a script
# tests/*/*_test.sh or tests/*/*_test.py, or `uphook test` over the Lua
# test files.  Each prints its own "N passed, N failed" line last; then
# tests/cli/events_schema.py checks every --output json event they made.
BUILD=${1:-build}
UPHOOK=$(cd "$(dirname "$BUILD/uphook")" && pwd)/uphook
# every --output json event of every suite, for the schema check at the
# end (docs/output.md; test-only)
UPHOOK_TEST_EVENT_LOG=$(cd "$BUILD" && pwd)/events.log
rm -f "$UPHOOK_TEST_EVENT_LOG"
export UPHOOK BUILD UPHOOK_TEST_EVENT_LOG
total_p=0; total_f=0; broken=""
tmp=$(mktemp)
run_suite() {
  name=$1; shift
  echo "== $name"
  "$@" >"$tmp" 2>&1
  rc=$?
  grep -v '^ok ' "$tmp" | tail -n 40
  line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$tmp" | tail -n 1)
  p=$(echo "$line" | sed -n 's/.*\b\([0-9]\+\) passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.* \([0-9]\+\) failed.*/\1/p')
  if [ -z "$p" ]; then p=0; f=1; broken="$broken $name"; fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; broken="$broken $name(rc=$rc)"; fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
}
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] && run_suite "$(basename "$t")" "$t"
done
# the stdlib's and the hooks' tests run confined, as an addon repository's
# do; the engine's own (tests/lua) unconfined, with the engine's modules
lua_paths=""
for d in stdlib hooks; do
  [ -n "$(find $d -name '*_test.lua' 2>/dev/null | head -1)" ] && lua_paths="$lua_paths $d"
done
[ -n "$lua_paths" ] && run_suite "uphook test$lua_paths" "$UPHOOK" test $lua_paths
# the Helm of `make helm` renders the helm.* cases (tests/lua/helm_test.lua
# says it skips them, and why, when there is none)
run_suite "uphook test tests/lua (unconfined)" \
  env UPHOOK_TEST_UNCONFINED=1 PATH="$(cd "$BUILD" && pwd)/helm/v3:$PATH" \
  "$UPHOOK" test tests/lua
for s in tests/*/*_test.sh tests/*/*_test.py; do
  [ -f "$s" ] || continue
  case "$s" in *.py) run_suite "$s" python3 "$s" ;; *) run_suite "$s" sh "$s" ;; esac
done
run_suite "events schema (docs/output.md)" \
  python3 tests/cli/events_schema.py "$UPHOOK_TEST_EVENT_LOG"
rm -f "$tmp"
[ -n "$broken" ] && echo "suites that failed or printed no count:$broken"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
