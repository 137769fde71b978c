#!/bin/sh
# The fidelity cases of tests/lua/fidelity/, each run twice: on the
# mock (what `uphook test` and --offline use) and on the fake API server of
# tests/fakes (the one the real kubectl accepts, and the live backend's tests
# run against), through the HTTP requests kubectl sends. Both must give the
# API server's answer, so each rule is checked against a real client too.
# Run from the repository root with $UPHOOK set (tests/run.sh does).
set -u
ROOT=$(pwd)
UPHOOK=${UPHOOK:-$ROOT/build/uphook}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fidelity_test.XXXXXX")
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

SRV=$TMP/srv
mkdir -p "$SRV"
python3 tests/fakes/apiserver.py --dir "$SRV" --quiet --rollout-delay 0.05 \
  >"$SRV/stdout" 2>"$SRV/stderr" &
PID=$!
i=0
while [ $i -lt 150 ] && ! grep -q '^ready ' "$SRV/stdout"; do
  sleep 0.1; i=$((i + 1))
done
if ! grep -q '^ready ' "$SRV/stdout"; then
  echo "FAIL the fake API server did not start"; cat "$SRV/stderr"
  echo "0 passed, 1 failed"; exit 1
fi
UPHOOK_FAKE_DIR=$SRV UPHOOK_TEST_UNCONFINED=1 "$UPHOOK" test --jobs 1 \
  tests/lua/fidelity >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
# every case ran on both: as many "[fake API server]" cases as mock ones
n_fake=$(grep -c '\[fake API server\]' "$TMP/out")
if [ "$n_fake" -eq 0 ]; then
  echo "FAIL no case ran against the fake API server"; exit 1
fi
exit $rc
