# The hook API's versions from the command line (docs/guide.md §12,
# docs/reference.md "API versions"): a hook of API 0.1 plans with one
# warning per deprecated use on stderr, naming its line and the new form;
# `uphook lint` and `plan` refuse a hook that needs a newer uphook, naming
# both versions and the fix. The hooks are tests/compat's.
. tests/cli/lib.sh

R="$TMP/repo"
make_repo "$R" api01 api02 newer
cp -R tests/compat/api01/. "$R/addons/api01/"
cp -R tests/compat/api02/. "$R/addons/api02/"
cp tests/compat/api02/fixtures/newer.lua "$R/addons/newer/upgrade.lua"
FIX=tests/compat/api01/fixtures/cluster.yaml
P() { "$UPHOOK" --addons "$R" --offline "$FIX" --state-dir "$TMP/s" "$@"; }

run "$UPHOOK" --version
expect "uphook --version is 0.2.0" 0 '^uphook 0\.2\.0 '

run P plan api01 eu-west
expect "plan of an API 0.1 hook: a warning for the undeclared positional, naming the line" 0 \
  'warning: api01/upgrade\.lua:15: an undeclared positional argument \(eu-west; api01 declares none\) is deprecated .*declare it in the hook table: positional = \{ "name" \}'
expect "... and one for the placeholder in structure position" 0 \
  'warning: api01/upgrade\.lua:16: a manifest\.load placeholder in YAML structure position \(\$EXTRA at app\.yaml:8\) is deprecated .*use manifest\.raw\(\.\.\.\) for YAML structure'
n=$(grep -c 'is deprecated' "$OUT")
[ "$n" = 2 ] && ok "exactly two warnings" || not_ok "exactly two warnings ($n)"

run P plan api02 eu-west
expect "plan of the API 0.2 hook: no warning" 0 'data\.mode: \(absent\) -> "migrated"'
refute "... none at all" 'deprecated'
run P plan api02 eu-west us-east
expect "API 0.2: an undeclared positional is exit 2" 2 'api02 takes at most 1 argument'

run P plan newer
expect "plan of a hook for a newer uphook: exit 4, both versions, the fix" 4 \
  'the hook needs uphook >=0\.3, and this is uphook 0\.2\.0: refresh the snap'
run "$UPHOOK" lint "$R/addons/newer"
expect "lint refuses it the same way" 1 \
  'error: .*the hook needs uphook >=0\.3, and this is uphook 0\.2\.0: refresh the snap'

run "$UPHOOK" lint "$R/addons/api01"
expect "lint of the API 0.1 hook: the undeclared positional it reads, at its line" 1 \
  'warning: api01/upgrade\.lua:15: an undeclared positional argument \(the hook reads ctx\.positional and declares none\) is deprecated'
expect "... and the placeholder in structure position of the file it loads" 1 \
  'warning: api01/upgrade\.lua:16: a manifest\.load placeholder in YAML structure position \(\$EXTRA at app\.yaml:8\) is deprecated .*\{ EXTRA = manifest\.raw\(text\) \}' \
  '1 hook checked, 2 problems'
run "$UPHOOK" lint "$R/addons/api02"
expect "lint of the API 0.2 hook: no problem" 0 '1 hook checked, 0 problems'

finish
