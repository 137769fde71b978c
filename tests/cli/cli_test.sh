# End-to-end tests of the command line: lookup, the fallback message,
# legacy scripts, exit codes, parameters, help and version.
. tests/cli/lib.sh

R1="$TMP/core"; R2="$TMP/community"
CHECK=deployment.apps make_repo "$R1" hello legacy nohook both
CHECK=deployment.apps make_repo "$R2" both
cp tests/lua/addons/hello/upgrade.lua "$R1/addons/hello/"
cp tests/lua/addons/hello/upgrade.lua "$R1/addons/both/"
cp tests/lua/addons/hello/upgrade.lua "$R2/addons/both/"
cat > "$R1/addons/legacy/upgrade" <<'SH'
#!/bin/sh
echo "legacy upgrade called with: $*"
exit 7
SH
chmod +x "$R1/addons/legacy/upgrade"
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' > "$TMP/bare.yaml"
# the addons are enabled: the objects their check_status names exist
cp "$TMP/bare.yaml" "$TMP/cluster.yaml"
for n in hello legacy both; do
  printf -- '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: default}\n' "$n"
done >> "$TMP/cluster.yaml"
# every run gets a fresh state dir, so a fresh offline world
N=0
U() { N=$((N + 1)); "$UPHOOK" --addons "$R1" --addons "$R2" \
  --offline "$TMP/cluster.yaml" --state-dir "$TMP/state$N" "$@"; }

run $UPHOOK version
expect "version prints the version" 0 '^uphook [0-9]+\.[0-9]+\.[0-9]+'
run $UPHOOK --help
expect "--help lists every command" 0 upgrade plan list recover test lint version
for c in upgrade plan list recover test lint version; do
  run $UPHOOK $c --help
  expect "$c --help" 0 "usage: uphook $c"
done
run $UPHOOK frobnicate
expect "unknown command exits 2" 2 "unknown command 'frobnicate'"
run $UPHOOK --bogus version
expect "unknown global option exits 2" 2 "unknown option '--bogus'"
run $UPHOOK --output yaml version
expect "bad --output value exits 2" 2 "--output must be human or json"
run $UPHOOK --timeout -3 version
expect "bad --timeout exits 2" 2 "--timeout needs a non-negative number"
run $UPHOOK
expect "no command exits 2 with usage" 2 "usage: uphook"

run U upgrade nohook
expect "no hook: exact message, exit 3" 3 '^Upgrade is not supported by nohook$'
run U upgrade missing
expect "unknown addon exits 2" 2 "addon 'missing' not found"
run U upgrade both
expect "ambiguous bare name exits 2 naming choices" 2 "core/both" "community/both"
run U upgrade community/both
expect "repo/name selects a repository" 0 "Upgraded both from 1.1.0 to 1.2.0"
run U upgrade legacy --flag x 1.2.3
expect "legacy upgrade script runs with the args, its exit code is ours" 7 \
  "legacy upgrade called with: --flag x 1.2.3"
run U plan legacy
expect "plan of a legacy script says it cannot" 4 "cannot plan legacy"
B() { N=$((N + 1)); "$UPHOOK" --addons "$R1" --offline "$TMP/bare.yaml" \
  --state-dir "$TMP/state$N" "$@"; }
run B upgrade hello
expect "an addon that is not enabled is refused with exit 4" 4 \
  "Addon hello is not enabled: 'microk8s enable core/hello'"
run B upgrade legacy 1.2.3
expect "so is one whose upgrade is a script, which does not run" 4 \
  "Addon legacy is not enabled"
refute "the refused script did not run" "legacy upgrade called"

run U upgrade hello --colour=red
expect "undeclared --name exits 2" 2 "unknown parameter --colour"
run U upgrade hello --color pink
expect "value outside choices exits 2" 2 "must be one of blue, red"
run U upgrade hello --color
expect "--name without a value exits 2" 2 "needs a value"
run U plan hello --color red
expect "plan prints the change and the summary" 0 \
  "Plan for hello 1.1.0 -> 1.2.0" "\+ ConfigMap default/hello \(created\)" \
  "Summary: 1 created"
