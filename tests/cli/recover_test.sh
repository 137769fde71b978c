# Recovery the operator can follow (docs/state.md "Recovery"; one result
# event, docs/output.md): the exit-6 message gives a command the user can
# run as it is (uphook is not on PATH through `microk8s upgrade`), `recover
# --dry-run` says in words what recover would undo and changes nothing, an
# object changed since uphook made it is said to be left alone, `recover`
# ends with the version the addon is left at and the next command; with
# --output json each of these ends with one result event.
. tests/cli/lib.sh

ROOT=$(pwd)
REPO="$TMP/repo"
mkdir -p "$REPO/addons"
printf 'microk8s-addons:\n  addons:\n    - name: dns\n      version: 1.0.0\n' > "$REPO/addons.yaml"
ln -s "$ROOT/hooks/dns" "$REPO/addons/dns"
FIX=$ROOT/hooks/dns/fixtures/cluster-1.8.0.yaml
W="$TMP/w"
U() { "$UPHOOK" --addons "$REPO" --offline "$FIX" --state-dir "$W" "$@"; }
snapshot() { cat "$W/offline/cluster.yaml"; ls -l "$W/journal"; cat "$W/offline/args/"*; }

# a crash after the third journaled change leaves a journal
UPHOOK_CRASH_AFTER=3 U upgrade dns >"$OUT" 2>&1; RC=$?
expect "a crash after change 3 leaves the journal" 99
run U upgrade dns
expect "the next upgrade refuses with exit 6 and names a command" 6 \
  "left a journal .*: first run: .* recover dns$"
