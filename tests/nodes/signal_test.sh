#!/bin/sh
# Waits that answer a signal (docs/state.md "Signals"), against the fake
# API server, this node alone (tests/nodes/README.md):
# - SIGINT during a rollout watch (a stalled Deployment, a 600 s limit):
#   the rollback starts at once, exit 1, everything as before;
# - SIGTERM during the /readyz poll after this node's kubelite restart,
#   each /readyz answer held 30 s: the rollback starts at once; a second
#   signal during the rollback's own /readyz wait ends it: exit 6, the
#   journal kept, the recover command printed; `recover` then restores;
# - /readyz answered 404: /version stands in for it; both 404: the wait
#   fails at once, saying the server is not a kube-apiserver;
# - a wait is visible: under --output json a `wait` heartbeat event with
#   what, elapsed and limit; off a TTY a line every 10 s;
# - the Lease is renewed during the wait, not only when an event comes;
# - a running upgrade is "in progress (PID, node, since)" for list,
#   recover --dry-run and a second upgrade, not "interrupted".
# Prints the seconds from each signal to the rollback and to the exit
# ("info:" lines), which docs/state.md quotes.
. tests/cli/lib.sh
. tests/nodes/lib.sh

start_apiserver
start_cluster 0
cat > "$TMP/hooks/slow.lua" <<'EOF'
-- one Deployment, then its rollout (the test stalls it)
return {
  version = "1.1.0", from = "1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply({ apiVersion = "apps/v1", kind = "Deployment",
      metadata = { name = "web", namespace = "default" },
      spec = { replicas = 1, selector = { matchLabels = { app = "web" } },
        template = { metadata = { labels = { app = "web" } },
          spec = { containers = { { name = "web", image = "nginx:1.25" } } } } } })
    log.info("waiting for the rollout")
    kube.rollout("Deployment", "web", "default", { timeout = 600 })
  end,
}
EOF
cat > "$TMP/hooks/flag.lua" <<'EOF'
-- one kube-apiserver flag on this node, then kubelite's restart
return {
  version = "1.1.0", from = "1.0.0",
  permissions = { "args:kube-apiserver", "restart:kubelite" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    config.set_args("kube-apiserver", { ["--audit-log-maxage"] = "90" })
    service.restart("kubelite")
  end,
}
EOF
repo slow flag
now() { date +%s.%N; }
secs() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
# wait_for PATTERN FILE: up to 60 s
wait_for() {
  i=0; while ! grep -q -- "$1" "$2" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  grep -q -- "$1" "$2"
}
readyz_asked() { ctl GET requests | python3 -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin)["log"] if r["path"] == "/readyz"))'; }
lease_renew() { objs "(get('Lease', 'uphook-$1', 'kube-system') or {}).get('spec', {}).get('renewTime')"; }

# ------------------------------------------------ SIGINT in a rollout wait
ctl POST reset >/dev/null; register_nodes; rm -rf "$TMP/state"
ctl POST stall '{"kind": "Deployment", "namespace": "default", "name": "web"}' >/dev/null
(UX upgrade slow >"$TMP/a.out" 2>&1) & p=$!
wait_for "waiting for the rollout" "$TMP/a.out"
sleep 1
t0=$(now); kill -INT $p; wait $p; RC=$?; t1=$(now)
cp "$TMP/a.out" "$OUT"
expect "SIGINT during a rollout wait of 600 s: rolled back, exit 1" 1 "interrupted" "Rolled back"
echo "info: SIGINT to exit during a rollout wait: $(secs "$t0" "$t1") s"
check "... in less than 30 s (the wait's limit is 600 s)" \
  python3 -c "import sys; sys.exit(float('$(secs "$t0" "$t1")') >= 30)"
[ "$(objs "get('Deployment', 'web', 'default') is None")" = True ] \
  && ok "... the Deployment it created is gone" || not_ok "... the Deployment it created is gone"

# ------------------------- a running upgrade is in progress, not interrupted
ctl POST reset >/dev/null; register_nodes; rm -rf "$TMP/state"
ctl POST stall '{"kind": "Deployment", "namespace": "default", "name": "web"}' >/dev/null
(UX upgrade slow >"$TMP/p.out" 2>&1) & up=$!
wait_for "waiting for the rollout" "$TMP/p.out"
run U list
expect "list: a running upgrade is in progress (PID, node, since), not interrupted" 0 \
  "slow .*in progress \(PID $up, node $THIS, since [0-9T:-]+Z\)"
refute "... not 'interrupted: run recover'" "interrupted"
run U recover slow --dry-run
expect "recover --dry-run: in progress, nothing to recover (exit 5)" 5 \
  "an upgrade of slow is in progress \(PID $up, node $THIS, since"
run U upgrade slow --lock-wait 0
expect "a second upgrade from another shell: in progress (exit 5)" 5 \
  "an upgrade of slow is in progress \(PID $up"
kill -INT $up; wait $up

