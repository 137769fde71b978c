# Crash injection against the live (fake) API server: for every journaled
# change N of the real hostpath-storage hook, uphook dies right after
# change N; `uphook recover` must restore every object the API server
# holds, and the upgrade must then succeed.
. tests/cli/lib.sh

ROOT=$(pwd)
. tests/cli/fake_api.sh
PIDS=""; trap fake_cleanup EXIT
fake_start --rollout-delay 0.05 || { echo "0 passed, 1 failed"; exit 1; }
ctl() { curl -sS -X "$1" ${3:+--data-binary "@$3"} "$CTL/$2"; }

REPO="$TMP/repo"; mkdir -p "$REPO/addons"
ln -s "$ROOT/hooks/hostpath-storage" "$REPO/addons/hostpath-storage"
printf 'microk8s-addons:\n  addons:\n    - name: hostpath-storage\n' > "$REPO/addons.yaml"
FIX="$ROOT/hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml"
export SNAP_DATA="$TMP/snap"
# a live upgrade says yes to its consent question (docs/security.md "Consent")
U() { c=$1; shift; [ "$c" = upgrade ] && set -- --yes "$@"
  "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$REPO" --state-dir "$S" "$c" "$@"; }
fresh() {   # reset the server to the fixture; baseline its objects
  ctl POST reset >/dev/null
  ctl POST seed "$FIX" >/dev/null
  ctl GET objects > "$TMP/objs.json"
  python3 tests/cli/normalize.py "$TMP/objs.json" lease > "$TMP/base.json"
}
same() {
  ctl GET objects > "$TMP/objs.json"
  python3 tests/cli/normalize.py "$TMP/objs.json" lease > "$TMP/now.json"
  cmp -s "$TMP/now.json" "$TMP/base.json" || { diff "$TMP/base.json" "$TMP/now.json" | head -20 >>"$OUT"; return 1; }
}

n=1; covered=0
while [ $n -le 40 ]; do
  fresh; S="$TMP/state-$n"
  UPHOOK_CRASH_AFTER=$n U upgrade hostpath-storage >"$OUT" 2>&1; rc=$?
  [ $rc -eq 0 ] && break
  if [ $rc -ne 99 ]; then RC=$rc; expect "crash after change $n" 99; break; fi
  run U upgrade hostpath-storage; rc1=$RC
  run U recover hostpath-storage; rc2=$RC
  if [ $rc1 -eq 6 ] && [ $rc2 -eq 0 ] && same; then
    run U upgrade hostpath-storage
    expect "live: crash after change $n is recovered exactly, then upgrades" 0 "Upgraded hostpath-storage"
    covered=$((covered + 1))
  else
    echo "    (upgrade after crash: $rc1, recover: $rc2)" >>"$OUT"
    not_ok "live: crash after change $n is recovered exactly"
  fi
  n=$((n + 1))
done
echo "info: live hostpath-storage: $covered crash points covered"
# the comparison can fail: after a crash and no recover, the world differs
fresh; S="$TMP/state-norecover"
UPHOOK_CRASH_AFTER=3 U upgrade hostpath-storage >/dev/null 2>&1
: >"$OUT"
if same; then not_ok "live: a crashed, unrecovered upgrade is told apart"
else ok "live: a crashed, unrecovered upgrade is told apart"; fi
[ $covered -ge 2 ] && ok "live: more than one crash point" || not_ok "live: crash points found"
finish