run U upgrade hello --color red
expect "upgrade with --name value" 0 "hello created" "Upgraded hello"
run U --output json plan hello
expect "--output json plan is one JSON event per line" 0 '"event":"plan"' \
  '"action":"created"'

# the offline cluster is fresh per run; a hook already at its version
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: uphook-hello, namespace: kube-system}\ndata: {version: 1.2.0}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello, namespace: default}\n' > "$TMP/at.yaml"
run $UPHOOK --addons $R1 --offline "$TMP/at.yaml" upgrade hello
expect "already at the version: exit 0, nothing run" 0 "already at 1.2.0"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: uphook-hello, namespace: kube-system}\ndata: {version: 0.9.0}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hello, namespace: default}\n' > "$TMP/old.yaml"
run $UPHOOK --addons $R1 --offline "$TMP/old.yaml" upgrade hello
expect "a version outside from exits 4" 4 "0.9.0 cannot be upgraded"
# without --state-dir the offline world is a temporary folder ($TMPDIR),
# removed when the command ends, whatever its outcome
mkdir -p "$TMP/tmpdir"
for f in cluster old; do
  TMPDIR="$TMP/tmpdir" run $UPHOOK --addons $R1 --offline "$TMP/$f.yaml" upgrade hello
  left=$(ls -A "$TMP/tmpdir")
  [ "$RC" -ne 2 ] && [ -z "$left" ] && ok "a throwaway offline world is removed ($f, exit $RC)" \
    || { echo "    exit $RC, left: $left" >>"$OUT"; not_ok "a throwaway offline world is removed ($f)"; }
done

# an offline world persists in its state dir: upgrade, then "already"
W="$TMP/world"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" --state-dir "$W" upgrade hello
expect "offline upgrade into a kept world" 0 "Upgraded hello"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" --state-dir "$W" upgrade hello
expect "the kept world remembers the upgrade" 0 "already at 1.2.0"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" --state-dir "$W" list --output json
expect "list reads the kept world" 0 '"installed":"1.2.0"'

# list: enabled from check_status, installed from detect when no state
HR="$TMP/hr"; mkdir -p "$HR/addons"
ln -s "$(pwd)/hooks/hostpath-storage" "$HR/addons/hostpath-storage"
printf 'microk8s-addons:\n  addons:\n    - name: hostpath-storage\n      check_status: deployment.apps/hostpath-provisioner\n' > "$HR/addons.yaml"
run "$UPHOOK" --addons "$HR" --offline hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml list --output json
expect "list: enabled, detected version, upgradable" 0 '"enabled":true' \
  '"detected":"1.1.0"' '"source":"detect"' '"upgradable":true' '"target":"1.6.0"'
run "$UPHOOK" --addons "$HR" --offline hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml list
expect "list: a table for people" 0 "hostpath-storage +yes +1.1.0\* +1.6.0 +yes -> 1.6.0"

# a relative --state-dir works
(cd "$TMP" && "$UPHOOK" --addons "$R1" --offline cluster.yaml --state-dir rel plan hello) >"$OUT" 2>&1; RC=$?
expect "a relative --state-dir works" 0 "Plan for hello"

# a journal left behind blocks upgrade and plan; a corrupt one is kept
J="$TMP/stuck"; mkdir -p "$J/journal"
printf 'UPHOOKJ1garbage-that-is-not-a-journal' > "$J/journal/hello.journal"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" --state-dir "$J" upgrade hello
expect "a left journal refuses upgrade with exit 6" 6 "first run: .*uphook .* recover hello$"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" --state-dir "$J" recover hello
expect "recover of a corrupt journal exits 6 and keeps it" 6 "cannot read the journal"
[ -f "$J/journal/hello.journal" ] && ok "the corrupt journal is kept" || not_ok "the corrupt journal is kept"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" --state-dir "$TMP/none" recover hello
expect "recover without a journal says so" 0 "nothing to recover"

# uphook test: the same results, in the same order, with workers
mkdir -p "$TMP/par"
cat > "$TMP/par/par_test.lua" <<'LUA'
local t = require "uphook.test"
for i = 1, 24 do
  t.case("case " .. i, function()
    if i % 7 == 0 then t.eq(i, -i, "case " .. i .. " fails on purpose") end
  end)
