# Several nodes, offline, through the real binary (docs/guide.md §6
# "Several nodes"; docs/state.md, the offline world's nodes/): the dns
# hook on a three-node mock cluster, plan per node (text and JSON), the
# upgrade on every node, a node's agent failing, crash at every journaled
# change recovered, a node whose undo fails (exit 6, then recover again).
#
# The crash sweep covers every journaled change under UPHOOK_SWEEP=full;
# otherwise the first, the middle and the last. Not run under valgrind
# (tests/cli/ is): the CLI paths here are the ones crash_test.sh covers.
. tests/cli/lib.sh

ROOT=$(pwd)
REPO="$TMP/repo"
mkdir -p "$REPO/addons"
printf 'microk8s-addons:\n  addons:\n    - name: dns\n      version: 1.0.0\n' > "$REPO/addons.yaml"
ln -s "$ROOT/hooks/dns" "$REPO/addons/dns"

# the dns 1.10.1 cluster on three nodes: mk8s-node1 (this one: the
# fixture's first Node), node-b and node-c
FIX="$TMP/three.yaml"
{ cat hooks/dns/fixtures/cluster-1.10.1.yaml
  for n in b c; do
    ip=10.0.0.1$( [ $n = b ] && echo 2 || echo 3 )
    printf -- '---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%s\n' $n
    printf '  labels: {kubernetes.io/hostname: node-%s, kubernetes.io/arch: amd64}\n' $n
    printf 'status:\n  addresses: [{type: InternalIP, address: "%s"}]\n' $ip
    printf '  conditions: [{type: Ready, status: "True"}]\n'
  done; } > "$FIX"

U() { d=$1; shift; "$UPHOOK" --addons "$REPO" --offline "$FIX" --state-dir "$d" "$@"; }
norm() { python3 tests/cli/normalize.py "$1" lease; }
# the key=value lines of a file: what the cluster-agent's rewrite keeps
lines() { sed 's/^[[:space:]]*//; s/[[:space:]]*$//' "$1" | grep -v '^$'; }

# A fresh world: node-b's kubelet already right, node-c's out of step,
# this node's as MicroK8s ships it (the default args files).
BASE="$TMP/base"
run U "$BASE" plan dns
expect "plan on three nodes" 0 "Plan for dns 1.10.1 -> 1.14.3"
# the offline node (docs/guide.md §8) starts with MicroK8s's default args
# files, so the plan changes kubelet's file, never creates it
refute "the plan does not create this node's kubelet args file" 'file args:kubelet \(created'
for n in b c; do
  [ -f "$BASE/offline/nodes/node-$n/args/kubelet" ] && ok "node-$n has its own default args files" \
    || not_ok "node-$n has its own default args files"
done
printf '%s\n' '--cluster-domain=cluster.local' '--cluster-dns=10.152.183.10' \
  >> "$BASE/offline/nodes/node-b/args/kubelet"
cp "$BASE/offline/nodes/node-b/args/kubelet" "$BASE/offline/nodes/node-b/kubelet.running"
printf '%s\n' '' '--cluster-dns=10.152.183.99' >> "$BASE/offline/nodes/node-c/args/kubelet"
cp "$BASE/offline/nodes/node-c/args/kubelet" "$BASE/offline/nodes/node-c/kubelet.running"
norm "$BASE/offline/cluster.yaml" > "$TMP/base.json"

run U "$BASE" plan dns
expect "the plan lists node-c's change with its prior, read from its kubelet" 0 \
  '~ file args:kubelet \(changed, mode 0644\) on mk8s-node1' \
  '~ args:kubelet on node-c \(10\.0\.0\.13\)' \
  '--cluster-dns: "10\.152\.183\.99" \(read\) -> "10\.152\.183\.10"' \
  'restart kubelite on node-c' 'restart kubelite on mk8s-node1'
refute "node-b already matches: not in the plan" 'on node-b'

run U "$BASE" --output json plan dns
n_events=$(grep -c '"event":"node"' "$OUT")
if [ "$n_events" -eq 4 ] && grep -q '"action":"args".*"node":"node-c"' "$OUT" \
   && grep -q '"how":"read"' "$OUT"; then
  ok "--output json: one node event per node change (args on 2 nodes, 2 restarts)"
else echo "    $n_events node events" >>"$OUT"; not_ok "--output json: one node event per node"; fi

