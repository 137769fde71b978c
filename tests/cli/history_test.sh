# Failed and rolled-back runs are recorded (docs/state.md): in the state
# ConfigMap's history, with time, versions, exit code and the error's first
# line, bounded like the rest of the history (10 entries). A failed first
# upgrade makes a ConfigMap that holds only the history (detect still tells
# the version and the parameters, the next upgrade is still a first one and
# asks for its yes); exit 6 (rollback incomplete) is recorded when the
# cluster takes the write, and `recover` records its own outcome; a refused
# yes records nothing. Offline first, then live against the fake API server.
. tests/cli/lib.sh
. tests/cli/fake_api.sh
PIDS=""
trap fake_cleanup EXIT

R="$TMP/repo"
make_repo "$R" flaky
cat > "$R/addons/flaky/upgrade.lua" <<'LUA'
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  permissions = { "kube:default" },
  params = { fail = { default = "no", choices = { "no", "check", "upgrade" } },
             mode = { default = "a", choices = { "a", "b" } } },
  -- the cluster was enabled with mode b: detect reads it back
  detect = function() return "1.0.0", { mode = "b" } end,
  check = function(ctx)
    if ctx.params.fail == "check" then error("the check says no\nsecond line") end
  end,
  upgrade = function(ctx)
    kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "flaky", namespace = "default" },
      data = { fail = ctx.params.fail, mode = ctx.params.mode } })
    if ctx.params.fail == "upgrade" then error("broke after a change\nmore") end
  end,
}
LUA
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' > "$TMP/cluster.yaml"
W="$TMP/w"
U() { "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W" "$@"; }
# history [DIR]: the state ConfigMap's history entries, one JSON line each,
# then its data keys and version (nothing when there is no ConfigMap), then
# the mode of ConfigMap default/flaky
history() {
  python3 - "${1:-$W}/offline/cluster.yaml" <<'PY'
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap" and d["metadata"]["name"] == "uphook-flaky":
        for h in yaml.safe_load(d["data"].get("history") or "[]") or []:
            print(json.dumps(h, sort_keys=True))
        print("keys=" + ",".join(sorted(d["data"])))
        print("version=" + str(d["data"].get("version")))
    if d and d["kind"] == "ConfigMap" and d["metadata"]["name"] == "flaky":
        print("mode=" + d["data"]["mode"])
PY
}
TIME='"time": "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"'

# ---------------------------------------------------------------- offline
run U upgrade flaky --fail upgrade
expect "a failed first upgrade: exit 1, rolled back" 1 "broke after a change" "Rolled back"
history > "$OUT"
e=$(grep '^{' "$OUT")
[ "$(grep -c '^{' "$OUT")" -eq 1 ] && echo "$e" | grep -q '"code": 1' \
  && echo "$e" | grep -q '"result": "rolled back"' && echo "$e" | grep -q '"from": "1.0.0"' \
  && echo "$e" | grep -q '"to": "2.0.0"' && echo "$e" | grep -Eq "$TIME" \
  && echo "$e" | grep -q '"error": "upgrade failed: [^"]*broke after a change"' \
  && ok "a failed first upgrade is in a new state ConfigMap's history (time, 1.0.0 -> 2.0.0, code 1, the error)" \
  || not_ok "a failed first upgrade is in a new state ConfigMap's history (time, 1.0.0 -> 2.0.0, code 1, the error)"
grep -qx 'keys=history,repository' "$OUT" && ok "... which holds only the history and its repository: no version, params or permissions" \
  || not_ok "... which holds only the history and its repository: no version, params or permissions"

run U list --output json
python3 - "$OUT" <<'PY' && ok "list still shows the version detect tells (1.0.0, source detect)" \
  || not_ok "list still shows the version detect tells (1.0.0, source detect)"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
a = [e for e in ev if e["event"] == "addon" and e["name"] == "flaky"][0]
assert a["detected"] == "1.0.0" and a["source"] == "detect" and "installed" not in a, a
PY

run U upgrade flaky
expect "then the upgrade" 0 "Upgraded flaky from 1.0.0 to 2.0.0"
history > "$OUT"
grep -qx 'mode=b' "$OUT" && ok "... keeps the parameters detect read back (mode b, not the default)" \
  || not_ok "... keeps the parameters detect read back (mode b, not the default)"
