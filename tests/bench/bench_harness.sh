# Test-harness throughput: hook tests per second, each of hostpath-storage
# size (the real 1.1.0 fixture: ~10 objects; one apply; one rollout wait),
# each in a fresh confined child over a fresh mock cluster.  Goal: >= 1000/s
# on this machine, with ownership tracking on (README.md "Benchmarks").
# Also `lua5.4` running the same number of empty cases (a closure
# registered and called per case, in one process), as the floor of any
# Lua-based harness, and the ratio of the two.
set -e
: "${UPHOOK:=$(pwd)/build/uphook}"
N=${BENCH_CASES:-1000}
NPROC=$(nproc); export NPROC
T=$(mktemp -d /tmp/uphook-bench.XXXXXX); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/addon"
cp hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml "$T/cluster.yaml"
cat > "$T/addon/upgrade.lua" <<'LUA'
return { version = "1.6.0", from = ">=1.0.0 <1.6.0",
  permissions = { "kube:kube-system", "kube:privileged" }, description = "bench",
  detect = function() return "1.1.0" end,
  upgrade = function()
    local d = kube.get("Deployment", "hostpath-provisioner", "kube-system")
    d.spec.template.spec.containers[1].image = "cdkbot/hostpath-provisioner:1.6.0"
    d.metadata.resourceVersion = nil
    kube.apply(d)
    kube.rollout("Deployment", "hostpath-provisioner", "kube-system")
  end }
LUA
{ echo 'local t = require "uphook.test"'
  echo "for i = 1, $N do"
  echo '  t.case("upgrade " .. i, function()'
  echo '    local e = t.env { addon = "addon", cluster = "cluster.yaml" }'
  echo '    local r = e:upgrade {}'
  echo '    t.eq(r.code, 0, r.error)'
  echo '  end)'
  echo 'end'; } > "$T/bench_test.lua"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for i in 1 2 3; do
  s=$(date +%s%N)
  "$UPHOOK" test "$T/bench_test.lua" > "$T/out" || { tail "$T/out"; exit 1; }
  echo $(( ($(date +%s%N) - s) / 1000 ))
done > "$T/times"
us=$(median < "$T/times")
best=$(sort -n "$T/times" | head -1)
# the floor: the same cases, empty, in one lua5.4
floor=
if command -v lua5.4 >/dev/null 2>&1; then
  for i in 1 2 3; do
    s=$(date +%s%N)
    lua5.4 -e "local cases = {} for i = 1, $N do
      cases[i] = { name = 'upgrade ' .. i, fn = function() return i end } end
      for _, c in ipairs(cases) do assert(c.fn()) end"
    echo $(( ($(date +%s%N) - s) / 1000 ))
  done > "$T/floor"
  floor=$(median < "$T/floor")
fi
tail -1 "$T/out"
echo "| harness | cases | median s | best s | tests/s (median) | per test | vs lua5.4 floor |"
echo "|---|---:|---:|---:|---:|---:|---:|"
awk -v us="$us" -v b="$best" -v n="$N" -v f="$floor" 'BEGIN {
  printf "| uphook test | %d | %.2f | %.2f | %.0f | %.2f ms | %s |\n", n,
    us/1e6, b/1e6, n/(us/1e6), us/1000/n, (f == "") ? "-" : sprintf("%.0fx", us/f)
  if (f != "") printf "| lua5.4, empty cases | %d | %.3f | - | %.0f | %.4f ms | 1x |\n",
    n, f/1e6, n/(f/1e6), f/1000/n
  printf "goal >= 1000 tests/s on %s cores: %s\n", ENVIRON["NPROC"],
    (n/(us/1e6) >= 1000) ? "met" : "not met" }'
