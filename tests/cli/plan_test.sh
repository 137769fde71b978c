# The plan shows everything, and nothing a hook controls reaches the
# terminal raw (docs/security.md "What the user sees", and its rows
# "Quadratic plan diff", "Raw hook text on the terminal", "Secret values
# printed"): description and permissions first, every
# warning in the body, no progress line duplicating the plan in a file,
# -q quiet, escaped hook text, Secret values redacted in text and JSON,
# CRD schemas folded (--full unfolds them), and a 2 MiB config.write
# diffed in bounded time and memory.
. tests/cli/lib.sh

R="$TMP/repo"; make_repo "$R" show
A="$R/addons/show"
cat > "$A/upgrade.lua" <<'LUA'
local ESC = string.char(27)
return {
  version = "1.1.0", from = "1.0.0",
  description = "show 1.1.0: a hook whose plan shows everything",
  permissions = { "kube:default", "kube:cluster" },
  params = { big = { default = "0" }, fail = { default = "0" } },
  detect = function() return "1.0.0" end,
  check = function(ctx) log.warn("check warning " .. ESC .. "[31mred") end,
  upgrade = function(ctx)
    if ctx.params.fail == "1" then
      error("boom " .. ESC .. "[2J\nuphook: forged line", 0)
    end
    log.step("config")
    log.info("keeping the Corefile's other lines")
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "coredns", namespace = "default" },
      data = { Corefile = ".:53 {\n    errors\n    forward . 8.8.8.8\n    cache 30\n}\n" } }
    log.warn("upgrade warning")
    kube.apply { apiVersion = "v1", kind = "Secret",
      metadata = { name = "creds", namespace = "default" },
      data = { password = "bmV3LXBhc3N3b3JkLTQy" },           -- new-password-42
      stringData = { token = "plain-token-77" } }
    kube.apply { apiVersion = "apiextensions.k8s.io/v1", kind = "CustomResourceDefinition",
      metadata = { name = "widgets.example.com" },
      spec = { group = "example.com", scope = "Namespaced",
        names = { kind = "Widget", plural = "widgets", singular = "widget", listKind = "WidgetList" },
        versions = { { name = "v1", served = true, storage = true,
          schema = { openAPIV3Schema = { type = "object", description = "new long words",
            properties = { spec = { type = "object", description = "the new spec words" } } } } } } } }
    log.step("files " .. ESC .. "[2J")
    config.write("state:notes", "line1\n" .. ESC .. "]0;owned" .. string.char(7) .. "\n")
    if ctx.params.big == "1" then
      config.write("state:big", (("b"):rep(1075) .. "\n"):rep(1950))
    end
  end,
}
LUA
cat > "$TMP/cluster.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: default}
data:
  Corefile: |
    .:53 {
        errors
        forward . /etc/resolv.conf
        cache 30
    }
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: default}
data: {password: b2xkLXBhc3N3b3JkLTE3}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          description: old long words
          properties:
            spec: {type: object, description: the old spec words}
YAML
U() { "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" "$@"; }
SECRETS='bmV3LXBhc3N3b3JkLTQy|new-password-42|b2xkLXBhc3N3b3JkLTE3|old-password-17|plain-token-77|cGxhaW4tdG9rZW4tNzc'

# a plan redirected to a file
U plan show >"$TMP/plan.txt" 2>"$TMP/plan.err"; RC=$?
cp "$TMP/plan.txt" "$OUT"
expect "the plan opens with the description and the permissions" 0 \
  '^Plan for show 1\.0\.0 -> 1\.1\.0$' '^  show 1\.1\.0: a hook whose plan shows everything$' \
  '^  permissions: kube:default \(new\), kube:cluster \(new\)$'
expect "every log.warn of check and upgrade is in the body, under its step" 0 \
  '^  warning: check: check warning \\x1b\[31mred$' \
  '^\[1\] config$' '^  keeping the Corefile.s other lines$' '^  warning: upgrade warning$'
[ "$(grep -c '^\[1\] config$' "$TMP/plan.txt")" -eq 1 ] && ! grep -q 'T[0-9:]*Z ' "$TMP/plan.txt" \
  && ok "no progress line duplicates the plan's headings in the file" \
  || not_ok "no progress line duplicates the plan's headings in the file"
grep -q 'check warning' "$TMP/plan.err" && ok "warnings still reach stderr as they come" \
  || { cp "$TMP/plan.err" "$OUT"; not_ok "warnings still reach stderr as they come"; }
