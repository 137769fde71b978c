# The commands a user runs to look before trusting: `uphook list` over
# three addon repositories (the repository's hooks spread over them) and
# `uphook plan hostpath-storage` (1.1.0 -> 1.6.0), both against a mock
# cluster (--offline). Median wall time of 5 x N runs each.
: "${UPHOOK:=$(pwd)/build/uphook}"
T=$(mktemp -d /tmp/uphook-bench.XXXXXX); trap 'rm -rf "$T"' EXIT
N=${BENCH_RUNS:-20}
FIX=hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml
repo() {   # DIR ADDON...: a repository of the hooks named
  d=$1; shift
  mkdir -p "$d/addons"
  { echo "microk8s-addons:"; echo "  addons:"
    for a in "$@"; do
      ln -s "$(pwd)/hooks/$a" "$d/addons/$a"
      printf '    - name: %s\n      version: 1.0.0\n' "$a"
    done; } >"$d/addons.yaml"
}
repo "$T/r1" dns hostpath-storage metallb
repo "$T/r2" metrics-server rbac
repo "$T/r3" registry cert-manager
time_many() {   # median wall ns of N runs of "$@", of 5
  for i in $(seq 5); do
    s=$(date +%s%N)
    j=0; while [ $j -lt "$N" ]; do "$@" >/dev/null 2>&1; j=$((j + 1)); done
    echo $(( ($(date +%s%N) - s) / N ))
  done | sort -n | sed -n 3p
}
list_once() {
  "$UPHOOK" --addons "$T/r1" --addons "$T/r2" --addons "$T/r3" \
    --offline "$FIX" --state-dir "$T/list" list
}
plan_once() {
  rm -rf "$T/plan"
  "$UPHOOK" --addons "$T/r1" --offline "$FIX" --state-dir "$T/plan" \
    plan hostpath-storage
}
list_once >"$T/out" 2>&1 || { echo "(list failed)"; cat "$T/out"; }
plan_once >"$T/out" 2>&1 || { echo "(plan failed)"; cat "$T/out"; }
l=$(time_many list_once)
p=$(time_many plan_once)
echo "| command (mock, median of 5 x $N runs) | ms |"
echo "|---|---:|"
awk -v l="$l" -v p="$p" 'BEGIN {
  printf "| list (3 repositories, 7 addons) | %.1f |\n", l/1e6
  printf "| plan hostpath-storage (1.1.0 -> 1.6.0) | %.1f |\n", p/1e6 }'
