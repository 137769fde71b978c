# The hostile-hook suite: every case in tests/hostile/cases is a hook (or
# the body of an upgrade function) written to escape or exhaust the
# sandbox.  Its first line says what must happen:
#   -- expect: <exit code> <extended regexp the output must match>
# Every case must also: end with no signal (exit < 128), finish in
# bounded time and memory, and write nothing outside its state dir.
. tests/cli/lib.sh

CASES=tests/hostile/cases
REPO="$TMP/repo"
mkdir -p "$REPO/addons"
echo "microk8s-addons:" > "$REPO/addons.yaml"
echo "  addons:" >> "$REPO/addons.yaml"
# addon names are object names too: hyphens, not underscores
name_of() { basename "$1" .lua | tr _ -; }
for f in "$CASES"/*.lua; do
  n=$(name_of "$f")
  mkdir -p "$REPO/addons/$n"
  if grep -q '^return' "$f"; then
    cp "$f" "$REPO/addons/$n/upgrade.lua"
  else
    { echo 'return { version = "2.0.0", from = ">=1.0.0", permissions = {},'
      echo '  detect = function() return "1.0.0" end,'
      echo '  upgrade = function(ctx)'
      cat "$f"
      echo '  end }'; } > "$REPO/addons/$n/upgrade.lua"
  fi
  printf '    - name: %s\n      version: 1.0.0\n' "$n" >> "$REPO/addons.yaml"
done
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' > "$TMP/cluster.yaml"
rm -f /tmp/uphook-pwned

for f in "$CASES"/*.lua; do
  n=$(name_of "$f")
  spec=$(sed -n '1s/^-- expect: //p' "$f")
  want=${spec%% *}; pattern=${spec#* }
  st="$TMP/state-$n"
  mkdir -p "$st/offline/args" "$st/addons/$n" "$TMP/outside-$n"
  ln -s /etc "$st/offline/args/evil"
  ln -s "$TMP/outside-$n" "$st/addons/$n/evil"
  touch "$TMP/marker"; sleep 0.01
  start=$(date +%s%N)
  /usr/bin/time -f 'maxrss=%M' -o "$TMP/rss" \
    "$UPHOOK" --addons "$REPO" --offline "$TMP/cluster.yaml" \
    --state-dir "$st" --timeout 3 --memory-limit 64 upgrade "$n" \
    >"$OUT" 2>&1
  RC=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  rss=$(sed -n 's/.*maxrss=\([0-9]*\).*/\1/p' "$TMP/rss" | tail -1)
  written=$(find "$TMP" -newer "$TMP/marker" -not -path "$st" \
    -not -path "$st/*" -not -path "$OUT" -not -path "$TMP/rss" \
    -not -path "$TMP" | head -3)
  if [ "$RC" -ge 128 ]; then echo "    killed by a signal ($RC)" >>"$OUT"; RC=signal; fi
  if [ -n "$written" ]; then echo "    wrote outside the state dir: $written" >>"$OUT"; RC=wrote; fi
  if [ -e /tmp/uphook-pwned ] || [ -n "$(ls -A "$TMP/outside-$n")" ]; then
    echo "    escaped: a file appeared outside" >>"$OUT"; RC=escaped; fi
  if [ "$ms" -gt 20000 ]; then echo "    took ${ms} ms" >>"$OUT"; RC=slow; fi
  if [ "${rss:-0}" -gt 1048576 ]; then echo "    peak RSS ${rss} KiB" >>"$OUT"; RC=fat; fi
  expect "$n (${ms} ms)" "$want" "$pattern"
done
finish
