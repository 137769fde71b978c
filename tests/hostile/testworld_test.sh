# uphook test and offline worlds stay inside (docs/security.md, "Offline
# worlds and uphook test"): a test file names only paths inside its own
# folder; t.env writes only into the run's temporary world (resolv_conf
# keys, args files, node names); a Node's name becomes a folder only when
# it is a valid Node name, under `uphook test` and `--offline` alike.
. tests/cli/lib.sh

T=$TMP/t
TD=$TMP/tmpd                    # the worlds' temporary folders
mkdir -p "$T/addons/x" "$TD" "$TMP/outside"
cat >"$T/addons/x/upgrade.lua" <<'HOOK'
return { version = "2.0.0", from = ">=1.0.0", permissions = { "args:kubelet" },
  detect = function() return "1.0.0" end,
  upgrade = function() config.set_args("kubelet", { ["--v"] = "2" }) end }
HOOK
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' >"$T/nodes.yaml"
# the secret a test file must not read, and ways to name it
echo "kind: THE-SECRET-TEXT" >"$TMP/secret.yaml"
mkdir -p "$TMP/outside-addon" && cp "$TMP/secret.yaml" "$TMP/outside-addon/upgrade.lua"
ln -s "$TMP/secret.yaml" "$T/link.yaml"
ln -s "$TMP/outside-addon" "$T/addons/linked"
mkdir -p "$T/addons/hooklink" && ln -s "$TMP/secret.yaml" "$T/addons/hooklink/upgrade.lua"
# a fixture whose second Node is named to climb out of the world
cat >"$T/evil-nodes.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Node
metadata:
  name: ../../escape
status:
  addresses:
  - type: InternalIP
    address: 10.0.1.12
YAML

cat >"$T/world_test.lua" <<'LUA'
local t = require "uphook.test"
local function refused(what, o, pattern)
  t.case(what, function()
    local ok, e = pcall(t.env, o)
    t.eq(ok, false, what .. ": t.env was not refused")
    t.match(e, pattern)
    t.ok(not tostring(e):find("THE-SECRET-TEXT", 1, true), "it printed the file: " .. tostring(e))
  end)
end
local A = "addons/x"
refused("resolv_conf: a key climbing out of the host root",
  { addon = A, resolv_conf = { ["/../../../pwned-resolv"] = "nameserver 1.1.1.1\n" } },
  "t%.env: resolv_conf:")
refused("args: a service climbing out of the args folder",
  { addon = A, args = { ["../../../pwned-args"] = "--x=1\n" } }, "")
refused("nodes: a node named to climb out", { addon = A,
  nodes = { "n1", { name = "../../pwned-node", args = { kubelet = "--x=1\n" } } } },
  "node name")
refused("addon: an absolute path", { addon = "/etc" }, "not a path relative to the test file")
refused("addon: ..", { addon = "../outside-addon" }, "leaves the test file's folder")
refused("addon: a symlink out of the test file's folder", { addon = "addons/linked" },
  "leads out of the test file's folder")
refused("addon: its upgrade.lua a symlink out", { addon = "addons/hooklink" }, "cannot read")
refused("cluster: an absolute path", { addon = A, cluster = "/etc/passwd" },
  "not a path relative to the test file")
refused("cluster: ..", { addon = A, cluster = "../secret.yaml" }, "leaves the test file's folder")
refused("cluster: a symlink out", { addon = A, cluster = "link.yaml" }, "cannot read")
refused("cluster: a Node named to climb out", { addon = A, cluster = "evil-nodes.yaml" },
  "node name \"%.%./%.%./escape\" is invalid")
t.case("downloads: a file outside is not served", function()
  for _, f in ipairs { "../secret.yaml", "/etc/passwd" } do
    local ok, e = pcall(t.env, { addon = A, downloads = { ["https://x.example/a"] = f } })
    t.eq(ok, false, f)
    t.ok(not tostring(e):find("THE-SECRET-TEXT", 1, true), tostring(e))
  end
end)
t.case("a world inside its folder still works", function()
  local e = t.env { addon = A, cluster = "nodes.yaml",
    resolv_conf = { ["/etc/resolv.conf"] = "nameserver 10.0.0.53\n" } }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:args("kubelet")["--v"], "2")
end)
LUA
run env TMPDIR="$TD" "$UPHOOK" test "$T/world_test.lua"
expect "t.env: resolv_conf, args, nodes, addon, cluster and downloads stay in the world and the test file's folder" \
  0 '^13 passed, 0 failed'
refute "no test output shows the file outside" "THE-SECRET-TEXT"
written=$(find "$TMP" "$TD" -name 'pwned*' -o -name escape | head -3)
if [ -z "$written" ]; then ok "nothing was written outside the worlds"
else echo "    written: $written" >"$OUT"; not_ok "nothing was written outside the worlds"; fi

# --offline: such a fixture stops before any node's folder is made (the
# world's nodes are <state dir>/offline/nodes/<name>)
make_repo "$TMP/repo" x
cp "$T/addons/x/upgrade.lua" "$TMP/repo/addons/x/upgrade.lua"
sed 's|name: \.\./\.\./escape|name: ../../../escape|' "$T/evil-nodes.yaml" >"$TMP/evil3.yaml"
ST=$TMP/state/st
mkdir -p "$ST"
run "$UPHOOK" --addons "$TMP/repo" --offline "$TMP/evil3.yaml" \
  --state-dir "$ST" upgrade x
expect "--offline: a fixture's Node named ../../../escape is refused, nothing changed" 4 \
  'node name "\.\./\.\./\.\./escape" is invalid'
if [ -e "$TMP/state/escape" ]; then
  not_ok "--offline: no node folder outside the state dir"
else ok "--offline: no node folder outside the state dir"; fi

finish
