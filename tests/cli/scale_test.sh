# One kube.apply of many objects against the live (fake) API server
# (docs/internals.md "Applying at scale"): N ConfigMaps, half of
# them already there, in batches journaled together and sent in parallel.
# - every object applied, results in order, one PATCH per object and one
#   LIST (in pages of 100) instead of a GET per object;
# - a crash (UPHOOK_CRASH_AFTER) inside a batch, on a batch's edge, and a
#   kill -9 with a batch's requests in flight: recover restores every
#   object exactly (data, labels, annotations, managedFields);
# - a 409 or a 500 answer in the middle of a batch: the run rolls back
#   every object of the run, exactly;
# - the plan of the large apply equals the plan of the same objects
#   applied one by one.
# make test: N=150 and a sample of crash points; UPHOOK_SWEEP=full: N=800
# and a crash point every 25 changes plus every batch's edges.
. tests/cli/lib.sh

ROOT=$(pwd)
if [ "${UPHOOK_SWEEP:-}" = full ]; then N=${SCALE_N:-800}; else N=${SCALE_N:-150}; fi
HALF=$((N / 2))
. tests/cli/fake_api.sh
PIDS=""; trap fake_cleanup EXIT
fake_start || { echo "0 passed, 1 failed"; exit 1; }
ctl() { curl -sS -X "$1" ${3:+--data-binary "$3"} "$CTL/$2"; }

# cm-1..cm-N at level $2 (the seed: cm-1..cm-HALF at level 1, with a key
# the new version drops)
cms() {
  i=$1
  while [ "$i" -le "$2" ]; do
    printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: bench\n  labels: {app: bench}\ndata:\n  level: "%s"\n%b' \
      "$i" "$3" "$4"
    i=$((i + 1))
  done
}
{ printf -- 'apiVersion: v1\nkind: Namespace\nmetadata: {name: bench}\n'
  cms 1 "$HALF" 1 '  old: "yes"\n'; } >"$TMP/seed.yaml"
COUNT='    local n = { created = 0, configured = 0, unchanged = 0 }
    for i, e in ipairs(r) do
      assert(e.name == "cm-" .. i, "result " .. i .. " is " .. e.name)
      n[e.action] = n[e.action] + 1
    end
    log.info(string.format("results %d: %d created, %d configured", #r,
      n.created, n.configured))'
