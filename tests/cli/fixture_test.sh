#!/bin/sh
# uphook fixture <addon> against the live (fake) API server (docs/guide.md
# §8, docs/contract.md §1): the fixture holds the addon's objects (named by
# its YAML files, or labelled as its own; its CRDs' custom objects; its
# claims' volumes), every Node and the state ConfigMap, and nothing else; no
# uid, resourceVersion or creationTimestamp, managedFields kept; no Secret
# value. Then it loads as it is: `--offline` plans from it, and a hook test
# upgrades from it with t.env{cluster = ...}.
# Run from the repository root: sh tests/cli/fixture_test.sh [build]
. tests/cli/lib.sh
ROOT=$(pwd)
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP

. tests/cli/fake_api.sh
if ! fake_start --rollout-delay 0.1 2>"$OUT"; then
  not_ok "the fake API server starts"; finish; exit
fi
seed() { curl -sS -X POST --data-binary "@$1" "$CTL/seed" >/dev/null; }

# An addon repository: the real registry hook, and a demo addon whose
# files name a Secret, a CRD (and so its custom objects) and an object
# whose name is a placeholder.
REPO=$TMP/repo
mkdir -p "$REPO/addons/demo"
cp -r hooks/registry "$REPO/addons/registry"
cat >"$REPO/addons.yaml" <<'EOF'
microk8s-addons:
  addons:
    - name: registry
      description: Private image registry exposed on localhost:32000
      version: "2.8.3"
    - name: demo
      description: a demo addon
      version: "1.0.0"
EOF
# the demo addon's CRD: as its files name it, and as the cluster holds it
crd() {
  cat <<'EOF'
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.demo.example.com}
spec:
  group: demo.example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
EOF
}
{ cat <<'EOF'
apiVersion: v1
kind: Secret
metadata: {name: demo-auth, namespace: demo}
stringData: {password: "$PASSWORD"}
EOF
  crd
  cat <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: "$NAME-settings", namespace: demo}
data: {a: "1"}
EOF
} >"$REPO/addons/demo/demo.yaml"

seed hooks/registry/fixtures/cluster-2.7.1.yaml
{ cat <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: Secret
metadata:
  name: demo-auth
  namespace: demo
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"demo-auth","namespace":"demo"},"data":{"password":"c3VwZXItc2VjcmV0LXB3"}}'
data: {password: c3VwZXItc2VjcmV0LXB3}
EOF
  crd
  cat <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
  namespace: demo
  labels: {addon.microk8s.io/name: demo}
data: {b: "2"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: someone-elses, namespace: demo}
data: {c: "3"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: unrelated, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: unrelated}}
  template:
    metadata: {labels: {app: unrelated}}
    spec: {containers: [{name: u, image: "u:1"}]}
EOF
} >"$TMP/more.yaml"
seed "$TMP/more.yaml"
cat >"$TMP/widget.yaml" <<'EOF'
apiVersion: demo.example.com/v1
kind: Widget
metadata: {name: users-widget, namespace: demo}
spec: {size: 3}
EOF
seed "$TMP/widget.yaml"

# this node's args folder: a kubelet file, a config file, a folder
SD=$TMP/snapdata
mkdir -p "$SD/args/certs.d"
printf -- '--cluster-dns=10.152.183.99\n--cluster-domain=cluster.local\n' >"$SD/args/kubelet"
printf 'apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\n' \
  >"$SD/args/eventconfig.yaml"
fixture() {
  HOME=$TMP/home SNAP_DATA=$SD timeout 60 "$UPHOOK" --kubeconfig "$KC" \
    --addons "$REPO" fixture "$@"
}

# --------------------------------------------------------------- registry
run fixture registry
cp "$OUT" "$TMP/registry.yaml"
expect "uphook fixture registry: exit 0, a header saying what was dropped" 0 \
  '^# uphook fixture registry: [0-9]+ objects read from https://127\.0\.0\.1:' \
  'managedFields kept'

