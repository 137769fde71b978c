# Crash injection (docs/state.md "The journal", "Recovery"): for every
# journaled change N of real hooks, uphook dies right after change N
# (UPHOOK_CRASH_AFTER=N); then `uphook recover` must bring back the cluster,
# args files, binaries and state exactly, and the upgrade must then succeed.
# Also: a journal torn at every byte offset of its last record, concurrent
# upgrades, the enable lock, and SIGTERM mid-upgrade.
. tests/cli/lib.sh

ROOT=$(pwd)
REPO="$TMP/repo"
mkdir -p "$REPO/addons"
printf 'microk8s-addons:\n  addons:\n' > "$REPO/addons.yaml"
for a in hostpath-storage dns; do
  ln -s "$ROOT/hooks/$a" "$REPO/addons/$a"
  printf '    - name: %s\n      version: 1.0.0\n' "$a" >> "$REPO/addons.yaml"
done
KUBELET='--kubeconfig=${SNAP_DATA}/credentials/kubelet.config
--cluster-domain=cluster.local
--cluster-dns=10.152.183.10
--fail-swap-on=false
'

norm() { python3 tests/cli/normalize.py "$1" lease; }
U() { d=$1; shift; "$UPHOOK" --addons "$REPO" --offline "$FIX" --state-dir "$d" "$@"; }

# world DIR: same cluster (server fields aside), args, bin as the baseline
same_world() {
  norm "$1/offline/cluster.yaml" > "$TMP/a.json"
  cmp -s "$TMP/a.json" "$TMP/base.json" || { diff "$TMP/base.json" "$TMP/a.json" | head -20 >>"$OUT"; return 1; }
  diff -r "$1/offline/args" "$BASE/offline/args" >>"$OUT" 2>&1 || return 1
  diff -r "$1/offline/bin" "$BASE/offline/bin" >>"$OUT" 2>&1 || return 1
}

crash_points() {   # addon fixture
  addon=$1; FIX=$2
  BASE="$TMP/base-$addon"
  mkdir -p "$BASE/offline/args"
  printf '%s' "$KUBELET" > "$BASE/offline/args/kubelet"
  run U "$BASE" plan "$addon"
  expect "$addon: plan seeds the offline world" 0 "Plan for $addon"
  norm "$BASE/offline/cluster.yaml" > "$TMP/base.json"
  n=1; covered=0
  while [ $n -le 60 ]; do
    T="$TMP/crash-$addon-$n"; cp -a "$BASE" "$T"
    UPHOOK_CRASH_AFTER=$n U "$T" upgrade "$addon" >"$OUT" 2>&1; rc=$?
    if [ $rc -eq 0 ]; then break; fi
    if [ $rc -ne 99 ]; then RC=$rc; expect "$addon: crash after change $n" 99; break; fi
    cp "$T/journal/$addon.journal" "$TMP/j-$addon-$n"
    run U "$T" upgrade "$addon"
    rc1=$RC
    run U "$T" recover "$addon"
    if [ $rc1 -ne 6 ] || [ $RC -ne 0 ] || ! same_world "$T"; then
      echo "    (upgrade after crash: $rc1, recover: $RC)" >>"$OUT"
      not_ok "$addon: crash after change $n is recovered exactly"
    else
      run U "$T" upgrade "$addon"
      expect "$addon: crash after change $n is recovered exactly, then upgrades" 0 "Upgraded $addon"
      covered=$((covered + 1))
    fi
    n=$((n + 1))
  done
  echo "info: $addon: $covered crash points covered"
  [ $covered -ge 2 ] && ok "$addon: more than one crash point" || not_ok "$addon: crash points found"
}

crash_points hostpath-storage "$ROOT/hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml"
crash_points dns "$ROOT/hooks/dns/fixtures/cluster-1.10.1.yaml"

