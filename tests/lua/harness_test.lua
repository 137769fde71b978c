-- The harness's own fault tools: env:fail's `times` and t.each_fault.
local t = require "uphook.test"

local function hello()
  return t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml" }
end

local function retry()
  return t.env { addon = "addons/retry", cluster = "fixtures_hello.yaml" }
end

t.case("env:fail fires once by default, `times` times when given", function()
  for times, want in pairs { [1] = 2, [2] = 3 } do
    local e = retry()
    e:fail { on = "kube.apply", kind = "ConfigMap", times = times }
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.eq(#e:calls("kube.apply"), want, "times = " .. times)
    t.eq(e:get("ConfigMap", "tried", "default").data, { a = "1" })
  end
  local e = retry()
  e:fail { on = "kube.apply", name = "tried", times = 3 }
  t.eq(e:upgrade({}).code, 0)
  t.eq(e:get("ConfigMap", "tried", "default"), nil, "every try failed")
end)

t.case("t.each_fault faults every change and checks the rollback", function()
  -- the ConfigMap, then the state commit
  t.eq(t.each_fault(hello, { args = { "--color=red" } }), 2)
end)

t.case("t.each_fault fails when a fault is not rolled back as it must be",
  function()
    -- the hook swallows the fault at its first change and tries again
    t.err(function() t.each_fault(retry) end,
      "a fault at change 1 of 2 %(kube%.apply #1, ConfigMap tried%): the "
      .. "exit code .*expected 4, got 0")
  end)

t.case("t.each_fault: an unknown option is an error naming it", function()
  t.err(function() t.each_fault(hello, { arg = { "--color=red" } }) end,
    't.each_fault: unknown key "arg" %(known: args%)')
  t.err(function() t.each_fault(hello()) end,
    "t.each_fault: env_fn must be a function")
end)

t.case("t.each_fault fails when the upgrade itself fails", function()
  t.err(function()
    t.each_fault(hello, { args = { "--color=pink" } })
  end, "the upgrade without a fault .*expected 0, got 2")
end)

--- Regressions of the harness's traps (docs/guide.md §8) ----------------

local function rollout()
  return t.env { addon = "addons/rollout", cluster = "fixtures_hello.yaml" }
end

t.case("env:fail: an unknown key or primitive is an error naming it",
  function()
    local e = hello()
    t.err(function() e:fail { on = "kube.apply", knd = "ConfigMap" } end,
      'env:fail: unknown key "knd" %(known: after, code, error, kind,')
    t.err(function() e:fail { on = "kube.aply" } end,
      'env:fail: on = "kube.aply" is not a primitive faults reach')
    t.err(function() e:fail { on = "kube.apply", times = "2" } end,
      "times must be an integer")
    t.eq(e:upgrade({}).code, 0, "nothing was armed")
  end)

t.case("t.env: an unknown key is an error naming it", function()
  t.err(function()
    t.env { addon = "addons/hello", clustr = "fixtures_hello.yaml" }
  end, 't.env: unknown key "clustr" %(known: addon, args, certs, cluster,')
end)

t.case("t.env{name = ...}: the addon's name when the folder is not", function()
  local e = t.env { addon = "addons/hello", name = "greeter",
                    cluster = "fixtures_hello.yaml" }
  t.eq(e:upgrade({}).code, 0)
  t.ok(e:get("ConfigMap", "uphook-greeter", "kube-system"), "its state")
  t.eq(e:get("ConfigMap", "hello", "default").metadata.labels
       ["addon.microk8s.io/name"], "greeter")
end)

t.case("faults can be cleared, one or all", function()
  local e = hello()
  local f = e:fail { on = "kube.apply", kind = "ConfigMap", times = 100 }
  f:clear()
  t.eq(e:upgrade({}).code, 0)
  e = hello()
  e:fail { on = "kube.apply", times = 100 }
  e:fail { on = "kube.delete", times = 100 }
  e:clear_faults()
  t.eq(e:upgrade({}).code, 0)
end)

t.case("read faults: kube.get 403 and 500 fail the read, 404 is absent",
  function()
    local e = rollout()
    e:fail { on = "kube.get", kind = "ConfigMap", name = "hello", code = 403,
             error = "configmaps is forbidden" }
    local r = e:upgrade {}
    t.eq(r.code, 4)
    t.match(r.error, "configmaps is forbidden")
    e = rollout()
    e:fail { on = "kube.get", kind = "ConfigMap", name = "hello", code = 404 }
    r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.ok(table.concat(r.log, "\n"):find("hello is absent", 1, true))
    e = rollout()
    e:fail { on = "kube.list", kind = "ConfigMap", code = 500 }
    r = e:upgrade {}
    t.eq(r.code, 4)
    t.match(r.error, "injected fault in kube.list")
  end)

t.case("a 409 Conflict on apply says what the API server says", function()
  local e = rollout()
  local before = e:snapshot()
  e:fail { on = "kube.apply", kind = "Deployment", code = 409 }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, 'Operation cannot be fulfilled on deployments "web": the '
    .. "object has been modified")
  t.eq(e:snapshot(), before)
end)

