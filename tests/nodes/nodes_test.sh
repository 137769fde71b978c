#!/bin/sh
# uphook on a four-node cluster, end to end (docs/microk8s.md "On a cluster
# of several nodes: what runs where"): this node and three others whose
# cluster agents are tests/fakes/agent.py on random loopback addresses, port
# 25000, each with its own $SNAP_DATA, a certificate of a test cluster CA
# and the callback token; the fake API server serves their Nodes and their
# kubelets' configz (tests/nodes/README.md).
# - the real dns and metrics-server hooks: every node's args and running
#   kubelet config right, every node restarted once, one at a time (each
#   Ready again with configz answering before the next), this node last and
#   the API server waited for; the token in no output, event or file;
# - one agent answering 500 (at the change, at the restart) rolls every
#   node back to its own prior values; a node whose undo fails too ends in
#   exit 6 with the journal and the Lease's pending marker kept, and
#   `recover` finishes once the node works; an agent that holds its
#   answer past --timeout fails the run naming it, and the rollback (past
#   the run's time by then) still waits for each node;
# - an unreachable node, a bad certificate, a wrong token: stopped before
#   any change, naming the node;
# - bad input: no token file, an empty one, no CA, a garbage answer, a
#   node without an InternalIP, two nodes with one address, a node that
#   joins or leaves during the run.
. tests/cli/lib.sh
. tests/nodes/lib.sh

start_apiserver
start_cluster 3
FIX=$ROOT/hooks/dns/fixtures/cluster-1.10.1.yaml
repo dns metrics-server
# ---------------------------------------------------------------- dns
fresh
run U --output json upgrade dns
expect "dns on four nodes: upgraded" 0 '"event":"result"'
cp "$OUT" "$TMP/dns.json"
ok_all=1
for n in $THIS $NODES; do
  args_sorted "$n" kubelet | grep -qx -- '--cluster-dns=10.152.183.10' \
    && args_sorted "$n" kubelet | grep -qx -- '--cluster-domain=cluster.local' || ok_all=0
  [ "$(configz "$n" "kc['clusterDNS'], kc.get('clusterDomain')")" = "['10.152.183.10'] cluster.local" ] || ok_all=0
  [ "$(restarts "$n")" = 1 ] || ok_all=0
done
for n in $THIS $NODES; do echo "$n: $(restarts "$n") restarts, configz $(configz "$n" "kc['clusterDNS']")"; done >"$OUT"
check "dns: every node's args and running kubelet (configz) have the new DNS, each restarted once" [ $ok_all = 1 ]
ctl GET requests > "$TMP/requests.json"
python3 - "$TMP" "$THIS" $NODES >"$OUT" 2>&1 <<'EOF'
import json, sys
tmp, this, others = sys.argv[1], sys.argv[2], sys.argv[3:]
def restart_time(n):
    path = "%s/this/restarts.log" % tmp if n == this else "%s/nodes/%s/restarts.log" % (tmp, n)
    return float(open(path).read().split()[0])
order = sorted(others + [this], key=restart_time)
log = json.load(open(tmp + "/requests.json"))["log"]
ok = order[-1] == this
print("restart order:", order)
for a, b in zip(order, order[1:]):
    ta, tb = restart_time(a), restart_time(b)
    # received before b's restart: its answer came before, and the log's
    # time (after the answer) may come after on a busy machine
    seen = [r for r in log if r["path"] == "/api/v1/nodes/%s/proxy/configz" % a
            and r["status"] == 200 and ta < r["received"] < tb]
    print(a, "restarted at", ta, "then", b, "at", tb, "- configz of", a, "answered 200 in between:", len(seen))
    ok = ok and len(seen) > 0 and tb - ta >= 0.3
t = restart_time(this)
commit = [r for r in log if r["method"] == "PATCH" and r["path"].endswith("/configmaps/uphook-dns")
          and r["time"] > t]
print("state committed after this node's restart (API down 0.3 s):", [(r["time"], r["status"]) for r in commit])
ok = ok and commit and commit[-1]["time"] >= t + 0.3 and commit[-1]["status"] in (200, 201)
print("ok" if ok else "not ok")
EOF
check "dns: restarts roll one node at a time, each Ready with configz answering before the next, this node last" \
  grep -qx ok "$OUT"
python3 -c '
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
nodes = sorted({e.get("node") for e in evs if e.get("event") == "node" and e.get("action") == "args"})
print(nodes)' "$TMP/dns.json" >"$OUT"
check "dns --output json: one node event per other node" grep -q "node-2.*node-3.*node-4" "$OUT"
if grep -rqs -- "$TOKEN" "$TMP/dns.json" "$TMP/state" "$SRV/stderr"; then
  echo "token found" >"$OUT"; not_ok "the callback token is in no output, event or state file"