mkrepo() {   # mkrepo DIR BODY: addon "scale" whose upgrade is BODY
  mkdir -p "$1/addons/scale"
  printf 'microk8s-addons:\n  addons:\n    - name: scale\n      description: scale\n      version: "1.0.1"\n' >"$1/addons.yaml"
  cms 1 "$N" 2 '' >"$1/addons/scale/objects.yaml"
  cat >"$1/addons/scale/upgrade.lua" <<EOF
return {
  version = "1.0.1", from = "1.0.0", permissions = { "kube:bench" },
  detect = function() return "1.0.0" end,
  upgrade = function()
$2
  end,
}
EOF
}
mkrepo "$TMP/repo" '    local r = kube.apply(addon.read("objects.yaml"))
'"$COUNT"
mkrepo "$TMP/repo1" '    local r = {}
    for _, o in ipairs(yaml.decode_all(addon.read("objects.yaml"))) do
      r[#r + 1] = kube.apply(o)[1]
    end
'"$COUNT"
export SNAP_DATA="$TMP/snap"
REPO=$TMP/repo
U() { "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$REPO" --state-dir "$S" "$@"; }

# the objects of namespace bench as a user compares them: everything but
# the server's counters (resourceVersion, generation)
dump() {
  ctl GET objects | python3 -c '
import json, sys
out = []
for o in json.load(sys.stdin)["items"]:
    md = dict(o.get("metadata") or {})
    if md.get("namespace") != "bench":
        continue
    md.pop("resourceVersion", None)
    md.pop("generation", None)
    o = dict(o, metadata=md)
    out.append(o)
out.sort(key=lambda o: (o["kind"], o["metadata"]["name"]))
print(json.dumps(out, indent=1, sort_keys=True))' >"$1"
}
fresh() {
  ctl POST reset >/dev/null
  ctl POST seed "@$TMP/seed.yaml" >/dev/null
  ctl DELETE requests >/dev/null
  dump "$TMP/base.json"
}
same() {
  dump "$TMP/now.json"
  cmp -s "$TMP/now.json" "$TMP/base.json" || {
    diff "$TMP/base.json" "$TMP/now.json" | head -20 >>"$OUT"; return 1; }
}
count() {   # count REGEX: requests whose "METHOD path?query" matches
  ctl GET requests | python3 -c '
import json, re, sys
log = json.load(sys.stdin)["log"]
print(sum(1 for r in log if re.fullmatch(sys.argv[1],
          "%s %s?%s" % (r["method"], r["path"], r["query"]))))' "$1"
}

# ---- the apply itself
fresh; S="$TMP/state-ok"
run U --yes upgrade scale
expect "$N objects in one kube.apply: results in order" 0 \
  "results $N: $((N - HALF)) created, $HALF configured" "Upgraded scale"
patches=$(count 'PATCH /api/v1/namespaces/bench/configmaps/cm-[0-9]+[?]fieldManager=uphook&force=true')
gets=$(count 'GET /api/v1/namespaces/bench/configmaps/cm-[0-9]+[?].*')
lists=$(count 'GET /api/v1/namespaces/bench/configmaps[?]limit=100(&continue=.*)?')
# the LIST in pages of 100 (lua/engine/batch.lua LIST_PAGE): the HALF
# objects there before
pages=$(( (HALF + 99) / 100 ))
echo "    PATCH $patches, GET $gets, LIST $lists (pages of 100: $pages)" >>"$OUT"
if [ "$patches" -eq "$N" ] && [ "$gets" -eq 0 ] && [ "$lists" -eq "$pages" ]; then
  ok "one apply PATCH per object, priors from one LIST in pages (no GET per object)"
else not_ok "one apply PATCH per object, priors from one LIST in pages (no GET per object)"; fi
dump "$TMP/now.json"
if python3 - "$TMP/now.json" "$N" >>"$OUT" 2>&1 <<'PY'
import json, sys
objs = {o["metadata"]["name"]: o for o in json.load(open(sys.argv[1])) if o["kind"] == "ConfigMap"}
n = int(sys.argv[2])
assert len(objs) == n, len(objs)
for i in range(1, n + 1):
    o = objs["cm-%d" % i]
    assert o["data"]["level"] == "2", o["data"]
    assert o["metadata"]["labels"]["addon.microk8s.io/name"] == "scale", o["metadata"]
PY
then ok "every object is at the new version"
else not_ok "every object is at the new version"; fi

# ---- crashes
if [ "${UPHOOK_SWEEP:-}" = full ]; then
  POINTS=""; p=25; while [ $p -lt "$N" ]; do POINTS="$POINTS $p"; p=$((p + 25)); done
  b=64; while [ $b -lt "$N" ]; do POINTS="$POINTS $((b - 1)) $b $((b + 1))"; b=$((b + 64)); done
  POINTS="1 2 $POINTS $((N - 1)) $N"
else
  POINTS="1 64 100"
fi
covered=0; failed_pts=""
for n in $POINTS; do
  fresh; S="$TMP/state-crash-$n"
  UPHOOK_CRASH_AFTER=$n U --yes upgrade scale >"$OUT" 2>&1; rc=$?
  run U recover scale; rc2=$RC
  if [ $rc -eq 99 ] && [ $rc2 -eq 0 ] && same; then
    covered=$((covered + 1))
  else
    [ -n "${SCALE_DEBUG:-}" ] && cat "$OUT"
    failed_pts="$failed_pts $n(crash $rc, recover $rc2)"
  fi
done
: >"$OUT"; echo "    crash points:$POINTS; failed:$failed_pts" >>"$OUT"
if [ -z "$failed_pts" ]; then ok "a crash after change n (n =$POINTS) is recovered exactly ($covered points)"
else not_ok "a crash after change n is recovered exactly"; fi

# kill -9 while a batch's requests are in flight (one of them held 10 s:
# the kill comes well within that on a busy machine too)
fresh; S="$TMP/state-kill"
ctl POST faults '{"action": "delay", "delay": 10, "method": "PATCH", "path": "/configmaps/cm-100$"}' >/dev/null
(exec "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$REPO" --state-dir "$S" \
  --yes upgrade scale >/dev/null 2>&1) &
UPID=$!
held() { ctl GET faults | python3 -c 'import json,sys; print(sum(f.get("hits", 0) for f in json.load(sys.stdin)["faults"]))'; }
i=0; while [ $i -lt 200 ] && [ "$(held)" -eq 0 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2; kill -9 $UPID 2>/dev/null; wait $UPID 2>/dev/null
# the held request ends (the server applies it, then logs it)
answered() { ctl GET requests | python3 -c 'import json,sys; print(sum(r["method"] == "PATCH" and r["path"].endswith("/configmaps/cm-100") for r in json.load(sys.stdin)["log"]))'; }
i=0; while [ $i -lt 300 ] && [ "$(answered)" -eq 0 ]; do sleep 0.1; i=$((i + 1)); done
: >"$OUT"; changed=no; same || changed=yes
run U recover scale
if [ $changed = yes ] && [ $RC -eq 0 ] && same; then ok "kill -9 with a batch in flight: recover restores every object exactly"
else echo "    changed by the killed run: $changed, recover exit $RC" >>"$OUT"; not_ok "kill -9 with a batch in flight: recover restores every object exactly"; fi

# ---- failures in the middle of a batch
for st in 409 500; do
  fresh; S="$TMP/state-fail-$st"
  ctl POST faults "{\"status\": $st, \"count\": -1, \"method\": \"PATCH\", \"path\": \"/configmaps/cm-90\$\"}" >/dev/null
  run U --yes upgrade scale
  rc=$RC
  if [ $rc -eq 1 ] && same \
     && [ ! -e "$S/journal/scale.journal" ]; then
    ok "a $st for cm-90 in the middle of a batch rolls back every object of the run"
  else
    echo "    exit $rc" >>"$OUT"
    not_ok "a $st for cm-90 in the middle of a batch rolls back every object of the run"
  fi
done

# ---- plan
fresh; S="$TMP/state-plan"
REPO=$TMP/repo run U plan scale; cp "$OUT" "$TMP/plan-batch"; rc1=$RC
REPO=$TMP/repo1 run U plan scale; cp "$OUT" "$TMP/plan-one"; rc2=$RC
: >"$OUT"
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s "$TMP/plan-batch" "$TMP/plan-one" \
   && grep -q "cm-$N" "$TMP/plan-batch" && same; then
  ok "the plan of one apply of $N objects equals the plan of them one by one"
else
  echo "    exit $rc1, $rc2" >>"$OUT"; diff "$TMP/plan-batch" "$TMP/plan-one" | head >>"$OUT"
  not_ok "the plan of one apply of $N objects equals the plan of them one by one"
fi
finish
