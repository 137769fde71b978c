# The addon folder is resolved once and held (docs/security.md "Addon folder
# reopened by path"): a hook cannot read a root-only file by having its folder
# swapped for a symlink in the middle of a run, and repository files that are
# FIFOs, devices or sockets are refused, without blocking.
. tests/cli/lib.sh

REPO=$TMP/repo
make_repo "$REPO" swap
SECRET=$TMP/root-only
mkdir -p "$SECRET" && echo "the secret" >"$SECRET/passwd" && chmod 600 "$SECRET/passwd"
cat >"$REPO/addons/swap/upgrade.lua" <<'HOOK'
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() return "1.0.0" end,
  upgrade = function()
    config.write("state:ready", "1")          -- the test swaps the folder now
    while true do
      local ok, s = pcall(addon.read, "passwd")
      if ok then error("read through the swapped folder: " .. s) end
    end
  end }
HOOK
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' >"$TMP/cluster.yaml"

# a symlinked addon folder is fine: it is resolved at the start
mkdir -p "$TMP/elsewhere"
mv "$REPO/addons/swap" "$TMP/elsewhere/swap"
ln -s "$TMP/elsewhere/swap" "$REPO/addons/swap"

ST=$TMP/st
"$UPHOOK" --addons "$REPO" --offline "$TMP/cluster.yaml" --state-dir "$ST" \
  --timeout 4 upgrade swap >"$OUT" 2>&1 &
pid=$!
i=0
while [ ! -f "$ST/addons/swap/ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
# swap the folder (the symlink's target) for a symlink to a root-only one
mv "$TMP/elsewhere/swap" "$TMP/elsewhere/swap.orig"
ln -s "$SECRET" "$TMP/elsewhere/swap"
wait $pid
RC=$?
expect "a folder swapped mid-run: reads stay in the folder resolved at the start" \
  1 "timeout: the hook ran past --timeout"
refute "the root-only file was not read" "the secret"

# FIFOs, devices and sockets: refused at once, never opened blocking
R2=$TMP/fifo
mkdir -p "$R2/addons/x"
mkfifo "$R2/addons.yaml"
run timeout 10 "$UPHOOK" --addons "$R2" --offline "$TMP/cluster.yaml" list
expect "a FIFO addons.yaml: refused, uphook list does not hang" 2 \
  "addons.yaml: not a regular file \(a FIFO, device or socket is refused\)"
rm "$R2/addons.yaml"
make_repo "$R2" fifo
mkfifo "$R2/addons/fifo/upgrade.lua"
run timeout 10 "$UPHOOK" lint "$R2/addons/fifo/upgrade.lua"
expect "a FIFO upgrade.lua: refused by lint, at once" 2 "not a regular file"
run timeout 10 "$UPHOOK" --addons "$R2" --offline "$TMP/cluster.yaml" \
  --state-dir "$TMP/st2" upgrade fifo
expect "a FIFO upgrade.lua is no hook: upgrade does not open it" 3 \
  "Upgrade is not supported by fifo"
rm "$R2/addons/fifo/upgrade.lua"
cat >"$R2/addons/fifo/upgrade.lua" <<'HOOK'
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() return "1.0.0" end,
  upgrade = function()
    local ok, e = pcall(addon.read, "pipe")
    error("addon.read of a FIFO: " .. tostring(e))
  end }
HOOK
mkfifo "$R2/addons/fifo/pipe"
ln -s /dev/zero "$R2/addons/fifo/zero"
run timeout 10 "$UPHOOK" --addons "$R2" --offline "$TMP/cluster.yaml" \
  --state-dir "$TMP/st3" upgrade fifo
expect "addon.read of a FIFO: refused, at once" 4 "addon.read of a FIFO: .*not a regular file"

finish
