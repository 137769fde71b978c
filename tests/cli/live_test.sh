#!/bin/sh
# uphook against a live (fake) API server: the backend tests of
# tests/lua/live_backend_test.lua, then end-to-end upgrades from the command
# line: plan (server-side dry run), upgrade, rollback after an injected 500,
# the state ConfigMap and the Lease.  Run from the repository root with
# $UPHOOK set (tests/run.sh does), or: sh tests/cli/live_test.sh [build]
set -u
ROOT=$(pwd)
BUILD=${BUILD:-${1:-build}}
UPHOOK=${UPHOOK:-$ROOT/$BUILD/uphook}
. tests/cli/fake_api.sh
fake_tmp live_test

. tests/fakes/checks.sh      # ok, notok; OUT

# ---------------------------------------------------------------- server
if ! fake_start --token sekrit-token --basic alice:pw-secret --rollout-delay 0.2; then
  echo "not ok - the fake API server did not start"; echo "0 passed, 1 failed"; exit 1
fi

# ctl METHOD PATH [BODY]: the /_fake/ control API
ctl() {
  curl -sS -X "$1" ${3:+--data "$3"} "http://127.0.0.1:$PORT/_fake/$2"
}
kc() { HOME=$TMP/home KUBECONFIG=$KC timeout 30 kubectl --cache-dir "$TMP/kcache" "$@"; }
objs() { fake_objs "$@"; }


# ------------------------------------------------------ backend (Lua) tests
UPHOOK_FAKE_DIR=$SRV UPHOOK_TEST_UNCONFINED=1 "$UPHOOK" test tests/lua/live_backend_test.lua >"$OUT" 2>&1
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT" | tail -n 1)
grep -E '^(FAIL|not ok)' "$OUT" | head -n 20
p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
if [ -n "$p" ] && grep -q 'live_backend_test' "$OUT"; then
  pass=$((pass + p)); fail=$((fail + f))
  echo "# live_backend_test.lua: $line"
else
  notok "live_backend_test.lua ran"
fi
ctl POST reset >/dev/null

# ------------------------------------------------------------ end to end
ADDONS=$TMP/repo
mkdir -p "$ADDONS/addons/demo" "$TMP/snap_data" "$TMP/snap_common" "$TMP/state"
cat >"$ADDONS/addons.yaml" <<'EOF'
microk8s-addons:
  addons:
    - name: demo
      description: a demo addon for the live tests
      version: "1.1.0"
      check_status: "deployment.apps/demo"
      supported_architectures: [amd64, arm64]
EOF
cat >"$ADDONS/addons/demo/upgrade.lua" <<'EOF'
local function deployment(image)
  return { apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "demo", namespace = "default" },
    spec = { replicas = 1, selector = { matchLabels = { app = "demo" } },
      template = { metadata = { labels = { app = "demo" } },
        spec = { containers = { { name = "demo", image = image } } } } } }
end
return {
  version = "1.1.0",
  from = ">=1.0.0 <1.1.0",
  permissions = { "kube:default" },
  detect = function(ctx)
    local d = kube.get("Deployment", "demo", "default")
    if not d then return nil end
    return (d.spec.template.spec.containers[1].image:match(":(.*)$"))
  end,
  upgrade = function(ctx)
    log.step("deployment")
    kube.apply(deployment("demo:1.1.0"))
    kube.apply([[
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-config}
data: {level: "2"}
]], { namespace = "default" })
    kube.rollout("Deployment", "demo", "default", { timeout = 30 })
    local me = nodes.this()
    log.info("on node %s", me.name)
  end,
}
EOF
cat >"$TMP/seed.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: demo, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: demo}}
  template:
    metadata: {labels: {app: demo}}
    spec: {containers: [{name: demo, image: "demo:1.0.0"}]}
EOF
ctl POST seed "$(cat "$TMP/seed.yaml")" >/dev/null
sleep 1     # let the fake's controller finish the seeded rollout

