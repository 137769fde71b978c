#!/bin/sh
# A hook that ADDS flags on a three-node cluster (docs/guide.md §6
# "Several nodes", docs/state.md `node_args`): this node and node-2,
# node-3, whose cluster agents are tests/fakes/agent.py (tests/nodes/README.md).
# The hook adds --kubelet-client-certificate and --kubelet-client-key to
# kube-apiserver (absent on every node) and sets --audit-log-maxage=90,
# which this node has already and node-3 has as 30; then it restarts
# kubelite where the args changed and verifies.
# - the plan shows each node exactly what it receives: the added flags,
#   prior "absent (assumed)", never nil; no maxage line for node-3 (its
#   assumed prior is this node's 90);
# - the upgrade sends each node exactly those changes (node-3 keeps 30),
#   and journals every node's prior of each flag (false: absent);
# - a failure at each later point (node-3's agent at the change, node-2's
#   restart, node-3's restart, this node's restart, verify) rolls back:
#   every node's file is its own before, the added flags gone everywhere;
# - a crash after the other nodes changed, then `recover`: the same.
# (tests/lua/nodes_test.lua checks the journal records themselves.)
. tests/cli/lib.sh
. tests/nodes/lib.sh

start_apiserver
start_cluster 2
cat > "$TMP/hooks/cis.lua" <<'EOF'
-- adds the kubelet client certificate flags to every kube-apiserver
return {
  version = "1.1.0", from = "1.0.0",
  permissions = { "args:kube-apiserver", "restart:kubelite" },
  params = { fail = { default = "no", choices = { "no", "verify" } } },
  detect = function() return "1.0.0" end,
  upgrade = function()
    if config.set_args("kube-apiserver", {
        ["--kubelet-client-certificate"] = "${SNAP_DATA}/certs/client.crt",
        ["--kubelet-client-key"] = "${SNAP_DATA}/certs/client.key",
        ["--audit-log-maxage"] = "90" }) then
      service.restart("kubelite", { nodes = "changed" })
    end
  end,
  verify = function(ctx)
    if ctx.params.fail == "verify" then error("verify: the check failed") end
  end,
}
EOF
repo cis
N2=node-2; N3=node-3
APIARGS='--authorization-mode=Node
--secure-port=16443
'
# base: every node's kube-apiserver args before (node-3's maxage is 30)
base() {
  ctl POST reset >/dev/null
  printf '%s--audit-log-maxage=90\n' "$APIARGS" > "$TMP/this/args/kube-apiserver"
  printf '%s' "$APIARGS" > "$(sd $N2)/args/kube-apiserver"
  printf '%s--audit-log-maxage=30\n' "$APIARGS" > "$(sd $N3)/args/kube-apiserver"
  for _s in "$TMP/this" "$TMP"/nodes/*; do
    rm -f "$_s/agent.log" "$_s/agent-faults.json" "$_s/restarts.log"
  done
  for _n in $THIS $NODES; do cp "$(sd "$_n")/args/kube-apiserver" "$TMP/api.$_n"; done
  register_nodes
  rm -rf "$TMP/state"
  cp "$TMP/snapctl.ok" "$TMP/snapctl"
}
cp "$TMP/snapctl" "$TMP/snapctl.ok"
# as_before: every node's file holds its own lines of before, and the
# added flags on none
as_before() {
  cmp -s "$TMP/this/args/kube-apiserver" "$TMP/api.$THIS" \
    || { echo "this node:"; diff "$TMP/api.$THIS" "$TMP/this/args/kube-apiserver"; } >>"$OUT" || return 1
  for _n in $NODES; do
    sort "$TMP/api.$_n" | grep -v '^$' > "$TMP/want"
    args_sorted "$_n" kube-apiserver > "$TMP/got"
    cmp -s "$TMP/want" "$TMP/got" || { echo "$_n:"; diff "$TMP/want" "$TMP/got"; } >>"$OUT" || return 1
  done
}
has() { args_sorted "$1" kube-apiserver | grep -qx -- "$2"; }

# ------------------------------------------------------------------ plan
base
run U plan cis
expect "plan: each other node's added flags, prior absent (assumed)" 0 \
  "~ args:kube-apiserver on $N2 \\($NET\\.2\\)" "~ args:kube-apiserver on $N3 \\($NET\\.3\\)" \
  '--kubelet-client-key: absent \(assumed\) -> "\$\{SNAP_DATA\}/certs/client\.key"'
refute "... no prior shows as nil" 'nil'
refute "... no maxage line for another node: its assumed prior is this node's 90" \
  'audit-log-maxage: "90" \(assumed\) -> "90"'

# -------------------------------------------------------- the upgrade
base
run U --output json upgrade cis
expect "upgrade on three nodes: upgraded" 0 '"event":"result"'
ok_all=1
for n in $THIS $NODES; do
  has "$n" '--kubelet-client-certificate=${SNAP_DATA}/certs/client.crt' || ok_all=0
  has "$n" '--kubelet-client-key=${SNAP_DATA}/certs/client.key' || ok_all=0
done
check "... every node has both added flags" [ $ok_all = 1 ]
check "... node-3 keeps its --audit-log-maxage=30: it receives exactly what the plan shows" \
  has $N3 '--audit-log-maxage=30'
check "... node-2 got no --audit-log-maxage (its assumed prior was this node's 90)" \
  sh -c "! grep -q audit-log-maxage '$(sd $N2)/args/kube-apiserver'"

# --------------------------------------------- a failure at every point
fail_at() {   # NAME WHAT: the run fails at WHAT; every node as before
  run U upgrade cis ${FAILARG:-}
  expect "$1: the upgrade fails and rolls back" 1 "${2:-Rolled back}"
  check "... every node's file is as before: the added flags gone on every node" as_before
}
base
faults $N3 '[{"match": "change", "action": "error", "message": "disk full"}]'
fail_at "node-3's agent errors at the change" "node $N3 \\($NET\\.3\\)"
base
faults $N2 '[{"match": "restart", "action": "error", "message": "snapctl failed"}]'
fail_at "node-2's restart fails" "node $N2 \\($NET\\.2\\)"
base
faults $N3 '[{"match": "restart", "action": "error", "message": "snapctl failed"}]'
fail_at "node-3's restart fails (node-2 restarted on the new flags)" "node $N3 \\($NET\\.3\\)"
check "... node-2 restarted again on its old flags" [ "$(restarts $N2)" = 2 ]
base
# this node's restart: its snapctl fails once (the rollback's restart works)
rm -f "$TMP/refused"
printf '#!/bin/sh\nif [ "$NODE_NAME" = "$THIS_NODE" ] && [ ! -e %s/refused ]; then\n  : > %s/refused; echo "snapctl: restart refused" >&2; exit 1\nfi\nexec %s/snapctl.ok "$@"\n' "$TMP" "$TMP" "$TMP" > "$TMP/snapctl"
chmod +x "$TMP/snapctl"
fail_at "this node's restart fails (both others restarted)"
cp "$TMP/snapctl.ok" "$TMP/snapctl"
base
FAILARG=--fail=verify fail_at "verify fails after every node restarted" "verify: the check failed"

# ------------------------------------------------------ crash, recover
base
(export UPHOOK_CRASH_AFTER=3; run U upgrade cis); crashed=$RC
check "a crash right after the other nodes changed (exit 99)" [ -e "$TMP/state/journal/cis.journal" ]
check "... node-2 has the added flags until recover" has $N2 '--kubelet-client-key=${SNAP_DATA}/certs/client.key'
run U recover cis
expect "... recover restores it" 0 "Recovered cis"
check "... every node's file is as before" as_before
finish
