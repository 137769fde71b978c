# Big files into a hook (docs/bench.md, "Big reads"): addon.read hands
# the hook the file's exact bytes whatever its size, around each size
# where the RPC or the allocators change their way (64 KiB, from where a
# frame's string is written from the Lua string itself, either way;
# 4 MiB, from where a block gets a mapping of its own; 12 MB), and a read
# the hook's --memory-limit cannot hold is refused as before, with the
# same message, while one it can hold is not (the file is counted once).
. tests/cli/lib.sh

make_repo "$TMP/repo" big
A="$TMP/repo/addons/big"
# name:size pairs; bytes of every value, from a fixed seed
SIZES="empty:0 one:1 ref_below:65535 ref_at:65536 big_below:4194303 big_at:4194304 big_above:4194305 crds:12000000"
python3 - "$A" $SIZES <<'PY'
import random, sys
rnd = random.Random(35)
for pair in sys.argv[2:]:
    name, size = pair.split(":")
    with open("%s/%s.bin" % (sys.argv[1], name), "wb") as f:
        f.write(rnd.randbytes(int(size)))
PY
names=$(for p in $SIZES; do printf '"%s", ' "${p%%:*}"; done)
cat >"$A/upgrade.lua" <<EOF
return {
  version = "1.0.1", from = "1.0.0", permissions = {},
  detect = function() return "1.0.0" end,
  check = function()
    for _, name in ipairs { $names } do
      local s = addon.read(name .. ".bin")
      log.info("%s %d %s", name, #s, hash.sha256(s))
    end
    -- and the other way: a big string from the hook to uphook
    log.info("%s", string.rep("0123456789", 10000) .. "end")
  end,
  upgrade = function() end,
}
EOF
: >"$TMP/world.yaml"   # an empty mock cluster
plan() { run "$UPHOOK" --addons "$TMP/repo" --offline "$TMP/world.yaml" \
  --state-dir "$TMP/st$1" --memory-limit "$1" plan big; }

plan 64
for p in $SIZES; do
  n=${p%%:*}
  sum=$(sha256sum "$A/$n.bin" | cut -d' ' -f1)
  expect "addon.read of $n.bin (${p#*:} bytes): the exact bytes" 0 \
    "check: $n ${p#*:} $sum"
done
expect "a 100 KB string from the hook arrives whole" 0 \
  "check: (0123456789){409}012345 \.\.\. \(100003 bytes\)"

# the 12 MB string is counted once against the limit: 16 MiB holds it
plan 16
expect "a 12 MB read under --memory-limit 16 passes" 0 \
  "check: crds 12000000 "
# 8 MiB cannot hold it: refused in the hook, the message as it was
plan 8
expect "a 12 MB read over --memory-limit 8 is refused" 4 \
  "check failed: memory limit: the hook used more than --memory-limit \(8 MiB\)"
refute "nothing read past the limit reaches the plan" "check: crds"
finish