# check NAME PYTHON-EXPR: over the fixture's objects (`objs`, `find`)
check() {
  if python3 - "$TMP/$FX" "$2" >"$OUT" 2>&1 <<'PY'
import os, sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
def find(kind, name, ns=None):
    for o in objs:
        m = o["metadata"]
        if o["kind"] == kind and m["name"] == name and m.get("namespace") == ns:
            return o
names = sorted("%s %s/%s" % (o["kind"], o["metadata"].get("namespace") or "", o["metadata"]["name"]) for o in objs)
ok = eval(sys.argv[2])
if not ok:
    print("\n".join(names))
    sys.exit(1)
PY
  then ok "$1"; else not_ok "$1"; fi
}
FX=registry.yaml
check "registry: the objects its registry.yaml names, the claim's volume, the Node" \
  'all(find(*k) for k in [("Namespace", "container-registry"),
     ("PersistentVolumeClaim", "registry-claim", "container-registry"),
     ("Deployment", "registry", "container-registry"),
     ("Service", "registry", "container-registry"),
     ("ConfigMap", "local-registry-hosting", "kube-public"),
     ("PersistentVolume", "pvc-5e0c7a12-9b3d-4c8e-a1f2-3d4e5f6a7b81"),
     ("Node", "mk8s-node-1")])'
check "registry: nothing of another addon or of a user (Deployment unrelated, StorageClass)" \
  'not find("Deployment", "unrelated", "default") and not find("Secret", "demo-auth", "demo") and not any(o["kind"] == "StorageClass" for o in objs)'
check "no uid, resourceVersion, generation or creationTimestamp; managedFields kept" \
  'not any(k in o["metadata"] for o in objs for k in ("uid", "resourceVersion", "generation", "creationTimestamp")) and all(o["metadata"].get("managedFields") for o in objs if o["kind"] == "Deployment")'
# this host's Node (the fake API server has one named after it)
HN=$(hostname | tr 'A-Z' 'a-z'); export HN
check "this node's args files are its NodeArgs document (files, not the certs.d folder)" \
  '[o["files"] for o in objs if o["kind"] == "NodeArgs" and o["apiVersion"] == "uphook/v1" and o["metadata"]["name"] == os.environ["HN"]] == [{"kubelet": "--cluster-dns=10.152.183.99\n--cluster-domain=cluster.local\n", "eventconfig.yaml": "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\n"}]'
check "the claim keeps its binding and status (Bound)" \
  'find("PersistentVolumeClaim", "registry-claim", "container-registry")["status"]["phase"] == "Bound" and find("PersistentVolumeClaim", "registry-claim", "container-registry")["spec"]["volumeName"].startswith("pvc-")'

# It loads as it is: --offline plans from it ...
PLAN=$TMP/plan
mkdir -p "$TMP/state"
run env HOME=$TMP/home "$UPHOOK" --addons "$REPO" --offline "$TMP/registry.yaml" \
  --state-dir "$TMP/state" plan registry
expect "--offline FIXTURE plans the registry upgrade from it" 0 \
  'registry 2\.7\.1 -> 2\.8\.3' 'registry:2\.8\.3'
if [ "$(cat "$TMP/state/offline/args/kubelet" 2>&1)" = "$(printf -- '--cluster-dns=10.152.183.99\n--cluster-domain=cluster.local')" ] \
   && grep -q EventRateLimit "$TMP/state/offline/args/admission-control-config-file.yaml"; then
  ok "--offline: this node's args folder holds the fixture's NodeArgs files, and MicroK8s's other defaults"
