# The hostile-hook suite: every case in tests/hostile/cases is a hook (or
# the body of an upgrade function) written to escape or exhaust the
# sandbox or the broker.  Its first line says what must happen:
#   -- expect: <exit code> <extended regexp the output must match>
# and these lines, when present, how it runs:
#   -- command: plan          (default: upgrade)
#   -- options: --state-quota 1   (more uphook options)
#   -- timeout: 8             (its --timeout)
# Every case runs with --memory-limit 64 against tests/hostile/cluster.yaml
# and a --timeout: its own, else 3 s when it expects a timeout (the limit
# it tests is time), else 30 s: the limit it tests is another (memory,
# stack, output, calls, a linear check), and that margin keeps a busy
# machine from turning it into a timeout.  Each must also: end with no
# signal (exit < 128), write nothing outside its state dir, keep the whole
# process tree under 1 GiB, and end well before 17 s past its --timeout.
# In the plain build (not under ASan, whose shadow memory and slowness are
# not the broker's) the broker itself must stay under BROKER_RSS_MIB of
# peak RSS (its own, from UPHOOK_TEST_RUSAGE; the hook child is bounded by
# --memory-limit), and the run must end within --timeout plus GRACE_MS in
# wall-clock time, with WALL_MARGIN_MS more for a busy machine; a case
# that expects a timeout, whose hook spins alone while the broker waits,
# is also held to --timeout plus GRACE_MS of CPU time (user + system of
# the whole process tree), which a busy machine does not inflate.  A run
# the kill missed goes on to the 60 s backstop, far past either.
# Arguments, when given, name the cases to run (file names without .lua).
. tests/cli/lib.sh

BROKER_RSS_MIB=128
TIMEOUT=3
LONG_TIMEOUT=30
GRACE_MS=2000
WALL_MARGIN_MS=3000
case "${BUILD:-build}" in *asan*|*valgrind*) CEILINGS=no ;; *) CEILINGS=${CEILINGS:-yes} ;; esac

