# The README's five-minute hook and its tests, run as written: extract the
# Lua blocks of "A hook in five minutes", add the manifest and fixture the
# text describes, and run `uphook test`, `lint` and `plan` on them.
. tests/cli/lib.sh

A="$TMP/repo/addons/hello"
mkdir -p "$A/fixtures"
H="$TMP/repo/addons/traefik"
mkdir -p "$H/charts"
# the blocks in order: the hook, the Helm hook, the hook's tests
awk '/^## A hook in five minutes/{on=1} /^## The sandbox/{on=0}
     on && /^```lua$/{n++; f=(n==1) ? dir "/upgrade.lua" : (n==2 ? hdir "/upgrade.lua" : (n==3 ? dir "/hello_test.lua" : "")); next}
     on && /^```$/{f=""; next}
     on && f != "" {print > f}' dir="$A" hdir="$H" README.md
cat > "$A/hello.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: hello, namespace: default}
data: {color: $COLOR}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: hello, namespace: default}
spec:
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec:
      containers: [{name: hello, image: "example.com/hello:1.1.0"}]
YAML
cat > "$A/fixtures/cluster-1.0.0.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hello, namespace: default}
data: {color: red}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: hello, namespace: default}
spec:
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec:
      containers: [{name: hello, image: "example.com/hello:1.0.0"}]
YAML
printf 'microk8s-addons:\n  addons:\n    - name: hello\n    - name: traefik\n    - name: traefik-enable\n' > "$TMP/repo/addons.yaml"

[ -s "$A/upgrade.lua" ] && [ -s "$A/hello_test.lua" ] && ok "the README has the hook and its test" || not_ok "the README has the hook and its test"
run "$UPHOOK" test "$A"
expect "the README's tests pass as written" 0 "^2 passed, 0 failed$"
run "$UPHOOK" lint "$A"
expect "the README's hook lints clean" 0 "1 hook checked, 0 problems"
run "$UPHOOK" --addons "$TMP/repo" --offline "$A/fixtures/cluster-1.0.0.yaml" plan hello
expect "the README's plan command shows the image change" 0 \
  'example.com/hello:1.0.0" -> "example.com/hello:1.1.0"'

# The Helm hook, as written, against what enable installs: a stand-in
# for enable (Traefik chart 39.0.8 with the old key) in an --offline
# world kept in a state directory, then the README's hook on it.
HELM=$(pwd)/${BUILD:-build}/helm/v3/helm
[ -x "$HELM" ] || HELM=$(pwd)/build/helm/v3/helm
if [ ! -x "$HELM" ] && [ "${CI:-}" != true ]; then
  echo "skip: the README's Helm hook (no Helm: make helm)"
  finish; exit
fi
cp hooks/ingress/charts/traefik-39.0.8.tgz hooks/ingress/charts/traefik-41.3.0.tgz "$H/charts/"
E="$TMP/repo/addons/traefik-enable"; mkdir -p "$E/charts"
cp hooks/ingress/charts/traefik-39.0.8.tgz "$E/charts/"
cat > "$E/upgrade.lua" <<'LUA'
return { version = "39.0.8", from = "0.0.0",
  permissions = { "kube:ingress", "kube:cluster", "kube:privileged" },
  detect = function() return "0.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "Namespace", metadata = { name = "ingress" } }
    helm.upgrade { release = "traefik", namespace = "ingress", install = true,
      chart = "charts/traefik-39.0.8.tgz",
      values = { providers = { kubernetesIngressNginx = { enabled = true } } } }
  end }
LUA
HU() { "$UPHOOK" --addons "$TMP/repo" --offline "$A/fixtures/cluster-1.0.0.yaml" \
  --state-dir "$TMP/helm-world" --helm "$HELM" "$@"; }
run HU upgrade traefik-enable
expect "a stand-in for enable installs the Traefik chart 39.0.8" 0 "Upgraded traefik-enable"
run HU plan traefik
expect "the README's Helm hook plans 39.0.8 -> 41.3.0" 0 \
  "Plan for traefik 39\.0\.8 -> 41\.3\.0" "helm release ingress/traefik"
run HU upgrade traefik --yes
expect "the README's Helm hook upgrades the release" 0 "Upgraded traefik from 39\.0\.8 to 41\.3\.0"
python3 - "$TMP/helm-world/offline/cluster.yaml" >"$OUT" 2>&1 <<'PY'
import base64, gzip, json, sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
rel = {}
for o in objs:
    if o["kind"] == "Secret" and o["metadata"]["name"].startswith("sh.helm.release.v1.traefik.v"):
        r = json.loads(gzip.decompress(base64.b64decode(base64.b64decode(o["data"]["release"]))))
        rel[r["version"]] = r
top = rel[max(rel)]
print(top["chart"]["metadata"]["version"], top["info"]["status"], top["config"])
assert top["chart"]["metadata"]["version"] == "41.3.0" and top["info"]["status"] == "deployed"
assert top["config"]["providers"] == {"kubernetesIngressNGINX": {"enabled": True}}
PY
RC=$?
expect "... the release is 41.3.0, deployed, with the user's value under its new key" 0
finish
