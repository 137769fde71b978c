-- A hook of hook API 0.1 (upgrade.lua declares no `uphook`) under this
-- uphook (docs/reference.md "API versions"): its placeholder in YAML
-- structure position and its undeclared positional argument work, with
-- one warning each naming the hook's line and the new form, in upgrade and
-- plan; its hostPort under kube:default alone fails, as for any API.
local t = require "uphook.test"

local function env()
  return t.env { addon = ".", cluster = "fixtures/cluster.yaml" }
end

-- upgrade.lua's lines: where it reads ctx.positional, and its
-- manifest.load of app.yaml (whose line 8 is `$EXTRA`)
local POSITIONAL = 'api01/upgrade.lua:15: an undeclared positional argument '
  .. '(eu-west; api01 declares none) is deprecated (hook API 0.1; it fails '
  .. 'for hooks that declare uphook = ">=0.2"): declare it in the hook '
  .. 'table: positional = { "name" } (arguments beyond those declared are '
  .. 'exit 2)'
local STRUCTURE = 'api01/upgrade.lua:16: a manifest.load placeholder in YAML '
  .. 'structure position ($EXTRA at app.yaml:8) is deprecated (hook API 0.1; '
  .. 'it fails for hooks that declare uphook = ">=0.2"): use manifest.raw(...) '
  .. 'for YAML structure ({ EXTRA = manifest.raw(text) })'

-- the log lines that say "deprecated", in order
local function deprecations(r)
  local out = {}
  for _, l in ipairs(r.log) do
    if l:find("deprecated", 1, true) then out[#out + 1] = l end
  end
  return out
end

t.case("upgrade: both deprecated uses work, with exactly one warning each", function()
  local e = env()
  local r = e:upgrade { "eu-west" }
  t.eq(r.code, 0, r.error)
  t.eq(deprecations(r), { POSITIONAL, STRUCTURE })
  t.eq(e:get("ConfigMap", "compat", "default").data,
    { region = "eu-west", mode = "legacy" })
end)

t.case("plan: the same warnings, and nothing changed", function()
  local e = env()
  local r = e:plan { "eu-west" }
  t.eq(r.code, 0, r.error)
  t.eq(deprecations(r), { POSITIONAL, STRUCTURE })
  t.eq(e:get("ConfigMap", "compat", "default").data, { region = "none" })
end)

t.case("without a positional argument, only the manifest's warning", function()
  local r = env():upgrade()
  t.eq(r.code, 0, r.error)
  t.eq(deprecations(r), { STRUCTURE })
end)

t.case("a hostPort under kube:default alone fails, naming kube:privileged", function()
  local e = env()
  local r = e:upgrade { "eu-west", "--hostport=true" }
  t.eq(r.code, 1)
  t.match(r.error, 'upgrade%.lua:19: permission denied: kube%.apply of '
    .. 'Deployment default/compat: container web: hostPort 8080 needs '
    .. '"kube:privileged" in the hook\'s permissions')
  t.eq(deprecations(r), { POSITIONAL, STRUCTURE })
  -- rolled back: the ConfigMap as it was
  t.eq(e:get("ConfigMap", "compat", "default").data, { region = "none" })
end)
