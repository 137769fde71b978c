#!/bin/sh
# Credentials stay out of the hook child (docs/security.md "Credentials"):
# the broker reads the cluster-agent callback token and the kubeconfig into
# the wiped arena before the hook child is forked, and forks it before the
# first request hands anything to libcurl or OpenSSL. So the child, read
# from outside through /proc/<pid>/mem while a real upgrade runs, holds no
# copy of the callback token, of the kubeconfig's client key (its PEM text
# or the private scalar OpenSSL would hold once a connection uses it) or of
# a kubeconfig bearer token (libcurl keeps a heap copy of it from the first
# request, and the enabled check of check_status is a request); the
# broker, read the same way, does hold the callback token: the scan can
# tell.
. tests/cli/lib.sh
. tests/nodes/lib.sh

start_apiserver
start_cluster 1
printf '%s\n' "$TOKEN" > "$TMP/token.secret"
printf '%s\n' "$KTOKEN" > "$TMP/bearer.secret"
grep -v -- '-----' "$SRV/client.key" | tr -d '\n' | head -c 40 > "$TMP/keypem.secret"
openssl ec -in "$SRV/client.key" -noout -text 2>/dev/null | sed -n '/priv:/,/pub:/p' \
  | grep -v 'priv:\|pub:' | tr -d ' :\n' | python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read()))' \
  > "$TMP/keyscalar.bin"
cat > "$TMP/hooks/waiter.lua" <<'EOF2'
-- waits in check (the child blocks on its pipe) until default/go is Ready
return {
  version = "1.1.0", from = ">=1.0.0 <1.1.0",
  permissions = { "kube:default", "args:kubelet" },
  detect = function() return "1.0.0" end,
  check = function()
    kube.wait("ConfigMap", "go", "default", { condition = "Ready", timeout = 60 })
  end,
  upgrade = function() end,
}
EOF2
repo waiter
# a real addon has a check_status, and checking it is an API request
sed -i 's|version: 1.0.0|version: 1.0.0\n      check_status: namespace/default|' "$REPO/addons.yaml"

# scan KUBECONFIG SECRET...: start an upgrade, find its hook child once it
# waits in check, scan the child (each SECRET absent) and the broker
scan() {
  kc=$1; shift
  (UKC=$kc UX upgrade waiter >"$TMP/up.out" 2>&1) &
  up=$!
  child=""; i=0
  while [ $i -lt 100 ] && [ -z "$child" ]; do
    child=$(cat /proc/$up/task/$up/children 2>/dev/null | awk '{print $1}')
    [ -n "$child" ] && objs "get('Lease', 'uphook-waiter', 'kube-system') is None" | grep -q False \
      || { child=""; sleep 0.1; }
    i=$((i + 1))
  done
  if [ -z "$child" ]; then
    RC=1; cat "$TMP/up.out" >"$OUT"; expect "$(basename "$kc"): the hook child runs" 0
  else
    run python3 tests/nodes/memscan.py "$child" "$@"
    for s in "$@"; do
      expect "$(basename "$kc"): the hook child, read from outside, holds no $(basename "$s")" 0 "absent $s"
    done
    run python3 tests/nodes/memscan.py "$up" "$@"
    expect "$(basename "$kc"): the broker holds the callback token: the scan finds it" 0 \
      "found $TMP/token.secret at 0x[0-9a-f]+ in \\[anon\\]"
  fi
  kill -9 $up 2>/dev/null; wait $up 2>/dev/null
  ctl POST reset >/dev/null
}
scan "$KC" "$TMP/token.secret" "$TMP/keypem.secret" "$TMP/keyscalar.bin"
scan "$SRV/kubeconfig-token" "$TMP/token.secret" "$TMP/bearer.secret"
finish
