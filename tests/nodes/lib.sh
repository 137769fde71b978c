# Shared helpers of the multi-node suites (tests/nodes/README.md): the fake
# API server, cluster-agent test servers on random loopback addresses
# (127.R1.R2.2.., port 25000, so that runs beside each other never meet),
# each node with its own $SNAP_DATA and a certificate of one test cluster
# CA, and uphook run as this node.  Sourced after tests/cli/lib.sh.
. tests/cli/fake_api.sh
ROOT=$(pwd)
PIDS=""
cleanup_nodes() {
  for p in $PIDS; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup_nodes EXIT
trap 'exit 1' INT TERM HUP
THIS=$(hostname)
TOKEN="$(head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n')"
KTOKEN="kube-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"

# start_apiserver: the fake API server, this node named $THIS.  Sets
# PORT, KC (its kubeconfig) and SRV (its folder).
start_apiserver() {
  fake_start --node-name "$THIS" --token "$KTOKEN" --rollout-delay 0.05 \
    || { echo "0 passed, 1 failed"; exit 1; }
}

# ctl METHOD PATH [JSON]: the fake's /_fake/ control API
ctl() { curl -sS -X "$1" ${3:+--data "$3"} "http://127.0.0.1:$PORT/_fake/$2"; }

objs() { fake_objs "$@"; }

# repo ADDON...: an addon repository at $REPO; each addon's hook is
# $TMP/hooks/<addon>.lua (or the real hooks/<addon> when that exists)
REPO=$TMP/repo
repo() {
  mkdir -p "$REPO/addons"
  printf 'microk8s-addons:\n  addons:\n' > "$REPO/addons.yaml"
  for a in "$@"; do
    if [ -f "$TMP/hooks/$a.lua" ]; then
      mkdir -p "$REPO/addons/$a"; cp "$TMP/hooks/$a.lua" "$REPO/addons/$a/upgrade.lua"
    else
      ln -sfn "$ROOT/hooks/$a" "$REPO/addons/$a"
    fi
    printf '    - name: %s\n      version: 1.0.0\n' "$a" >> "$REPO/addons.yaml"
  done
}

# U ARGS...: uphook as this node ($SNAP_DATA=$TMP/this, state in $TMP/state);
# UX ARGS... the same in place of the calling (sub)shell, so that
# `(UX upgrade x) &` leaves uphook's own PID in $!
# A live upgrade says yes to its consent question (the first upgrade, new
# permissions: docs/security.md "Consent"): --yes after the command word.
UX() {
  n=$# yes=
  for a in "$@"; do
    if [ -z "$yes" ] && [ "$a" = upgrade ]; then set -- "$@" upgrade --yes; yes=1
    else set -- "$@" "$a"; fi
  done
  shift "$n"
  SNAP_DATA=$TMP/this SNAP_COMMON=$TMP/common HOME=$TMP/home \
    UPHOOK_SNAPCTL=$TMP/snapctl NODE_NAME=$THIS FAKE_PORT=$PORT \
    exec ${WRAP:-} "$UPHOOK" --kubeconfig "${UKC:-$KC}" --addons "$REPO" \
    --state-dir "$TMP/state" "$@"
}
U() { (WRAP="timeout 120"; UX "$@"); }
mkdir -p "$TMP/this/var/lock" "$TMP/common" "$TMP/home" "$TMP/hooks"

# The snapctl stand-in of every node: records the restart in the node's
# $SNAP_DATA/restarts.log and tells the fake API server, which makes the
# node NotReady for a moment (and, for this node's kubelite, itself).
cat > "$TMP/snapctl" <<'EOF'
#!/bin/sh
# (another node's agent records the restart in its restarts.log itself)
[ "$NODE_NAME" = "$THIS_NODE" ] && echo "$(date +%s.%N) $2" >> "$SNAP_DATA/restarts.log"
api=false
[ "$NODE_NAME" = "$THIS_NODE" ] && [ "$2" = microk8s.daemon-kubelite ] && api=true
curl -sS -o /dev/null -X POST --data "{\"apiserver\": $api, \"seconds\": ${RESTART_SECONDS:-0.3}}" \
  "http://127.0.0.1:$FAKE_PORT/_fake/nodes/$NODE_NAME/restart"
EOF
chmod +x "$TMP/snapctl"
export THIS_NODE="$THIS"

# The kubelet args every node starts with (a trimmed MicroK8s default).
KUBELET_ARGS='--kubeconfig=${SNAP_DATA}/credentials/kubelet.config
--cert-dir=${SNAP_DATA}/certs
--client-ca-file=${SNAP_DATA}/certs/ca.crt
--anonymous-auth=false
--fail-swap-on=false
--node-labels="microk8s.io/cluster=true,node.kubernetes.io/microk8s-controlplane=microk8s-controlplane"
--authentication-token-webhook=true
--read-only-port=0
--cluster-domain=cluster.local
--cluster-dns=10.152.183.10
'

# start_cluster N: this node ($THIS, $TMP/this, address $NET.1, no agent)
# and N other nodes node-2..node-<N+1> at $NET.2.., each with its own
# $SNAP_DATA ($TMP/nodes/<name>), args files, server certificate of the
# test cluster CA and the shared callback token, and a cluster agent on
# port 25000.  Registers every Node with the fake API server.  Sets NET,
# NODES (the other names) and addr_<i>.
start_cluster() {
  n=$1; tries=0
  python3 tests/fakes/cluster_ca.py ca "$TMP/ca"
  while :; do
    NET="127.$(shuf -i 1-254 -n 1).$(shuf -i 0-254 -n 1)"
    node_setup "$THIS" "$TMP/this" "$NET.1"
    NODES=""; i=2; up=1
    while [ $i -le $((n + 1)) ]; do
      name=node-$i; NODES="$NODES $name"
      node_setup "$name" "$TMP/nodes/$name" "$NET.$i"
      start_agent "$name" "$NET.$i" || { up=0; break; }
      i=$((i + 1))
    done
    [ $up -eq 1 ] && break
    tries=$((tries + 1)); [ $tries -lt 5 ] || { echo "not ok - no free loopback net"; exit 1; }
  done
  register_nodes
}

# register_nodes: every node's Node (InternalIP, Ready), its kubelet
# started from its args/kubelet
register_nodes() {
  ctl POST nodes "$(python3 -c '
import json, sys
this, thisd, net, names, tmp = sys.argv[1:6]
out = [{"name": this, "address": net + ".1", "snapData": thisd}]
for i, n in enumerate(names.split(), 2):
    out.append({"name": n, "address": "%s.%d" % (net, i), "snapData": tmp + "/nodes/" + n})
print(json.dumps(out))' "$THIS" "$TMP/this" "$NET" "$NODES" "$TMP")" >/dev/null
}

# sd NODE: a node's $SNAP_DATA
sd() { if [ "$1" = "$THIS" ]; then echo "$TMP/this"; else echo "$TMP/nodes/$1"; fi; }

# node_setup NAME SNAP_DATA ADDRESS: the node's files
node_setup() {
  mkdir -p "$2/args" "$2/var/lock" "$2/credentials"
  printf '%s' "$KUBELET_ARGS" > "$2/args/kubelet"
  printf -- '--authorization-mode=Node\n--secure-port=16443\n' > "$2/args/kube-apiserver"
  : > "$2/var/lock/lite.lock"; : > "$2/var/lock/ha-cluster"
  python3 tests/fakes/cluster_ca.py node "$TMP/ca" "$2" "$3" "$TOKEN"
}

# start_agent NAME ADDRESS: its cluster agent, until the suite ends
start_agent() {
  sd=$TMP/nodes/$1
  SNAP_DATA=$sd NODE_NAME=$1 FAKE_PORT=$PORT python3 tests/fakes/agent.py \
    --snap-data "$sd" --address "$2" --snapctl "$TMP/snapctl" --quiet \
    >"$sd/agent.out" 2>"$sd/agent.err" &
  eval "agent_pid_$(echo "$1" | tr - _)=$!"
  PIDS="$PIDS $!"
  j=0; while [ $j -lt 100 ]; do
    grep -q '^ready' "$sd/agent.out" 2>/dev/null && return 0
    kill -0 $! 2>/dev/null || return 1
    sleep 0.05; j=$((j + 1))
  done
  return 1
}

# args_sorted NODE SERVICE: a node's args file, its lines trimmed and
# sorted, blank lines dropped (the agent's rewrite may reorder appended
# keys and drops blank lines and spaces)
args_sorted() {
  grep -v '^[[:space:]]*$' "$(sd "$1")/args/$2" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | sort
}

# faults NODE JSON: the rules of that node's agent (tests/fakes/README.md)
faults() { printf '%s' "$2" > "$(sd "$1")/agent-faults.json"; }

# requests NODE [KIND]: how many configure requests (of that kind: empty,
# change, restart) its agent answered
requests() {
  python3 -c '
import json, sys
n = 0
try:
    for l in open(sys.argv[1]):
        e = json.loads(l)
        n += len(sys.argv) < 3 or e["kind"] == sys.argv[2]
except OSError:
    pass
print(n)' "$(sd "$1")/agent.log" ${2:+"$2"}
}

# restarts NODE: how many times the node's kubelite restarted
restarts() { f=$(sd "$1")/restarts.log; [ -f "$f" ] && wc -l < "$f" | tr -d ' ' || echo 0; }

# seed FIXTURE: a hook fixture into the fake, without its Nodes: the
# suite's Nodes are the ones start_cluster registers (a fixture's Nodes
# have addresses such as 10.0.0.11, which no test may reach)
seed() {
  python3 - "$1" > "$TMP/seed.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") != "Node"]
