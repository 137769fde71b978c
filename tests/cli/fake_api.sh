# Shared preamble of the shell tests and benchmarks that run uphook (and
# kubectl) against the fake API server (tests/fakes/apiserver.py, which
# writes the kubeconfig): sourced, never run. Run from the repository root.
#
#   . tests/cli/fake_api.sh
#   fake_tmp live_test                   # TMP, removed at exit (with PIDS)
#   fake_start --token T || exit 1       # SRV, PORT, KC, CTL
#
# fake_tmp NAME: TMP, a fresh folder "${TMPDIR:-/tmp}/NAME.XXXXXX"; at exit
# every process in PIDS is killed and TMP removed; INT, TERM and HUP exit 1
# (so the cleanup runs).
fake_tmp() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  PIDS=""
  trap fake_cleanup EXIT
  trap 'exit 1' INT TERM HUP
}
fake_cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null; done
  rm -rf "$TMP"
}

# fake_start [apiserver.py options...]: the fake API server serving from
# SRV ($TMP/srv unless SRV is set), its pid added to PIDS (FAKE_PID); waits
# up to 15 s for its "ready <port>" line, then sets PORT, KC (the
# kubeconfig it wrote: client certificate, its CA) and CTL (its /_fake/
# control API). Returns 1, with the server's stderr on stderr, when it did
# not start.
fake_start() {
  SRV=${SRV:-$TMP/srv}
  mkdir -p "$SRV"
  : >"$SRV/stdout"
  python3 tests/fakes/apiserver.py --dir "$SRV" --quiet "$@" \
    >"$SRV/stdout" 2>"$SRV/stderr" &
  FAKE_PID=$!
  PIDS="$PIDS $FAKE_PID"
  i=0
  while [ $i -lt 150 ] && ! grep -q '^ready ' "$SRV/stdout"; do
    sleep 0.1; i=$((i + 1))
  done
  PORT=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$SRV/stdout")
  KC=$SRV/kubeconfig
  CTL=http://127.0.0.1:$PORT/_fake
  if [ -z "$PORT" ]; then
    echo "the fake API server did not start:" >&2
    cat "$SRV/stderr" >&2
    return 1
  fi
}

# fake_objs EXPR: print a Python expression over the server's objects,
# in which get(kind, name, ns=None) is the object or None (json is imported)
fake_objs() {
  curl -sS "$CTL/objects" | python3 -c "
import json, sys
items = json.load(sys.stdin)['items']
def get(kind, name, ns=None):
    for o in items:
        m = o['metadata']
        if o['kind'] == kind and m['name'] == name and m.get('namespace') == ns:
            return o
print($1)"
}

# fake_cm NAME NAMESPACE: the data of that ConfigMap on the server, as one
# line of JSON (keys sorted), or None when there is none
fake_cm() {
  fake_objs "json.dumps(get('ConfigMap', '$1', '$2').get('data'), sort_keys=True) if get('ConfigMap', '$1', '$2') else None"
}
