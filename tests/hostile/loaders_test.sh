# uphook list and uphook lint load hooks too, and are held to the same
# limits as upgrade (docs/security.md "Unbounded list and lint"): one
# --timeout for the whole command (default 15 s), --memory-limit for each
# hook, and the broker's own bounds (its peak RSS, from
# UPHOOK_TEST_RUSAGE, in the plain build). Where time is the point (one
# --timeout for every hook) the command must end within it plus GRACE_MS,
# and WALL_MARGIN_MS more for a busy machine (without the limit it would
# spin to the 120 s backstop); where memory is the point the command has
# a --timeout of 30 s (60 s for the chatty hook's 256 MiB of log), a
# margin that keeps a busy machine from turning it into a timeout.
. tests/cli/lib.sh

BROKER_RSS_MIB=128
GRACE_MS=2000
WALL_MARGIN_MS=3000
case "${BUILD:-build}" in *asan*|*valgrind*) CEILINGS=no ;; *) CEILINGS=yes ;; esac

REPO=$TMP/repo REPO2=$TMP/repo2
make_repo "$REPO" spin1 spin2 spin3 fat
make_repo "$REPO2" fat chatty
for n in spin1 spin2 spin3; do
  cat >"$REPO/addons/$n/upgrade.lua" <<'HOOK'
while true do end
HOOK
done
cat >"$REPO/addons/fat/upgrade.lua" <<'HOOK'
local t = {}
for i = 1, 160 do t[i] = string.rep("x", 1 << 20) .. i end
return { version = "1.0.0", from = "*", permissions = {}, upgrade = function() end }
HOOK
cp "$REPO/addons/fat/upgrade.lua" "$REPO2/addons/fat/"
cat >"$REPO2/addons/chatty/upgrade.lua" <<'HOOK'
local big = string.rep("x", 16 << 20)
for _ = 1, 16 do log.info(big) end
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  description = "chatty", detect = function() return "1.0.0" end,
  upgrade = function() end }
HOOK
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' >"$TMP/cluster.yaml"

# timed NAME WANT_RC MAX_MS CMD...: run, then check the exit code, the wall
# time (plain build only) and the broker's peak RSS
timed() {
  name=$1; want=$2; max=$3; shift 3
  rm -f "$TMP/rusage"
  start=$(date +%s%N)
  UPHOOK_TEST_RUSAGE="$TMP/rusage" timeout -s KILL 120 "$@" >"$OUT" 2>&1
  RC=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  kib=$(sed -n 's/^maxrss_kib //p' "$TMP/rusage" 2>/dev/null)
  if [ "$CEILINGS" = yes ] && [ "$ms" -gt "$max" ]; then
    echo "    took $ms ms > $max ms" >>"$OUT"; RC=slow
  fi
  if [ "$CEILINGS" = yes ] && [ "${kib:-999999999}" -gt $((BROKER_RSS_MIB * 1024)) ]; then
    echo "    broker peak RSS ${kib:-?} KiB > $BROKER_RSS_MIB MiB" >>"$OUT"; RC=fat
  fi
  label="$name (${ms} ms, broker ${kib:-?} KiB)"
  [ "$RC" = "$want" ] || { echo "    exit $RC, wanted $want" >>"$OUT"; not_ok "$label"; return 1; }
  return 0
}

# 1. lint: three hooks that never finish loading share one --timeout
if timed "lint: one --timeout for every hook" 1 $((2000 + GRACE_MS + WALL_MARGIN_MS)) \
    "$UPHOOK" lint --timeout 2 "$REPO/addons/spin1" "$REPO/addons/spin2" \
    "$REPO/addons/spin3"; then
  n=$(grep -c 'timeout' "$OUT")
  [ "$n" -ge 3 ] && ok "$label" \
    || { echo "    $n timeouts reported" >>"$OUT"; not_ok "$label"; }
fi

# 2. lint: --memory-limit holds for each hook
if timed "lint: --memory-limit" 1 $((30000 + GRACE_MS)) \
    "$UPHOOK" lint --memory-limit 16 --timeout 30 "$REPO/addons/fat"; then
  grep -q 'memory limit: the hook used more than --memory-limit (16 MiB)' "$OUT" \
    && ok "$label" || not_ok "$label"
fi

# 3. list: the same hooks, one --timeout for the whole command; running
#    out of it is exit 4 with the partial table (docs/uphook.1)
if timed "list: one --timeout for every hook" 4 $((2000 + GRACE_MS + WALL_MARGIN_MS)) \
    "$UPHOOK" --addons "$REPO" --offline "$TMP/cluster.yaml" \
    --state-dir "$TMP/st" list --timeout 2; then
  grep -q 'spin3 .*error' "$OUT" && ok "$label" || not_ok "$label"
fi

# 4. list: --memory-limit, and the broker stays bounded by a hook that
#    logs 16 x 16 MiB while it loads (twice the broker's ceiling, were
#    the lines kept)
if timed "list: --memory-limit; a chatty hook's load stays bounded" 0 $((60000 + GRACE_MS)) \
    "$UPHOOK" --addons "$REPO2" --offline "$TMP/cluster.yaml" \
    --state-dir "$TMP/st" list --memory-limit 96 --timeout 60; then
  grep -q 'memory limit' "$OUT" && grep -qE 'chatty .* 2\.0\.0 ' "$OUT" \
    && ok "$label" || not_ok "$label"
fi

finish
