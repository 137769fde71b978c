#!/bin/sh
# The Lease of an addon across runs and nodes (docs/state.md), against the
# fake API server:
# - a killed run: kill -9 after the Lease is taken and before
#   the first change; `recover` then releases the dead run's Lease, and an
#   `upgrade` without recover takes it over at once (it exited 5 until the
#   Lease expired);
# - a Lease of a live run, or of another node, is still respected;
# - the pending marker: a crashed run's journal marks the Lease, another
#   node (a UTS namespace with its own hostname) refuses with exit 6 naming
#   this node, until `recover` here;
# - a worker node (var/lock/clustered.lock) refuses to upgrade (exit 4).
. tests/cli/lib.sh
. tests/nodes/lib.sh

start_apiserver
cat > "$TMP/hooks/slow.lua" <<'EOF'
-- waits in check until the ConfigMap default/go is Ready, then changes
-- one ConfigMap
return {
  version = "1.1.0", from = ">=1.0.0 <1.1.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  check = function()
    kube.wait("ConfigMap", "go", "default", { condition = "Ready", timeout = 60 })
  end,
  upgrade = function()
    kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "slow", namespace = "default" }, data = { v = "2" } })
    kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "slow2", namespace = "default" }, data = { v = "2" } })
  end,
}
EOF
repo slow
GO='apiVersion: v1
kind: ConfigMap
metadata: {name: go, namespace: default}
status: {conditions: [{type: Ready, status: "True"}]}'
lease_holder() { objs "(get('Lease', 'uphook-slow', 'kube-system') or {}).get('spec', {}).get('holderIdentity')"; }
lease_pending() { objs "((get('Lease', 'uphook-slow', 'kube-system') or {}).get('metadata', {}).get('annotations') or {}).get('uphook.microk8s.io/pending')"; }

# kill_in_check: start an upgrade, kill -9 it once it holds the Lease
kill_in_check() {
  (UX upgrade slow >"$TMP/killed.out" 2>&1) &
  up=$!
  i=0; while [ $i -lt 100 ] && [ "$(lease_holder)" = None ]; do sleep 0.1; i=$((i+1)); done
  kill -9 $up; wait $up 2>/dev/null
}

# 1. the issue's three steps
kill_in_check
holder=$(lease_holder)
case "$holder" in "$THIS"/uphook-*) ok "a killed run leaves its Lease ($holder)" ;;
  *) echo "holder: $holder" >"$OUT"; not_ok "a killed run leaves its Lease" ;; esac
run U recover slow
expect "recover: nothing to recover, and the dead run's Lease is released" 0 \
  "nothing to recover: slow has no journal" "released the Lease kube-system/uphook-slow"
[ "$(lease_holder)" = None ] && ok "the Lease is gone after recover" || not_ok "the Lease is gone after recover"
ctl POST seed "$GO" >/dev/null
run U upgrade slow
expect "the next upgrade runs (it exited 5 until the Lease expired)" 0 "Upgraded slow"
ctl POST reset >/dev/null

# 2. without recover: upgrade takes the dead run's Lease over at once
kill_in_check
ctl POST seed "$GO" >/dev/null
run U upgrade slow
expect "upgrade takes over the Lease of a dead run of this node, with a notice" 0 \
  "taking over the stale Lease kube-system/uphook-slow of $THIS/uphook-[0-9]+: that run of this node is no longer running" \
  "Upgraded slow"
ctl POST reset >/dev/null