else ok "the callback token is in no output, event or state file"; fi
before=$(cat "$TMP"/nodes/*/agent.log | wc -l)
run U upgrade dns
after=$(cat "$TMP"/nodes/*/agent.log | wc -l)
expect "dns: a second run changes nothing" 0 "already at 1.14.3"
check "... and restarts nothing" [ "$(restarts node-2)" = 1 ] && [ "$(restarts "$THIS")" = 1 ]

# ------------------------------------------------------- metrics-server
fresh "$ROOT/hooks/metrics-server/fixtures/cluster-v0.5.2-amd64.yaml"
for n in $THIS $NODES; do sed -i '/authentication-token-webhook/d' "$(sd "$n")/args/kubelet"; done
register_nodes
# the API aggregator's part, which the fake does not play: the APIService
# is Available (server-side apply leaves its status alone)
python3 - "$ROOT/hooks/metrics-server/fixtures/cluster-v0.5.2-amd64.yaml" > "$TMP/apisvc.yaml" <<'EOF'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "APIService":
        d["status"] = {"conditions": [{"type": "Available", "status": "True",
                                       "reason": "Passed", "message": "all checks passed"}]}
        print(yaml.safe_dump(d))
EOF
curl -sS -X POST --data-binary @"$TMP/apisvc.yaml" "http://127.0.0.1:$PORT/_fake/seed" >/dev/null
run U upgrade metrics-server
expect "metrics-server on four nodes: upgraded" 0 "Upgraded metrics-server"
ok_all=1
for n in $THIS $NODES; do
  [ "$(configz "$n" "kc['authentication']['webhook']['enabled']")" = True ] || ok_all=0
done
check "metrics-server: every node's running kubelet has webhook authentication" [ $ok_all = 1 ]

# ------------------------------------------------------------ rollback
fresh
faults node-4 '[{"match": "change", "action": "error", "message": "disk full"}]'
run U upgrade dns
expect "an agent answering 500 to the change fails the upgrade, naming the node and its address" 1 \
  "node node-4 \\($NET\\.4\\)" "Disk full"
check "... every node is back to its own prior args (node-3's differed)" unchanged
check "... no node was restarted" [ "$(restarts node-2)$(restarts node-3)$(restarts "$THIS")" = 000 ]

fresh
faults node-3 '[{"match": "restart", "action": "error", "message": "snapctl failed"}]'
run U upgrade dns
expect "an agent answering 500 to its restart fails the upgrade, naming the node" 1 \
  "node node-3 \\($NET\\.3\\)" "Snapctl failed"
check "... every node is back to its own prior args" unchanged
check "... node-2, restarted on the new args, restarted again on the old" [ "$(restarts node-2)" = 2 ]
check "... and its running kubelet has the old DNS again" \
  [ "$(configz node-2 "kc['clusterDNS']")" = "['$OLD']" ]

fresh
faults node-4 '[{"match": "restart", "action": "error", "message": "snapctl failed"},
  {"match": "change", "skip": 1, "count": -1, "action": "error", "message": "agent broken"}]'
run U upgrade dns
expect "a node whose undo fails too: exit 6 naming it, the journal kept" 6 \
  "node node-4 \($NET\.4\)" "Agent broken" "run: .*uphook .*recover dns"
pending=$(objs "((get('Lease', 'uphook-dns', 'kube-system') or {}).get('metadata', {}).get('annotations') or {}).get('uphook.microk8s.io/pending')")
check "... the Lease stays marked pending by this node" [ "$pending" = "$THIS" ]
rm "$(sd node-4)/agent-faults.json"
run U recover dns
expect "... once the node works again, recover undoes it" 0 "Recovered dns"
check "... every node is back to its own prior args" unchanged
check "... and every kubelet runs its old DNS again" \
  [ "$(configz node-4 "kc['clusterDNS']")$(configz node-2 "kc['clusterDNS']")" = "['$OLD']['$OLD']" ]

# an agent that holds its answer past --timeout: the run fails naming the
# node; the rollback, past the run's time by then, gives each node its
# own wait (node-2's agent now takes 1 s for each of its answers)
fresh
faults node-3 '[{"match": "restart", "action": "hang", "when": "after", "seconds": 30}]'
faults node-2 '[{"match": "any", "skip": 3, "count": -1, "action": "hang", "when": "before", "seconds": 1}]'
run U --timeout 8 upgrade dns
expect "an agent that does not answer within --timeout fails the run, naming the node and its address" 1 \
  "node node-3 \\($NET\\.3\\): the cluster agent at https://$NET\\.3:25000/cluster/api/v1\\.0/configure did not answer within" \
  "dns is unchanged"
check "... every node is back to its own prior args, the slow node-2 too" unchanged
check "... node-2 and node-3 (restarted, answer held) restarted again" \
  [ "$(restarts node-2)$(restarts node-3)" = 22 ]
check "... and run their old DNS again" \
  [ "$(configz node-2 "kc['clusterDNS']")$(configz node-3 "kc['clusterDNS']")" = "['$OLD']['10.152.183.77']" ]