t.case("a watch-stream error fails the rollout and rolls back", function()
  local e = rollout()
  local before = e:snapshot()
  e:fail { on = "kube.watch", kind = "Deployment", code = 500,
           error = "watch stream ended: an error on the server" }
  local r = e:upgrade {}
  t.eq(r.code, 1)
  t.match(r.error, "watch stream ended")
  t.eq(e:snapshot(), before)
end)

t.case("t.deep_equal returns false and the path instead of raising",
  function()
    t.eq({ t.deep_equal({ a = { b = 1 } }, { a = { b = 2 } }) },
         { false, ".a.b" })
    t.eq({ t.deep_equal({ 1, 2 }, { 1, 2 }) }, { true })
    t.eq({ t.deep_equal("x", { "x" }) }, { false, "" })
  end)

t.case("a failed t.eq of two clusters names the differing paths", function()
  local a, b = hello():snapshot(), hello():snapshot()
  b["v1/ConfigMap/default/hello"].metadata.labels = { changed = "yes" }
  local msg = t.err(function() t.eq(a, b) end)
  t.ok(#msg < 1000, "bounded: " .. #msg .. " bytes")
  t.match(msg, "1 path differs:")
  t.match(msg, "metadata%.labels: expected {changed=\"yes\"}, got %(absent%)")
end)

-- Two args files of 40 lines that differ at line 35 (docs/reference.md
-- t.eq): the message names the line, both lines, and shows the diff.
local function args_file(at35)
  local l = {}
  for i = 1, 40 do l[i] = string.format("--flag-%02d=value-%02d", i, i) end
  l[35] = at35
  return table.concat(l, "\n") .. "\n"
end

t.case("a failed t.eq of two 40-line strings names line 35 and both lines",
  function()
    local want = args_file("--authorization-mode=Node,RBAC")
    local got = args_file("--authorization-mode=AlwaysAllow")
    local msg = t.err(function() t.eq(got, want) end)
    t.match(msg, 'line 35 differs: expected "%-%-authorization%-mode=Node,RBAC", '
      .. 'got "%-%-authorization%-mode=AlwaysAllow"')
    t.match(msg, "\n  diff %(%- expected, %+ got%):\n    @@ %-32,7 %+32,7 @@\n")
    t.match(msg, "\n    %-%-%-authorization%-mode=Node,RBAC\n"
      .. "    %+%-%-authorization%-mode=AlwaysAllow\n")
    t.ok(not msg:find("flag-01", 1, true), "only the hunk's lines: " .. msg)
    -- a string inside a table (a file in an env's nodes) is shown the same
    msg = t.err(function() t.eq({ args = got }, { args = want }) end)
    t.match(msg, "1 path differs:\n  %.args:\n    line 35 differs: expected "
      .. '"%-%-authorization%-mode=Node,RBAC"')
    -- a line missing at the end
    msg = t.err(function() t.eq(want:sub(1, -2) .. "\nextra\n", want) end)
    t.match(msg, 'line 41 differs: expected no line 41, got "extra"')
    -- a long line is cut, in the header and in the diff
    msg = t.err(function()
      t.eq(args_file(("y"):rep(5000)), args_file(("x"):rep(5000))) end)
    t.ok(#msg < 2500, "bounded: " .. #msg .. " bytes")
    t.match(msg, '\n  line 35 differs: expected "x+%.%.%., got "y+%.%.%.\n')
  end)

t.case("a failed t.eq of two long one-line strings shows where they differ",
  function()
    local want = string.rep("a", 150) .. "XYZ" .. string.rep("b", 50)
    local got = string.rep("a", 150) .. "XQZ" .. string.rep("b", 50)
    local msg = t.err(function() t.eq(got, want) end)
    t.match(msg, "the strings differ at character 152 %(203 and 203 long%): "
      .. 'expected %.%.%."a+XYZb+"%.%.%., got %.%.%."a+XQZb+"%.%.%.')
    -- short ones are still shown whole
    t.match(t.err(function() t.eq("abc", "abd") end), 'expected "abd", got "abc"')
  end)

-- Controller-made objects differ from run to run on a real cluster (new
-- Pod names, ReplicaSet hashes): a snapshot leaves them out unless asked.
t.case("env:snapshot() leaves out controller-made objects unless asked",
  function()
    local e = t.env { addon = "addons/hello" }
    e:apply({ apiVersion = "v1", kind = "Pod",
      metadata = { name = "web-1", namespace = "default" },
      spec = { containers = { { name = "c", image = "img:1" } } } })
    e:apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "cm", namespace = "default" }, data = { a = "1" } })
    local key = "v1/Pod/default/web-1"
    t.eq(e:snapshot()[key], nil)
    t.ok(e:snapshot()["v1/ConfigMap/default/cm"])
    t.eq(e:snapshot({ controller_made = true })[key].metadata.name, "web-1")
    t.err(function() e:snapshot { controler_made = true } end,
          "controler_made")
  end)

