#!/bin/sh
# kill -9 in the middle of a four-node dns upgrade, then `uphook recover`
# on this node: this node ends byte for byte as it was, every other node
# with the same args lines, every kubelet running its old configuration
# again, the cluster's objects as they were; then the upgrade succeeds.
# Two kinds of crash point:
# - after the Nth journaled change (UPHOOK_CRASH_AFTER=N, as a power cut);
# - with a request in flight: node X's agent has applied its Kth change
#   request (args or restart) and holds the answer; uphook is killed -9.
# make test runs a sample: the first, middle and last journaled change,
# and the first, middle and last request of each node. UPHOOK_SWEEP=full
# runs every journaled change and every request of every node.
. tests/cli/lib.sh
. tests/nodes/lib.sh

start_apiserver
start_cluster 3
FIX=$ROOT/hooks/dns/fixtures/cluster-1.10.1.yaml
repo dns
FULL=0; [ "${UPHOOK_SWEEP:-}" = full ] && FULL=1
T0=$(date +%s)
export RESTART_SECONDS=0.2

baseline() {
  ctl GET objects > "$TMP/objs.json"
  python3 tests/cli/normalize.py "$TMP/objs.json" lease > "$TMP/objs.base"
}
objects_same() {
  ctl GET objects > "$TMP/objs.json"
  python3 tests/cli/normalize.py "$TMP/objs.json" lease > "$TMP/objs.now"
  cmp -s "$TMP/objs.base" "$TMP/objs.now" || { diff "$TMP/objs.base" "$TMP/objs.now" | head -20 >>"$OUT"; return 1; }
}
# every kubelet runs its first DNS again (configz)
running_old() {
  for _n in $THIS $NODES; do
    want=$(sed -n 's/^--cluster-dns=//p' "$TMP/base.$_n")
    got=$(configz "$_n" "','.join(kc['clusterDNS'])")
    [ "$want" = "$got" ] || { echo "$_n runs $got, not $want" >>"$OUT"; return 1; }
  done
}
# recovered WHAT: after a crash, upgrade refuses, recover restores all;
# then (for the first point of each kind, and in the full sweep) the
# upgrade runs again from there
AGAIN=1
recovered() {
  run U upgrade dns; rc1=$RC
  run U recover dns; rc2=$RC
  if [ $rc1 -eq 6 ] && [ $rc2 -eq 0 ] && unchanged && running_old && objects_same; then
    if [ $AGAIN = 1 ] || [ $FULL = 1 ]; then
      run U upgrade dns
      expect "$1 is recovered on every node, then upgrades" 0 "Upgraded dns"
    else ok "$1 is recovered on every node"; fi
    AGAIN=0
    return 0
  fi
  echo "    (upgrade after the crash: $rc1, recover: $rc2)" >>"$OUT"
  not_ok "$1 is recovered on every node"
}
pick() {   # N TOTAL: is N one of the sampled points (first, middle, last)?
  [ $FULL = 1 ] || [ "$1" -eq 1 ] || [ "$1" -eq "$2" ] || [ "$1" -eq $((($2 + 1) / 2)) ]
}

# One run that does not crash tells how many changes it journals (each
# object, file, node's args and restart, and the state ConfigMap) and
# which requests each node's agent gets.
fresh; run U --output json upgrade dns
expect "an uncrashed dns upgrade on four nodes" 0
total=$(python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and "\"result\"" in l][-1]["summary"]
print(s["created"] + s["configured"] + s["deleted"] + s["files"] + s["restarts"] + 1)' "$OUT")
for node in $NODES; do
  python3 -c '
import json, sys
print(" ".join(e["kind"] for e in map(json.loads, open(sys.argv[1])) if e["kind"] != "empty"))' \
    "$(sd "$node")/agent.log" > "$TMP/kinds.$node"
done
fresh; UPHOOK_CRASH_AFTER=$((total + 1)) U upgrade dns >"$OUT" 2>&1; RC=$?
expect "the count is right: no crash after change $((total + 1))" 0

# ---------------------------------------------- after each journaled change
AGAIN=1; points=0; pt=1
while [ $pt -le "$total" ]; do
  if pick $pt "$total"; then
    fresh; baseline
    UPHOOK_CRASH_AFTER=$pt U upgrade dns >"$OUT" 2>&1; RC=$?
    if [ $RC -eq 99 ]; then
      points=$((points + 1)); recovered "a crash after journaled change $pt of $total"
    else expect "a crash after journaled change $pt of $total" 99; fi
  fi
  pt=$((pt + 1))
done
echo "info: dns on 4 nodes: $total journaled changes, $points crash points tried"

# ---------------------------------------------- with a request in flight
AGAIN=1; inflight=0
for node in $NODES; do
  kinds=$(cat "$TMP/kinds.$node"); count=$(echo "$kinds" | wc -w); k=0
  for kind in $kinds; do
    k=$((k + 1))
    pick $k "$count" || continue
    skip=$(echo "$kinds" | tr ' ' '\n' | head -n $((k - 1)) | grep -cx "$kind")
    fresh; baseline
    faults "$node" "[{\"match\": \"$kind\", \"skip\": $skip, \"action\": \"hang\", \"when\": \"after\", \"seconds\": 8}]"
    (UX upgrade dns >"$TMP/bg.out" 2>&1) &
    up=$!
    i=0; while [ $i -lt 300 ] && [ ! -s "$(sd "$node")/agent-hanging" ]; do sleep 0.05; i=$((i + 1)); done
    kill -9 $up 2>/dev/null; wait $up 2>/dev/null
    if [ ! -s "$(sd "$node")/agent-hanging" ]; then
      cat "$TMP/bg.out" >"$OUT"; RC=1; expect "$node: request $k ($kind) was in flight when uphook was killed" 0
      continue
    fi
    inflight=$((inflight + 1))
    recovered "kill -9 with $node's request $k of $count ($kind) in flight"
  done
done
echo "info: requests in flight: $inflight crash points over $(echo $NODES | wc -w) nodes"
echo "info: sweep took $(($(date +%s) - T0)) s ($( [ $FULL = 1 ] && echo full || echo sample))"
finish