check "... no journal is left" [ ! -e "$TMP/state/journal/dns.journal" ]

# ----------------------------------------------------- stopped before
fresh
kill "$agent_pid_node_3"; wait "$agent_pid_node_3" 2>/dev/null
run U upgrade dns
expect "an unreachable node stops the run before any change, naming it" 4 \
  "node node-3 \\($NET\\.3\\): cannot reach the cluster agent"
check "... nothing changed" unchanged
check "... no change was sent to any node" no_changes_sent
start_agent node-3 "$NET.3"

fresh
mv "$(sd node-4)/certs" "$TMP/certs4"
python3 tests/fakes/cluster_ca.py ca "$TMP/other-ca"
python3 tests/fakes/cluster_ca.py node "$TMP/other-ca" "$(sd node-4)" "$NET.4"
kill "$agent_pid_node_4"; wait "$agent_pid_node_4" 2>/dev/null; start_agent node-4 "$NET.4"
run U upgrade dns
expect "a node whose certificate another CA signed stops the run, naming it" 4 \
  "node node-4 \\($NET\\.4\\): TLS with the cluster agent" "nothing was changed"
check "... nothing changed, nothing sent" unchanged
[ "$(requests node-4)" = 0 ] && ok "... and node-4 never got the token (no request reached it)" \
  || not_ok "... node-4 got no request"
rm -rf "$(sd node-4)/certs"; mv "$TMP/certs4" "$(sd node-4)/certs"
kill "$agent_pid_node_4"; wait "$agent_pid_node_4" 2>/dev/null; start_agent node-4 "$NET.4"

fresh
cp "$(sd node-2)/credentials/callback-token.txt" "$TMP/token2"
echo "not-the-token" > "$(sd node-2)/credentials/callback-token.txt"
run U upgrade dns
expect "a node that refuses the token stops the run, naming it" 4 \
  "node node-2 \\($NET\\.2\\): the cluster agent refused \\(HTTP 500\\): Invalid token"
check "... nothing changed" unchanged
cp "$TMP/token2" "$(sd node-2)/credentials/callback-token.txt"

# ------------------------------------------------------------ bad input
T=$TMP/this/credentials/callback-token.txt
fresh; mv "$T" "$TMP/tok"
run U upgrade dns
expect "no callback token file: exit 4 naming the file" 4 "neither $T nor"
check "... nothing changed" unchanged
fresh; : > "$T"
run U upgrade dns
expect "an empty callback token file: exit 4 naming it" 4 "$T is empty"
mv "$TMP/tok" "$T"
fresh; mv "$TMP/this/certs/ca.crt" "$TMP/ca.crt"
run U upgrade dns
expect "no cluster CA: exit 4 naming the file" 4 "cannot read $TMP/this/certs/ca.crt"
mv "$TMP/ca.crt" "$TMP/this/certs/ca.crt"
fresh; faults node-2 '[{"match": "empty", "action": "garbage"}]'
run U upgrade dns
expect "an agent answering garbage to the preflight: exit 4 naming it" 4 \
  "node node-2 \\($NET\\.2\\): the cluster agent at https://$NET\\.2:25000/cluster/api/v1\\.0/configure answered HTTP 200 with something that is not"
fresh; faults node-2 '[{"match": "change", "action": "garbage"}]'
run U upgrade dns
expect "an agent answering garbage to the change: rolled back, naming it" 1 "node node-2 \\($NET\\.2\\)"
check "... every node is back to its prior args" unchanged
fresh; ctl POST nodes '{"name": "node-3", "address": null}' >/dev/null
run U upgrade dns
expect "a node without an InternalIP: exit 4 naming it" 4 "node-3 has no InternalIP"
fresh; ctl POST nodes "{\"name\": \"node-4\", \"address\": \"$NET.3\", \"snapData\": \"$(sd node-4)\"}" >/dev/null
run U upgrade dns
expect "two nodes with one address: exit 4 naming both" 4 "node-3 and node-4 have the same InternalIP $NET.3"
check "... nothing changed" unchanged
fresh; faults node-2 "[{\"match\": \"empty\", \"action\": \"run\", \"command\": \"curl -s -X POST --data '{\\\"name\\\": \\\"node-9\\\", \\\"address\\\": \\\"$NET.9\\\"}' http://127.0.0.1:$PORT/_fake/nodes\"}]"
run U upgrade dns
# the dns hook has applied its manifests by then: the run fails and rolls back
expect "a node that joins during the run: rolled back, naming it" 1 "node node-9 joined the cluster during the upgrade"
check "... and nothing is left changed" unchanged
fresh; faults node-2 "[{\"match\": \"empty\", \"action\": \"run\", \"command\": \"curl -s -X DELETE http://127.0.0.1:$PORT/_fake/nodes/node-4\"}]"
run U upgrade dns
expect "a node that leaves during the run: rolled back, naming it" 1 "node node-4 left the cluster during the upgrade"
check "... and nothing is left changed" unchanged
finish