# a live upgrade says yes to its consent question (docs/security.md
# "Consent"): --yes after the command word
run() {
  n=$# yes=
  for a in "$@"; do
    if [ -z "$yes" ] && [ "$a" = upgrade ]; then set -- "$@" upgrade --yes; yes=1
    else set -- "$@" "$a"; fi
  done
  shift "$n"
  SNAP_DATA=$TMP/snap_data SNAP_COMMON=$TMP/snap_common HOME=$TMP/home \
    timeout 120 "$UPHOOK" --kubeconfig "$KC" --addons "$ADDONS" \
    --state-dir "$TMP/state" "$@" >"$OUT" 2>&1
}
image() { objs "get('Deployment', 'demo', 'default')['spec']['template']['spec']['containers'][0]['image']"; }
has() { objs "get($1) is not None"; }

# plan: a server-side dry run that changes nothing
ctl DELETE requests >/dev/null
before=$(ctl GET objects | python3 -c 'import json,sys; print(json.load(sys.stdin)["resourceVersion"])')
run plan demo; rc=$?
after=$(ctl GET objects | python3 -c 'import json,sys; print(json.load(sys.stdin)["resourceVersion"])')
if [ $rc -eq 0 ] && grep -q 'demo' "$OUT" && grep -qi 'configmap' "$OUT"; then
  ok "plan demo lists the changes"; else notok "plan demo lists the changes (rc=$rc)"; fi
if [ "$before" = "$after" ] && [ "$(image)" = "demo:1.0.0" ]; then
  ok "plan changed nothing (resourceVersion $before)"
else echo "rv $before -> $after, image $(image)" >"$OUT"; notok "plan changed nothing"; fi
ctl GET requests | python3 -c '
import json, sys
log = json.load(sys.stdin)["log"]
writes = [r for r in log if r["method"] != "GET"]
ok = writes and all("dryRun=All" in r["query"] for r in writes)
print("ok" if ok else writes)' >"$OUT"
if grep -qx ok "$OUT"; then ok "plan only wrote with dryRun=All"
else notok "plan only wrote with dryRun=All"; fi

# core22's libcurl 7.81 has no CURLOPT_PROTOCOLS_STR: the kube client then
# restricts its handles with the CURLPROTO_* bitmasks (host/curl_lazy.h)
export UPHOOK_TEST_CURL_VERSION=0x075100
run plan demo; rc=$?
unset UPHOOK_TEST_CURL_VERSION
if [ $rc -eq 0 ] && grep -q 'demo' "$OUT"; then
  ok "with libcurl 7.81's protocol options, plan demo works"
else notok "with libcurl 7.81's protocol options, plan demo works (rc=$rc)"; fi

# rollback after an injected 500 on the second apply
ctl POST faults '{"status": 500, "method": "PATCH", "path": "/configmaps/demo-config$", "query": "fieldManager", "count": -1}' >/dev/null
run upgrade demo; rc=$?
ctl DELETE faults >/dev/null
if [ $rc -eq 1 ] && grep -q 'injected fault' "$OUT" && grep -q 'Rolled back' "$OUT"; then
  ok "an injected 500 fails the upgrade (exit 1) and rolls back"
else notok "an injected 500 fails the upgrade (exit 1, got $rc)"; fi
# the state records only the failed run (docs/state.md): no version yet
st=$(objs "sorted(get('ConfigMap', 'uphook-demo', 'kube-system')['data'])")
if [ "$(image)" = "demo:1.0.0" ] && [ "$(has "'ConfigMap', 'demo-config', 'default'")" = False ] \
   && [ "$st" = "['history', 'repository']" ] \
   && [ "$(has "'Lease', 'uphook-demo', 'kube-system'")" = False ]; then
  ok "rollback restored the Deployment, removed the ConfigMap, released the Lease; the state holds only the history (and its repository)"
else echo "image $(image), state data $st" >"$OUT"; notok "rollback restored everything"; fi

# a live Lease held by another node: exit 5 naming it
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
lease() {
  cat <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: uphook-demo, namespace: kube-system}
spec: {holderIdentity: othernode/uphook-4242, leaseDurationSeconds: 60, acquireTime: "$1", renewTime: "$1"}
EOF
}
ctl POST seed "$(lease "$now")" >/dev/null
run upgrade demo; rc=$?
if [ $rc -eq 5 ] && grep -q 'othernode/uphook-4242' "$OUT"; then
  ok "a live Lease of another holder: exit 5 naming it"
else notok "a live Lease of another holder: exit 5 (got $rc)"; fi
[ "$(image)" = "demo:1.0.0" ] && ok "nothing changed under someone else's Lease" \
  || { : >"$OUT"; notok "nothing changed under someone else's Lease"; }

