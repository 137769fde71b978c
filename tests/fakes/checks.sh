# What the shell suites of tests/fakes share (sourced, never run, after
# tests/cli/fake_api.sh's fake_tmp): one "ok - ..." or "not ok - ..." line
# per check, counted in pass and fail; OUT holds the output of the last
# command checked, shown under a failure.
pass=0
fail=0
OUT=$TMP/out
ok() { pass=$((pass + 1)); echo "ok - $1"; }
notok() {
  fail=$((fail + 1)); echo "not ok - $1"
  [ -f "$OUT" ] && cut -c1-200 "$OUT" | sed 's/^/#   /' | head -n 15
}
# check DESC REGEX cmd...: cmd succeeds and its output matches REGEX
check() {
  desc=$1 re=$2; shift 2
  if "$@" >"$OUT" 2>&1 && grep -Eq -- "$re" "$OUT"; then ok "$desc"; else notok "$desc"; fi
}
# check_fail DESC REGEX cmd...: cmd FAILS and its output matches REGEX
check_fail() {
  desc=$1 re=$2; shift 2
  if "$@" >"$OUT" 2>&1; then notok "$desc (expected failure, got success)"
  elif grep -Eq -- "$re" "$OUT"; then ok "$desc"; else notok "$desc"; fi
}
