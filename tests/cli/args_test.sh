# The operator's command line (docs/contract.md §1): after the addon every
# argument is the hook's except uphook's long options, `--`, MicroK8s's
# colon form, per-addon --help, -V/--version, help, combined short flags,
# extra operands and misplaced options refused, JSON on usage errors.
. tests/cli/lib.sh

R="$TMP/core"
make_repo "$R" hello opts flag legacy nohook
cp tests/lua/addons/hello/upgrade.lua "$R/addons/hello/"
cp tests/lua/addons/opts/upgrade.lua "$R/addons/opts/"
cp tests/lua/addons/flag/upgrade.lua "$R/addons/flag/"
printf '#!/bin/sh\necho "legacy upgrade called with: $*"\n' > "$R/addons/legacy/upgrade"
chmod +x "$R/addons/legacy/upgrade"
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' > "$TMP/cluster.yaml"
N=0
# U ARGS...: a fresh kept offline world in $W each time
U() { N=$((N + 1)); W="$TMP/w$N"; "$UPHOOK" --addons "$R" \
  --offline "$TMP/cluster.yaml" --state-dir "$W" "$@"; }
# untouched: the last U run changed nothing in its world
untouched() {
  if grep -q 'name: opts\|name: hello\|uphook-' "$W/offline/cluster.yaml" 2>/dev/null \
     || [ -n "$(ls -A "$W/journal" 2>/dev/null)" ]; then
    not_ok "$1"; else ok "$1"; fi
}
# world_has TEXT: the last U run's world holds TEXT
world_has() { grep -q -- "$2" "$W/offline/cluster.yaml" && ok "$1" \
  || { cp "$W/offline/cluster.yaml" "$OUT"; not_ok "$1"; }; }

# ---- arguments after the addon belong to the hook
for a in -n -y -x -V; do
  run U upgrade opts $a
  expect "upgrade opts $a: exit 2 naming it" 2 "unknown parameter $a for opts"
  untouched "upgrade opts $a: nothing happened"
done
run U upgrade hello foo
expect "upgrade hello foo: exit 2" 2 'hello takes no positional arguments, got "foo"'
untouched "upgrade hello foo: nothing happened"
run U upgrade hello -vq
expect "short flags after the addon are the hook's" 2 "unknown parameter -v for hello"
run U upgrade opts -r Retain -s40Gi first second
expect "short options and positionals reach the hook" 0 "Upgraded opts"
world_has "the hook saw -r, -s and the positionals" "positional: first|second"
world_has "-s40Gi is the size" "size: 40Gi"
run U upgrade hello --color red --timeout 30 --lock-wait 1
expect "uphook's long options after the addon stay uphook's" 0 "Upgraded hello"
run U upgrade hello -- --timeout 5
expect "after --, uphook options are the hook's: exit 2" 2 \
  "unknown parameter --timeout for hello"
run U upgrade opts -- -r Retain -- -s
expect "-- passes the rest as it is; the hook's own -- is its" 0 "Upgraded opts"
world_has "the hook's -- made -s positional" "positional: -s"
run U upgrade opts --size 3G
expect "a value that fails the pattern: exit 2" 2 "does not match the pattern"
run U upgrade opts --name bad
expect "a value the hook's check refuses: exit 2" 2 "--name is reserved"
run U upgrade hello --reset-params=yes
expect "a flag given a value: exit 2" 2 "--reset-params takes no value"

# ---- boolean flags (type = "flag"): bare as enable takes them, =true/=false
run U upgrade flag --skip-kubebench-installation
expect "a bare flag (enable's --skip-kubebench-installation): exit 0" 0 "Upgraded flag"
world_has "the bare flag is true" 'skip: "true"'
world_has "... and saved like any parameter" 'skip-kubebench-installation: "true"'
run U upgrade flag --verify=false -v
expect "--flag=false then -v: exit 0" 0 "Upgraded flag"
world_has "the last of --verify=false and -v wins" 'verify: "true"'
run U upgrade flag --skip-kubebench-installation=yes
expect "a flag given yes: exit 2 naming the flag and its forms" 2 \
  '--skip-kubebench-installation is a flag: give --skip-kubebench-installation alone, or --skip-kubebench-installation=true or --skip-kubebench-installation=false; got "--skip-kubebench-installation=yes"'
