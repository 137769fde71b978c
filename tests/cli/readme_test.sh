# The README's five-minute hook and its tests, run as written: extract the
# Lua blocks of "A hook in five minutes", add the manifest and fixture the
# text describes, and run `uphook test`, `lint` and `plan` on them.
. tests/cli/lib.sh

A="$TMP/repo/addons/hello"
mkdir -p "$A/fixtures"
awk '/^## A hook in five minutes/{on=1} /^## The sandbox/{on=0}
     on && /^```lua$/{n++; f=(n==1) ? "upgrade.lua" : (n==2 ? "hello_test.lua" : ""); next}
     on && /^```$/{f=""; next}
     on && f != "" {print > (dir "/" f)}' dir="$A" README.md
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
printf 'microk8s-addons:\n  addons:\n    - name: hello\n' > "$TMP/repo/addons.yaml"

[ -s "$A/upgrade.lua" ] && [ -s "$A/hello_test.lua" ] && ok "the README has the hook and its test" || not_ok "the README has the hook and its test"
run "$UPHOOK" test "$A"
expect "the README's tests pass as written" 0 "^2 passed, 0 failed$"
run "$UPHOOK" lint "$A"
expect "the README's hook lints clean" 0 "1 hook checked, 0 problems"
run "$UPHOOK" --addons "$TMP/repo" --offline "$A/fixtures/cluster-1.0.0.yaml" plan hello
expect "the README's plan command shows the image change" 0 \
  'example.com/hello:1.0.0" -> "example.com/hello:1.1.0"'
finish
