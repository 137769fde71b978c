#!/bin/sh
# The real Helm v3 and v4 (`make helm`: build/helm/v3/helm, build/helm/v4/helm,
# or HELM_BIN_DIR/v3/helm...) against the fake API server
# (tests/fakes/apiserver.py): install, upgrade and rollback with --wait,
# list, history, get values, status and uninstall of a small chart written
# here, with a hook Job that completes and one that fails, and the release
# stored in Secrets (the default) and in ConfigMaps (HELM_DRIVER=configmap),
# both sent as protobuf. Proves the fake takes what Helm sends, so the Helm
# interoperability tests can trust it. A Helm that is not there is skipped,
# saying why; under CI=true it is a failure.
# Run from the repository root: sh tests/fakes/helm_test.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.." && . tests/cli/fake_api.sh
fake_tmp helm_test

. tests/fakes/helm_web.sh    # run_helm, web_templates; checks.sh's ok, notok...

# h ARGS...: this round's Helm on this round's server (run_helm); hcm:
# the same with the release stored in ConfigMaps
h() { run_helm secret "$@"; }
hcm() { run_helm configmap "$@"; }

# The chart: a Deployment, a Service and a ConfigMap from its values,
# MetalLB's CRDs in crds/ and an IPAddressPool, and a pre-install/pre-upgrade
# hook Job (which Helm waits for; the fake completes it); version 0.2.0
# adds a key to the ConfigMap.
chart() {
  c=$TMP/chart-$1
  mkdir -p "$c/templates"
  cat >"$c/Chart.yaml" <<EOF
apiVersion: v2
name: web
version: $1
appVersion: "1.0"
EOF
  cat >"$c/values.yaml" <<'EOF'
replicas: 1
image: nginx:1.27
greeting: hello
EOF
  web_templates "$c" "$1"
  mkdir -p "$c/crds"
  cp tests/data/corpus/addons/metallb/v0.14.9/crd.yaml "$c/crds/"  # 7 real CRDs
  cat >"$c/templates/pool.yaml" <<'EOF'
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata:
  name: {{ .Release.Name }}
spec:
  addresses: ["10.64.140.43-10.64.140.49"]
EOF
  echo "$c"
}
C1=$(chart 0.1.0)
C2=$(chart 0.2.0)

# web: "replicas readyReplicas greeting added" of the release's Deployment
# and ConfigMap, as the fake holds them
web() {
  fake_objs "(lambda d, c: '%s %s %s %s' % (d['spec']['replicas'],
    d['status'].get('readyReplicas'), c['data']['greeting'], c['data'].get('added')))(
    get('Deployment', 'web', 'apps'), get('ConfigMap', 'web-config', 'apps'))"
}
# release N [DRIVER-KIND]: "type status version" of revision N's storage object
release() {
  fake_objs "(lambda s: '%s %s %s' % (s.get('type'), s['metadata']['labels']['status'],
    s['metadata']['labels']['version']))(get('${2:-Secret}', 'sh.helm.release.v1.$1', 'apps'))"
}
# stall KIND NAME [FAIL] / unstall KIND NAME: the fake's rollout controls
stall() {
  curl -sS -X POST "$CTL/stall" \
    -d "{\"kind\": \"$1\", \"namespace\": \"apps\", \"name\": \"$2\", \"fail\": ${3:-false}}"
}
unstall() {
  curl -sS -X POST "$CTL/unstall" -d "{\"kind\": \"$1\", \"namespace\": \"apps\", \"name\": \"$2\"}"
}