if grep -q "$(printf '\033')" "$TMP/plan.txt" "$TMP/plan.err" || grep -q "$(printf '\007')" "$TMP/plan.txt"; then
  not_ok "no escape sequence of the hook reaches the terminal"
else ok "no escape sequence of the hook reaches the terminal"; fi
expect "hook text is escaped: step names, log lines, file diffs" 0 \
  '^\[2\] files \\x1b\[2J$' '^      \+\\x1b\]0;owned\\x07$'
expect "a Corefile change is a line diff of the changed line" 0 \
  '^      data\.Corefile:$' '^        -    forward \. /etc/resolv\.conf$' '^        \+    forward \. 8\.8\.8\.8$'
expect "Secret values: redacted, with their sizes and keys" 0 \
  '^      data\.password: \(redacted, 15 bytes\) -> \(redacted, 15 bytes\)$' \
  '^      data\.token: \(absent\) -> \(redacted, 14 bytes\)$'
refute "no Secret value in the plan" "$SECRETS"
expect "a CRD's schema churn is one line" 0 \
  '^      schema of v1 changed: 2 changes, descriptions only \(no field or type changed; --full shows them\)$'
refute "the folded descriptions are not printed" 'long words'
U plan show --full >"$OUT" 2>&1; RC=$?
expect "--full shows the schema changes" 0 'openAPIV3Schema\.description: "old long words" -> "new long words"'

# --addons . from inside the repository, and .. from one of its folders
(cd "$R" && "$UPHOOK" --addons . --offline "$TMP/cluster.yaml" plan show) >"$OUT" 2>&1; RC=$?
(cd "$R/addons" && "$UPHOOK" --addons .. --offline "$TMP/cluster.yaml" plan repo/show) >>"$OUT" 2>&1 || RC=$?
expect "--addons . and --addons .. name the repository by its folder" 0 '^Plan for show' \
  '^  show 1\.1\.0: a hook'

# JSON: raw strings, JSON values, redactions
U --output json plan show >"$OUT" 2>&1; RC=$?
python3 - "$OUT" >"$TMP/json.check" 2>&1 <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
plan = [e for e in ev if e["event"] == "plan"][0]
assert plan["description"].startswith("show 1.1.0"), plan
assert [p["name"] for p in plan["permissions"]] == ["kube:default", "kube:cluster"]
kube = {e["name"]: e for e in plan["entries"] if e["type"] == "kube"}
d = {c["path"]: c for c in kube["creds"]["diff"]}
pw = d["data.password"]
for side in ("old", "new"):
    v = pw[side]
    assert v["redacted"] is True and v["bytes"] == 15 and len(v["hmac"]) == 12, v
    int(v["hmac"], 16)
assert pw["old"]["hmac"] != pw["new"]["hmac"]
assert "old" not in d["data.token"] and d["data.token"]["new"]["bytes"] == 14, d["data.token"]
core = {c["path"]: c for c in kube["coredns"]["diff"]}["data.Corefile"]
assert core["old"].startswith(".:53 {\n"), core           # raw strings
logs = [e["text"] for e in plan["entries"] if e["type"] == "log"]
assert "check warning \x1b[31mred" in logs, logs          # raw in JSON
print("ok")
PY
grep -qx ok "$TMP/json.check" && ! grep -qE "$SECRETS" "$OUT" \
  && ok "JSON: raw strings, diff values as JSON values, Secrets as {redacted, bytes, hmac}" \
  || { cat "$TMP/json.check" >>"$OUT"; not_ok "JSON: raw strings, diff values as JSON values, Secrets as {redacted, bytes, hmac}"; }

# the upgrade's own output
S="$TMP/st"
U --state-dir "$S" upgrade show >"$OUT" 2>&1; RC=$?
expect "upgrade output redacts too" 0 'data\.password: \(redacted, 15 bytes\)'
refute "no Secret value in the upgrade output" "$SECRETS"
refute "no escape byte in the upgrade output" "$(printf '\033')"
S2="$TMP/st2"
U --state-dir "$S2" -q upgrade show >"$TMP/q.out" 2>"$TMP/q.err"; RC=$?
cp "$TMP/q.out" "$OUT"; cat "$TMP/q.err" >>"$OUT"
if [ $RC -eq 0 ] && [ "$(wc -l < "$TMP/q.out")" -eq 1 ] && grep -q 'Upgraded show' "$TMP/q.out" \
   && grep -q 'upgrade warning' "$TMP/q.err" && ! grep -q 'config\|Upgraded' "$TMP/q.err"; then
  ok "-q: only the outcome line on stdout, only the warnings on stderr"