t.case("a harness error's message stays in the FAIL report", function()
  local dir = assert(require("uphook.c.sys").mkdtemp())
  local path = dir .. "/x_test.lua"
  assert(require("uphook.c.sys").write(path, 'local t = require "uphook.test"\n'
    .. 't.case("bad key", function() t.env { addon = ".", clustr = "x" } end)\n'
    -- a message naming the harness's own files, on two lines: all of it
    .. 't.case("harness words", function() error("lua/cmd/test.lua:1: first\\n'
    .. 'lua/cmd/testlib.lua:2: second", 0) end)\n'))
  local out = {}
  local _, np, nf = t.run({ path }, {
    loader = function(p) assert(loadfile(p, "t"))() end,
    out = function(s) out[#out + 1] = s end })
  require("uphook.c.sys").rmtree(dir)
  t.eq({ np, nf }, { 0, 2 })
  t.match(table.concat(out), 't.env: unknown key "clustr"')
  t.match(table.concat(out), "lua/cmd/test%.lua:1: first\n    lua/cmd/testlib%.lua:2: second")
end)

--- Traps found again by a newcomer's run (session 3) ----------------------

t.case("env:fail: a count or node that can never match is an error", function()
  local e = t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml",
                    nodes = { "node2" } }
  t.err(function() e:fail { on = "kube.apply", times = 0 } end,
    "env:fail: times must be an integer of at least 1, got 0")
  t.err(function() e:fail { on = "kube.apply", after = -1 } end,
    "env:fail: after must be an integer of at least 0, got %-1")
  t.err(function() e:fail { on = "service.restart", node = "node3" } end,
    'env:fail: node "node3" is not a node of this env %(nodes: node1, node2%)')
  t.eq(e:upgrade({}).code, 0, "nothing was armed")
  e:fail { on = "kube.apply", node = "node1" }  -- this node: accepted
  t.eq(e:fail({ on = "config.set_args", node = "node2" }).node, "node2")
end)

t.case("env:file, env:args, env:restarts of a node the env does not have: "
  .. "an error naming it", function()
  local e = t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml",
                    nodes = { "node2" } }
  -- a typo read as "no such file" or "no restart": a test passing for nothing
  t.err(function() e:file("args:kubelet", "node-2") end,
    'env:file: node "node%-2" is not a node of this env %(nodes: node1, node2%)')
  t.err(function() e:args("kubelet", "node-2") end, 'env:args: node "node%-2"')
  t.err(function() e:restarts("node-2") end, 'env:restarts: node "node%-2"')
  t.ok(e:file("args:kubelet", "node2"), "node2's kubelet args")
  t.eq(e:restarts("node2"), {})
  t.eq(e:args("kubelet", "node1"), e:args("kubelet"), "this node by name")
end)

t.case("t.env: a nodes entry's unknown key is an error naming it", function()
  t.err(function()
    t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml",
            nodes = { "node2", { name = "node3", redy = false } } }
  end, 't.env: nodes%[2%]: unknown key "redy" %(known: address, agent,')
end)