[ "$(grep -c '^{' "$OUT")" -eq 2 ] && grep '^{' "$OUT" | head -1 | grep -q '"result": "rolled back"' \
  && grep '^{' "$OUT" | tail -1 | grep -q '"result": "upgraded"' && grep -qx 'version=2.0.0' "$OUT" \
  && ok "... and its history follows the failed run: rolled back, upgraded; version 2.0.0" \
  || not_ok "... and its history follows the failed run: rolled back, upgraded; version 2.0.0"

# uphook history: the entries as text and JSON; a field an entry of an
# older uphook lacks shows `?` (the first entry loses its node, as one
# written before entries named it)
python3 - "$W/offline/cluster.yaml" <<'PY'
import sys, yaml
p = sys.argv[1]
docs = list(yaml.safe_load_all(open(p)))
for d in docs:
    if d and d["kind"] == "ConfigMap" and d["metadata"]["name"] == "uphook-flaky":
        h = yaml.safe_load(d["data"]["history"])
        h[0].pop("node", None)
        d["data"]["history"] = yaml.safe_dump(h)
yaml.safe_dump_all(docs, open(p, "w"))
PY
run U history flaky
expect "uphook history: each run (when, versions, result, node, repository, parameters, permissions), only the last 10 kept" 0 \
  "only the last 10 runs are kept" \
  "^  [0-9T:-]+Z  1\.0\.0 -> 2\.0\.0  rolled back \(exit 1\)  on \?  from repo$" \
  "^  [0-9T:-]+Z  1\.0\.0 -> 2\.0\.0  upgraded \(exit 0\)  on [^?]+  from repo$" \
  "parameters: .*mode=b" "permissions: kube:default" "flaky is at 2\.0\.0\."
run U --output json history flaky
python3 - "$OUT" <<'PY' && ok "uphook history --output json: one history event per entry, then the result" \
  || not_ok "uphook history --output json: one history event per entry, then the result"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
h = [e for e in ev if e["event"] == "history"]
assert [e["result"] for e in h] == ["rolled back", "upgraded"], h
assert "node" not in h[0] and h[1]["node"] and h[1]["permissions"] == ["kube:default"], h
assert h[1]["parameters"]["mode"] == "b" and h[1]["repo"] == "repo", h
assert ev[-1]["event"] == "result" and ev[-1]["entries"] == 2 and ev[-1]["kept"] == 10, ev[-1]
PY

run U upgrade flaky --fail upgrade
expect "a failed reconfigure: exit 1, rolled back" 1 "Rolled back"
history > "$OUT"
last=$(grep '^{' "$OUT" | tail -1)
echo "$last" | grep -q '"code": 1' && echo "$last" | grep -q '"result": "rolled back"' \
  && echo "$last" | grep -q '"error": "upgrade failed: [^"]*broke after a change"' \
  && echo "$last" | grep -q '"from": "2.0.0"' && echo "$last" | grep -q '"to": "2.0.0"' \
  && echo "$last" | grep -Eq "$TIME" \
  && ok "the rolled-back run is in the history: time, versions, code 1, the error's first line" \
  || not_ok "the rolled-back run is in the history: time, versions, code 1, the error's first line"
grep -q '^version=2.0.0$' "$OUT" && ok "... and the version stays 2.0.0" || not_ok "... and the version stays 2.0.0"
grep -q 'more' "$OUT" && not_ok "only the first line of the error" || ok "only the first line of the error"

run U upgrade flaky --fail check
expect "a failed check: exit 4" 4 "the check says no"
history > "$OUT"
grep '^{' "$OUT" | tail -1 | grep -q '"code": 4, .*"error": "[^"]*the check says no", .*"result": "failed"' \
  && ok "the failed check is in the history (code 4, failed)" \
  || not_ok "the failed check is in the history (code 4, failed)"

i=0
while [ $i -lt 10 ]; do U upgrade flaky --fail upgrade >/dev/null 2>&1; i=$((i + 1)); done
history > "$OUT"
n=$(grep -c '^{' "$OUT")
[ "$n" -eq 10 ] && ok "the history keeps the last 10 entries" \
  || { echo "entries: $n" >>"$OUT"; not_ok "the history keeps the last 10 entries"; }
