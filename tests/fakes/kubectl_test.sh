#!/bin/sh
# The real kubectl against the fake API server (tests/fakes/apiserver.py):
# proves the fake speaks the protocol kubectl speaks.  Run from the repository
# root: sh tests/fakes/kubectl_test.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.." && . tests/cli/fake_api.sh
fake_tmp kubectl_test

. tests/fakes/checks.sh      # ok, notok, check, check_fail

if ! command -v kubectl >/dev/null 2>&1; then
  echo "not ok - kubectl is not installed"; echo "0 passed, 1 failed"; exit 1
fi

# start_server NAME [apiserver options]: a server in $TMP/NAME; sets SRV
# (its dir) and PORT (tests/cli/fake_api.sh fake_start)
start_server() {
  SRV=$TMP/$1; shift
  fake_start "$@" 2>/dev/null
}

# kc SERVERDIR args...: kubectl with that server's kubeconfig, no shared cache
kc() {
  d=$1; shift
  HOME=$TMP/home KUBECONFIG=$d/kubeconfig timeout 60 kubectl --cache-dir "$d/cache" \
    --request-timeout=20s "$@"
}

# ctl SERVERDIR METHOD PATH [BODY]: the /_fake/ control API over plain HTTP
ctl() {
  python3 - "$(cat "$1/port")" "$2" "$3" "${4:-}" <<'EOF'
import sys, urllib.request
port, method, path, body = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), method=method,
                             data=body.encode() if body else None)
sys.stdout.write(urllib.request.urlopen(req, timeout=10).read().decode() + "\n")
EOF
}

# same DESC A B: two strings are equal
same() {
  if [ "$2" = "$3" ]; then ok "$1"; else echo "got '$2', want '$3'" >"$OUT"; notok "$1"; fi
}

# ------------------------------------------------------------- manifests
M=$TMP/manifests
mkdir -p "$M"
cat >"$M/app.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: demo
  labels: {app: web}
data:
  greeting: hello
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
  labels: {app: web}
spec:
  selector: {app: web}
  ports:
  - port: 80
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
provisioner: example.com/fast
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
EOF
cat >"$M/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
EOF
cat >"$M/cr.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: demo, labels: {app: web}}
spec: {size: 3}
EOF
sed 's/volumeBindingMode: WaitForFirstConsumer/volumeBindingMode: Immediate/' "$M/app.yaml" \
  >"$M/sc-changed.yaml"
sed 's/matchLabels: {app: web}/matchLabels: {app: web, tier: x}/;
     s/^      labels: {app: web}/      labels: {app: web, tier: x}/' "$M/app.yaml" >"$M/selector.yaml"
sed 's/nginx:1.25/nginx:1.27/' "$M/app.yaml" >"$M/image.yaml"
sed 's/nginx:1.25/nginx:1.28/' "$M/app.yaml" >"$M/image2.yaml"
cat >"$M/svc-ip.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  clusterIP: 10.152.183.250
  ports:
  - port: 80
EOF

# ------------------------------------------------------------- the server
if start_server main --token s3cret --node-name node-a; then
  ok "server prints 'ready <port>' (port $PORT)"
else
  cp "$SRV/stderr" "$OUT" 2>/dev/null; notok "server starts"
  echo "$pass passed, $fail failed"; exit 1
fi
S=$SRV
same "port file matches the ready line" "$(cat "$S/port")" "$PORT"
check "kubeconfig has server, CA and client cert" "client-key-data" \
  grep -E "server: https://127.0.0.1:$PORT|certificate-authority-data|client-certificate-data|client-key-data" "$S/kubeconfig"
check "kubectl version sees the server" '"gitVersion": "v1.32' kc "$S" version -o json
check "plain HTTP to the API is refused like a real server" "HTTP request to an HTTPS server" \
  python3 -c "import urllib.request as u,sys
try: u.urlopen('http://127.0.0.1:$PORT/api')
except Exception as e: print(e.read().decode())"
check "bearer token kubeconfig works" "^default" \
  env HOME="$TMP/home" KUBECONFIG="$S/kubeconfig-token" kubectl --cache-dir "$S/cache" get ns -o name --no-headers -o custom-columns=N:.metadata.name