t.case("t.env: an option of the wrong type is an error naming it", function()
  -- a layered cluster is not a thing: one fixture, shaped by env:apply...
  t.err(function()
    t.env { addon = "addons/hello", cluster = { "fixtures_hello.yaml",
            "fixtures_prune.yaml" } }
  end, "t.env: cluster must be a string, got a table %(one YAML file; "
    .. "shape variants with env:apply")
  t.err(function()
    t.env { addon = "addons/hello", timeout = "60" }
  end, "t.env: timeout must be a number, got a string")
end)

t.case("env:apply, env:patch, env:delete shape the cluster as someone else",
  function()
    local function managers(o)
      local out = {}
      for _, m in ipairs(o.metadata.managedFields or {}) do
        out[#out + 1] = m.manager .. "/" .. m.operation
      end
      table.sort(out)
      return out
    end
    local e = hello()
    local got = e:apply("apiVersion: v1\nkind: ConfigMap\n"
      .. "metadata: {name: extra, namespace: default}\ndata: {a: '1'}\n")
    t.eq(#got, 1)
    t.eq(managers(e:get("ConfigMap", "extra", "default")), { "kubectl/Apply" })
    e:patch("ConfigMap", "extra", "default", { data = { b = "2" } })
    local null = require("uphook.c.json").null
    e:patch("ConfigMap", "extra", "default", { data = { a = null } },
      { manager = "kubectl-edit" })
    local cm = e:get("ConfigMap", "extra", "default")
    t.eq(cm.data, { b = "2" }, "a null removes a field")
    t.eq(managers(cm), { "kubectl-patch/Update" })
    t.err(function() e:apply(cm, { manger = "me" }) end,
      'env:apply: opts: unknown key "manger" %(known: manager%)')
    t.err(function()
      e:patch("ConfigMap", "extra", "default", {}, { manger = "me" })
    end, 'env:patch: opts: unknown key "manger"')
    t.err(function() e:patch("ConfigMap", "nope", "default", {}) end,
      "env:patch: ConfigMap default/nope not found")
    t.eq({ e:delete("ConfigMap", "extra", "default"),
           e:delete("ConfigMap", "extra", "default") }, { true, false })
  end)

t.case("a 404 on kube.list says what the API server says of a kind",
  function()
    local e = rollout()
    e:fail { on = "kube.list", kind = "ConfigMap", code = 404 }
    local r = e:upgrade {}
    t.eq(r.code, 4)
    t.match(r.error, "the server could not find the requested resource")
  end)

t.case("a failed t.eq of two clusters lists the fields before managedFields",
  function()
    -- another manager takes the image: the field first, then who owns it
    local function web(image, labels)
      return { apiVersion = "apps/v1", kind = "Deployment", metadata = {
        name = "web", namespace = "default", labels = labels },
        spec = { selector = { matchLabels = { app = "web" } },
          template = { metadata = { labels = { app = "web" } },
          spec = { containers = { { name = "web", image = image } } } } } }
    end
    local e2 = hello()
    e2:apply(web("web:1"))
    local b2 = e2:snapshot()
    e2:apply(web("web:2"), { manager = "other" })
    local msg = t.err(function() t.eq(e2:snapshot(), b2) end)
    t.match(msg, "paths? differ:\n  [^\n]*%.spec%.template%.spec%.containers"
      .. '%[1%]%.image: expected "web:1", got "web:2"\n  [^\n]*managedFields')
    local labels = {}
    for i = 1, 12 do labels["l" .. i] = "x" end
    e2 = hello()
    e2:apply(web("web:1", labels))
    b2 = e2:snapshot()
    for i = 1, 12 do labels["l" .. i] = "y" end
    e2:apply(web("web:1", labels), { manager = "other" })
    msg = t.err(function() t.eq(e2:snapshot(), b2) end)
    t.match(msg, "%d+ paths differ %(%d+ in metadata%.managedFields, listed "
      .. "last%), the first 10:")
  end)

t.case("t.repr keeps a string with newlines on one line; t.eq's diff of "
  .. "one indents every line", function()
  t.eq(t.repr("a\nb"), '"a\\nb"')
  local msg = t.err(function()
    t.eq({ s = ("x"):rep(100) .. "\nend" }, { s = ("y"):rep(100) }) end)
  local first = true
  for l in (msg .. "\n"):gmatch("([^\n]*)\n") do
    t.ok(first or l:match("^  ") ~= nil, "an indented line: " .. l)
    first = false
  end
  t.match(msg, '\n    line 1 differs: expected "y+", got "x+"\n')
end)

t.case("env:calls of a name that is no primitive, env:upgrade of a string: "
  .. "errors naming them", function()
  local e = hello()
  t.eq(e:upgrade({}).code, 0)
  t.eq(#e:calls("kube.apply"), 1)
  -- a typo would make `t.eq(#e:calls(...), 0)` pass for nothing
  t.err(function() e:calls("service.restrat") end,
    'env:calls: "service.restrat" is not a primitive')
  t.err(function() e:upgrade("--color=red") end,
    'env:upgrade: args must be a list of strings %({"%-%-color=red"}%), got '
    .. "a string")
end)

t.case("t.env's state, args, files, downloads and env:list's opts: a typo "
  .. "is an error naming it", function()
  local function env(extra)
    local o = { addon = "addons/hello", cluster = "fixtures_hello.yaml" }
    for k, v in pairs(extra) do o[k] = v end
    return t.env(o)
  end
  -- `verison` seeded no version: detect ran, and a test of saved state
  -- tested nothing
  t.err(function() env { state = { verison = "1.1.0" } } end,
    't.env: state: unknown key "verison" %(known: history, params,')
  t.err(function() hello():seed_state { verison = "1.1.0" } end,
    'env:seed_state: unknown key "verison"')
  t.err(function() env { args = { kubelet = 3 } } end,
    't.env: args%["kubelet"%] must be the file\'s text or false, got a number')
  t.err(function() env { nodes = { { name = "n2", args = { kubelet = 3 } } } }
  end, 't.env: nodes%[1%]%.args%["kubelet"%] must be')
  -- addon: is the addon's own folder, which a test must not write (t.env's
  -- paths stay in the test file's folder: the real one, compared after)
  local sys = require "uphook.c.sys"
  local hook = assert(sys.read("tests/lua/addons/hello/upgrade.lua"))
  for _, bad in ipairs { "helm", "addon:upgrade.lua" } do
    local ok, e = pcall(t.env, { addon = "addons/hello",
      files = { [bad] = "x" } })
    t.eq(ok, false, bad)
    t.match(e, 't.env: files: "' .. bad:gsub("%.", "%%.")
      .. '" must be args:, bin:, plugins: or state:')
  end
  t.eq(sys.read("tests/lua/addons/hello/upgrade.lua"), hook,
    "the addon's folder is untouched")
  t.err(function()
    env { downloads = { ["https://example.com/x"] = { bdy = "x" } } }
  end, 't.env: downloads%[https://example.com/x%]: unknown key "bdy"')
  t.err(function() hello():list("ConfigMap", { namespce = "default" }) end,
    'env:list: opts: unknown key "namespce" %(known: labels, namespace%)')
  t.eq(#hello():list("ConfigMap", { namespace = "default" }), 1)
end)

--- *_test.lua files run confined (docs/security.md, "Test files") --------

-- Run one test file's text the way `uphook test` does: in a confined child.
local function confined(text, opts, files)
  local sys = require "uphook.c.sys"
  local dir = assert(sys.mkdtemp())
  assert(sys.write(dir .. "/x_test.lua", text))
  -- t.env's paths stay in the test file's folder: the addon and fixture
  -- the cases name are copied beside it
  assert(sys.mkdirs(dir .. "/addons/hello"))
  for _, f in ipairs { "addons/hello/upgrade.lua", "fixtures_hello.yaml" } do
    assert(sys.write(dir .. "/" .. f, assert(sys.read("tests/lua/" .. f))))
  end
  for name, body in pairs(files or {}) do
    assert(sys.write(dir .. "/" .. name, body))
  end
  local out = {}
  local o = { confined = true, out = function(s) out[#out + 1] = s end }
  for k, v in pairs(opts or {}) do o[k] = v end
  local _, np, nf = t.run({ dir .. "/x_test.lua" }, o)
  sys.rmtree(dir)
  return np, nf, table.concat(out)
end

t.case("a confined test file has no io, os, debug or package", function()
  for _, g in ipairs { "io", "os", "debug", "package", "dofile", "loadfile" }
  do
    local np, nf, out = confined('local t = require "uphook.test"\n'
      .. 't.case("x", function() local x = ' .. g .. ' end)\n')
    t.eq({ np, nf }, { 0, 1 }, g)
    t.match(out, "undeclared global '" .. g .. "'")
  end
end)

t.case("a confined test file cannot reach the engine's modules", function()
  local np, nf, out = confined('local t = require "uphook.test"\n'
    .. 't.case("x", function() require "uphook.engine.phases" end)\n')
  t.eq({ np, nf }, { 0, 1 })
  t.match(out, "module 'uphook.engine.phases' not found")
end)

t.case("a confined test file asks only for environments and their methods",
  function()
    local np, nf, out = confined('local t = require "uphook.test"\n'
      .. 't.case("x", function()\n'
      .. '  local e = t.env { addon = "addons/hello" }\n'
      .. '  e.upgrade = nil; e.id = 1\n'
      .. '  getmetatable(e).__index.run = nil\n'
      .. '  return e:roots()\n'
      .. 'end)\n')
    t.eq({ np, nf }, { 0, 1 })
    t.match(out, "attempt to call a nil value %(method 'roots'%)")
  end)

t.case("a confined test case that loops forever is stopped", function()
  local np, nf, out = confined('local t = require "uphook.test"\n'
    .. 't.case("loop", function() while true do end end)\n'
    .. 't.case("after", function() t.eq(1, 1) end)\n', { case_timeout = 1 })
  t.eq({ np, nf }, { 1, 1 }, "the next case still runs")
  t.match(out, "timeout: the test case ran past 1 s")
end)

t.case("a confined test runs hooks as before: upgrade, faults, each_fault",
  function()
    local np, nf, out = confined('local t = require "uphook.test"\n'
      .. 'local A = "addons/hello"\n'
      .. 'local F = "fixtures_hello.yaml"\n'
      .. 't.case("up", function()\n'
      .. '  local e = t.env { addon = A, cluster = F }\n'
      .. '  local r = e:upgrade { "--color=red" }\n'
      .. '  t.eq(r.code, 0, r.error)\n'
      .. '  t.eq(e:get("ConfigMap", "hello", "default").data.color, "red")\n'
      .. '  t.eq(r.run, nil, "the run record stays in the broker")\n'
      .. '  t.err(function() e:fail { on = "kube.apply", knd = "x" } end, '
      .. '"unknown key \\"knd\\"")\n'
      .. 'end)\n'
      .. 't.case("sweep", function()\n'
      .. '  t.eq(t.each_fault(function() return t.env { addon = A, '
      .. 'cluster = F } end), 2)\n'
      .. 'end)\n')
    t.eq({ np, nf }, { 2, 0 }, out)
  end)

t.case("a confined test file may require its own helper modules", function()
  local np, nf, out = confined('local t = require "uphook.test"\n'
    .. 'local h = require "helpers"\n'
    .. 't.case("x", function() t.eq(h.twice(2), 4) end)\n', nil,
    { ["helpers.lua"] = "return { twice = function(x) return 2 * x end }\n" })
  t.eq({ np, nf }, { 1, 0 }, out)
end)

t.case("a confined test's harness error names its line and the method", function()
  local np, nf, out = confined('local t = require "uphook.test"\n'
    .. 'local A = "addons/hello"\n'
    .. 't.case("x", function()\n'
    .. '  local e = t.env { addon = A }\n'
    .. '  e:get(nil)\n'
    .. 'end)\n')
  t.eq({ np, nf }, { 0, 1 })
  t.match(out, "x_test%.lua:5: env:get: kind must be a non%-empty string")
  t.ok(not out:find("lua/cmd/testchild.lua", 1, true), out)
end)

t.case("a confined test's faults clear, one or all", function()
  local np, nf, out = confined('local t = require "uphook.test"\n'
    .. 'local A = "addons/hello"\n'
    .. 'local F = "fixtures_hello.yaml"\n'
    .. 't.case("one", function()\n'
    .. '  local e = t.env { addon = A, cluster = F }\n'
    .. '  local f = e:fail { on = "kube.apply", times = 100 }\n'
    .. '  e:fail { on = "kube.apply", kind = "Secret", times = 100 }\n'
    .. '  f:clear()\n'
    .. '  local r = e:upgrade {}\n'
    .. '  t.eq(r.code, 0, r.error)\n'
    .. 'end)\n'
    .. 't.case("all", function()\n'
    .. '  local e = t.env { addon = A, cluster = F }\n'
    .. '  e:fail { on = "kube.apply", times = 100 }\n'
    .. '  e:clear_faults()\n'
    .. '  t.eq(e:upgrade({}).code, 0)\n'
    .. 'end)\n')
  t.eq({ np, nf }, { 2, 0 }, out)
end)

t.case("a confined file: two cases of one name, a load error, an env made "
  .. "outside its case", function()
  local np, nf, out = confined('local t = require "uphook.test"\n'
    .. 't.case("same", function() end)\n'
    .. 't.case("same", function() end)\n')
  t.eq({ np, nf }, { 0, 1 })
  t.match(out, 'x_test%.lua:3: t%.case: a case named "same" exists already')
  t.ok(not out:find("lua/cmd/testchild.lua", 1, true), "no harness frames: " .. out)
  np, nf, out = confined('local t = require "uphook.test"\n'
    .. 'local e = t.env { addon = "addons/hello" }\n'
    .. 't.case("x", function() e:upgrade {} end)\n')
  t.eq({ np, nf }, { 0, 1 })
  t.match(out, "x_test%.lua:3: env:upgrade: this environment is gone: an "
    .. "environment lives for the case that made it")
end)

-- A world another tool installed, made by copying (env:copy_to): what a
-- hook's test starts from after its installer ran in another world.
local GADGETS = { apiVersion = "apiextensions.k8s.io/v1",
  kind = "CustomResourceDefinition",
  metadata = { name = "gadgets.copy.example.com" },
  spec = { group = "copy.example.com", scope = "Namespaced",
    names = { plural = "gadgets", singular = "gadget", kind = "Gadget",
              listKind = "GadgetList" },
    versions = { { name = "v1", served = true, storage = true,
      schema = { openAPIV3Schema = { type = "object",
        ["x-kubernetes-preserve-unknown-fields"] = true } } } } } }

t.case("env:copy_to copies a world as one install makes it: CRDs first, by helm, not its Nodes nor uphook's state", function()
  local from = hello()
  t.eq(from:upgrade({}).code, 0, "the hook ran: its state is saved")
  from:apply { GADGETS,
    { apiVersion = "v1", kind = "Namespace", metadata = { name = "shop" } },
    { apiVersion = "copy.example.com/v1", kind = "Gadget",
      metadata = { name = "g", namespace = "shop" }, spec = { size = 3 } } }
  local to = t.env { addon = "addons/hello", nodes = { "other-node" } }
  local stored = from:copy_to(to)
  t.ok(#stored >= 4, "the CRD, the Namespace, the Gadget, the ConfigMap")
  t.eq(to:get("copy.example.com/v1/Gadget", "g", "shop").spec, { size = 3 })
  local cm = to:get("ConfigMap", "hello", "default")
  t.eq(cm.data, { color = "blue" })
  t.eq(cm.metadata.managedFields[1].manager, "helm")
  t.eq(to:state(), nil, "uphook's state of the addon is not copied")
  local nodes = {}
  for _, n in ipairs(to:list("Node")) do nodes[#nodes + 1] = n.metadata.name end
  t.eq(nodes, { "other-node" })

  local crds = t.env { addon = "addons/hello", nodes = { "other-node" } }
  from:copy_to(crds, { kinds = { "CustomResourceDefinition" },
                       manager = "installer" })
  t.eq(crds:get("ConfigMap", "hello", "default"), nil, "only the kinds given")
  t.eq(crds:get("CustomResourceDefinition", "gadgets.copy.example.com")
    .metadata.managedFields[1].manager, "installer")
end)

t.case("a confined test file's t.eq shows the line diff too", function()
  local np, nf, out = confined('local t = require "uphook.test"\n'
    .. 't.case("x", function()\n'
    .. '  local a, b = {}, {}\n'
    .. '  for i = 1, 40 do a[i] = "line " .. i; b[i] = a[i] end\n'
    .. '  b[35] = "changed"\n'
    .. '  t.eq(table.concat(a, "\\n"), table.concat(b, "\\n"))\n'
    .. 'end)\n')
  t.eq({ np, nf }, { 0, 1 })
  t.match(out, 'line 35 differs: expected "changed", got "line 35"')
  t.match(out, "%-changed\n.*%+line 35")
end)
