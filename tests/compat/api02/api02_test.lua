-- The hook of tests/compat/api01 migrated to hook API 0.2 (upgrade.lua
-- declares uphook = ">=0.2"; docs/guide.md "Migrating hooks"): no warning;
-- the deprecated forms fail as 0.2 has them; a hook for a newer uphook and
-- a malformed `uphook` are refused on load (fixtures/).
local t = require "uphook.test"

local function env(hook)
  return t.env { addon = ".", cluster = "fixtures/cluster.yaml", hook = hook }
end

t.case("the migrated hook: declared positional, manifest.raw, no warning", function()
  local e = env()
  local r = e:upgrade { "eu-west" }
  t.eq(r.code, 0, r.error)
  for _, l in ipairs(r.log) do t.ok(not l:find("deprecated", 1, true), l) end
  t.eq(e:get("ConfigMap", "compat", "default").data,
    { region = "eu-west", mode = "migrated" })
end)

t.case("an argument beyond those declared is exit 2", function()
  local r = env():upgrade { "eu-west", "us-east" }
  t.eq(r.code, 2)
  t.match(r.error, "api02 takes at most 1 argument %(%[REGION%]%), got 2: "
    .. "eu%-west us%-east")
end)

t.case("a placeholder in structure position: use manifest.raw(...)", function()
  local e = env("fixtures/structure.lua")
  local r = e:upgrade()
  t.eq(r.code, 4, r.error)   -- before any change
  t.match(r.error, "manifest app%.yaml:8: the placeholder EXTRA stands where "
    .. "a YAML value cannot %(a list item, a key, a document%): use "
    .. "manifest%.raw%(%.%.%.%) for YAML structure")
  t.eq(e:get("ConfigMap", "compat", "default").data, { region = "none" })
end)

t.case("a hostPort under kube:default alone fails, naming kube:privileged", function()
  local r = env():upgrade { "--hostport=true" }
  t.eq(r.code, 1)
  t.match(r.error, 'hostPort 8080 needs "kube:privileged"')
end)

t.case("a hook for a newer uphook is refused: both versions, refresh the snap", function()
  local r = env("fixtures/newer.lua"):upgrade()
  t.eq(r.code, 4)
  t.match(r.error, 'api02/fixtures/newer%.lua: the hook needs uphook >=0%.3, '
    .. 'and this is uphook 0%.2%.0: refresh the snap %(sudo snap refresh '
    .. 'microk8s%) for a newer uphook')
end)

t.case("a malformed uphook range is refused, naming the field", function()
  local r = env("fixtures/badrange.lua"):upgrade()
  t.eq(r.code, 4)
  t.match(r.error, "field 'uphook' is not a version range %(such as "
    .. '">=0%.2"%)')
end)