# A torn last record: the change it describes was never made (records are
# fsynced before their change), so recover must ignore it and restore.
addon=hostpath-storage; FIX="$ROOT/hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml"
BASE="$TMP/base-$addon"; norm "$BASE/offline/cluster.yaml" > "$TMP/base.json"
J=journal/$addon.journal
short="$TMP/j-$addon-1"; long="$TMP/j-$addon-2"
from=$(wc -c < "$short"); to=$(wc -c < "$long")
step=$(( (to - from) / 150 + 1 )); tried=0; bad=0
# every offset starts from the same crash after change 1; the clusters
# are compared in one normalize.py at the end
CRASHED="$TMP/torn-crashed"; cp -a "$BASE" "$CRASHED"
UPHOOK_CRASH_AFTER=1 U "$CRASHED" upgrade $addon >/dev/null 2>&1
: >"$TMP/torn.log"; worlds=""
off=$from
while [ $off -lt $to ]; do
  T="$TMP/torn-$off"; cp -a "$CRASHED" "$T"
  head -c $off "$long" > "$T/$J"
  if U "$T" recover $addon >"$OUT" 2>&1 && diff -r "$T/offline/args" "$BASE/offline/args" >/dev/null 2>&1 \
     && diff -r "$T/offline/bin" "$BASE/offline/bin" >/dev/null 2>&1; then
    worlds="$worlds $T/offline/cluster.yaml"
  else bad=$((bad + 1)); echo "    offset $off" >>"$TMP/torn.log"; fi
  tried=$((tried + 1)); off=$((off + step))
done
# shellcheck disable=SC2086
if ! python3 tests/cli/normalize.py --same "$TMP/base.json" $worlds >"$TMP/torn.diff" 2>&1; then
  n=$(grep -c 'cluster\.yaml$' "$TMP/torn.diff"); bad=$((bad + (n > 0 ? n : 1)))
  cat "$TMP/torn.diff" >>"$TMP/torn.log"
fi
echo "info: torn journal: $tried offsets of a $((to - from))-byte last record (stride $step)"
if [ $bad -eq 0 ]; then ok "a journal torn inside its last record recovers ($tried offsets)"
else cat "$TMP/torn.log" >"$OUT"; not_ok "torn journal: $bad of $tried offsets failed"; fi

# Two concurrent upgrades: exactly one proceeds, the other exits 5.
addon=hostpath-storage
T="$TMP/concurrent"; cp -a "$BASE" "$T"
python3 - "$T/lock" <<'PY' &
import fcntl, os, sys, time
os.makedirs(sys.argv[1], exist_ok=True)
f = open(sys.argv[1] + "/.microk8s-addon-lock", "w")
fcntl.lockf(f, fcntl.LOCK_EX)
open(sys.argv[1] + "/held", "w").close()
time.sleep(4)
PY
holder=$!
while [ ! -e "$T/lock/held" ]; do sleep 0.05; done
run U "$T" --lock-wait 0.5 upgrade $addon
expect "an upgrade while the enable lock is held exits 5" 5 "is held by PID [0-9]+"
same_world "$T" && ok "the locked-out upgrade changed nothing" || not_ok "the locked-out upgrade changed nothing"
wait $holder
T="$TMP/race"; cp -a "$BASE" "$T"
U "$T" --lock-wait 0 upgrade $addon >"$TMP/r1" 2>&1 & p1=$!
U "$T" --lock-wait 0 upgrade $addon >"$TMP/r2" 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
echo "    exits: $r1 $r2" > "$OUT"
if { [ $r1 -eq 0 ] && [ $r2 -eq 5 ]; } || { [ $r1 -eq 5 ] && [ $r2 -eq 0 ]; } \
   || { [ $r1 -eq 0 ] && [ $r2 -eq 0 ]; }; then
  # both 0 only when the first finished before the second started
  ok "two concurrent upgrades: one proceeds, the other exits 5 ($r1, $r2)"
else not_ok "two concurrent upgrades"; fi

