# Field ownership end to end (docs/internals.md, "Field ownership"): two
# versions of an addon's hook run one after the other on one offline world
# (--state-dir), as the issue describes: a field the second version no
# longer applies goes, and its plan shows it going; a field enable set
# (kubectl apply, client side) and the new version dropped goes at the
# first upgrade; a field a user set with kubectl edit stays. Then the same
# two upgrades against the fake API server (the live backend).
. tests/cli/lib.sh

hook() {   # hook DIR VERSION FROM DATA...
  dir=$1; v=$2; from=$3; shift 3
  data=""
  for kv in "$@"; do data="$data ${kv%%=*} = \"${kv#*=}\","; done
  cat > "$dir/addons/demo/upgrade.lua" <<LUA
return { version = "$v", from = "$from", description = "demo $v",
  permissions = { "kube:default" },
  detect = function()
    return kube.get("ConfigMap", "demo", "default") and "1.0.0" or nil
  end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "demo", namespace = "default" },
      data = {$data } }
  end }
LUA
}

# the addon's two versions come one after the other in its one repository
# (a demo of a second repository would be another addon, with its own
# state: docs/state.md "Which repository"); world and live take the version
# as $TMP/v1 or $TMP/v2 and write that hook into the repository first
make_repo "$TMP/repo" demo
version() {
  case $1 in
    */v1) hook "$TMP/repo" 1.1.0 ">=1.0.0 <1.1.0" keep=1 dropped=2 ;;
    */v2) hook "$TMP/repo" 1.2.0 ">=1.1.0 <1.2.0" keep=1 ;;
  esac
}
# As `microk8s enable demo` 1.0.0 left it (kubectl apply, client side),
# then a user's `kubectl edit` of one key: the fixture says who owns what,
# as `kubectl get -o yaml` shows it.
cat > "$TMP/cluster.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  namespace: default
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","data":{"keep":"1","since-1.0":"gone in 1.1.0"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"demo","namespace":"default"}}
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        .: {}
        f:keep: {}
        f:since-1.0: {}
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
    manager: kubectl-client-side-apply
    operation: Update
    time: "2024-01-01T00:00:00Z"
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        f:edited: {}
    manager: kubectl-edit
    operation: Update
    time: "2024-01-02T00:00:00Z"
data: {keep: "1", since-1.0: "gone in 1.1.0", edited: "by the user"}
YAML
SD="$TMP/sd"
world() { version "$1"; "$UPHOOK" --addons "$TMP/repo" --offline "$TMP/cluster.yaml" --state-dir "$SD" "$2" demo; }

run world "$TMP/v1" plan
expect "v1 plan: enable's field since-1.0 goes, dropped comes" 0 \
  'data.since-1.0: "gone in 1.1.0" -> \(absent\)' 'data.dropped: \(absent\) -> "2"'
run world "$TMP/v1" upgrade
expect "v1 upgrade" 0
cm() { grep -A8 '^kind: ConfigMap' "$SD/offline/cluster.yaml" | grep -A6 'name: demo' ; }
if grep -q 'since-1.0' "$SD/offline/cluster.yaml"; then
  echo "    since-1.0 is still there" > "$OUT"; not_ok "v1: the field enable set and 1.1.0 dropped is gone"
else ok "v1: the field enable set and 1.1.0 dropped is gone"; fi
if grep -q 'last-applied-configuration' "$SD/offline/cluster.yaml"; then
  echo "    the annotation is still there" > "$OUT"; not_ok "v1: the stale last-applied-configuration is gone"
else ok "v1: the stale last-applied-configuration is gone"; fi

run world "$TMP/v2" plan
expect "v2 plan shows dropped going" 0 'data.dropped: "2" -> \(absent\)'
run world "$TMP/v2" upgrade
expect "v2 upgrade" 0
if grep -qE '^  dropped:' "$SD/offline/cluster.yaml"; then
  echo "    dropped is still there" > "$OUT"; not_ok "v2: the field 1.2.0 no longer applies is gone"
else ok "v2: the field 1.2.0 no longer applies is gone"; fi
if grep -qE '^  keep: "1"' "$SD/offline/cluster.yaml"; then ok "v2: keep stays"
else cp "$SD/offline/cluster.yaml" "$OUT"; not_ok "v2: keep stays"; fi
if grep -qE '^  edited: by the user' "$SD/offline/cluster.yaml"; then
  ok "v1 and v2: the user's edit stays (kubectl-edit owns it)"