else not_ok "--offline: this node's args folder holds the fixture's NodeArgs files, and MicroK8s's other defaults"; fi
# ... and a hook test upgrades from it with t.env{cluster = ...}
# (t.env's paths stay in the test file's folder: the addon and the
# fixture are copied beside it)
mkdir -p "$TMP/t"
cp -r "$REPO/addons/registry" "$TMP/t/registry" && rm -f "$TMP/t/registry/"*_test.lua
cp "$TMP/registry.yaml" "$TMP/t/registry.yaml"
cat >"$TMP/t/from_fixture_test.lua" <<EOF
local t = require "uphook.test"
t.case("upgrade from the captured fixture", function()
  local e = t.env { addon = "registry", cluster = "registry.yaml" }
  local uid = e:get("PersistentVolumeClaim", "registry-claim", "container-registry").metadata.uid
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:state().history[1].from, "2.7.1")
  t.eq(e:get("Deployment", "registry", "container-registry").spec.template.spec.containers[1].image, "registry:2.8.3")
  t.eq(e:get("PersistentVolumeClaim", "registry-claim", "container-registry").metadata.uid, uid)
end)
EOF
cat >>"$TMP/t/from_fixture_test.lua" <<'EOF2'
t.case("the node has the captured args files, and MicroK8s's other defaults", function()
  local e = t.env { addon = "registry", cluster = "registry.yaml", hostname = "@HN@" }
  t.eq(e:args("kubelet")["--cluster-dns"], "10.152.183.99")
  t.eq(e:file("args:eventconfig.yaml"),
    "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\n")
  t.ok(e:args("kube-apiserver")["--admission-control-config-file"])
  t.ok(e:file("args:admission-control-config-file.yaml"):find("EventRateLimit", 1, true))
end)
t.case("t.env's args replace a captured file", function()
  local e = t.env { addon = "registry", cluster = "registry.yaml", hostname = "@HN@",
    args = { kubelet = "--cluster-dns=10.0.0.1\n" } }
  t.eq(e:args("kubelet")["--cluster-dns"], "10.0.0.1")
end)
EOF2
sed -i "s/@HN@/$HN/" "$TMP/t/from_fixture_test.lua"
run "$UPHOOK" test "$TMP/t"
expect "t.env loads it as it is: the upgrade passes, the node has the captured args" 0 '^3 passed, 0 failed'

# ------------------------------------------------------------------- demo
run fixture demo
cp "$OUT" "$TMP/demo.yaml"
expect "uphook fixture demo (an addon without a hook): exit 0" 0 '^# uphook fixture demo:'
FX=demo.yaml
check "demo: its Secret, its CRD and the CRD's custom objects, its labelled ConfigMap" \
  'find("Secret", "demo-auth", "demo") and find("CustomResourceDefinition", "widgets.demo.example.com") and find("Widget", "users-widget", "demo") and find("ConfigMap", "extra", "demo")'
check "demo: not a ConfigMap it neither names nor labels; a placeholder name is not looked up" \
  'not find("ConfigMap", "someone-elses", "demo") and not any("$" in o["metadata"]["name"] for o in objs)'
check "every value of a Secret replaced, its keys kept (also in last-applied)" \
  'find("Secret", "demo-auth", "demo")["data"] == {"password": "cmVkYWN0ZWQ="} and "c3VwZXItc2VjcmV0LXB3" not in find("Secret", "demo-auth", "demo")["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]'
if grep -q 'c3VwZXItc2VjcmV0LXB3' "$TMP/demo.yaml"; then
  cp "$TMP/demo.yaml" "$OUT"; not_ok "the Secret's value appears nowhere in the fixture"
else ok "the Secret's value appears nowhere in the fixture"; fi

# ------------------------------------------------------------- the state
cat >"$TMP/state.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: uphook-registry, namespace: kube-system}
data: {state: '{"version":"2.7.1"}'}
EOF
seed "$TMP/state.yaml"
run fixture registry
cp "$OUT" "$TMP/registry2.yaml"
FX=registry2.yaml
check "uphook's state ConfigMap is in it" \
  'find("ConfigMap", "uphook-registry", "kube-system") is not None'

run fixture nosuch
expect "an addon that is not in any repository: exit 2, named" 2 'nosuch'
finish
