# Failed and rolled-back runs are recorded (issue 20 point 10): in the
# state ConfigMap's history, with time, versions, exit code and the
# error's first line, bounded like the rest of the history (10 entries);
# a failed first upgrade leaves no ConfigMap behind.
. tests/cli/lib.sh

R="$TMP/repo"
make_repo "$R" flaky
cat > "$R/addons/flaky/upgrade.lua" <<'LUA'
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  permissions = { "kube:default" },
  params = { fail = { default = "no", choices = { "no", "check", "upgrade" } } },
  detect = function() return "1.0.0" end,
  check = function(ctx)
    if ctx.params.fail == "check" then error("the check says no\nsecond line") end
  end,
  upgrade = function(ctx)
    kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "flaky", namespace = "default" },
      data = { fail = ctx.params.fail } })
    if ctx.params.fail == "upgrade" then error("broke after a change\nmore") end
  end,
}
LUA
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' > "$TMP/cluster.yaml"
W="$TMP/w"
U() { "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W" "$@"; }
# history: the state ConfigMap's history entries, one JSON line each
history() {
  python3 - "$W/offline/cluster.yaml" <<'PY'
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap" and d["metadata"]["name"] == "uphook-flaky":
        for h in yaml.safe_load(d["data"].get("history") or "[]") or []:
            print(json.dumps(h, sort_keys=True))
        print("version=" + str(d["data"].get("version")))
PY
}

run U upgrade flaky --fail upgrade
expect "a failed first upgrade: exit 1, rolled back" 1 "broke after a change" "Rolled back"
[ -z "$(history)" ] && ok "... leaves no state ConfigMap" \
  || { history >"$OUT"; not_ok "... leaves no state ConfigMap"; }

run U upgrade flaky
expect "then the upgrade" 0 "Upgraded flaky from 1.0.0 to 2.0.0"
run U upgrade flaky --fail upgrade
expect "a failed reconfigure: exit 1, rolled back" 1 "Rolled back"
history > "$OUT"
last=$(grep '^{' "$OUT" | tail -1)
echo "$last" | grep -q '"code": 1' && echo "$last" | grep -q '"result": "rolled back"' \
  && echo "$last" | grep -q '"error": "upgrade failed: [^"]*broke after a change"' \
  && echo "$last" | grep -q '"from": "2.0.0"' && echo "$last" | grep -q '"to": "2.0.0"' \
  && echo "$last" | grep -Eq '"time": "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"' \
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

finish
