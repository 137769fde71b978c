#!/bin/sh
# uphook and the real Helm on one release (docs/guide.md "Helm addons"),
# against the fake API server (tests/fakes/apiserver.py): Helm 3 (then,
# on a fresh server, Helm 4) installs a small chart written here; uphook
# upgrades the release with helm.upgrade; then that Helm reads and manages
# what uphook wrote: list, history, get values, get manifest, status, an
# upgrade of its own (over the fields uphook applied), rollback to
# uphook's revision and to the one before it, uninstall. The Helms are
# `make helm`'s (build/helm/v3/helm, build/helm/v4/helm, or
# HELM_BIN_DIR/v3/helm...); one that is not there is skipped, saying why,
# and so is an uphook built without Helm rendering; under CI=true both are
# failures. Run from the repository root: sh tests/fakes/helm_interop_test.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.." && . tests/cli/fake_api.sh
fake_tmp helm_interop_test
. tests/fakes/helm_web.sh    # run_helm, web_templates; checks.sh's ok, notok...
ROOT=$(pwd)
UPHOOK=${UPHOOK:-$ROOT/build/uphook}
BIN=${HELM_BIN_DIR:-build/helm}
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac

skip() {
  if [ "${CI:-}" = true ]; then notok "$1 (CI=true requires it)"
  else echo "skip - $1"; fi
}

# h ARGS...: this round's Helm on this round's server (run_helm)
h() { run_helm secret "$@"; }

# The chart "web": a Deployment, a ConfigMap from its values and a
# pre-install/pre-upgrade hook Job; 0.2.0 adds a key to the ConfigMap and
# a Service.
chart() {
  c=$TMP/src/web-$1
  mkdir -p "$c/templates"
  printf 'apiVersion: v2\nname: web\nversion: %s\nappVersion: "%s"\n' "$1" "$1" \
    >"$c/Chart.yaml"
  printf 'replicas: 1\nimage: nginx:1.27\ngreeting: hello\n' >"$c/values.yaml"
  web_templates "$c" "$1"
  [ "$1" = 0.1.0 ] && rm "$c/templates/service.yaml"   # 0.2.0 adds it
  HOME=$TMP/home "$H3" package "$c" -d "$TMP/charts" >/dev/null \
    && echo "$TMP/charts/web-$1.tgz"
}

# The addon "web": its hook upgrades the release to the 0.2.0 chart with
# the values the user gave (helm.release's), and --greeting over them.
addon() {
  A=$TMP/repo/addons/web
  mkdir -p "$A/charts" "$TMP/snap_data" "$TMP/snap_common" "$TMP/state"
  cp "$C2" "$A/charts/"
  cat >"$TMP/repo/addons.yaml" <<'EOF'
microk8s-addons:
  addons:
    - name: web
      description: a Helm chart, for the Helm interoperability tests
      version: "0.2.0"
      check_status: "deployment.apps/web"
      supported_architectures: [amd64, arm64]
EOF
  cat >"$A/upgrade.lua" <<'EOF'
return {
  version = "0.2.0", from = ">=0.1.0 <0.2.0",
  permissions = { "kube:apps" },
  params = { greeting = { default = "" } },
  detect = function()
    local rel = helm.release("web", "apps")
    return rel and rel.chart.version
  end,
  upgrade = function(ctx)
    local v = helm.release("web", "apps").values
    if ctx.params.greeting ~= "" then v.greeting = ctx.params.greeting end
    local rel = helm.upgrade { release = "web", namespace = "apps",
      chart = "charts/web-0.2.0.tgz", values = v, timeout = 60 }
    log.info("web revision %d %s", rel.revision, rel.status)
  end,
}
EOF
}

uphook() {
  SNAP_DATA=$TMP/snap_data SNAP_COMMON=$TMP/snap_common HOME=$TMP/home \
    timeout 120 "$UPHOOK" --kubeconfig "$KC" --addons "$TMP/repo" \
    --state-dir "$TMP/state-$v" "$@" --helm "$H3"
}

# web: "greeting added service" of the release's objects on the fake
web() {
  fake_objs "(lambda c, s: '%s %s %s' % (c and c['data']['greeting'],
    c and c['data'].get('added'), s is not None))(
    get('ConfigMap', 'web-config', 'apps'), get('Service', 'web', 'apps'))"
}
# release N: "type status version" of revision N's Secret
release() {
  fake_objs "(lambda s: '%s %s %s' % (s.get('type'), s['metadata']['labels']['status'],
    s['metadata']['labels']['version']))(get('Secret', 'sh.helm.release.v1.web.v$1', 'apps'))"
}

H3=$BIN/v3/helm
H4=$BIN/v4/helm