end
t.skip("skipped one", "to show skips")
LUA
"$UPHOOK" test --jobs 1 "$TMP/par" > "$TMP/seq.out"; s1=$?
"$UPHOOK" test --jobs 3 "$TMP/par" --junit "$TMP/par.xml" > "$TMP/par.out"; s2=$?
RC=$s2; cp "$TMP/par.out" "$OUT"
expect "uphook test: failures exit 1 with the closing line" 1 \
  "^21 passed, 3 failed, 1 skipped$" "case 14 fails on purpose"
if [ $s1 -eq 1 ] && diff -u "$TMP/seq.out" "$TMP/par.out" >"$OUT"; then
  ok "uphook test --jobs gives the sequential output, in order"
else not_ok "uphook test --jobs gives the sequential output, in order"; fi
python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); \
  s = d.getElementsByTagName('testsuite')[0]; \
  assert s.getAttribute('failures') == '3' and s.getAttribute('tests') == '25'" \
  "$TMP/par.xml" >"$OUT" 2>&1 && ok "--junit writes valid XML with the counts" \
  || not_ok "--junit writes valid XML with the counts"
run "$UPHOOK" test --filter "case 1" "$TMP/par"
expect "--filter selects by name" 1 "^10 passed, 1 failed$"
# no path: the folder it runs in (an addon repository), not hooks/
RC=0; (cd "$TMP/par" && "$UPHOOK" test --filter "case 3" >"$OUT" 2>&1) || RC=$?
expect "uphook test without a path tests ." 0 "^1 passed, 0 failed$" \
  "^ok   par_test.lua: case 3"
run "$UPHOOK" test "$TMP/no-such-dir"
expect "uphook test of a missing path: usage error, exit 2" 2 \
  "no such file or folder: $TMP/no-such-dir"
run "$UPHOOK" lint "$TMP/no-such-dir"
expect "uphook lint of a missing path: usage error, exit 2" 2 \
  "no such file or folder: $TMP/no-such-dir"

# lint lets a hook require its own modules while its file loads
mkdir -p "$TMP/lintrepo/mod"
echo 'return { v = "2.0.0" }' > "$TMP/lintrepo/mod/consts.lua"
cat > "$TMP/lintrepo/mod/upgrade.lua" <<'LUA'
local consts = require "consts"
return { version = consts.v, from = ">=1.0.0 <2.0.0", permissions = {},
  description = "uses a module", detect = function() return "1.0.0" end,
  upgrade = function() end }
LUA
run "$UPHOOK" lint "$TMP/lintrepo/mod"
expect "lint: a hook may require its own modules at load" 0 "ok \(2.0.0"
# no path: lint too checks the folder it runs in
RC=0; (cd "$TMP/lintrepo" && "$UPHOOK" lint >"$OUT" 2>&1) || RC=$?
expect "uphook lint without a path lints ." 0 "^./mod/upgrade.lua: ok \(2.0.0" \
  "^1 hook checked, 0 problems"

# a run that tests nothing says so: a wrong folder or --filter is no pass
mkdir -p "$TMP/notests"
RC=0; (cd "$TMP/notests" && "$UPHOOK" test >"$OUT" 2>&1) || RC=$?
expect "uphook test where there is no test file says so" 0 \
  "^uphook test: no \*_test.lua file under \.$" "^0 passed, 0 failed$"
run "$UPHOOK" test --filter "no such case" "$TMP/par"
expect "uphook test --filter that matches nothing says so" 0 \
  '^uphook test: no test name contains "no such case" \(--filter\)$'

# an addon repository's test file runs confined, as its hooks: no io, no
# os, unless the user (never the repository) sets UPHOOK_TEST_UNCONFINED=1
mkdir -p "$TMP/confrepo/addons/x"
cat > "$TMP/confrepo/addons/x/x_test.lua" <<'LUA'
local t = require "uphook.test"
t.case("reads a file", function() t.ok(io.open("/etc/hostname")) end)
t.case("runs a command", function() os.execute("true") end)
LUA
RC=0; (cd "$TMP/confrepo" && "$UPHOOK" test >"$OUT" 2>&1) || RC=$?
expect "uphook test: a test file has no io or os" 1 "^0 passed, 2 failed$" \
  "x_test.lua:2: undeclared global 'io'" "x_test.lua:3: undeclared global 'os'"

