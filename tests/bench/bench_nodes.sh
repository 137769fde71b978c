#!/bin/sh
# An args change on every node of a 3-node cluster against the same change
# on a 1-node cluster, side by side (goal <= 1.3x, README.md "Benchmarks").
# The hook sets one kubelet flag; on 3 nodes uphook also proves TLS and the
# token to the two other nodes' cluster agents (tests/fakes/agent.py on
# loopback addresses, port 25000), reads their kubelets' configz for the
# priors and sends both changes at once. No restart: restarts roll one node
# at a time by design. Medians of RUNS runs each, interleaved.
# sh tests/bench/bench_nodes.sh [build]
set -u
BUILD=${BUILD:-${1:-build}}
UPHOOK=${UPHOOK:-$(pwd)/$BUILD/uphook}
RUNS=${RUNS:-15}
. tests/cli/lib.sh >/dev/null
. tests/nodes/lib.sh

start_apiserver
start_cluster 2
cat > "$TMP/hooks/bench.lua" <<'EOF'
return {
  version = "1.1.0", from = ">=1.0.0 <1.1.0",
  permissions = { "args:kubelet" },
  params = { value = { default = "0" } },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    config.set_args("kubelet", { ["--bench-flag"] = ctx.params.value })
  end,
}
EOF
repo bench
api() {   # METHOD PATH: the API server with the admin client certificate
  curl -sS -o /dev/null -X "$1" --cacert "$SRV/ca.crt" --cert "$SRV/client.crt" \
    --key "$SRV/client.key" "https://127.0.0.1:$PORT$2"
}
# topology 1|3: which Nodes the cluster has
topology() {
  ctl DELETE nodes/node-2 >/dev/null 2>&1; ctl DELETE nodes/node-3 >/dev/null 2>&1
  [ "$1" = 3 ] && register_nodes
}
once() {   # NODES VALUE: one upgrade, its wall time in ms on stdout
  api DELETE /api/v1/namespaces/kube-system/configmaps/uphook-bench
  t0=$(date +%s%N)
  U -q upgrade bench --value "$2" >"$TMP/bench.out" 2>&1 || { cat "$TMP/bench.out" >&2; echo fail; return; }
  echo $((($(date +%s%N) - t0) / 1000000))
}
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

one=""; three=""; i=0
once 1 warm >/dev/null; topology 3; once 3 warm >/dev/null
while [ $i -lt "$RUNS" ]; do
  topology 1; one="$one $(once 1 "a$i")"
  topology 3; three="$three $(once 3 "b$i")"
  i=$((i + 1))
done
for n in $THIS $NODES; do
  grep -q -- "--bench-flag=b$((RUNS - 1))" "$(sd "$n")/args/kubelet" \
    || { echo "node $n did not get the last change"; exit 1; }
done
m1=$(echo "$one" | median); m3=$(echo "$three" | median)
b1=$(echo "$one" | tr ' ' '\n' | grep -v '^$' | sort -n | head -1)
b3=$(echo "$three" | tr ' ' '\n' | grep -v '^$' | sort -n | head -1)
printf '%-52s %8s %8s\n' "args change, kubelet --bench-flag ($RUNS runs each)" "median" "best"
printf '%-52s %5s ms %5s ms\n' "1 node (this one: its file)" "$m1" "$b1"
printf '%-52s %5s ms %5s ms\n' "3 nodes (this one + 2 cluster agents, in parallel)" "$m3" "$b3"
python3 -c "
r, b = $m3 / $m1, $b3 / $b1
print('ratio 3 nodes / 1 node: %.2fx median, %.2fx best (goal <= 1.3x: %s)'
      % (r, b, 'met' if r <= 1.3 else 'missed'))"