# SIGTERM mid-upgrade rolls back and exits 1.
SLOW="$TMP/slowrepo"; mkdir -p "$SLOW/addons/slow"
printf 'microk8s-addons:\n  addons:\n    - name: slow\n' > "$SLOW/addons.yaml"
cat > "$SLOW/addons/slow/upgrade.lua" <<'LUA'
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "slow", namespace = "default" }, data = { a = "b" } })
    log.info("applied; now working for a while")
    while true do end
  end }
LUA
T="$TMP/sigterm"; mkdir -p "$T"
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' > "$TMP/n.yaml"
"$UPHOOK" --addons "$SLOW" --offline "$TMP/n.yaml" --state-dir "$T" --timeout 1 plan slow >/dev/null 2>&1
cp "$T/offline/cluster.yaml" "$TMP/sig-before.yaml"
: >"$OUT"
"$UPHOOK" --addons "$SLOW" --offline "$TMP/n.yaml" --state-dir "$T" --timeout 60 upgrade slow >"$OUT" 2>&1 & p=$!
i=0; while ! grep -q "now working" "$OUT" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
kill -TERM $p; wait $p; RC=$?
expect "SIGTERM mid-upgrade rolls back and exits 1" 1 "interrupted" "Rolled back"
python3 tests/cli/normalize.py "$TMP/sig-before.yaml" lease > "$TMP/b.json"
python3 tests/cli/normalize.py "$T/offline/cluster.yaml" lease > "$TMP/a.json"
cmp -s "$TMP/a.json" "$TMP/b.json" && ok "SIGTERM left the cluster as it was" || not_ok "SIGTERM left the cluster as it was"

# A second SIGINT during the rollback stops it (docs/state.md "Signals"):
# its waits end, it takes no further step, the journal is kept, exit 6
# with the recover command; recover then restores everything.
T="$TMP/sigint"; mkdir -p "$T"
"$UPHOOK" --addons "$SLOW" --offline "$TMP/n.yaml" --state-dir "$T" --timeout 1 plan slow >/dev/null 2>&1
cp "$T/offline/cluster.yaml" "$TMP/int-before.yaml"
# The rollback waits for the gate file (test-only), so the second signal
# surely lands during it, however slow the machine (valgrind).
GATE="$TMP/rollback-gate"; rm -f "$GATE"
# $OUT emptied first: it holds the last run's "now working" and "Rolling
# back", which the loops below could see before this run's redirection
: >"$OUT"
UPHOOK_TEST_ROLLBACK_GATE="$GATE" "$UPHOOK" --addons "$SLOW" --offline "$TMP/n.yaml" \
  --state-dir "$T" --timeout 60 upgrade slow >"$OUT" 2>&1 & p=$!
i=0; while ! grep -q "now working" "$OUT" && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
kill -INT $p
i=0; while ! grep -q "Rolling back" "$OUT" && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
kill -INT $p; wait $p; RC=$?
expect "a second SIGINT during the rollback stops it: exit 6, the journal kept, the recover command" 6 \
  "stopping the rollback: its waits end now" "1 change: stopped by a signal during the rollback" \
  "rollback incomplete: the journal is kept .*; run: .*recover slow"
[ -f "$T/journal/slow.journal" ] && ok "... the journal is kept" || not_ok "... the journal is kept"
run "$UPHOOK" --addons "$SLOW" --offline "$TMP/n.yaml" --state-dir "$T" recover slow
expect "... recover then undoes it" 0 "Recovered slow: 1 change undone"
python3 tests/cli/normalize.py "$TMP/int-before.yaml" lease > "$TMP/b.json"
python3 tests/cli/normalize.py "$T/offline/cluster.yaml" lease > "$TMP/a.json"
cmp -s "$TMP/a.json" "$TMP/b.json" && ok "... and everything is as before" \
  || not_ok "... and everything is as before"

finish
