# Shared helpers for the CLI end-to-end suites: run the real binary,
# check its exit code and output, count, and end with "N passed, N failed".
: "${UPHOOK:=$(pwd)/build/uphook}"
PASSED=0; FAILED=0
TMP=$(mktemp -d /tmp/uphook-cli.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
OUT="$TMP/out"

# run CMD...: run and keep the exit code in RC, output in $OUT
run() { "$@" >"$OUT" 2>&1; RC=$?; }

ok() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
not_ok() { FAILED=$((FAILED + 1)); echo "FAIL $1"; sed 's/^/    | /' "$OUT" | head -n 20; }

# expect NAME RC [PATTERN...]: the last run exited RC and printed each
# PATTERN (grep -E)
expect() {
  name=$1; want=$2; shift 2
  if [ "$RC" != "$want" ]; then
    echo "    exit $RC, wanted $want" >>"$OUT"; not_ok "$name"; return
  fi
  for p in "$@"; do
    if ! grep -qE -- "$p" "$OUT"; then
      echo "    no match for: $p" >>"$OUT"; not_ok "$name"; return
    fi
  done
  ok "$name"
}

# refute NAME PATTERN: the last output does not match
refute() {
  if grep -qE -- "$2" "$OUT"; then not_ok "$1"; else ok "$1"; fi
}

# make_repo DIR NAME...: an addon repository with those addons; with
# CHECK=deployment.apps, each one's check_status is deployment.apps/NAME
# (without, uphook cannot tell whether it is enabled and does not refuse)
make_repo() {
  dir=$1; shift
  mkdir -p "$dir/addons"
  { echo "microk8s-addons:"; echo "  addons:"
    for n in "$@"; do
      mkdir -p "$dir/addons/$n"
      printf '    - name: %s\n      description: %s\n      version: 1.0.0\n' "$n" "$n"
      [ -n "${CHECK:-}" ] && printf '      check_status: %s/%s\n' "$CHECK" "$n"
    done; } > "$dir/addons.yaml"
}

# state_cm ADDON VERSION PERMS [REPO]: the YAML of uphook's state
# ConfigMap of ADDON at VERSION, PERMS (a YAML flow list) recorded as
# granted to the repository in folder REPO (docs/state.md "Which
# repository"; without REPO, to none: nothing is granted to a live or
# --offline run), as a document to append to a fixture
state_cm() {
  _repo=""
  [ -n "${4:-}" ] && _repo=", repository: \"$(basename "$4") $(cd "$4" && pwd -P)\""
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: uphook-%s, namespace: kube-system}\ndata: {version: %s, permissions: "%s"%s}\n' "$1" "$2" "$3" "$_repo"
}

finish() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

# json_lines NAME FILE CODE: every line of FILE is a JSON object with an
# "event", and exactly one is a result, the last, with "code": CODE
json_lines() {
  if python3 - "$2" "$3" >>"$OUT" 2>&1 <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
evs = [json.loads(l) for l in lines]
assert evs and all(isinstance(e, dict) and "event" in e for e in evs), evs
res = [i for i, e in enumerate(evs) if e["event"] == "result"]
assert res == [len(evs) - 1], "result events at %s of %d" % (res, len(evs))
assert evs[-1]["code"] == int(sys.argv[2]), evs[-1]
PY
  then ok "$1"; else not_ok "$1"; fi
}
