# Timestamps read back the same whatever the machine's time zone
# (lua/core/timefmt.lua computes in UTC and never reads the zone; this
# holds it so): tests/lua/timefmt_test.lua under zones with and without
# summer time, east and west of UTC. A zone the machine lacks (no tzdata)
# is said and skipped; UTC always runs.
. "$(dirname "$0")/lib.sh"
for tz in UTC America/New_York Europe/Berlin Australia/Lord_Howe Asia/Kolkata; do
  if [ "$tz" != UTC ] && [ ! -e "/usr/share/zoneinfo/$tz" ]; then
    echo "skip $tz: no /usr/share/zoneinfo/$tz on this machine"
    continue
  fi
  run env TZ="$tz" UPHOOK_TEST_UNCONFINED=1 "$UPHOOK" test \
    tests/lua/timefmt_test.lua
  expect "TZ=$tz: timestamps and Lease expiry exact" 0 "^2 passed, 0 failed"
done
finish