# ------------------------------ a visible wait, the Lease renewed meanwhile
ctl POST reset >/dev/null; register_nodes; rm -rf "$TMP/state"
ctl POST stall '{"kind": "Deployment", "namespace": "default", "name": "web"}' >/dev/null
(UX --output json upgrade slow >"$TMP/j.out" 2>"$TMP/j.err") & p=$!
wait_for '"event":"wait"' "$TMP/j.out"
r1=$(lease_renew slow)
wait_for '"elapsed":2[0-9]' "$TMP/j.out"
r2=$(lease_renew slow)
kill -TERM $p; wait $p
grep '"event":"wait"' "$TMP/j.out" | head -1 > "$OUT"
check "--output json: a wait heartbeat names what, elapsed and limit" \
  grep -q '"what":"the rollout of Deployment default/web".*"limit":600\|"limit":600.*"what":"the rollout of Deployment default/web"' "$OUT"
echo "renewTime at 10 s: $r1, at 20 s: $r2" > "$OUT"
check "... the Lease is renewed during the wait (no watch event came)" [ "$r1" != "$r2" ]
ctl POST reset >/dev/null; register_nodes; rm -rf "$TMP/state"
ctl POST stall '{"kind": "Deployment", "namespace": "default", "name": "web"}' >/dev/null
(UX upgrade slow >"$TMP/t.out" 2>&1) & p=$!
wait_for "waiting for the rollout of Deployment default/web: 1[0-9] s of 10 min" "$TMP/t.out"; found=$?
kill -INT $p; wait $p
cp "$TMP/t.out" "$OUT"
check "off a TTY: a line every 10 s with what, elapsed and limit" [ $found = 0 ]

# ------------------------------------- SIGTERM in the /readyz poll, twice
ctl POST reset >/dev/null; register_nodes; rm -rf "$TMP/state"
cp "$TMP/this/args/kube-apiserver" "$TMP/api.before"
ctl POST faults '{"method": "GET", "path": "^/readyz$", "count": -1, "action": "delay", "delay": 30}' >/dev/null
(UX upgrade flag >"$TMP/b.out" 2>&1) & p=$!
i=0; while [ "$(readyz_asked)" = 0 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
sleep 0.5
t0=$(now); kill -TERM $p
wait_for "Rolling back" "$TMP/b.out"; t1=$(now)
echo "info: SIGTERM to the rollback's start during a /readyz wait: $(secs "$t0" "$t1") s"
check "SIGTERM during a /readyz poll (each answer held 30 s) starts the rollback in less than 10 s" \
  python3 -c "import sys; sys.exit(float('$(secs "$t0" "$t1")') >= 10)"
# the rollback restarts kubelite again and waits for /readyz (still held)
n=$(readyz_asked); i=0
while [ "$(readyz_asked)" = "$n" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
sleep 0.5
t2=$(now); kill -INT $p; wait $p; RC=$?; t3=$(now)
cp "$TMP/b.out" "$OUT"
echo "info: a second signal to exit during the rollback's /readyz wait: $(secs "$t2" "$t3") s"
expect "a second signal during the rollback ends its wait: exit 6, the journal kept, the recover command" 6 \
  "stopping the rollback" "stopped by a signal during the rollback" "run: .*uphook .*recover flag"
check "... in less than 10 s" python3 -c "import sys; sys.exit(float('$(secs "$t2" "$t3")') >= 10)"
check "... the journal is kept" [ -e "$TMP/state/journal/flag.journal" ]
ctl DELETE faults >/dev/null
run U recover flag
expect "... recover then finishes" 0 "Recovered flag"
check "... and this node's file is as before" cmp -s "$TMP/this/args/kube-apiserver" "$TMP/api.before"

# ------------------------------------------------------ /readyz 404
ctl POST reset >/dev/null; register_nodes; rm -rf "$TMP/state"
ctl POST faults '{"method": "GET", "path": "^/readyz$", "count": -1, "status": 404}' >/dev/null
run U upgrade flag
expect "/readyz answers 404: /version stands in for it" 0 "Upgraded flag"
ctl POST reset >/dev/null; register_nodes; rm -rf "$TMP/state"
cp "$TMP/api.before" "$TMP/this/args/kube-apiserver"
ctl POST faults '[{"method": "GET", "path": "^/readyz$", "count": -1, "status": 404},
  {"method": "GET", "path": "^/version$", "count": -1, "status": 404}]' >/dev/null
t0=$(now); run U upgrade flag; t1=$(now)
# the rollback's restart again meets the same server: exit 6
expect "/readyz and /version answer 404: the wait fails at once, saying why" 6 \
  "after the kubelite restart: the server https://.* answers /readyz with HTTP 404 and /version with HTTP 404: it is not a kube-apiserver"
check "... at once, not after the run's --timeout" python3 -c "import sys; sys.exit(float('$(secs "$t0" "$t1")') >= 60)"
ctl DELETE faults >/dev/null
finish
