# recover undoes only its own work (docs/security.md "Recover undid others'
# objects" and "Another addon's journal"): an object is undone only while it
# is still the one uphook made (same uid, the fields uphook applied holding
# uphook's values; status and the server's fields do not count), else it is
# left alone and reported (exit 6); a journal names its addon and is refused
# for another, carries a format version (an unknown one exits 6 and is
# named), and version 1, as uphook wrote it before, is still recovered.
. tests/cli/lib.sh

V1=$(pwd)/tests/hostile/journal-v1
REPO=$TMP/repo
make_repo "$REPO" recov other
cp "$V1/recov/upgrade.lua" "$REPO/addons/recov/upgrade.lua"
cp "$V1/recov/upgrade.lua" "$REPO/addons/other/upgrade.lua"
FIX=$V1/before.yaml
U() { d=$1; shift; "$UPHOOK" --addons "$REPO" --offline "$FIX" --state-dir "$d" "$@"; }
norm() { python3 tests/cli/normalize.py "$1" lease; }

# edit WORLD PY: run the python lines on the offline world's objects
# (a list `objs`; find(kind, name) returns one), as another client would
edit() {
  python3 - "$1/offline/cluster.yaml" "$2" <<'PY'
import sys, yaml
path, code = sys.argv[1], sys.argv[2]
objs = [o for o in yaml.safe_load_all(open(path)) if o]
def find(kind, name):
    return next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name)
exec(code)
yaml.safe_dump_all(objs, open(path, "w"))
PY
}

crashed() {   # crashed DIR: a world where the run died after change 1
  rm -rf "$1"
  UPHOOK_CRASH_AFTER=1 U "$1" upgrade recov >/dev/null 2>&1
  [ -f "$1/journal/recov.journal" ] || echo "    no journal in $1" >>"$OUT"
}
# the world before any upgrade, as the mock seeds it from the fixture
run U "$TMP/base" plan recov
norm "$TMP/base/offline/cluster.yaml" >"$TMP/before.json"

# 1. untouched since (a controller wrote status and the server bumped the
#    resourceVersion): undone
W=$TMP/w1; crashed "$W"
edit "$W" 'cm = find("ConfigMap", "made"); cm["status"] = {"seen": True}; cm["metadata"]["resourceVersion"] = "999"'
run U "$W" recover recov
expect "status and server fields changed since: undone" 0 "deleted ConfigMap default/made"
norm "$W/offline/cluster.yaml" >"$TMP/after.json"
cmp -s "$TMP/before.json" "$TMP/after.json" && ok "... and the world is as before" \
  || not_ok "... and the world is as before"

# 2. someone changed a field uphook applied: left alone, exit 6
W=$TMP/w2; crashed "$W"
edit "$W" 'find("ConfigMap", "made")["data"]["step"] = "edited"'
run U "$W" recover recov
expect "a field uphook applied changed since: left alone, exit 6" 6 \
  "ConfigMap default/made: left alone: it changed since uphook applied it \(data.step\)" \
  "the journal is kept"
grep -q 'edited' "$W/offline/cluster.yaml" && [ -f "$W/journal/recov.journal" ] \
  && ok "... the object keeps the edit, the journal is kept" \
  || not_ok "... the object keeps the edit, the journal is kept"

# 3. someone deleted it and created another of the same name: left alone
W=$TMP/w3; crashed "$W"
edit "$W" 'find("ConfigMap", "made")["metadata"]["uid"] = "another-uid"'
run U "$W" recover recov
expect "deleted and created again since: left alone, exit 6" 6 \
  "ConfigMap default/made: left alone: it was deleted and created again since"
grep -q 'another-uid' "$W/offline/cluster.yaml" && ok "... the other object stays" \
  || not_ok "... the other object stays"

# 4. a journal names its addon: refused for another
W=$TMP/w4; crashed "$W"
mv "$W/journal/recov.journal" "$W/journal/other.journal"
run U "$W" recover other
expect "another addon's journal: refused, exit 6" 6 \
  "the journal belongs to addon recov, not other; it is kept"
grep -q 'name: made' "$W/offline/cluster.yaml" && ok "... nothing undone" \
  || not_ok "... nothing undone"

# 5. an unknown format version: exit 6, named
W=$TMP/w5; crashed "$W"
python3 - "$W/journal/recov.journal" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[8:12] = (7).to_bytes(4, "big")
open(p, "wb").write(bytes(b))
PY
run U "$W" recover recov
expect "an unknown journal version: exit 6, named" 6 \
  "unsupported journal version 7 \(this uphook reads versions 1 to 2\)"

# 6. today's journals are version 2, with relative roots
W=$TMP/w6; crashed "$W"
[ "$(od -An -tu1 -j8 -N4 "$W/journal/recov.journal" | tr -s ' ')" = " 0 0 0 2" ] \
  && ok "a new journal is version 2" || not_ok "a new journal is version 2"

# 7. a version-1 journal, as the uphook before wrote it (tests/hostile/
#    journal-v1/README.md): recovered, its absolute roots not used
W=$TMP/w7; mkdir -p "$W/journal" "$W/offline"
cp "$V1/recov.journal" "$W/journal/recov.journal"
cp "$V1/world.yaml" "$W/offline/cluster.yaml"
run U "$W" recover recov
expect "a version-1 journal is recovered" 0 "deleted ConfigMap default/made" \
  "Recovered recov: 1 change undone"
# as the crash left it, less what it had made
cp "$V1/world.yaml" "$TMP/v1-world.yaml"
python3 - "$TMP/v1-world.yaml" <<'PY'
import sys, yaml
p = sys.argv[1]
objs = [o for o in yaml.safe_load_all(open(p)) if o and o["metadata"]["name"] != "made"]
yaml.safe_dump_all(objs, open(p, "w"))
PY
norm "$TMP/v1-world.yaml" >"$TMP/v1-before.json"
norm "$W/offline/cluster.yaml" >"$TMP/after.json"
cmp -s "$TMP/v1-before.json" "$TMP/after.json" \
  && ok "... the world is as before the crashed run" \
  || not_ok "... the world is as before the crashed run"

finish
