#!/bin/sh
# One uphook upgrade whose hook does 20 kube.get and one kube.apply, against
# the 21 equivalent kubectl calls (20 `get -o json`, one `apply
# --server-side`), side by side against the same fake API server
# (tests/fakes/apiserver.py).  Prints medians of RUNS runs, the ratio, and
# peak RSS (medians of 3): uphook's, one kubectl get's, one curl GET's,
# and the RSS goal (at most curl's + 3.5 MiB).  sh tests/bench/bench_api.sh [build]
set -u
ROOT=$(pwd)
BUILD=${BUILD:-${1:-build}}
UPHOOK=${UPHOOK:-$ROOT/$BUILD/uphook}
RUNS=${RUNS:-7}
. tests/cli/fake_api.sh
fake_tmp bench_api

command -v kubectl >/dev/null || { echo "kubectl is not installed"; exit 1; }
fake_start || exit 1

kc() { HOME=$TMP/home KUBECONFIG=$KC kubectl --cache-dir "$TMP/kcache" "$@"; }

# the objects: 20 ConfigMaps to read, one to apply
i=1
while [ $i -le 20 ]; do
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d, namespace: default}\ndata: {n: "%d"}\n' $i $i
  i=$((i + 1))
done >"$TMP/seed.yaml"
curl -sS -X POST --data-binary @"$TMP/seed.yaml" "$CTL/seed" >/dev/null
cat >"$TMP/applied.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: applied, namespace: default}
data: {level: "1"}
EOF

ADDONS=$TMP/repo
mkdir -p "$ADDONS/addons/bench" "$TMP/snap_data" "$TMP/snap_common"
printf 'microk8s-addons:\n  addons:\n    - name: bench\n      description: bench\n      version: "1.0.1"\n      check_status: "x"\n      supported_architectures: [amd64, arm64]\n' \
  >"$ADDONS/addons.yaml"
cat >"$ADDONS/addons/bench/upgrade.lua" <<'EOF'
return {
  version = "1.0.1", from = "1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    for i = 1, 20 do assert(kube.get("ConfigMap", "cm" .. i, "default")) end
    kube.apply(addon.read("applied.yaml"))
  end,
}
EOF
cp "$TMP/applied.yaml" "$ADDONS/addons/bench/applied.yaml"

uphook_once() {
  SNAP_DATA=$TMP/snap_data SNAP_COMMON=$TMP/snap_common HOME=$TMP/home \
    "$UPHOOK" --kubeconfig "$KC" --addons "$ADDONS" --state-dir "$TMP/state" \
    -q --yes upgrade bench >"$TMP/uh.out" 2>&1 || { cat "$TMP/uh.out"; exit 1; }
}
kubectl_once() {
  i=1
  while [ $i -le 20 ]; do
    kc get configmap "cm$i" -n default -o json >/dev/null || exit 1
    i=$((i + 1))
  done
  kc apply --server-side --field-manager=bench -f "$TMP/applied.yaml" >/dev/null || exit 1
}
reset_state() {   # so that every uphook run upgrades again
  kc delete configmap -n kube-system uphook-bench --ignore-not-found >/dev/null
  kc delete configmap -n default applied --ignore-not-found >/dev/null
}
now() { date +%s.%N; }

kubectl_once            # warm kubectl's discovery cache, as on a node
: >"$TMP/uh.times"; : >"$TMP/kc.times"
r=0
while [ $r -lt "$RUNS" ]; do
  reset_state
  t0=$(now); uphook_once; t1=$(now)
  echo "$t1 - $t0" | bc >>"$TMP/uh.times"
  reset_state
  t0=$(now); kubectl_once; t1=$(now)
  echo "$t1 - $t0" | bc >>"$TMP/kc.times"
  r=$((r + 1))
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mu=$(median "$TMP/uh.times")
mk=$(median "$TMP/kc.times")
maxrss() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }
# peak RSS, the median of 3 runs each: uphook's run; one kubectl get; one
# curl GET of the same object with the kubeconfig's certificates, the
# floor that libcurl and its TLS libraries set on this machine
python3 - "$KC" "$TMP" <<'PY'
import base64, sys, yaml
kc, tmp = yaml.safe_load(open(sys.argv[1])), sys.argv[2]
cl, us = kc["clusters"][0]["cluster"], kc["users"][0]["user"]
for f, d, k in (("ca", cl, "certificate-authority-data"),
                ("cert", us, "client-certificate-data"), ("key", us, "client-key-data")):
    open("%s/%s.pem" % (tmp, f), "wb").write(base64.b64decode(d[k]))
PY
: >"$TMP/rss.u"; : >"$TMP/rss.k"; : >"$TMP/rss.c"
for _ in 1 2 3; do
  reset_state
  /usr/bin/time -v -o "$TMP/rss" sh -c "SNAP_DATA=$TMP/snap_data SNAP_COMMON=$TMP/snap_common HOME=$TMP/home $UPHOOK --kubeconfig $KC --addons $ADDONS --state-dir $TMP/state -q --yes upgrade bench" >/dev/null 2>&1
  maxrss "$TMP/rss" >>"$TMP/rss.u"
  /usr/bin/time -v -o "$TMP/rss" sh -c "HOME=$TMP/home KUBECONFIG=$KC kubectl --cache-dir $TMP/kcache get configmap cm1 -n default -o json" >/dev/null 2>&1
  maxrss "$TMP/rss" >>"$TMP/rss.k"
  /usr/bin/time -v -o "$TMP/rss" curl -sS -o /dev/null --cacert "$TMP/ca.pem" \
    --cert "$TMP/cert.pem" --key "$TMP/key.pem" \
    "https://127.0.0.1:$PORT/api/v1/namespaces/default/configmaps/cm1" 2>/dev/null
  maxrss "$TMP/rss" >>"$TMP/rss.c"
done
rss=$(median "$TMP/rss.u"); krss=$(median "$TMP/rss.k"); crss=$(median "$TMP/rss.c")
printf '%-44s %10s\n' "20 GETs + 1 server-side apply ($RUNS runs)" "median s"
printf '%-44s %10.3f\n' "uphook upgrade (one process, one connection)" "$mu"
printf '%-44s %10.3f\n' "kubectl x 21" "$mk"
printf 'ratio kubectl/uphook: %.1fx (goal >= 10x)\n' "$(echo "$mk / $mu" | bc -l)"
printf 'peak RSS: uphook run %.1f MiB; one kubectl get %.1f MiB; one curl GET %.1f MiB\n' \
  "$(echo "$rss / 1024" | bc -l)" "$(echo "$krss / 1024" | bc -l)" \
  "$(echo "$crss / 1024" | bc -l)"
# the goal (docs/bench.md, "Peak RSS"): at most 3.5 MiB above curl's own
printf 'peak RSS goal: uphook <= one curl GET + 3.5 MiB (%.1f MiB): %s\n' \
  "$(echo "($crss + 3584) / 1024" | bc -l)" \
  "$([ "$rss" -le $((crss + 3584)) ] && echo met || echo missed)"