else cp "$SD/offline/cluster.yaml" "$OUT"; not_ok "v1 and v2: the user's edit stays (kubectl-edit owns it)"; fi

# ---- the same two upgrades live, against the fake API server (tests/fakes,
# the server the real kubectl is tested against): the live backend's apply,
# its csaupgrade (a JSON patch of managedFields) and the server's prune.
SRV=$TMP/srv; mkdir -p "$SRV"
python3 tests/fakes/apiserver.py --dir "$SRV" --quiet --rollout-delay 0.05 \
  >"$SRV/stdout" 2>"$SRV/stderr" &
FAKE=$!
trap 'kill $FAKE 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ $i -lt 150 ] && ! grep -q '^ready ' "$SRV/stdout"; do sleep 0.1; i=$((i + 1)); done
PORT=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$SRV/stdout")
ctl() { curl -sS -X "$1" ${3:+--data-binary "$3"} "http://127.0.0.1:$PORT/_fake/$2"; }
# the fixture without its Node (the fake has this node's)
sed '1,/^---$/d' "$TMP/cluster.yaml" > "$TMP/seed.yaml"
ctl POST seed "$(cat "$TMP/seed.yaml")" > "$OUT"
live_cm() {   # live_cm EXPR: a Python expression over the ConfigMap `cm`
  ctl GET objects | python3 -c "
import json, sys
cm = [o for o in json.load(sys.stdin)['items'] if o['kind'] == 'ConfigMap'
      and o['metadata']['name'] == 'demo'][0]
print($1)"
}
mkdir -p "$TMP/snap_data" "$TMP/snap_common" "$TMP/lsd"
live() {
  version "$1"
  SNAP_DATA=$TMP/snap_data SNAP_COMMON=$TMP/snap_common HOME=$TMP/home \
    timeout 120 "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$TMP/repo" \
    --state-dir "$TMP/lsd" "$2" demo $( [ "$2" = upgrade ] && echo --yes )
}
run live "$TMP/v1" plan
expect "live v1 plan: enable's field since-1.0 goes, dropped comes" 0 \
  'data.since-1.0: "gone in 1.1.0" -> \(absent\)' 'data.dropped: \(absent\) -> "2"'
# a controller's write between uphook's read and its client-side apply
# upgrade: the server refuses that JSON patch as stale, once; uphook reads
# again and retries, as kubectl does
ctl DELETE requests > /dev/null
ctl POST faults '{"method": "PATCH", "path": "/configmaps/demo$",
  "query": "^fieldManager=uphook$", "status": 409, "reason": "Conflict",
  "count": 1, "message": "Operation cannot be fulfilled on configmaps \"demo\": the object has been modified; please apply your changes to the latest version and try again"}' > /dev/null
run live "$TMP/v1" upgrade
expect "live v1 upgrade, through a 409 Conflict on its client-side apply upgrade" 0
ctl GET requests > "$TMP/requests.json"
run python3 -c "
import json, sys
log = json.load(open(sys.argv[1]))['log']
print([(r['status'], bool(r['fault'])) for r in log
       if r['method'] == 'PATCH' and r['path'].endswith('/configmaps/demo')
       and r['query'] == 'fieldManager=uphook'])" "$TMP/requests.json"
expect "live v1: the stale patch was sent again and landed" 0 \
  "^\[\(409, True\), \(200, False\)\]$"
run live_cm "sorted(cm['data']), sorted(m['manager'] for m in cm['metadata']['managedFields']), 'kubectl.kubernetes.io/last-applied-configuration' in (cm['metadata'].get('annotations') or {})"
expect "live v1: since-1.0 gone, dropped there, the user's edit kept, uphook owns enable's fields, no last-applied" 0 \
  "^\['dropped', 'edited', 'keep'\] \['kubectl-edit', 'uphook'\] False$"
run live "$TMP/v2" plan
expect "live v2 plan shows dropped going" 0 'data.dropped: "2" -> \(absent\)'
run live "$TMP/v2" upgrade
expect "live v2 upgrade" 0
run live_cm "sorted(cm['data'].items())"
expect "live v2: dropped gone, keep and the user's edit stay" 0 \
  "^\[\('edited', 'by the user'\), \('keep', '1'\)\]$"
finish
