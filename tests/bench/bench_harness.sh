# Test-harness throughput: hook tests per second, each of hostpath-storage
# size (the real 1.1.0 fixture: ~10 objects; one apply; one rollout wait),
# each in a fresh confined child over a fresh mock cluster.  Goal: >= 1000/s
# on this machine.  Also `lua5.4` running the same number of empty loops,
# as the floor of any Lua-based harness.
set -e
: "${UPHOOK:=$(pwd)/build/uphook}"
N=${BENCH_CASES:-1000}
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
tail -1 "$T/out"
echo "| harness | cases | median s | tests/s | per test |"
echo "|---|---:|---:|---:|---:|"
awk -v us="$us" -v n="$N" 'BEGIN { printf "| uphook test | %d | %.2f | %.0f | %.2f ms |\n", n, us/1e6, n/(us/1e6), us/1000/n }'
