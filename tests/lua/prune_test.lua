-- kube.prune (docs/reference.md): what a new version no longer ships is
-- deleted, within the listed kinds, through the data-loss guard and the
-- permissions, journaled, and shown in the plan with its reason.
local t = require "uphook.test"

local function env()
  return t.env { addon = "addons/prune", cluster = "fixtures_prune.yaml" }
end

local function has(e, kind, name, ns) return e:get(kind, name, ns or "default") ~= nil end

local function pruned(r)
  for _, l in ipairs(r.log) do
    local s = l:match("^pruned: (.*)$")
    if s then return s end
  end
end

t.case("deletes the addon's objects of the listed kinds that this run did not apply", function()
  local e = env()
  local r = e:upgrade { "--case", "basic" }
  t.eq(r.code, 0, r.error)
  t.eq(pruned(r), "ConfigMap default/old-a, Deployment default/old-dep")
  t.ok(not has(e, "ConfigMap", "old-a") and not has(e, "Deployment", "old-dep"))
  t.ok(has(e, "ConfigMap", "kept"), "what this run applied stays")
  t.ok(has(e, "ConfigMap", "another-addon"), "another addon's object stays")
  t.ok(has(e, "ConfigMap", "users"), "an unlabelled object stays")
  t.ok(has(e, "ConfigMap", "enable-made"), "the default selector is the addon's label")
  t.ok(has(e, "Secret", "creds"), "a kind not listed stays")
  t.ok(has(e, "ConfigMap", "elsewhere", "other"), "another namespace stays when one is given")
  t.ok(has(e, "PersistentVolumeClaim", "data"))
end)

t.case("the plan shows each delete with its reason and changes nothing", function()
  local e = env()
  local before = e:snapshot()
  local r = e:plan { "--case", "basic" }
  t.eq(r.code, 0, r.error)
  t.eq(e:snapshot(), before)
  local dels = {}
  for _, x in ipairs(r.plan) do
    if x.type == "kube" and x.action == "deleted" then
      dels[#dels + 1] = x.kind .. " " .. x.name .. ": " .. tostring(x.reason)
      t.eq(x.step, 2, "under the step that pruned")
    end
  end
  t.eq(dels, { "ConfigMap old-a: no longer in prune 2.0.0",
               "Deployment old-dep: no longer in prune 2.0.0" })
  local text = require("uphook.engine.plantext").render(r.plan)
  t.match(text, "\n  %- ConfigMap default/old%-a %(deleted%): no longer in prune 2%.0%.0\n")
  t.match(text, "impact: Deployment default/old%-dep stops")
end)

t.case("prune's deletes are journaled: a fault at the second rolls both back", function()
  local e = env()
  local before = e:snapshot()
  e:fail { on = "kube.delete", kind = "Deployment", name = "old-dep" }
  local r = e:upgrade { "--case", "basic" }
  t.eq(r.code, 1, r.error)
  t.eq(e:snapshot(), before)
end)

t.case("the data-loss guard holds: a claim is refused without allow_data_loss", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--case", "pvc" }
  t.eq(r.code, 1)
  t.match(r.error, "kube%.prune refuses PersistentVolumeClaim default/data: it can lose data")
  t.eq(e:snapshot(), before)
end)

t.case("with allow_data_loss the claim goes, listed under DATA LOSS", function()
  local e = env()
  local r = e:plan { "--case", "pvc_allowed" }
  t.eq(r.code, 0, r.error)
  t.match(require("uphook.engine.plantext").render(r.plan),
    "DATA LOSS.*\n  %- PersistentVolumeClaim default/data")
  r = e:upgrade { "--case", "pvc_allowed" }
  t.eq(r.code, 0, r.error)
  t.ok(not has(e, "PersistentVolumeClaim", "data"))
end)

t.case("permissions hold: the addon's object in an undeclared namespace is refused", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--case", "everywhere" }
  t.eq(r.code, 1)
  t.match(r.error, 'permission denied: kube%.prune of ConfigMap other/elsewhere needs "kube:other"')
  t.eq(e:snapshot(), before)
end)

t.case("keep names objects to keep; labels select objects made before uphook", function()
  local e = env()
  local r = e:upgrade { "--case", "keep" }
  t.eq(r.code, 0, r.error)
  t.eq(pruned(r), "")
  t.ok(has(e, "ConfigMap", "old-a"))
  e = env()
  r = e:upgrade { "--case", "enable_era" }
  t.eq(r.code, 0, r.error)
  t.eq(pruned(r), "ConfigMap default/enable-made")
  t.ok(has(e, "ConfigMap", "old-a"), "only what the selector matches")
end)

t.case("a kind the cluster does not serve has nothing to prune", function()
  local r = env():upgrade { "--case", "unserved" }
  t.eq(r.code, 0, r.error)
  t.eq(pruned(r), "ConfigMap default/old-a")
end)

t.case("only upgrade may prune", function()
  local r = env():upgrade { "--case", "in_check" }
  t.eq(r.code, 4)
  t.match(r.error, "kube%.prune is not allowed in check")
end)