# one_helm MAJOR: Helm vMAJOR installs and manages, uphook upgrades
one_helm() {
  v=$1
  HELM=$BIN/v$v/helm
  [ -x "$HELM" ] || { skip "Helm v$v: $HELM is not there (make helm fetches it)"; return; }
  SRV=$TMP/srv$v
  if ! fake_start --rollout-delay 0.2; then notok "v$v: the fake API server starts"; return; fi
  check "v$v installs web 0.1.0 (revision 1)" "STATUS: deployed" \
    h install web "$C1" -n apps --create-namespace --wait --timeout 60s --set greeting=hi

  uphook plan web >"$OUT" 2>&1
  cp "$OUT" "$TMP/plan"
  if grep -q "built without Helm rendering" "$OUT"; then
    skip "this uphook has no Helm render (uphook.c.helm)"; return
  fi
  check "uphook plans the upgrade of v$v's release: chart and revision" \
    "chart web-0.1.0 -> web-0.2.0, revision 1 -> 2" cat "$TMP/plan"
  check "the plan shows the values only after the user's yes" \
    "values: shown after your yes" cat "$TMP/plan"
  curl -sS -X DELETE "$CTL/requests" >/dev/null
  check "uphook upgrades v$v's release (revision 2)" "web revision 2 deployed" \
    uphook upgrade --yes web
  # detect, upgrade and helm.upgrade each list the release metadata-only;
  # the record is read whole once and superseded without a second read
  check "uphook read revision 1's Secret once, listed the release metadata-only" \
    "^1 GET, 3 LIST, 3 metadata-only$" \
    sh -c "curl -sS '$CTL/requests' | python3 -c \"import json, sys
log = json.load(sys.stdin)['log']
sec = '/api/v1/namespaces/apps/secrets'
gets = [r for r in log if r['method'] == 'GET' and r['path'] == sec + '/sh.helm.release.v1.web.v1']
lists = [r for r in log if r['method'] == 'GET' and r['path'] == sec and 'owner%3Dhelm' in r['query']]
meta = [r for r in lists if 'as=PartialObjectMetadataList' in r['accept']]
print('%d GET, %d LIST, %d metadata-only' % (len(gets), len(lists), len(meta)))\""
  check "the objects are 0.2.0's, the user's value kept" "^hi in 0.2.0 True$" web
  check "revision 2's Secret says deployed" "^helm.sh/release.v1 deployed 2$" release 2
  check "revision 1's Secret says superseded" "^helm.sh/release.v1 superseded 1$" release 1

  check "v$v list: revision 2, deployed, web-0.2.0" \
    "^web[[:space:]]+apps[[:space:]]+2[[:space:]].*deployed[[:space:]]+web-0.2.0" h list -n apps
  check "v$v history: revision 1 superseded" \
    "^1[[:space:]].*superseded[[:space:]]+web-0.1.0" h history web -n apps
  check "v$v history: revision 2 deployed, Upgrade complete" \
    "^2[[:space:]].*deployed[[:space:]]+web-0.2.0[[:space:]]+0.2.0[[:space:]]+Upgrade complete" \
    h history web -n apps
  check "v$v get values: the user's values" "^greeting: hi$" h get values web -n apps
  check "v$v get manifest: the Service 0.2.0 added" "name: web$" \
    h get manifest web -n apps
  check "v$v status: revision 2" "REVISION: 2" h status web -n apps
  check "v$v get hooks: the chart hook" "name: web-migrate" h get hooks web -n apps

  check "v$v upgrades over what uphook applied (revision 3)" "REVISION: 3" \
    h upgrade web "$C2" -n apps --wait --timeout 60s --reuse-values --set greeting=again
  check "v$v's upgrade changed the objects" "^again in 0.2.0 True$" web
  check "v$v rolls back to uphook's revision 2" "Rollback was a success" \
    h rollback web 2 -n apps --wait --timeout 60s
  check "the objects are uphook's revision's again" "^hi in 0.2.0 True$" web
  check "v$v rolls back to revision 1, before uphook's" "Rollback was a success" \
    h rollback web 1 -n apps --wait --timeout 60s
  check "the objects are revision 1's: no Service, no added key" "^hi None False$" web
  check "v$v history: five revisions, the last a rollback to 1" \
    "^5[[:space:]].*deployed[[:space:]]+web-0.1.0[[:space:]].*Rollback to 1" \
    h history web -n apps
  check "v$v uninstalls the release" 'release "web" uninstalled' \
    h uninstall web -n apps --wait --timeout 60s
  check "the objects and release Secrets are gone" "^None None False \[\]$" \
    fake_objs "'%s %s' % ((lambda c: c and c['data']['greeting'])(get('ConfigMap', 'web-config', 'apps')), 'None False') + ' %s' % [o['metadata']['name'] for o in items if (o['metadata'].get('labels') or {}).get('name') == 'web']"
}

if [ ! -x "$H3" ]; then
  skip "Helm v3: $H3 is not there (make helm fetches it); it packages the chart"
else
  C1=$(chart 0.1.0)
  C2=$(chart 0.2.0)
  addon
  one_helm 3
  one_helm 4
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