check_fail "wrong bearer token is Unauthorized" "Unauthorized" \
  env HOME="$TMP/home" KUBECONFIG="$S/kubeconfig-token" kubectl --cache-dir "$S/cache" --token wrong get ns

# ------------------------------------------------------------- apply + get
check "apply --server-side creates namespace, configmap, deployment, service, storageclass" \
  "storageclass.storage.k8s.io/fast serverside-applied" kc "$S" apply --server-side -f "$M/app.yaml"
if [ "$(grep -c 'serverside-applied$' "$OUT")" -eq 5 ]; then ok "five objects serverside-applied"
else notok "five objects serverside-applied"; fi
check "rollout status deployment/web completes" 'deployment "web" successfully rolled out' \
  kc "$S" -n demo rollout status deployment/web --timeout=20s
check "wait --for=condition=Available" "deployment.apps/web condition met" \
  kc "$S" -n demo wait --for=condition=Available deployment/web --timeout=20s
check "get deployment -o json shows rolled-out status" '"availableReplicas": 2' \
  kc "$S" -n demo get deployment web -o json
check "get -o yaml shows server defaults" "imagePullPolicy: IfNotPresent" \
  kc "$S" -n demo get deploy web -o yaml
check "list with -l selector" "configmap/cfg" kc "$S" -n demo get cm,deploy,svc -l app=web -o name
if grep -q "deployment.apps/web" "$OUT" && grep -q "service/web" "$OUT"; then
  ok "selector list includes deployment and service"; else notok "selector list includes deployment and service"; fi
check "selector that matches nothing" "No resources found" kc "$S" -n demo get cm -l app=nope
check "table output (default printer)" "^web +" kc "$S" -n demo get deploy
check "service got a clusterIP from 10.152.183.0/24" "^10\.152\.183\.[0-9]+$" \
  kc "$S" -n demo get svc web -o "jsonpath={.spec.clusterIP}"
IP=$(cat "$OUT")
check "node seeded from --node-name, Ready" "^node-a True$" \
  kc "$S" get nodes -o 'jsonpath={.items[0].metadata.name} {.items[0].status.conditions[0].status}'
check "node labels and kubelet version" "v1\.32" \
  kc "$S" get node node-a -o 'jsonpath={.metadata.labels.kubernetes\.io/hostname} {.status.nodeInfo.kubeletVersion}'

# ------------------------------------------------------------- protobuf bodies
# kubectl create's typed clients send Namespaces, Secrets and ConfigMaps as
# application/vnd.kubernetes.protobuf (apiserver_proto.py)
check "create namespace (a protobuf body)" 'namespace/pb created' kc "$S" create namespace pb
check "create secret generic (a protobuf body)" 'secret/creds created' \
  kc "$S" -n pb create secret generic creds --from-literal=password='s3 cr=t'
check "its data decoded, type Opaque" '^czMgY3I9dA== Opaque$' \
  kc "$S" -n pb get secret creds -o 'jsonpath={.data.password} {.type}'
check "create configmap (a protobuf body)" 'configmap/settings created' \
  kc "$S" -n pb create configmap settings --from-literal=mode=fast
check "its data decoded" '^fast$' kc "$S" -n pb get cm settings -o 'jsonpath={.data.mode}'
head -c 1048577 /dev/zero >"$TMP/big"
check_fail "a Secret over 1 MiB is refused with the real server's message" \
  'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes' \
  kc "$S" -n pb create secret generic big --from-file="$TMP/big"

# ------------------------------------------------------------- CRD + CR
check "apply a CRD" "widgets.example.com serverside-applied" kc "$S" apply --server-side -f "$M/crd.yaml"
check "wait --for=condition=Established crd" "condition met" \
  kc "$S" wait --for=condition=Established crd/widgets.example.com --timeout=20s
check "apply a custom resource of the new CRD" "widget.example.com/w1 serverside-applied" \
  kc "$S" apply --server-side -f "$M/cr.yaml"
check "get the custom resource by short name" "^3$" kc "$S" -n demo get wg w1 -o 'jsonpath={.spec.size}'