grep -q '"result": "upgraded"' "$OUT" && not_ok "... the oldest went first" || ok "... the oldest went first"

# a first upgrade whose check fails (exit 4, nothing changed): recorded too
W2="$TMP/w2"
run "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W2" upgrade flaky --fail check
expect "a failed first check: exit 4" 4 "the check says no"
history "$W2" > "$OUT"
grep '^{' "$OUT" | grep -q '"code": 4, .*"from": "1.0.0", .*"result": "failed", .*"to": "2.0.0"' \
  && grep -qx 'keys=history,repository' "$OUT" \
  && ok "... is in a new ConfigMap's history (code 4, failed), nothing else in it" \
  || not_ok "... is in a new ConfigMap's history (code 4, failed), nothing else in it"

# ---------------------------------------------------------------- live
fake_start || { echo "0 passed, 1 failed"; exit 1; }
ctl() { curl -sS -X "$1" ${3:+--data "$3"} "$CTL/$2"; }
# lhistory: as history, from the fake API server (uphook-live, live-a)
lhistory() {
  { fake_cm uphook-live kube-system; fake_cm live-a default; } | python3 -c '
import json, sys, yaml
st, a = [None if l.strip() == "None" else json.loads(l) for l in sys.stdin]
if st is not None:
    for h in yaml.safe_load(st.get("history") or "[]") or []:
        print(json.dumps(h, sort_keys=True))
    print("keys=" + ",".join(sorted(st)))
if a is not None:
    print("live-a=" + a["v"])'
}
LR="$TMP/live-repo"
make_repo "$LR" live
cat > "$LR/addons/live/upgrade.lua" <<'LUA'
return {
  version = "2.0.0", from = "1.0.0", permissions = { "kube:default" },
  params = { fail = { default = "no", choices = { "no", "upgrade" } } },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "live-a", namespace = "default" }, data = { v = "2" } })
    if ctx.params.fail == "upgrade" then error("broke after a change") end
  end,
}
LUA
export SNAP_DATA="$TMP/snap" SNAP_COMMON="$TMP/common" HOME="$TMP/home"
L() { timeout 60 "$UPHOOK" --kubeconfig "$KC" --addons "$LR" --state-dir "$TMP/lstate" "$@"; }

run L upgrade live </dev/null
expect "live: a first upgrade without a yes: exit 4" 4 "needs your yes"
[ -z "$(lhistory)" ] && ok "... a refused yes is not recorded: no state ConfigMap" \
  || { lhistory >"$OUT"; not_ok "... a refused yes is not recorded: no state ConfigMap"; }

run L upgrade live --yes --fail upgrade </dev/null
expect "live: a failed first upgrade: exit 1" 1 "broke after a change" "Rolled back"
lhistory > "$OUT"
grep '^{' "$OUT" | grep -q '"code": 1, .*"from": "1.0.0", .*"result": "rolled back", .*"to": "2.0.0"' \
  && grep -qx 'keys=history,repository' "$OUT" && ! grep -q '^live-a=' "$OUT" \
  && ok "... recorded in a new state ConfigMap holding only the history; live-a rolled back" \
  || not_ok "... recorded in a new state ConfigMap holding only the history; live-a rolled back"

run L upgrade live </dev/null
expect "... the next upgrade is still a first one: it asks for the yes again (exit 4)" 4 \
  "the first upgrade of live \(permissions: kube:default\) needs your yes"

# exit 6: the rollback cannot delete what the upgrade made
ctl POST faults '{"status": 500, "method": "DELETE", "path": "/configmaps/live-a$", "count": -1}' >/dev/null
run L upgrade live --yes --fail upgrade </dev/null
ctl DELETE faults >/dev/null
expect "live: a rollback that cannot delete: exit 6, recover named" 6 "recover"
lhistory > "$OUT"
last=$(grep '^{' "$OUT" | tail -1)
[ "$(grep -c '^{' "$OUT")" -eq 2 ] && echo "$last" | grep -q '"code": 6' \
  && echo "$last" | grep -q '"result": "rollback incomplete"' \
  && echo "$last" | grep -q '"error": "upgrade failed: [^"]*broke after a change"' \
  && echo "$last" | grep -Eq "$TIME" && grep -qx 'live-a=2' "$OUT" \
  && ok "... recorded: code 6, rollback incomplete, the error's first line (live-a still there)" \
  || not_ok "... recorded: code 6, rollback incomplete, the error's first line (live-a still there)"

