#!/bin/sh
# A Helm upgrade (docs/guide.md "Helm addons"): uphook's whole `upgrade`
# of the Traefik release from chart 39.0.8 to 41.3.0 (render twice,
# check, plan, apply, prune, hooks, the waits the fake satisfies at once,
# commit) against Helm v3.17.2's `helm upgrade` of the same chart and
# values without --wait, side by side in this one run, over TLS to the
# same fake API server (tests/fakes/apiserver.py), which satisfies the
# hook's waits at once (--rollout-delay 0: a Deployment is rolled out as
# soon as it is written), as the Helm issue's benchmark asks. Before every
# run the server is reset and Helm installs 39.0.8, so both upgrade the
# same release. Prints the medians and the best of RUNS runs, their
# ratio, and the render's share: two `helm template` runs of 41.3.0 at
# once (what uphook renders, docs/guide.md "Helm addons") against
# uphook's median. With UPHOOK_BEFORE (an earlier build's uphook), that
# build is timed in the same rounds, for a before/after row (docs/bench.md).
#   sh tests/bench/bench_helm.sh [build]     RUNS=5 [UPHOOK_BEFORE=path]
set -u
ROOT=$(pwd)
BUILD=${BUILD:-${1:-build}}
UPHOOK=${UPHOOK:-$ROOT/$BUILD/uphook}
RUNS=${RUNS:-5}
HELM=${HELM:-$ROOT/$BUILD/helm/v3/helm}
C1=$ROOT/hooks/ingress/charts/traefik-39.0.8.tgz
C2=$ROOT/hooks/ingress/charts/traefik-41.3.0.tgz
. tests/cli/fake_api.sh
fake_tmp bench_helm

[ -x "$HELM" ] || { echo "no Helm at $HELM (make helm fetches it)"; exit 1; }
[ -f "$C1" ] && [ -f "$C2" ] || { echo "no Traefik charts in hooks/ingress/charts"; exit 1; }
fake_start --rollout-delay 0 || exit 1

h() {
  HOME=$TMP/home HELM_CACHE_HOME=$TMP/home/cache HELM_CONFIG_HOME=$TMP/home/config \
    HELM_DATA_HOME=$TMP/home/data KUBECONFIG=$KC "$HELM" "$@"
}

ADDONS=$TMP/repo
mkdir -p "$ADDONS/addons/traefik/charts" "$TMP/snap_data" "$TMP/snap_common"
cp "$C2" "$ADDONS/addons/traefik/charts/"
printf 'microk8s-addons:\n  addons:\n    - name: traefik\n      description: bench\n      version: "41.3.0"\n      check_status: "x"\n      supported_architectures: [amd64, arm64]\n' \
  >"$ADDONS/addons.yaml"
cat >"$ADDONS/addons/traefik/upgrade.lua" <<'EOF'
return {
  version = "41.3.0", from = ">=39.0.0 <41.3.0",
  permissions = { "kube:ingress", "kube:cluster", "kube:privileged" },
  detect = function() return helm.release("traefik", "ingress").chart.version end,
  upgrade = function()
    helm.upgrade { release = "traefik", namespace = "ingress",
      chart = "charts/traefik-41.3.0.tgz",
      values = helm.release("traefik", "ingress").values }
  end,
}
EOF

uphook_cmd() {
  SNAP_DATA=$TMP/snap_data SNAP_COMMON=$TMP/snap_common HOME=$TMP/home \
    "${1:-$UPHOOK}" --kubeconfig "$KC" --addons "$ADDONS" --helm "$HELM" \
    --state-dir "$TMP/state" -q --yes upgrade traefik
}
# the world before each run: a fresh server, the release at 39.0.8
reset_state() {
  curl -sS -X POST "$CTL/reset" >/dev/null
  rm -rf "$TMP/state"
  h install traefik "$C1" -n ingress --create-namespace \
    --set deployment.replicas=1 >/dev/null || exit 1
}
now() { date +%s.%N; }
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

: >"$TMP/uh.times"; : >"$TMP/helm.times"; : >"$TMP/tpl.times"; : >"$TMP/before.times"
r=0
while [ $r -lt "$RUNS" ]; do
  if [ -n "${UPHOOK_BEFORE:-}" ]; then
    reset_state
    t0=$(now)
    uphook_cmd "$UPHOOK_BEFORE" >"$TMP/uh.out" 2>&1 || { cat "$TMP/uh.out"; exit 1; }
    t1=$(now)
    echo "$t1 - $t0" | bc >>"$TMP/before.times"
  fi
  reset_state
  t0=$(now)
  uphook_cmd >"$TMP/uh.out" 2>&1 || { cat "$TMP/uh.out"; exit 1; }
  t1=$(now)
  echo "$t1 - $t0" | bc >>"$TMP/uh.times"
  reset_state
  t0=$(now)
  h upgrade traefik "$C2" -n ingress --set deployment.replicas=1 >/dev/null || exit 1
  t1=$(now)
  echo "$t1 - $t0" | bc >>"$TMP/helm.times"
  t0=$(now)
  h template traefik "$C2" -n ingress --include-crds --is-upgrade \
    --set deployment.replicas=1 >/dev/null &
  h template traefik "$C2" -n ingress --include-crds --is-upgrade \
    --set deployment.replicas=1 >/dev/null || exit 1
  wait $! || exit 1
  t1=$(now)
  echo "$t1 - $t0" | bc >>"$TMP/tpl.times"
  r=$((r + 1))
done
mu=$(median "$TMP/uh.times"); mh=$(median "$TMP/helm.times")
mt=$(median "$TMP/tpl.times")
bu=$(sort -n "$TMP/uh.times" | head -1); bh=$(sort -n "$TMP/helm.times" | head -1)
printf '| uphook upgrade s (median, best) | helm upgrade s (median, best) | uphook / helm (median, best) | render share (2 helm template at once / uphook) |\n'
printf '|---:|---:|---:|---:|\n'
printf '| %.3f, %.3f | %.3f, %.3f | %.2fx, %.2fx | %.0f%% |\n' "$mu" "$bu" "$mh" "$bh" \
  "$(echo "$mu / $mh" | bc -l)" "$(echo "$bu / $bh" | bc -l)" \
  "$(echo "100 * $mt / $mu" | bc -l)"
if [ -n "${UPHOOK_BEFORE:-}" ]; then
  mb=$(median "$TMP/before.times"); bb=$(sort -n "$TMP/before.times" | head -1)
  printf '| before (%s): %.3f, %.3f | | %.2fx, %.2fx | |\n' "$UPHOOK_BEFORE" "$mb" "$bb" \
    "$(echo "$mb / $mh" | bc -l)" "$(echo "$bb / $bh" | bc -l)"
fi
echo "goal (the Helm issue): uphook / helm <= 1.0x, 0.8x the aim"