# ------------------------------------------------------------- re-apply
RV1=$(kc "$S" -n demo get deploy web -o 'jsonpath={.metadata.resourceVersion}')
check "second apply of the same manifest" "deployment.apps/web serverside-applied" \
  kc "$S" apply --server-side -f "$M/app.yaml"
RV2=$(kc "$S" -n demo get deploy web -o 'jsonpath={.metadata.resourceVersion}')
same "a no-op apply keeps the resourceVersion" "$RV2" "$RV1"
check "server dry run" "deployment.apps/web serverside-applied \(server dry run\)" \
  kc "$S" apply --server-side --dry-run=server -f "$M/image.yaml"
check "dry run stored nothing" "^nginx:1.25$" \
  kc "$S" -n demo get deploy web -o 'jsonpath={.spec.template.spec.containers[0].image}'
check "apply a new image" "deployment.apps/web serverside-applied" \
  kc "$S" apply --server-side -f "$M/image.yaml"
check "generation advanced" "^2$" kc "$S" -n demo get deploy web -o 'jsonpath={.metadata.generation}'
check "rollout status after the change" "successfully rolled out" \
  kc "$S" -n demo rollout status deployment/web --timeout=20s
check "clusterIP kept across apply" "^$IP$" kc "$S" -n demo get svc web -o "jsonpath={.spec.clusterIP}"

# ------------------------------------------------------------- ReplicaSets and Pods
# as a real cluster lists them: the Deployment's ReplicaSet <name>-<pod-template-hash>
# with its 2 pods, the one before it scaled to 0, the pods <rs>-<5 chars> Running
H='[bcdfghjklmnpqrstvwxz2456789]+'
check "get rs: the current ReplicaSet has the 2 replicas" "^web-$H +2 +2 +2 " kc "$S" -n demo get rs
check "get rs: the one before the new image is scaled to 0" "^web-$H +0 +0 +0 " kc "$S" -n demo get rs
check "get pods: two Running pods of the current ReplicaSet" "^web-$H-[bcdfghjklmnpqrstvwxz2456789]{5} +1/1 +Running +0 " \
  kc "$S" -n demo get pods
[ "$(grep -c '^web-' "$OUT")" -eq 2 ] && ok "get pods: just 2 (the old ones are gone)" \
  || notok "get pods: just 2 (the old ones are gone)"
HASH=$(kc "$S" -n demo get pods -o 'jsonpath={.items[0].metadata.labels.pod-template-hash}')
check "the pods' owner is the ReplicaSet web-<pod-template-hash>" "^web-$HASH web-$HASH$" \
  kc "$S" -n demo get pods -o 'jsonpath={.items[0].metadata.ownerReferences[0].name} {.items[1].metadata.ownerReferences[0].name}'
check "the pods run the new image on the node" "^nginx:1.27 node-a$" \
  kc "$S" -n demo get pods -o 'jsonpath={.items[0].spec.containers[0].image} {.items[0].spec.nodeName}'

# ------------------------------------------------------------- immutable fields
check_fail "StorageClass volumeBindingMode change is rejected" \
  'The StorageClass "fast" is invalid: volumeBindingMode: Invalid value: "Immediate": field is immutable' \
  kc "$S" apply --server-side -f "$M/sc-changed.yaml"
check_fail "Deployment selector change is rejected" \
  'The Deployment "web" is invalid: spec.selector: Invalid value: v1.LabelSelector\{MatchLabels:map\[string\]string\{"app":"web", "tier":"x"\}, MatchExpressions:\[\]v1.LabelSelectorRequirement\(nil\)\}: field is immutable' \
  kc "$S" apply --server-side -f "$M/selector.yaml"
check_fail "Service clusterIP change is rejected" \
  'The Service "web" is invalid: spec.clusterIPs\[0\]: Invalid value: \[\]string\{"10.152.183.250"\}: may not change once set' \
  kc "$S" apply --server-side -f "$M/svc-ip.yaml"