# doctor reads each mock node's running kubelet (configz): node-b's and
# node-c's DNS differ, this node's kubelet has none
T="$TMP/doctor"; cp -a "$BASE" "$T"
run U "$T" doctor
expect "doctor offline: the kubelet setting that differs between the three nodes, each node's value" 1 \
  'clusterDNS: mk8s-node1 \(unset\), node-b \["10\.152\.183\.10"\], node-c \["10\.152\.183\.99"\]'

# same_world DIR: cluster, this node's files byte for byte, every other
# node's key=value lines, as in the base world
same_world() {
  norm "$1/offline/cluster.yaml" > "$TMP/a.json"
  cmp -s "$TMP/a.json" "$TMP/base.json" || { diff "$TMP/base.json" "$TMP/a.json" | head >>"$OUT"; return 1; }
  diff -r "$1/offline/args" "$BASE/offline/args" >>"$OUT" 2>&1 || return 1
  for m in b c; do
    for f in "$BASE/offline/nodes/node-$m/args/"* "$BASE/offline/nodes/node-$m/kubelet.running"; do
      g="$1/offline/nodes/node-$m/${f#$BASE/offline/nodes/node-$m/}"
      [ "$(lines "$f")" = "$(lines "$g")" ] || { echo "    differs: $g" >>"$OUT"; return 1; }
    done
  done
  [ ! -e "$1/journal/dns.journal" ] || { echo "    journal left" >>"$OUT"; return 1; }
}

T="$TMP/up"; cp -a "$BASE" "$T"
run U "$T" upgrade dns
expect "upgrade on three nodes" 0 "Upgraded dns from 1.10.1 to 1.14.3"
for n in mk8s-node1 node-b node-c; do
  f="$T/offline/nodes/$n/args/kubelet"; [ $n = mk8s-node1 ] && f="$T/offline/args/kubelet"
  if grep -qx -- '--cluster-dns=10.152.183.10' "$f" && ! grep -q -- '10.152.183.99' "$f"; then
    ok "$n: --cluster-dns is the Service's"
  else cp "$f" "$OUT"; not_ok "$n: --cluster-dns is the Service's"; fi
done
grep -qx -- '--cluster-dns=10.152.183.10' "$T/offline/nodes/node-c/kubelet.running" \
  && ok "node-c's kubelet was restarted onto it" || not_ok "node-c's kubelet was restarted onto it"
run U "$T" upgrade dns
expect "a second upgrade finds no drift" 0 "dns is already at 1.14.3: nothing to do"
# a node that drifted since is repaired
printf '%s\n' '--cluster-domain=old.local' >> "$T/offline/nodes/node-b/args/kubelet"
cp "$T/offline/nodes/node-b/args/kubelet" "$T/offline/nodes/node-b/kubelet.running"
run U "$T" upgrade dns
expect "at 1.14.3, node-b's drift is reported and repaired" 0 \
  'drift: args:kubelet on node node-b \(10\.0\.0\.12\): --cluster-domain is "old\.local" \(read\), the hook sets "cluster\.local"'
grep -q 'old.local' "$T/offline/nodes/node-b/args/kubelet" && not_ok "node-b repaired" || ok "node-b repaired"

# node-c's agent refuses the token: exit 4 before any change, naming it
T="$TMP/token"; cp -a "$BASE" "$T"; echo token > "$T/offline/nodes/node-c/agent"
run U "$T" upgrade dns
expect "node-c refusing the token stops the run before any change" 4 \
  'preflight: node node-c \(10\.0\.0\.13\): the cluster-agent answered 500: invalid token'
rm "$T/offline/nodes/node-c/agent"
same_world "$T" && ok "nothing changed on any node" || not_ok "nothing changed on any node"

# Crash at every journaled change: recover brings every node back.
# For the crash sweep both other nodes change: node-b's domain is off too.
cp -a "$BASE" "$TMP/base2"; BASE="$TMP/base2"
sed -i 's/^--cluster-domain=cluster.local$/--cluster-domain=old.local/' \
  "$BASE/offline/nodes/node-b/args/kubelet" "$BASE/offline/nodes/node-b/kubelet.running"

