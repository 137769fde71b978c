--- The render child's note (docs/security.md, "Where the kernel refuses a
--- network namespace"): when uphook.c.helm.render says Helm ran with the
--- host's network, the run warns, once, whatever the number of renders.
local t = require "uphook.test"
local render = require "uphook.engine.helm.render"

local NOTE = "Helm had no network namespace of its own (unshare: Operation "
  .. "not permitted): it ran with the host's network"

local function fake_run(note)
  local logged = {}
  local run = { c = { helm = { render = function()
      return "---\n# Source: x/templates/a.yaml\nkind: ConfigMap\n", nil, note
    end } },
    report = { log = function(_, level, text)
      logged[#logged + 1] = level .. ": " .. text end } }
  return run, logged
end

local ARGS = { helm = "/usr/bin/helm", release = "x", namespace = "default",
  chart = "/tmp/x.tgz", values = "" }

t.case("a render without a network namespace warns once per run", function()
  local run, logged = fake_run(NOTE)
  render.template(run, ARGS)
  render.template(run, ARGS)
  t.eq(logged, { "warn: " .. NOTE })
end)

t.case("a render with its own network namespace says nothing", function()
  local run, logged = fake_run(nil)
  t.ok(render.template(run, ARGS):find("ConfigMap", 1, true))
  t.eq(logged, {})
end)