untouched "a flag given yes: nothing happened"
run U upgrade flag --help
expect "--help shows a flag without VALUE" 0 \
  "^      --skip-kubebench-installation +do not install kube-bench \(a flag: --skip-kubebench-installation=false unsets it; default false\)$" \
  "^  -v, --verify +check the result \(a flag: --verify=false unsets it; default true\)$" \
  "^      --level VALUE"

# ---- MicroK8s's colon form (canonical/microk8s scripts/wrappers/common/utils.py)
run U upgrade opts:a:b
expect "NAME:ARG1:ARG2 gives the hook ARG1 ARG2" 0 "Upgraded opts"
world_has "the colon arguments are the positionals" "positional: a|b"
run U upgrade core/opts:--size=2Gi
expect "REPO/NAME:ARGS" 0 "Upgraded opts"
world_has "REPO/NAME:--size=2Gi set the size" "size: 2Gi"
run U upgrade opts:a b
expect "colon arguments and arguments after: exit 2" 2 "either after the colon"
run U upgrade hello opts
expect "two addon names: one at a time, exit 2" 2 "one addon at a time"
run U upgrade legacy:x:y
expect "the colon form reaches a legacy script" 0 "legacy upgrade called with: x y"
run U upgrade missing:x
expect "an unknown addon in the colon form names it" 2 "addon 'missing' not found"

# ---- per-addon help
run U upgrade opts --help
expect "upgrade <addon> --help lists the hook's params" 0 \
  "usage: uphook upgrade opts \[options\] \[FIRST\] \[REST\.\.\.\]" \
  "-r, --reclaim-policy VALUE +what happens to a released volume \(default Delete; one of Delete, Retain\)" \
  "-s, --size VALUE .*pattern %d\+Gi" "--name VALUE +a name the check vets \(default x\)" \
  "FIRST +the first argument" "Permissions: kube:default"
untouched "the addon's help changed nothing"
run "$UPHOOK" --addons "$R" help upgrade opts
expect "help upgrade <addon> is the same" 0 "reclaim-policy VALUE"
run "$UPHOOK" --addons "$R" plan hello --help
expect "plan <addon> --help" 0 "usage: uphook plan hello \[options\]" "--color VALUE +\(default blue; one of blue, red\)"
run "$UPHOOK" --addons "$R" upgrade nohook --help
expect "--help of an addon without a hook: exit 3" 3 "^Upgrade is not supported by nohook$"
run "$UPHOOK" --addons "$R" upgrade legacy --help
expect "--help of a legacy script does not run it" 0 "is a script"
refute "the legacy script did not run" "legacy upgrade called"

# ---- at the current version (docs/state.md "At the current version"): a
# param is applied, no param is a no-op
W2="$TMP/current"
run "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W2" upgrade opts
run "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W2" upgrade opts -r Retain
expect "a param at the current version is applied" 0 \
  "opts is at 2.0.0: applying the new parameters \(reclaim-policy Delete -> Retain\)"
run "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W2" upgrade opts -r Retain
expect "the saved value again: nothing to do" 0 "already at 2.0.0 with these parameters: nothing to do"
run "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W2" upgrade opts
expect "no param at the current version: nothing to do" 0 "opts is already at 2.0.0: nothing to do"

# ---- --dry-run is plan
run U upgrade hello --dry-run
expect "upgrade --dry-run prints the plan" 0 "Plan for hello 1.1.0 -> 1.2.0"
untouched "upgrade --dry-run changed nothing"
run U upgrade hello --dry-run --plan-fetch
expect "upgrade --dry-run takes plan's options" 0 "Plan for hello"
run U upgrade hello --plan-fetch
expect "--plan-fetch without --dry-run does not apply" 2 "--plan-fetch does not apply to upgrade"