CASES=tests/hostile/cases
REPO="$TMP/repo"
# what a case that escaped would make, as /tmp/uphook-pwned in its text:
# each run its own, so that runs beside each other do not meet
PWNED="$TMP/pwned"
mkdir -p "$REPO/addons"
echo "microk8s-addons:" > "$REPO/addons.yaml"
echo "  addons:" >> "$REPO/addons.yaml"
# addon names are object names too: hyphens, not underscores
name_of() { basename "$1" .lua | tr _ -; }
for f in "$CASES"/*.lua; do
  n=$(name_of "$f")
  mkdir -p "$REPO/addons/$n"
  if grep -q '^return' "$f"; then
    sed "s|/tmp/uphook-pwned|$PWNED|" "$f" >"$REPO/addons/$n/upgrade.lua"
  else
    { echo 'return { version = "2.0.0", from = ">=1.0.0", permissions = {},'
      echo '  detect = function() return "1.0.0" end,'
      echo '  upgrade = function(ctx)'
      sed "s|/tmp/uphook-pwned|$PWNED|" "$f"
      echo '  end }'; } > "$REPO/addons/$n/upgrade.lua"
  fi
  printf '    - name: %s\n      version: 1.0.0\n' "$n" >> "$REPO/addons.yaml"
done

for f in "$CASES"/*.lua; do
  if [ $# -gt 0 ]; then
    case " $* " in *" $(basename "$f" .lua) "*) ;; *) continue ;; esac
  fi
  n=$(name_of "$f")
  spec=$(sed -n '1s/^-- expect: //p' "$f")
  want=${spec%% *}; pattern=${spec#* }
  cmd=$(sed -n 's/^-- command: //p' "$f" | head -1)
  opts=$(sed -n 's/^-- options: //p' "$f" | head -1)
  tmo=$(sed -n 's/^-- timeout: //p' "$f" | head -1)
  case "$pattern" in *timeout*) tmo=${tmo:-$TIMEOUT} ;; *) tmo=${tmo:-$LONG_TIMEOUT} ;; esac
  st="$TMP/state-$n"
  mkdir -p "$st/offline/args" "$st/addons/$n" "$TMP/outside-$n"
  ln -s /etc "$st/offline/args/evil"
  ln -s "$TMP/outside-$n" "$st/addons/$n/evil"
  touch "$TMP/marker"; sleep 0.01
  start=$(date +%s%N)
  rm -f "$TMP/broker"
  # shellcheck disable=SC2086
  UPHOOK_TEST_RUSAGE="$TMP/broker" /usr/bin/time -f 'maxrss=%M cpu=%U+%S' -o "$TMP/rss" \
    timeout -s KILL 60 "$UPHOOK" --addons "$REPO" --offline tests/hostile/cluster.yaml \
    --state-dir "$st" --timeout "$tmo" --memory-limit 64 $opts \
    "${cmd:-upgrade}" "$n" >"$OUT" 2>&1
  RC=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  rss=$(sed -n 's/.*maxrss=\([0-9]*\).*/\1/p' "$TMP/rss" | tail -1)
  cpu_ms=$(sed -n 's/.*cpu=\([0-9.]*\)+\([0-9.]*\).*/\1 \2/p' "$TMP/rss" | tail -1 |
    awk '{ printf "%d", ($1 + $2) * 1000 }')
  broker=$(sed -n 's/^maxrss_kib //p' "$TMP/broker" 2>/dev/null)
  written=$(find "$TMP" -newer "$TMP/marker" -not -path "$st" \
    -not -path "$st/*" -not -path "$OUT" -not -path "$TMP/rss" \
    -not -path "$TMP/broker" -not -path "$TMP" | head -3)
  if [ "$RC" -ge 128 ]; then echo "    killed by a signal ($RC)" >>"$OUT"; RC=signal; fi
  if [ -n "$written" ]; then echo "    wrote outside the state dir: $written" >>"$OUT"; RC=wrote; fi
  if [ -e "$PWNED" ] || [ -n "$(ls -A "$TMP/outside-$n")" ]; then
    echo "    escaped: a file appeared outside" >>"$OUT"; RC=escaped; fi
  if [ "$ms" -gt $(((tmo + 17) * 1000)) ]; then echo "    took ${ms} ms" >>"$OUT"; RC=slow; fi
  if [ "${rss:-0}" -gt 1048576 ]; then echo "    peak RSS ${rss} KiB" >>"$OUT"; RC=fat; fi
  if [ "$CEILINGS" = yes ]; then
    if [ -z "$broker" ]; then echo "    no broker rusage" >>"$OUT"; RC=norusage
    elif [ "$broker" -gt $((BROKER_RSS_MIB * 1024)) ]; then
      echo "    broker peak RSS ${broker} KiB > ${BROKER_RSS_MIB} MiB" >>"$OUT"; RC=fat
    fi
    case "$pattern" in *timeout*) cpu_max=$((tmo * 1000 + GRACE_MS)) ;; *) cpu_max="" ;; esac
    if [ -n "$cpu_max" ] && [ "${cpu_ms:-999999}" -gt "$cpu_max" ]; then
      echo "    CPU time ${cpu_ms:-?} ms > --timeout ${tmo} s + ${GRACE_MS} ms" >>"$OUT"; RC=slow
    fi
    if [ "$ms" -gt $((tmo * 1000 + GRACE_MS + WALL_MARGIN_MS)) ]; then
      echo "    took ${ms} ms > --timeout ${tmo} s + ${GRACE_MS} ms + ${WALL_MARGIN_MS} ms" >>"$OUT"; RC=slow
    fi
  fi
  expect "$n (${ms} ms, CPU ${cpu_ms:-?} ms, broker ${broker:-?} KiB, tree ${rss:-?} KiB)" "$want" "$pattern"
done
finish