# ------------------------------------------------------------- stall + faults
ctl "$S" POST /_fake/stall '{"kind":"Deployment","namespace":"demo","name":"web"}' >/dev/null
kc "$S" apply --server-side -f "$M/image2.yaml" >/dev/null 2>&1
check_fail "a stalled rollout times out" "timed out waiting|Waiting for deployment" \
  kc "$S" -n demo rollout status deployment/web --timeout=2s
ctl "$S" POST /_fake/unstall '{"kind":"Deployment","namespace":"demo","name":"web"}' >/dev/null
check "unstalled, the rollout finishes" "successfully rolled out" \
  kc "$S" -n demo rollout status deployment/web --timeout=20s
ctl "$S" POST /_fake/faults '{"method":"GET","path":"/deployments/web$","status":500}' >/dev/null
check_fail "an injected 500 reaches kubectl" "Internal error occurred: injected fault" \
  kc "$S" -n demo get deploy web
check "the fault was used up" "^web$" kc "$S" -n demo get deploy web -o 'jsonpath={.metadata.name}'
# client-go retries a GET on a dropped connection (up to 10 times), so drop a PATCH
ctl "$S" POST /_fake/faults '{"method":"PATCH","path":"/configmaps/cfg$","action":"drop"}' >/dev/null
check_fail "a dropped connection is an error in kubectl" "EOF|connection reset|closed" \
  kc "$S" apply --server-side -f "$M/app.yaml"
ctl "$S" DELETE /_fake/faults >/dev/null
check "request log counts kubectl's requests" '"PATCH /apis/apps/v1/namespaces/demo/deployments/web":[0-9]+' \
  ctl "$S" GET /_fake/requests

# ------------------------------------------------------------- field managers
cat >"$M/cm-other.yaml" <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: demo}
data: {greeting: bonjour}
EOF2
check "another field manager takes a field" "configmap/cfg serverside-applied" \
  kc "$S" apply --server-side --field-manager=other --force-conflicts -f "$M/cm-other.yaml"
check_fail "apply without --force-conflicts is a conflict" \
  'Apply failed with 1 conflict: conflict with "other": .data.greeting' \
  kc "$S" apply --server-side -f "$M/app.yaml"
check "--force-conflicts takes it back" "configmap/cfg serverside-applied" \
  kc "$S" apply --server-side --force-conflicts -f "$M/app.yaml"
check "the value is kubectl's again" "^hello$" \
  kc "$S" -n demo get cm cfg -o 'jsonpath={.data.greeting}'

# ------------------------------------------------------------- delete
check "delete a configmap" 'configmap "cfg" deleted' kc "$S" -n demo delete configmap cfg
check_fail "the deleted configmap is NotFound" 'configmaps "cfg" not found' kc "$S" -n demo get cm cfg
check "delete -f the custom resource" 'widget.example.com "w1" deleted' kc "$S" delete -f "$M/cr.yaml"
check "delete the CRD" 'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted' \
  kc "$S" delete crd widgets.example.com
check_fail "its kind is gone from discovery" "doesn't have a resource type|could not find" \
  kc "$S" -n demo get widgets.example.com
check "delete the deployment" 'deployment.apps "web" deleted' kc "$S" -n demo delete deploy web
check "its ReplicaSets and Pods went with it (the garbage collector)" "No resources found" \
  kc "$S" -n demo get rs,pods
check "delete the namespace" 'namespace "demo" deleted' kc "$S" delete ns demo
check "objects in it are gone" "No resources found" kc "$S" -n demo get deploy

# ------------------------------------------------------------- a broken fake must fail
if start_server broken --broken; then
  check_fail "broken fake (discovery omits apps/v1): kubectl apply FAILS" \
    'no matches for kind "Deployment" in version "apps/v1"' \
    kc "$SRV" apply --server-side --validate=false -f "$M/app.yaml"
else notok "broken server starts"; fi
if start_server stuck --broken rollout; then
  kc "$SRV" apply --server-side -f "$M/app.yaml" >/dev/null 2>&1
  check_fail "broken fake (rollouts never finish): rollout status FAILS" "timed out|Waiting" \
    kc "$SRV" -n demo rollout status deployment/web --timeout=2s
else notok "stuck server starts"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