# ---- conventions
run "$UPHOOK" --version
expect "--version" 0 "^uphook [0-9]+\.[0-9]+\.[0-9]+"
run "$UPHOOK" -V
expect "-V" 0 "^uphook [0-9]+\.[0-9]+\.[0-9]+"
run "$UPHOOK" list -V
expect "-V after a command: exit 2" 2 "goes before the command"
run "$UPHOOK" help
expect "help prints the usage" 0 "usage: uphook" "help \[command \[addon\]\]"
run "$UPHOOK" help list
expect "help COMMAND prints its usage" 0 "usage: uphook list"
run "$UPHOOK" help frob
expect "help of an unknown command: exit 2" 2 "unknown command 'frob'"
run "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" -vq --quiet --verbose -vv list
expect "combined short flags and --quiet/--verbose" 0 "opts"
run "$UPHOOK" -vx list
expect "an unknown letter in combined flags: exit 2" 2 "unknown option '-x'"
run "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" list extra
expect "list extra: exit 2" 2 "list takes no operands, got 'extra'"
run "$UPHOOK" version --jobs 2
expect "version --jobs 2: exit 2" 2 "--jobs does not apply to version"
run "$UPHOOK" --addons "$R" recover hello extra
expect "recover with two operands: exit 2" 2 "recover takes <addon>, got 'extra' too"
run "$UPHOOK" lint --kubeconfig /dev/null
expect "an option of another command: exit 2" 2 "--kubeconfig does not apply to lint"
run "$UPHOOK" --addons "$R" upgrade
expect "upgrade without an addon: exit 2" 2 "upgrade needs <addon>"
# --addons given this repository's hooks folder (no addons.yaml): each
# <addon>/upgrade.lua is an addon
# (a generous --timeout: nine hooks load under valgrind too, tests/valgrind)
run "$UPHOOK" --addons hooks --offline hooks/dns/fixtures/cluster-1.8.0.yaml list --timeout 120
expect "--addons hooks: list shows the real hooks" 0 "^hooks +dns +\? +1\.8\.0\* +1\.14\.3 +yes" \
  "^hooks +hostpath-storage " "^hooks +metallb "
run "$UPHOOK" --addons hooks --offline hooks/dns/fixtures/cluster-1.8.0.yaml plan dns
expect "--addons hooks: plan dns offline" 0 "Plan for dns 1\.8\.0 -> 1\.14\.3"
cp "$OUT" "$TMP/dns-plan.txt"
"$UPHOOK" --addons hooks --offline hooks/dns/fixtures/cluster-1.8.0.yaml --output json \
  plan dns >"$TMP/dns-plan.json" 2>&1
if python3 - "$TMP/dns-plan.txt" "$TMP/dns-plan.json" >"$OUT" 2>&1 <<'PY'
import json, sys
text = [l.rstrip("\n") for l in open(sys.argv[1]) if l.startswith("  impact: ")]
plan = [e for e in map(json.loads, open(sys.argv[2])) if e["event"] == "plan"][0]
got = ["  impact: " + "; ".join(i["impact"]) for i in plan["impact"]]
print(text, got)
assert text and got == text
assert any("coredns restarts its pods" in p for i in plan["impact"] for p in i["impact"])
assert all(isinstance(i["step"], int) and i["text"] for i in plan["impact"])
PY
then ok "the JSON plan's impact entries are the text plan's impact: lines, step by step"
else not_ok "the JSON plan's impact entries are the text plan's impact: lines, step by step"; fi
mkdir -p "$TMP/none/sub"
run "$UPHOOK" --addons "$TMP/none" list
expect "a folder with neither addons.yaml nor hook folders: exit 2" 2 \
  "none: no addons.yaml, and no <addon>/upgrade.lua folders"

# ---- with --output json, every ending is JSON (docs/output.md)
"$UPHOOK" --output json frob >"$OUT" 2>"$TMP/err"; RC=$?
expect "a usage error with --output json: exit 2" 2 '"event":"result"'
json_lines "a usage error with --output json is JSON events ending in one result" "$OUT" 2
"$UPHOOK" --addons "$R" --output json upgrade nohook >"$OUT" 2>"$TMP/err"; RC=$?
expect "Upgrade is not supported, with --output json: exit 3" 3 \
  '"error":"Upgrade is not supported by nohook"'
json_lines "no hook, with --output json: JSON events, one result" "$OUT" 3
"$UPHOOK" --addons "$R" --output json upgrade legacy:x >"$OUT" 2>"$TMP/err"; RC=$?
expect "a legacy script with --output json: refused, exit 4" 4 '"message":"the upgrade of legacy is a script' '"code":4,.*"error":"the upgrade of legacy'
json_lines "... as JSON events, one result" "$OUT" 4
refute "... and the script did not run" "legacy upgrade called"
U --output json upgrade opts -n >"$OUT" 2>"$TMP/err"; RC=$?
expect "a hook's usage error in JSON: exit 2" 2 '"event":"result"'
json_lines "a hook's usage error in JSON: one result, last" "$OUT" 2

finish