else not_ok "-q: only the outcome line on stdout, only the warnings on stderr (rc=$RC)"; fi

# an error message, and lint's output, escape the hook's text too
U --state-dir "$TMP/st4" upgrade show --fail 1 >"$OUT" 2>&1; RC=$?
expect "a hook's error message is escaped: no forged line" 4 \
  'upgrade failed: boom \\x1b\[2J\\nuphook: forged line'
refute "no raw escape byte in the error output" "$(printf '\033')|^uphook: forged"
sed 's/description = "show/description = "show\\027[31m/' "$A/upgrade.lua" > "$TMP/lint-upgrade.lua"
mkdir -p "$TMP/lintrepo/show" && cp "$TMP/lint-upgrade.lua" "$TMP/lintrepo/show/upgrade.lua"
"$UPHOOK" lint "$TMP/lintrepo" >"$OUT" 2>&1; RC=$?
expect "lint shows the description escaped" 0 '^    show\\x1b\[31m'
refute "no raw escape byte in lint's output" "$(printf '\033')"

# one 2 MiB config.write under plan: bounded time and memory
S3="$TMP/st3"; mkdir -p "$S3/addons/show"
# 1950 lines of 1 KiB on each side: the shape that cost the old line diff
# about 240 times the file's size
awk 'BEGIN { s = sprintf("%1075s", ""); gsub(/ /, "a", s); for (i = 0; i < 1950; i++) print s }' \
  > "$S3/addons/show/big"
t0=$(date +%s%N)
/usr/bin/time -f 'maxrss=%M' -o "$TMP/rss" "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" \
  --state-dir "$S3" plan show --big 1 >"$OUT" 2>&1; RC=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rss=$(sed -n 's/.*maxrss=\([0-9]*\).*/\1/p' "$TMP/rss" | tail -1)
expect "a 2 MiB config.write under plan: 'files differ' in one line" 0 \
  '^      files differ: 2098200 -> 2098200 bytes, from line 1 \(too large to show\)$'
case "${BUILD:-build}" in
  *asan*|*valgrind*) ok "# the 2 MiB diff's ceilings are asserted in the plain build only" ;;
  *) echo "    peak RSS ${rss} KiB, ${ms} ms" >"$OUT"
     if [ "${rss:-999999}" -lt 32768 ] && [ "$ms" -lt 10000 ]; then
       ok "the 2 MiB diff: peak RSS ${rss} KiB (< 32 MiB), ${ms} ms (< 10 s)"
     else not_ok "the 2 MiB diff: peak RSS under 32 MiB and under 10 s"; fi ;;
esac

# ---- build metadata (docs/guide.md "Versions that never changed"): every
# enable said 1.0.0; detect tells them apart as 1.0.0+<fingerprint>
F=$TMP/fprint
make_repo "$F/repo" fprint
cp tests/lua/addons/fprint/upgrade.lua "$F/repo/addons/fprint/"
mkdir -p "$F/w/offline/args"
printf 'policy: 1\n' > "$F/w/offline/args/fprint-policy.yaml"
FP() { "$UPHOOK" --addons "$F/repo" --offline "$TMP/cluster.yaml" --state-dir "$F/w" "$@"; }
run "$UPHOOK" lint "$F/repo/addons/fprint"
expect "lint: a from that includes a version with build metadata is no problem" 0 \
  "upgrade\\.lua: ok \\(1\\.0\\.0\\+e9783f8603e3, from 1\\.0\\.0\\)" "0 problems"
run FP list
expect "list: another build of the hook's version is upgradable" 0 \
  "fprint +\\? +1\\.0\\.0\\+7bfce061d02a\\* +1\\.0\\.0\\+e9783f8603e3 +yes"
run FP plan fprint
expect "plan: both builds in its header" 0 \
  "^Plan for fprint 1\\.0\\.0\\+7bfce061d02a -> 1\\.0\\.0\\+e9783f8603e3$" "^ +\\+policy: 3$"
run FP upgrade fprint --yes
expect "upgrade from one build to another" 0 \
  "Upgraded fprint from 1\\.0\\.0\\+7bfce061d02a to 1\\.0\\.0\\+e9783f8603e3"
grep -q '^  version: 1\.0\.0+e9783f8603e3$' "$F/w/offline/cluster.yaml" \
  && ok "the state records the build" || not_ok "the state records the build"
run FP upgrade fprint --yes
expect "at the hook's build: nothing to do" 0 "fprint is already at 1\\.0\\.0\\+e9783f8603e3: nothing to do"
finish
