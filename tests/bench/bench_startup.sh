# Start-up and memory: `uphook version` (goal <= 5 ms) beside the tools a
# user would otherwise start (`kubectl version --client`, a bare
# `lua5.4 -e ''`), and the peak RSS of a real upgrade (hostpath-storage
# 1.1.0 -> 1.6.0, offline; goal <= 12 MiB) beside one `kubectl get`.
: "${UPHOOK:=$(pwd)/build/uphook}"
T=$(mktemp -d /tmp/uphook-bench.XXXXXX); trap 'rm -rf "$T"' EXIT
N=${BENCH_RUNS:-200}
time_many() {   # median wall ms of N runs of "$@"
  for i in $(seq 5); do
    s=$(date +%s%N)
    j=0; while [ $j -lt $N ]; do "$@" >/dev/null 2>&1; j=$((j + 1)); done
    echo $(( ($(date +%s%N) - s) / N ))
  done | sort -n | sed -n 3p
}
u=$(time_many "$UPHOOK" version)
l=$(command -v lua5.4 >/dev/null && time_many lua5.4 -e '' || echo 0)
k=$(command -v kubectl >/dev/null && N=20 time_many kubectl version --client || echo 0)
echo "| start-up (median of 5 x $N runs) | ms | vs uphook |"
echo "|---|---:|---:|"
awk -v u="$u" -v l="$l" -v k="$k" 'BEGIN {
  printf "| uphook version | %.2f | 1.00 |\n", u/1e6
  if (l > 0) printf "| lua5.4 -e %s | %.2f | %.2f |\n", "\x27\x27", l/1e6, l/u
  if (k > 0) printf "| kubectl version --client | %.2f | %.2f |\n", k/1e6, k/u }'

# peak RSS of a real upgrade, offline
REPO="$T/repo"; mkdir -p "$REPO/addons"
ln -s "$(pwd)/hooks/hostpath-storage" "$REPO/addons/hostpath-storage"
printf 'microk8s-addons:\n  addons:\n    - name: hostpath-storage\n' > "$REPO/addons.yaml"
/usr/bin/time -f '%M' -o "$T/rss" "$UPHOOK" --addons "$REPO" \
  --offline hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml \
  --state-dir "$T/state" upgrade hostpath-storage >/dev/null 2>&1
r=$(tail -1 "$T/rss")
/usr/bin/time -f '%M' -o "$T/rss2" kubectl version --client >/dev/null 2>&1
k=$(tail -1 "$T/rss2")
echo
echo "| peak RSS | MiB |"
echo "|---|---:|"
awk -v r="$r" -v k="$k" 'BEGIN {
  printf "| uphook upgrade hostpath-storage (offline, broker) | %.1f |\n", r/1024
  printf "| kubectl version --client | %.1f |\n", k/1024 }'
