#!/bin/sh
# Memcheck of the CLI end-to-end tests: run tests/cli/*_test.sh with
# $UPHOOK pointing at a wrapper that runs BUILD/uphook under valgrind.
#   usage: tests/valgrind/run.sh [BUILD [TEST...]]    (`make valgrind`)
#
# Decisions:
# - The hook child is forked without exec.  Valgrind cannot let go of a
#   forked process, so the child runs under memcheck too whatever
#   --trace-children says; --trace-children=no only keeps valgrind out of
#   what uphook execs (a legacy `upgrade` script, kubectl in the fakes).
#   So both the broker and every hook child are checked.
# - Valgrind 3.19 has no seccomp(2): libseccomp cannot start, and a filter
#   would kill valgrind's own system calls in the child.  `make valgrind`
#   therefore builds build/valgrind/uphook with -DUH_VALGRIND, which skips
#   only the seccomp filter (host/confine.c); fd and rlimit confinement
#   stay.  The filter itself is tested by test_confine and tests/hostile/
#   in the normal and ASan builds.
# - Each process logs to its own file (%p).  A process with any memcheck
#   error, or a definitely or indirectly lost block, fails the run (exit
#   97 from the process, and the log is shown).  Valgrind's warnings about
#   system calls it does not know (openat2: fs.c falls back) are not
#   errors.
# - Every test must pass as it does without valgrind.
BUILD=${1:-build/valgrind}
[ $# -ge 1 ] && shift
tests="$*"
[ -n "$tests" ] || tests=$(ls tests/cli/*_test.sh)
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 1; }
real=$(cd "$(dirname "$BUILD/uphook")" && pwd)/uphook
work=$(mktemp -d)
logs="$work/logs"; mkdir -p "$logs"
cat > "$work/uphook" <<WRAP
#!/bin/sh
exec valgrind --error-exitcode=97 --trace-children=no \\
  --leak-check=full --show-leak-kinds=definite,indirect \\
  --errors-for-leak-kinds=definite,indirect \\
  --log-file="$logs/vg.%p.log" "$real" "\$@"
WRAP
chmod +x "$work/uphook"
fail=0; total_p=0; total_f=0
for t in $tests; do
  echo "== valgrind $t"
  UPHOOK="$work/uphook" BUILD="$BUILD" sh "$t" >"$work/out" 2>&1
  [ -n "$VG_KEEP" ] && cp "$work/out" "$VG_KEEP.$(basename "$t").out"
  grep -v '^ok ' "$work/out" | tail -n 30
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/out" | tail -n 1)
  [ -n "$line" ] || { echo "no count from $t"; fail=1; }
  p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  f=${f:-0}; [ "$f" -gt 0 ] && fail=1
  total_p=$((total_p + ${p:-0})); total_f=$((total_f + f))
done
reports=0
for f in "$logs"/vg.*.log; do
  grep -q 'ERROR SUMMARY: [1-9]' "$f" || continue
  reports=$((reports + 1))
  echo "== $(basename "$f")"
  grep -v 'WARNING: unhandled\|You may be able\|README_MISSING\|Nevertheless\|bug_reports' "$f" | head -n 80
done
n=$(ls "$logs" | wc -l)
echo "valgrind: $n processes checked, $reports with errors or leaks"
rm -rf "$work"
[ $reports -eq 0 ] || fail=1
echo "$total_p passed, $((total_f + reports)) failed"
[ $fail -eq 0 ]