run L recover live
expect "recover then: exit 0" 0 "Recovered live"
lhistory > "$OUT"
last=$(grep '^{' "$OUT" | tail -1)
[ "$(grep -c '^{' "$OUT")" -eq 3 ] && echo "$last" | grep -q '"code": 0' \
  && echo "$last" | grep -q '"result": "recovered"' && echo "$last" | grep -q '"from": "1.0.0"' \
  && echo "$last" | grep -q '"to": "2.0.0"' && ! grep -q '^live-a=' "$OUT" && grep -qx 'keys=history,repository' "$OUT" \
  && ok "... and records its own outcome: recovered (1.0.0 -> 2.0.0, code 0); live-a deleted; still no version" \
  || not_ok "... and records its own outcome: recovered (1.0.0 -> 2.0.0, code 0); live-a deleted; still no version"

# exit 6 when the cluster refuses the history write too: a warning, still 6
ctl POST faults '[{"status": 500, "method": "DELETE", "path": "/configmaps/live-a$", "count": -1},
  {"status": 500, "method": "PATCH", "path": "/configmaps/uphook-live$", "count": -1}]' >/dev/null
run L upgrade live --yes --fail upgrade </dev/null
ctl DELETE faults >/dev/null
expect "live: exit 6 and the history write refused: a warning naming the ConfigMap" 6 \
  "could not record the rollback incomplete run in the history of ConfigMap kube-system/uphook-live"
[ "$(lhistory | grep -c '^{')" -eq 3 ] && ok "... the history is as it was" \
  || { lhistory >"$OUT"; not_ok "... the history is as it was"; }

# recover that cannot finish: recorded as recover incomplete, code 6
ctl POST faults '{"status": 500, "method": "DELETE", "path": "/configmaps/live-a$", "count": -1}' >/dev/null
run L recover live
ctl DELETE faults >/dev/null
expect "a recover that cannot delete: exit 6" 6 "recovery incomplete"
lhistory > "$OUT"
grep '^{' "$OUT" | tail -1 | grep -q '"code": 6, "error": "cannot undo [^"]*live-a[^"]*", "from": "1.0.0", .*"result": "recover incomplete"' \
  && ok "... recorded: code 6, recover incomplete, what it could not undo" \
  || not_ok "... recorded: code 6, recover incomplete, what it could not undo"
run L recover live
expect "recover again: exit 0" 0 "Recovered live"
[ "$(lhistory | grep -c '"result": "recovered"')" -eq 2 ] && ok "... recorded as recovered" \
  || { lhistory >"$OUT"; not_ok "... recorded as recovered"; }

run L upgrade live --yes </dev/null
expect "live: then the upgrade" 0 "Upgraded live from 1.0.0 to 2.0.0"
lhistory > "$OUT"
grep -qx 'keys=history,params,permissions,repository,version' "$OUT" \
  && grep '^{' "$OUT" | tail -1 | grep -q '"result": "upgraded"' \
  && [ "$(grep -c '^{' "$OUT")" -eq 6 ] \
  && ok "... the state gets its version, permissions and repository; the history keeps what came before" \
  || not_ok "... the state gets its version and permissions; the history keeps what came before"

# a failed run whose history write gets no answer: the warning within its
# 5 s, not a request's own 30 s (last: the fake serves that write later)
ctl POST faults '{"action": "delay", "delay": 40, "method": "PATCH", "path": "/configmaps/uphook-live$", "count": -1}' >/dev/null
t0=$(date +%s)
run L upgrade live --fail upgrade </dev/null
t1=$(date +%s)
expect "live: the history write unanswered: exit 1 and a warning" 1 "Rolled back" \
  "could not record the rolled back run in the history of ConfigMap kube-system/uphook-live: .*no answer within [0-9]+\.[0-9] s"
[ $((t1 - t0)) -lt 20 ] && ok "... within 5 s, not a request's 30 s" \
  || { echo "took $((t1 - t0)) s" >>"$OUT"; not_ok "... within 5 s, not a request's 30 s"; }

finish