# 3. a Lease of a live run (this shell) or of another node is respected
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
seed_lease() {   # holder renewTime [pending]
  ctl POST seed "apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: uphook-slow
  namespace: kube-system
  annotations: {${3:+uphook.microk8s.io/pending: $3}}
spec: {holderIdentity: $1, leaseDurationSeconds: 60, acquireTime: \"$2\", renewTime: \"$2\"}" >/dev/null
}
ctl POST seed "$GO" >/dev/null
seed_lease "$THIS/uphook-$$" "$now"
run U upgrade slow
expect "a fresh Lease of a live run of this node: exit 5" 5 "held by $THIS/uphook-$$"
seed_lease "othernode/uphook-999999" "$now"
run U upgrade slow
expect "a fresh Lease of another node (whatever its PID): exit 5" 5 "othernode/uphook-999999"
run U recover slow
expect "recover leaves another node's Lease alone" 0 "nothing to recover"
[ "$(lease_holder)" = othernode/uphook-999999 ] && ok "... it is still there" || not_ok "... it is still there"

# 4. the pending marker
seed_lease "node-b/uphook-42" 2020-01-01T00:00:00.000000Z node-b
run U upgrade slow
expect "a Lease marked pending by another node: exit 6 naming it and the recover command, even expired" 6 \
  "on node node-b left a journal there: run 'uphook recover slow' on node-b"
[ "$(objs "get('ConfigMap', 'slow', 'default') is None")" = True ] && ok "... and nothing changed" \
  || not_ok "... and nothing changed"
# the same marker on a Lease its holder on node-b still renews: that
# upgrade runs (docs/state.md "Who is running")
seed_lease "node-b/uphook-42" "$now" node-b
run U upgrade slow
expect "a Lease marked pending by another node whose holder renews it: in progress there, exit 5" 5 \
  "an upgrade of slow is in progress on node node-b \(Lease kube-system/uphook-slow held by node-b/uphook-42 since"
refute "... not said to be interrupted" "interrupted"
seed_lease "$THIS/uphook-$$" "$now" "$THIS"
run U upgrade slow
expect "a marker of this node with no journal here is stale: taken over" 0 \
  "marks a pending journal of this node, and this node has none" "Upgraded slow"
ctl POST reset >/dev/null

ctl POST seed "$GO" >/dev/null
UPHOOK_CRASH_AFTER=1 U upgrade slow >"$OUT" 2>&1; RC=$?
expect "a crash after the first change" 99
[ "$(lease_pending)" = "$THIS" ] && ok "the crashed run's Lease is marked pending: $THIS" \
  || { echo "pending: $(lease_pending)" >"$OUT"; not_ok "the crashed run's Lease is marked pending"; }
if unshare -u true 2>/dev/null; then
  other() {   # uphook as node-b: its own hostname, $SNAP_DATA and state
    mkdir -p "$TMP/b/var/lock"
    unshare -u sh -c 'hostname node-b; exec "$@"' sh env SNAP_DATA="$TMP/b" \
      SNAP_COMMON="$TMP/b" HOME="$TMP/home" timeout 60 "$UPHOOK" --kubeconfig "$KC" \
      --addons "$REPO" --state-dir "$TMP/b-state" "$@"
  }
  # the crashed run's Lease as it is once its holder stopped renewing it
  # (a minute later): the marker stays, the renewal is old
  holder=$(lease_holder)
  seed_lease "$holder" 2020-01-01T00:00:00.000000Z "$THIS"
  run other upgrade --yes slow
  expect "upgrade on another node refuses with exit 6 naming this node" 6 \
    "on node $THIS left a journal there: run 'uphook recover slow' on $THIS"
  run U recover slow
  expect "recover on this node undoes the change and releases the Lease" 0 \
    "Recovered slow: 1 change undone" "released the Lease"
  run other upgrade --yes slow
  expect "then the other node upgrades" 0 "Upgraded slow"
else
  RC=1; echo "unshare -u is not permitted here" >"$OUT"
  expect "another node (unshare -u) sees the marker" 0
fi

# 5. a worker node refuses, as `microk8s enable` does there
ctl POST reset >/dev/null
ctl POST seed "$GO" >/dev/null
: > "$TMP/this/var/lock/clustered.lock"
run U upgrade slow
expect "a worker node refuses upgrade with exit 4, naming the lock file" 4 \
  "acting as a node in a cluster \($TMP/this/var/lock/clustered.lock\): upgrade slow on a control-plane node"
[ "$(lease_holder)" = None ] && [ "$(objs "get('ConfigMap', 'slow', 'default') is None")" = True ] \
  && ok "... before taking the Lease or changing anything" || not_ok "... before taking the Lease"
rm "$TMP/this/var/lock/clustered.lock"
finish