# a stale one is taken over with a warning, and the upgrade runs
ctl POST seed "$(lease 2020-01-01T00:00:00.000000Z)" >/dev/null
run upgrade demo; rc=$?
if [ $rc -eq 0 ] && grep -qi 'stale Lease' "$OUT" && grep -q 'othernode' "$OUT"; then
  ok "a stale Lease is taken over with a warning"
else notok "a stale Lease is taken over with a warning (rc=$rc)"; fi
if [ "$(image)" = "demo:1.1.0" ] && [ "$(has "'ConfigMap', 'demo-config', 'default'")" = True ]; then
  ok "upgrade applied the Deployment and the ConfigMap"
else echo "image $(image)" >"$OUT"; notok "upgrade applied its objects"; fi
v=$(objs "get('ConfigMap', 'uphook-demo', 'kube-system')['data']['version']")
h=$(objs "get('ConfigMap', 'uphook-demo', 'kube-system')['data']['history']")
if [ "$v" = "1.1.0" ] && echo "$h" | grep -q '1.0.0' && echo "$h" | grep -q 'upgraded'; then
  ok "state ConfigMap kube-system/uphook-demo records 1.1.0 and the history"
else echo "version=$v history=$h" >"$OUT"; notok "state ConfigMap"; fi
[ "$(has "'Lease', 'uphook-demo', 'kube-system'")" = False ] && ok "the Lease is released" \
  || { : >"$OUT"; notok "the Lease is released"; }
if kc get configmap -n kube-system uphook-demo -o jsonpath='{.data.version}' >"$OUT" 2>&1 \
   && grep -qx '1.1.0' "$OUT"; then ok "kubectl reads the state uphook wrote"
else notok "kubectl reads the state uphook wrote"; fi
run upgrade demo; rc=$?
if [ $rc -eq 0 ] && grep -q 'already at 1.1.0' "$OUT"; then ok "a second upgrade has nothing to do"
else notok "a second upgrade has nothing to do (rc=$rc)"; fi

# connection errors name the server
ctl POST faults '{"action": "drop", "count": -1}' >/dev/null
run upgrade demo; rc=$?
ctl DELETE faults >/dev/null
if [ $rc -ne 0 ] && grep -q "https://127.0.0.1:$PORT" "$OUT" && ! grep -q 'BEGIN\|sekrit' "$OUT"; then
  ok "a server that drops every connection: error naming it (exit $rc)"
else notok "a server that drops every connection (rc=$rc)"; fi

# credentials never reach the output, even with -v
run -v plan demo
if ! grep -qi 'sekrit\|BEGIN\|PRIVATE' "$OUT"; then ok "no credentials in -v output"
else notok "no credentials in -v output"; fi

# errors a hook inspects, from the API server itself (tests/lua/addons/errs)
ln -s "$ROOT/tests/lua/addons/errs" "$ADDONS/addons/errs"
printf '    - name: errs\n      version: "1.1.0"\n' >>"$ADDONS/addons.yaml"
run upgrade errs --case immutable; rc=$?
if [ $rc -eq 0 ] && grep -q '"code":422' "$OUT" && grep -q '"reason":"Invalid"' "$OUT" \
   && grep -q '"field":"spec.clusterIPs\[0\]"' "$OUT" \
   && grep -q '"reason":"FieldValueInvalid"' "$OUT"; then
  ok "a 422 reaches the hook as a value with the server's causes"
else notok "a 422 reaches the hook as a value with the server's causes (rc=$rc)"; fi
kc delete configmap -n kube-system uphook-errs >/dev/null 2>&1
ctl POST faults '{"status": 409, "reason": "Conflict", "method": "PATCH", "path": "/configmaps/r$", "query": "fieldManager", "count": 2}' >/dev/null
run upgrade errs --case retry409; rc=$?
ctl DELETE faults >/dev/null
if [ $rc -eq 0 ] && [ "$(grep -c 'attempt [12] of 3 failed' "$OUT")" -eq 2 ] \
   && grep -q '^.*seen {.*"ok":true' "$OUT" && [ "$(has "'ConfigMap', 'r', 'default'")" = True ]; then
  ok "retry_on = err.code == 409 retries two Conflicts and the apply goes through"
else notok "retry_on = err.code == 409 retries two Conflicts (rc=$rc)"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
