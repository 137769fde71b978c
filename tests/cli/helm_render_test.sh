# The Helm render child through a command (docs/security.md, "The render
# child"): `uphook upgrade` of tests/lua/addons/helmdemo, whose hook calls
# helm.render, with --helm a stand-in script. A SIGINT while it renders
# stops the run at once (exit 1, rolled back) and kills the stand-in; one
# that prints without end is stopped at the render's output bound (the
# hook's error: exit 4).
. tests/cli/lib.sh

chmod 711 "$TMP"                # the render child runs as 65534 when root
F="$TMP/fake"; mkdir -m 755 "$F"; mkdir -m 777 "$F/drop"
printf '#!/bin/sh\necho $$ > %s/drop/started\nexec sleep 600\n' "$F" > "$F/sleeper"
printf '#!/bin/sh\nexec yes\n' > "$F/printer"
chmod 755 "$F/sleeper" "$F/printer"
# U HELM: the upgrade, exec'd so that $! of `U ... &` is uphook's own PID
U() {
  exec "$UPHOOK" --addons tests/lua/addons --offline tests/lua/fixtures_helm.yaml \
    --state-dir "$TMP/state.$1" --helm "$F/$1" upgrade helmdemo --case render
}

# gone PID: the process has ended (reaped or a zombie), waited for 30 s
gone() {
  i=0
  while [ $i -lt 300 ]; do
    st=$(sed -n 's/^[0-9]* ([^)]*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
    [ -z "$st" ] || [ "$st" = Z ] && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}

(U sleeper) >"$OUT" 2>&1 & p=$!
i=0; while [ ! -s "$F/drop/started" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
if [ -s "$F/drop/started" ]; then ok "the stand-in Helm started (the render is under way)"
else not_ok "the stand-in Helm started (the render is under way)"; fi
kill -INT $p; wait $p; RC=$?
expect "a SIGINT during the render: rolled back, exit 1" 1 \
  "interrupted by a signal" "Rolled back: 0 changes undone"
pid=$(cat "$F/drop/started" 2>/dev/null)
if [ -n "$pid" ] && gone "$pid"; then ok "the Helm child was killed"
else not_ok "the Helm child was killed"; fi

(U printer) >"$OUT" 2>&1; RC=$?
expect "a Helm that prints without end is stopped at the output bound: the hook fails, exit 4" 4 \
  "Helm printed more than [0-9]+ bytes \(max_output\) and was killed"

finish
