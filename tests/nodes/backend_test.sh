#!/bin/sh
# lua/backend/live.lua's multi-node methods (agent_configure, kubelet_config,
# api_ready) against the fake API server and two cluster agents:
# tests/nodes/live_nodes.lua, run by `uphook test`.
. tests/cli/lib.sh
. tests/nodes/lib.sh
start_apiserver
start_cluster 2
NODES_TMP=$TMP NODES_NET=$NET NODES_THIS=$THIS NODES_KC=$KC \
  UPHOOK_TEST_UNCONFINED=1 "$UPHOOK" test tests/nodes/live_nodes.lua >"$OUT" 2>&1; RC=$?
grep -v "^ok \|passed, " "$OUT"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT" | tail -n 1)
p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
PASSED=$((PASSED + ${p:-0})); FAILED=$((FAILED + ${f:-1}))
[ "$RC" -eq 0 ] || [ "${f:-1}" -ne 0 ] || FAILED=$((FAILED + 1))
finish