# one_helm MAJOR: every check with build/helm/vMAJOR/helm on a fresh server
one_helm() {
  v=$1
  HELM=${HELM_BIN_DIR:-build/helm}/v$v/helm
  if [ ! -x "$HELM" ]; then
    if [ "${CI:-}" = true ]; then
      notok "Helm v$v: $HELM is not there (make helm fetches it; CI=true requires it)"
    else
      echo "skip - Helm v$v: $HELM is not there (make helm fetches it)"
    fi
    return
  fi
  SRV=$TMP/srv$v
  if ! fake_start; then notok "v$v: the fake API server starts"; return; fi
  check "v$v: helm version is Helm $v" "^v$v\\." h version --short

  # install, --wait: the fake rolls the Deployment out after its delay
  check "v$v: install --wait creates the release (revision 1, deployed)" "STATUS: deployed" \
    h install web "$C1" -n apps --create-namespace --wait --timeout 60s --set greeting=hi
  check "v$v: its release Secret (sent as protobuf) says deployed" \
    "^helm.sh/release.v1 deployed 1$" release web.v1
  check "v$v: the chart's objects exist, the Deployment rolled out" "^1 1 hi None$" web
  op=Update; [ "$v" = 3 ] || op=Apply   # Helm 4 applies server-side
  check "v$v: the Deployment's field manager is helm, operation $op" \
    "^\[\('helm', '$op'\)\]$" fake_objs "[(e['manager'], e['operation'])
      for e in get('Deployment', 'web', 'apps')['metadata']['managedFields']
      if e['manager'] != 'fake-apiserver']"
  check "v$v: the pre-install hook Job ran to completion" \
    "^\['SuccessCriteriaMet', 'Complete'\]$" \
    fake_objs "[c['type'] for c in get('Job', 'web-migrate', 'apps')['status']['conditions']]"
  check "v$v: the CRDs from crds/ are Established, a custom resource made" "^7 True$" \
    fake_objs "'%s %s' % (len([o for o in items if o['kind'] == 'CustomResourceDefinition'
      and {'type': 'Established', 'status': 'True'}.items() <= [c for c in o['status']
      ['conditions'] if c['type'] == 'Established'][0].items()]),
      get('IPAddressPool', 'web', 'apps') is not None)"

  # upgrade to 0.2.0 with more replicas
  check "v$v: upgrade --wait to chart 0.2.0 (revision 2)" "REVISION: 2" \
    h upgrade web "$C2" -n apps --wait --timeout 60s --set greeting=hey --set replicas=2
  check "v$v: the upgrade changed the objects" "^2 2 hey in 0.2.0$" web

  # --wait waits: a rollout that never finishes fails the upgrade
  stall Deployment web >/dev/null
  check_fail "v$v: upgrade --wait of a stalled rollout fails at its timeout" \
    "context deadline exceeded|timed out|[Tt]imeout" \
    h upgrade web "$C2" -n apps --wait --timeout 3s --set replicas=3
  unstall Deployment web >/dev/null
  check "v$v: that revision 3 is failed" "^helm.sh/release.v1 failed 3$" release web.v3

  # a hook Job that fails (the fake's stall with fail) fails the upgrade
  stall Job web-migrate true >/dev/null
  check_fail "v$v: upgrade with a failing pre-upgrade hook Job fails" \
    "pre-upgrade hooks failed" h upgrade web "$C2" -n apps --wait --timeout 60s
  unstall Job web-migrate >/dev/null
  check "v$v: that revision 4 is failed" "^helm.sh/release.v1 failed 4$" release web.v4
  check "v$v: the objects are as revision 3 left them" "^3 3 hello in 0.2.0$" web

  # rollback to revision 1
  check "v$v: rollback --wait to revision 1" "Rollback was a success" \
    h rollback web 1 -n apps --wait --timeout 60s
  check "v$v: the rollback restored revision 1's objects" "^1 1 hi None$" web
  check "v$v: list shows revision 5, deployed, chart web-0.1.0" \
    "^web[[:space:]]+apps[[:space:]]+5[[:space:]].*deployed[[:space:]]+web-0.1.0" h list -n apps
  check "v$v: history shows the five revisions" \
    "^5[[:space:]].*deployed[[:space:]]+web-0.1.0[[:space:]].*Rollback to 1" \
    h history web -n apps
  if grep -Eq "^1[[:space:]].*superseded[[:space:]].*Install complete" "$OUT" &&
     grep -Eq "^2[[:space:]].*superseded[[:space:]]+web-0.2.0[[:space:]].*Upgrade complete" \
       "$OUT"; then
    ok "v$v: revisions 1 and 2 are superseded"
  else notok "v$v: revisions 1 and 2 are superseded"; fi
  check "v$v: get values shows revision 1's user values" "^greeting: hi$" \
    h get values web -n apps
  check "v$v: status says deployed, revision 5" "REVISION: 5" h status web -n apps

  # the release stored in ConfigMaps
  check "v$v: install with HELM_DRIVER=configmap" "STATUS: deployed" \
    hcm install cm "$C1" -n apps --set greeting=cm
  check "v$v: that release is a ConfigMap (sent as protobuf)" "^None deployed 1$" \
    release cm.v1 ConfigMap

  # a release over 1 MiB: refused by the Secret's size limit
  big=$TMP/chart-big$v
  cp -r "$C1" "$big"
  head -c 1200000 /dev/urandom | base64 >"$big/blob.txt"
  check_fail "v$v: a release over 1 MiB is refused as a real server refuses it" \
    'Secret "sh.helm.release.v1.big.v1" is invalid: data: Too long: may not be more than 1048576 bytes' \
    h install big "$big" -n apps

  # uninstall
  check "v$v: uninstall --wait" 'release "web" uninstalled' \
    h uninstall web -n apps --wait --timeout 60s
  check "v$v: the chart's objects and release Secrets are gone" "^None None \[\]$" \
    fake_objs "'%s %s %s' % (get('Deployment', 'web', 'apps'),
      get('ConfigMap', 'web-config', 'apps'), [o['metadata']['name'] for o in items
      if (o['metadata'].get('labels') or {}).get('name') == 'web'])"
  check "v$v: list shows only the ConfigMap-stored release" "^cm " hcm list -n apps
  check "v$v: the CRDs stay (Helm never deletes crds/), the resource went" "^True None$" \
    fake_objs "'%s %s' % (get('CustomResourceDefinition', 'ipaddresspools.metallb.io')
      is not None, get('IPAddressPool', 'web', 'apps'))"
}

one_helm 3
one_helm 4

# Helm 3 installs, Helm 4 upgrades, Helm 3 rolls back: one release that
# both Helms manage, on a third server
H3=${HELM_BIN_DIR:-build/helm}/v3/helm H4=${HELM_BIN_DIR:-build/helm}/v4/helm
if [ -x "$H3" ] && [ -x "$H4" ] && SRV=$TMP/srv-both && fake_start; then
  HELM=$H3
  check "v3 installs" "STATUS: deployed" h install web "$C1" -n apps --create-namespace --wait
  HELM=$H4
  check "v4 upgrades that release --wait (revision 2)" "REVISION: 2" \
    h upgrade web "$C2" -n apps --wait --timeout 60s --set replicas=2
  check "v4's upgrade changed the objects" "^2 2 hello in 0.2.0$" web
  HELM=$H3
  check "v3 reads v4's revision" "^2[[:space:]].*deployed[[:space:]]+web-0.2.0" \
    h history web -n apps
  check "v3 rolls it back to revision 1" "Rollback was a success" \
    h rollback web 1 -n apps --wait --timeout 60s
  check "the objects are revision 1's again" "^1 1 hello None$" web
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