# the command as printed, run from elsewhere, with PATH not finding uphook
cmd=$(sed -n 's/.*first run: //p' "$OUT" | head -1)
first=${cmd%% *}
case "$first" in /*/uphook) [ -x "$first" ] && ok "the command names uphook by its absolute path (not on PATH)" ;;
  *) echo "command: $cmd" >"$OUT"; not_ok "the command names uphook by its absolute path (not on PATH)" ;; esac
mkdir -p "$TMP/bin" "$TMP/snap/x1/bin"
ln -s "$first" "$TMP/bin/uphook"; ln -s "$first" "$TMP/snap/x1/bin/uphook"
PATH="$TMP/bin:$PATH" U upgrade dns >"$OUT" 2>&1; RC=$?
expect "with uphook on PATH the command is 'uphook ...'" 6 "first run: uphook --addons "
SNAP="$TMP/snap/x1" U upgrade dns >"$OUT" 2>&1; RC=$?
expect "as the snap's binary without a current link: \$SNAP/bin/uphook" 6 \
  "first run: $TMP/snap/x1/bin/uphook --addons "
ln -s x1 "$TMP/snap/current"
SNAP="$TMP/snap/x1" SUDO_USER=op U upgrade dns >"$OUT" 2>&1; RC=$?
expect "as the snap's binary, through sudo: 'sudo \$SNAP's current/bin/uphook'" 6 \
  "first run: sudo $TMP/snap/current/bin/uphook --addons "
snapshot > "$TMP/before"
( cd / && PATH=/usr/bin:/bin eval "$cmd --dry-run" ) >"$OUT" 2>&1; RC=$?
expect "the printed command runs as it is (here with --dry-run)" 0 \
  "Recovering dns would undo the interrupted upgrade 1\.8\.0 -> "
expect "--dry-run lists the undo in words, in order" 0 \
  "^  1\. put ClusterRoleBinding coredns back as it was before the upgrade$" \
  "^  3\. put ServiceAccount kube-system/coredns back as it was" \
  "Nothing was changed \(--dry-run\)\. To recover, run: .* recover dns$"
snapshot > "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" && ok "recover --dry-run changed nothing (cluster, journal, files)" \
  || { diff "$TMP/before" "$TMP/after" | head >"$OUT"; not_ok "recover --dry-run changed nothing (cluster, journal, files)"; }

U --output json recover dns --dry-run >"$OUT" 2>"$TMP/err"; RC=$?
json_lines "recover --dry-run --output json: JSON events, one result" "$OUT" 0
expect "the JSON plan of recover has its steps" 0 '"event":"recover_plan"' \
  '"action":"restore".*"what":"ServiceAccount kube-system/coredns"'

run U doctor
expect "doctor counts the interrupted upgrade as a problem and names recover (exit 1)" 1 \
  "dns .*1\.8\.0\* .*interrupted: uphook recover dns" "1 problem to fix"
# someone changes an object uphook applied: --dry-run says it is left alone
python3 - "$W/offline/cluster.yaml" <<'PY'
import sys, yaml
p = sys.argv[1]
docs = list(yaml.safe_load_all(open(p)))
for d in docs:
    if d and d["kind"] == "ServiceAccount" and d["metadata"]["name"] == "coredns":
        d["metadata"]["labels"]["addon.microk8s.io/name"] = "someone-else"
yaml.safe_dump_all(docs, open(p, "w"))
PY
run U recover dns --dry-run
expect "an object changed since uphook applied it is said to be left alone" 0 \
  "leave ServiceAccount kube-system/coredns alone: it changed since uphook applied it" \
  "1 change would be left alone: recover would keep the journal and exit 6"
run U recover dns
expect "recover then leaves it, keeps the journal, and says what to run again" 6 \
  "cannot undo ServiceAccount kube-system/coredns" \
  "recovery incomplete; the journal is kept at .*; when what is named above is fixed, run again: .* recover dns$"
expect "... naming the concrete fix for the object left alone" 6 \
  'fix: look at it \(`microk8s kubectl get ServiceAccount coredns -n kube-system -o yaml`\); to keep the cluster as it is now, `uphook recover dns --accept-current`'
# --accept-current, in a copy of this world: asks; --yes keeps the cluster
# as it is, archives the journal, says "accepted" in the history
cp -a "$W" "$W.acc"
A() { "$UPHOOK" --addons "$REPO" --offline "$FIX" --state-dir "$W.acc" "$@"; }
cp "$W.acc/offline/cluster.yaml" "$TMP/acc-before.yaml"
run A recover dns --accept-current </dev/null
expect "recover --accept-current without --yes and no terminal: refused, nothing changed" 4 \
  "not accepted: keeping dns as it is needs your yes \(no terminal to ask on: --yes allows it\)"
[ -e "$W.acc/journal/dns.journal" ] && ok "... the journal is kept" || not_ok "... the journal is kept"
run A recover dns --accept-current --yes
expect "recover --accept-current --yes: the journal archived, nothing undone" 0 \
  "kept as it is now: ServiceAccount kube-system/coredns" \
  "Accepted: dns is kept as it is now \([0-9]+ changes? of the interrupted upgrade to 1\.14\.3 not undone\); the journal is archived at .*dns\.journal\.accepted-"
[ ! -e "$W.acc/journal/dns.journal" ] && ls "$W.acc/journal/" | grep -q "dns.journal.accepted-" \
  && ok "... the journal is archived beside itself" || not_ok "... the journal is archived beside itself"
python3 tests/cli/normalize.py "$TMP/acc-before.yaml" lease > "$TMP/b.json"
python3 tests/cli/normalize.py "$W.acc/offline/cluster.yaml" lease > "$TMP/a.json"
python3 - "$TMP/b.json" "$TMP/a.json" > "$OUT" <<'PY'
import json, sys
# what changed: only uphook's state ConfigMap (its history) and the Lease
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda o: (o.get("kind"), o.get("metadata", {}).get("namespace"), o.get("metadata", {}).get("name"))
da = {key(o): o for o in (a if isinstance(a, list) else a.get("items", []))}
db = {key(o): o for o in (b if isinstance(b, list) else b.get("items", []))}
diff = sorted(str(k) for k in set(da) | set(db) if da.get(k) != db.get(k) and k[2] != "uphook-dns")
print("changed:", diff)
PY
check() { name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
check "... nothing in the cluster was undone (only uphook's state ConfigMap changed)" grep -qx "changed: \[\]" "$OUT"
run A history dns
expect "... uphook history says accepted" 0 "1\.8\.0 -> 1\.14\.3  accepted \(exit 0\)"
run A recover dns
expect "... and recover has nothing left to do" 0 "nothing to recover: dns has no journal"
# put the label back (as uphook applied it): recover finishes
python3 - "$W/offline/cluster.yaml" <<'PY'
import sys, yaml
p = sys.argv[1]
docs = list(yaml.safe_load_all(open(p)))
for d in docs:
    if d and d["kind"] == "ServiceAccount" and d["metadata"]["name"] == "coredns":
        d["metadata"]["labels"]["addon.microk8s.io/name"] = "dns"
yaml.safe_dump_all(docs, open(p, "w"))
PY
run U recover dns
expect "recover ends with the version left at and the next command" 0 \
  "Recovered dns: [0-9]+ changes? undone; dns is at 1\.8\.0, as before the interrupted upgrade to 1\.14\.3\." \
  "Next: .*--state-dir $W upgrade dns "
[ -e "$W/journal/dns.journal" ] && not_ok "the journal is gone" || ok "the journal is gone"
run U recover dns
expect "recover without a journal says so" 0 "nothing to recover: dns has no journal"
U --output json recover dns >"$OUT" 2>&1; RC=$?
json_lines "recover without a journal, JSON: one result" "$OUT" 0

# two records of one object (hostpath-storage recreates its StorageClass:
# delete, then create): --dry-run judges the older record as undo finds
# the object, after the newer one's undo (it said "left alone" and exit 6)
R2="$TMP/repo2"; W2="$TMP/w2"
mkdir -p "$R2/addons"
printf 'microk8s-addons:\n  addons:\n    - name: hostpath-storage\n      version: 1.0.0\n' > "$R2/addons.yaml"
ln -s "$ROOT/hooks/hostpath-storage" "$R2/addons/hostpath-storage"
H() { "$UPHOOK" --addons "$R2" --offline "$ROOT/hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml" \
  --state-dir "$W2" "$@"; }
UPHOOK_CRASH_AFTER=2 H upgrade hostpath-storage >"$OUT" 2>&1; RC=$?
expect "hostpath-storage: a crash after its StorageClass is deleted and created again" 99
run H recover hostpath-storage --dry-run
expect "--dry-run: delete the new StorageClass, then create the old one again" 0 \
  "^  1\. delete StorageClass microk8s-hostpath: uphook created it$" \
  "^  2\. create StorageClass microk8s-hostpath again, as it was before the upgrade$"
refute "... nothing said to be left alone" "alone|exit 6"
run H recover hostpath-storage
expect "... as recover then does (exit 0)" 0 "deleted StorageClass microk8s-hostpath" \
  "recreated StorageClass microk8s-hostpath" "Recovered hostpath-storage: 2 changes undone"

# a run with nothing to do ends with its result too (docs/output.md)
run U upgrade dns
expect "the upgrade after recover" 0 "Upgraded dns from 1\.8\.0"
U --output json upgrade dns >"$OUT" 2>&1; RC=$?
json_lines "an upgrade with nothing to do, JSON: one result" "$OUT" 0
expect "its result says noop" 0 '"noop":true'
U --output json plan dns >"$OUT" 2>&1; RC=$?
json_lines "a plan with nothing to do, JSON: one result after the plan" "$OUT" 0

finish
