-- The plugins: root ($SNAP_COMMON/plugins, docs/reference.md "config";
-- docs/guide.md "Permissions"): a plugin file is installed, journaled and
-- rolled back like a bin: file, needs plugins:<file>, and changes this
-- node only.
local t = require "uphook.test"
local plantext = require "uphook.engine.plantext"

local BENCH = "#!/bin/sh\necho kube-bench\n"
local URL = "https://example.com/kube-bench"

local function env(o)
  o = o or {}
  return t.env { addon = "addons/plugin", files = o.files, nodes = o.nodes,
    cluster = o.nodes and "fixtures_nodes.yaml" or nil,
    downloads = { [URL] = { body = BENCH } } }
end

t.case("an upgrade installs plugins:kube-bench with its mode", function()
  local e = env()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.match(plantext.render(r.plan), "%-> plugins:kube%-bench %(mode 0755%)")
  t.eq(e:file("plugins:kube-bench"), nil, "the plan wrote nothing")
  r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:file("plugins:kube-bench"), BENCH)
  t.eq(e:files()["plugins:kube-bench"], BENCH)
  t.eq(require("uphook.c.fs").stat(e.roots.plugins, "kube-bench").mode,
    "0755")
end)

t.case("a failure after the install puts the old plugin back", function()
  local e = env { files = { ["plugins:kube-bench"] = "old\n" } }
  e:fail { on = "kube.apply", kind = "ConfigMap", name = "kube-bench" }
  local r = e:upgrade {}
  t.eq(r.code, 1, r.error)
  t.eq(e:file("plugins:kube-bench"), "old\n")
  -- a new plugin is removed again
  e = env()
  e:fail { on = "kube.apply", kind = "ConfigMap", name = "kube-bench" }
  t.eq(e:upgrade({}).code, 1)
  t.eq(e:file("plugins:kube-bench"), nil)
end)

t.case("every change of the install is rolled back exactly", function()
  t.ok(t.each_fault(function()
    return env { files = { ["plugins:kube-bench"] = "old\n" } }
  end) >= 2)
end)

t.case("a plugin file needs its own plugins:<file> permission", function()
  local e = env()
  local r = e:upgrade { "--path=plugins:other" }
  t.eq(r.code, 4)
  t.match(r.error, 'config%.install%(plugins:other%) needs '
    .. '"plugins:other" in the hook\'s permissions')
  t.eq(e:file("plugins:other"), nil)
  -- bin: is another root: plugins:kube-bench does not cover it
  r = e:upgrade { "--path=bin:kube-bench" }
  t.eq(r.code, 4)
  t.match(r.error, 'needs "bin:kube%-bench"')
end)

t.case("plugins: changes this node only, and the plan says so", function()
  local e = env { nodes = { { name = "node-b" } } }
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.match(plantext.render(r.plan),
    "%-> plugins:kube%-bench %(mode 0755%) on node%-a only")
  local plan = require "uphook.engine.plan"
  t.match(plantext.render(r.plan, { header = plan.header(r.run) }),
    "plugins:kube%-bench %(this node only%)")
end)