print(yaml.safe_dump_all(docs))
PY
  curl -sS -X POST --data-binary @"$TMP/seed.yaml" "http://127.0.0.1:$PORT/_fake/seed" >/dev/null
}

N3=node-3
OLD=10.152.183.99
# ------------------------------------------------ the dns cases' cluster
# (nodes_test.sh, crash_test.sh): node-3's DNS differs from the others'
# fresh [FIXTURE]: every node back to its first args (node-3's DNS differs
# from the others'), the fake reset, the Nodes registered, the fixture in
fresh() {
  ctl POST reset >/dev/null
  for _s in "$TMP/this" "$TMP"/nodes/*; do
    printf '%s' "$KUBELET_ARGS" | sed "s/^--cluster-dns=.*/--cluster-dns=$OLD/; /cluster-domain/d" \
      > "$_s/args/kubelet"
    rm -f "$_s/agent.log" "$_s/agent-faults.json" "$_s/restarts.log" "$_s/agent-hanging"
  done
  sed -i "s/^--cluster-dns=.*/--cluster-dns=10.152.183.77/" "$(sd $N3)/args/kubelet"
  for _n in $THIS $NODES; do cp "$(sd "$_n")/args/kubelet" "$TMP/base.$_n"; done
  register_nodes
  seed "${1:-$FIX}"
  rm -rf "$TMP/state"
}
# unchanged: this node byte for byte, every other node line for line
unchanged() {
  cmp -s "$TMP/this/args/kubelet" "$TMP/base.$THIS" || { echo "this node's kubelet changed" >>"$OUT"; return 1; }
  for _n in $NODES; do
    sort "$TMP/base.$_n" | grep -v '^$' > "$TMP/want"
    args_sorted "$_n" kubelet > "$TMP/got"
    cmp -s "$TMP/want" "$TMP/got" || { echo "$_n:"; diff "$TMP/want" "$TMP/got"; } >>"$OUT" || return 1
  done
}
no_changes_sent() {
  for _n in $NODES; do [ "$(requests "$_n" change)" = 0 ] || { echo "$_n got a change" >>"$OUT"; return 1; }; done
}
check() {   # NAME COMMAND...: ok when COMMAND succeeds
  name=$1; shift
  if "$@"; then ok "$name"; else not_ok "$name"; fi
}
configz() {   # NODE PYTHON-EXPR over kc (the node's running kubeletconfig)
  ctl GET nodes | python3 -c "
import json, sys
kc = json.load(sys.stdin)['nodes']['$1']['kubeletconfig']
print($2)"
}