# the operator's list (docs/uphook.1): a missing --offline or --kubeconfig
# file is a usage error; --output json version; "did you mean"
run "$UPHOOK" --offline "$TMP/no-such.yaml" list
expect "a missing --offline fixture: exit 2, naming it" 2 "--offline $TMP/no-such.yaml: No such file or directory"
run "$UPHOOK" --kubeconfig "$TMP/no-such.conf" list
expect "a missing --kubeconfig: exit 2, naming it" 2 "--kubeconfig $TMP/no-such.conf: No such file or directory"
run "$UPHOOK" --output json version
expect "--output json version: one result event with the version" 0 \
  '^\{"event":"result","code":0,"command":"version","version":"[0-9.]+","lua":"5\.4"\}$'
run "$UPHOOK" upgrad hello
expect "a mistyped command: did you mean" 2 "unknown command 'upgrad'; did you mean 'upgrade'\?"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" upgrade helo
expect "a mistyped addon: did you mean" 2 "addon 'helo' not found; did you mean 'hello'\?"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" upgrade hlelo
expect "two letters swapped are one edit: did you mean" 2 "addon 'hlelo' not found; did you mean 'hello'\?"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" upgrade core/helo
expect "a mistyped addon of a named repository: did you mean <repo>/<addon>" 2 \
  "addon 'helo' not found in: core; did you mean 'core/hello'\?"
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" --output json list
expect "JSON events carry a timestamp (UTC, RFC 3339)" 0 \
  '"event":"addon".*"timestamp":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"'

# list, offline: an addon whose check_status is a file on the node shows
# ENABLED ? and a legend line says why; none when no ? is shown
R4="$TMP/lockrepo"
CHECK='${SNAP_DATA}/var/lock' make_repo "$R4" lockd
cp tests/lua/addons/hello/upgrade.lua "$R4/addons/lockd/"
run "$UPHOOK" --addons "$R4" --offline "$TMP/cluster.yaml" \
  --state-dir "$TMP/lock1" list
expect "list offline: a file check_status is ?, and the legend says why" 0 \
  '^[^ ]+ +lockd +\? ' \
  '^\(\? = lockd: its check_status \$\{SNAP_DATA\}/var/lock/lockd is a file on the node, which --offline cannot test\)$'
if grep -q 'not known: the cluster could not be read' "$OUT"; then
  not_ok "list offline: no other ? legend for a file check"
else ok "list offline: no other ? legend for a file check"; fi
run "$UPHOOK" --addons "$R1" --offline "$TMP/cluster.yaml" \
  --state-dir "$TMP/lock2" list
if [ "$RC" = 0 ] && ! grep -q 'which --offline cannot test\|^(?' "$OUT"; then
  ok "list: no ? legend when no ? is shown"
else not_ok "list: no ? legend when no ? is shown"; fi

# config.exists offline: the certificates are <state-dir>/offline/certs/
R3="$TMP/certsrepo"
CHECK=deployment.apps make_repo "$R3" certs
cp tests/lua/addons/certs/upgrade.lua "$R3/addons/certs/"
cp "$TMP/bare.yaml" "$TMP/certs.yaml"
printf -- '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: certs, namespace: default}\n' >> "$TMP/certs.yaml"
run "$UPHOOK" --addons "$R3" --offline "$TMP/certs.yaml" \
  --state-dir "$TMP/certs1" upgrade certs
expect "offline without the certificate: config.exists false, the hook refuses" \
  4 "certs:front-proxy-client.crt is missing"
mkdir -p "$TMP/certs2/offline/certs"
: > "$TMP/certs2/offline/certs/front-proxy-client.crt"
run "$UPHOOK" --addons "$R3" --offline "$TMP/certs.yaml" \
  --state-dir "$TMP/certs2" upgrade certs
expect "offline: a certificate in <state-dir>/offline/certs/ exists" 0 \
  "upgrade: certs:front-proxy-client.crt true"
finish