# How many journaled changes a run makes, and which are another node's
# (the other nodes' files or running kubelets differ from the change
# before).
nodes_sum() { cat "$1"/offline/nodes/node-*/args/* "$1"/offline/nodes/node-*/kubelet.running | cksum; }
n=1; total=0; remote=""; seen=$(nodes_sum "$BASE")
while [ $n -le 40 ]; do
  T="$TMP/probe"; rm -rf "$T"; cp -a "$BASE" "$T"
  UPHOOK_CRASH_AFTER=$n U "$T" upgrade dns >/dev/null 2>&1 && break
  total=$n
  c=$(nodes_sum "$T")
  [ "$c" != "$seen" ] && remote="$remote $n"; seen=$c
  n=$((n + 1))
done
echo "info: dns on three nodes: $total journaled changes (crash points), of other nodes:$remote"
# the two nodes' args go out together (the crash after the first of them
# finds both sent, as with a request in flight), then each restart
[ "$(echo $remote | wc -w)" -eq 3 ] && ok "the other nodes' args and each restart are crash points ($remote)" \
  || not_ok "the other nodes' args and each restart are crash points ($remote)"
# make test: the first, every other node's change, and the last
if [ "${UPHOOK_SWEEP:-}" = full ]; then points=$(seq 1 "$total")
else points=$(printf '%s\n' 1 $remote "$total" | sort -un); fi
covered=0
for n in $points; do
  T="$TMP/crash-$n"; rm -rf "$T"; cp -a "$BASE" "$T"
  UPHOOK_CRASH_AFTER=$n U "$T" upgrade dns >"$OUT" 2>&1; rc=$?
  run U "$T" upgrade dns; rc1=$RC
  run U "$T" recover dns
  if [ "$rc" -eq 99 ] && [ "$rc1" -eq 6 ] && [ "$RC" -eq 0 ] && same_world "$T"; then
    run U "$T" upgrade dns
    expect "crash after change $n of $total: every node recovered, then upgrades" 0 "Upgraded dns"
    covered=$((covered + 1))
  else
    echo "    (crash: $rc, upgrade after: $rc1, recover: $RC)" >>"$OUT"
    not_ok "crash after change $n of $total: every node recovered"
  fi
done
echo "info: crash points covered: $covered of $total (UPHOOK_SWEEP=full for all)"

# A node whose undo fails: exit 6 naming it, the journal kept; once the
# node answers again, recover finishes.
T="$TMP/stuck"; cp -a "$BASE" "$T"
n=1
while [ $n -le "$total" ]; do   # the first crash point after node-c's change
  rm -rf "$T"; cp -a "$BASE" "$T"
  UPHOOK_CRASH_AFTER=$n U "$T" upgrade dns >/dev/null 2>&1
  grep -q '10.152.183.10' "$T/offline/nodes/node-c/args/kubelet" && break
  n=$((n + 1))
done
echo unreachable > "$T/offline/nodes/node-c/agent"
run U "$T" recover dns
expect "recover with node-c unreachable: exit 6 naming the node" 6 \
  'cannot undo args:kubelet on node node-c \(10\.0\.0\.13\): cannot connect' \
  'recovery incomplete; the journal is kept'
[ -e "$T/journal/dns.journal" ] && ok "the journal is kept" || not_ok "the journal is kept"
rm "$T/offline/nodes/node-c/agent"
run U "$T" recover dns
expect "recover again once node-c answers" 0 "Recovered dns"
same_world "$T" && ok "every node is as before" || not_ok "every node is as before"

# lint says where bin: and plugins: changes go
mkdir -p "$TMP/binrepo/b"
cat > "$TMP/binrepo/b/upgrade.lua" <<'LUA'
return { version = "2.0.0", from = "1.x", description = "a binary",
  permissions = { "bin:tool", "plugins:kube-bench", "args:kubelet",
    "args:eventconfig.yaml" },
  detect = function() return "1.0.0" end,
  upgrade = function() end }
LUA
run "$UPHOOK" lint "$TMP/binrepo/b"
expect "lint notes that bin: and plugins: change this node only" 0 \
  "note: bin:tool changes on this node only" \
  "note: plugins:kube-bench changes on this node only" "0 problems"
# a config file under args: is no service's flags: it cannot reach every
# node, and lint says so naming the file; a flags file gets no note
expect "lint notes that a config file under args: is not every node" 0 \
  "note: args:eventconfig.yaml is a config file, not a service's flags: it cannot change on every node"
if grep -q 'note: args:kubelet' "$OUT"; then
  not_ok "lint: no note for args:kubelet (flags reach every node)"
else ok "lint: no note for args:kubelet (flags reach every node)"; fi

finish
