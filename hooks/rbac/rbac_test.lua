-- Tests of the rbac hook: --authorization-mode=RBAC,Node on every node's
-- kube-apiserver, as addons/rbac/enable sets it, from MicroK8s's default
-- args files (AlwaysAllow) and from an rbac enabled before uphook.
local t = require "uphook.test"

-- MicroK8s's default kube-apiserver args file, as every mock node starts
local default = t.env({ addon = ".", cluster = "fixtures/cluster-1-node.yaml" })
  :file("args:kube-apiserver")
local RBAC = (default:gsub("%-%-authorization%-mode=AlwaysAllow",
  "--authorization-mode=RBAC,Node"))
local NODES = { "mk8s-a", "mk8s-b", "mk8s-c" }

-- three nodes: rbac enabled on mk8s-a and mk8s-b; mk8s-c joined later and
-- kept the default AlwaysAllow
local function three(extra)
  local o = { addon = ".", cluster = "fixtures/cluster-3-nodes.yaml",
    args = { ["kube-apiserver"] = RBAC },
    nodes = { { name = "mk8s-b", args = { ["kube-apiserver"] = RBAC } },
              "mk8s-c" } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

local function one(apiserver)
  return t.env { addon = ".", cluster = "fixtures/cluster-1-node.yaml",
    args = { ["kube-apiserver"] = apiserver } }
end

local function mode(e, node)
  return e:args("kube-apiserver", node)["--authorization-mode"]
end

local function files(e)
  local out = {}
  for _, n in ipairs(NODES) do out[n] = e:file("args:kube-apiserver", n) end
  return out
end

t.case("not enabled (AlwaysAllow, MicroK8s's default): exit 4", function()
  local e = t.env { addon = ".", cluster = "fixtures/cluster-1-node.yaml" }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "rbac does not look installed")
  t.eq(e:file("args:kube-apiserver"), default)
end)

t.case("one node, enabled by microk8s enable: 0.0.0 -> 1.0.0, nothing to "
  .. "change, no restart", function()
  local e = one(RBAC)
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:file("args:kube-apiserver"), RBAC)
  t.eq(e:restarts(), {})
  t.eq(e:state().version, "1.0.0")
  t.eq(e:state().history[1].from, "0.0.0")
end)

t.case("one node with --authorization-mode=RBAC: RBAC,Node, kubelite "
  .. "restarted, every other line kept", function()
  local e = one((default:gsub("AlwaysAllow", "RBAC")))
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:file("args:kube-apiserver"), RBAC)
  t.eq(e:restarts(), { "kubelite" })
end)

t.case("other modes are dropped, as enable does, with a warning", function()
  local e = one((default:gsub("AlwaysAllow", "Node,RBAC,Webhook")))
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(mode(e), "RBAC,Node")
  local warned = false
  for _, l in ipairs(r.log) do warned = warned or l:find("Webhook is dropped", 1, true) end
  t.ok(warned, t.repr(r.log))
end)

t.case("three nodes: every API server gets RBAC,Node, the node that kept "
  .. "AlwaysAllow too; the others restart one at a time", function()
  local e = three()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  for _, n in ipairs(NODES) do t.eq(mode(e, n), "RBAC,Node", n) end
  -- another node's apiserver args cannot be read: each gets the change
  t.eq(e:restarts("mk8s-b"), { "kubelite" })
  t.eq(e:restarts("mk8s-c"), { "kubelite" })
  t.eq(e:restarts(), {}, "this node's file already said so")
  t.eq(e:file("args:kube-apiserver"), RBAC)
  -- the agent rewrote mk8s-c's default file: the same lines, blank ones
  -- dropped, the mode in place
  local want = {}
  for line in RBAC:gmatch("[^\n]+") do want[#want + 1] = line end
  t.eq(e:file("args:kube-apiserver", "mk8s-c"), table.concat(want, "\n") .. "\n")
end)

t.case("three nodes: the plan marks each other node's prior as assumed", function()
  local e = three()
  local before = files(e)
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  local seen = {}
  for _, x in ipairs(r.plan) do
    if x.type == "node_args" then
      seen[x.node] = x.changes[1]
    elseif x.type == "restart" then
      seen[#seen + 1] = x.node
    end
  end
  t.eq(seen["mk8s-c"], { flag = "--authorization-mode", prior = "RBAC,Node",
    how = "assumed", new = "RBAC,Node" })
  t.eq({ seen[1], seen[2] }, { "mk8s-b", "mk8s-c" })
  t.eq(files(e), before)
end)

t.case("three nodes: a second run changes nothing", function()
  local e = three()
  t.eq(e:upgrade({}).code, 0)
  local after = files(e)
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.ok(r.noop, "nothing it can read drifted")
  t.eq(files(e), after)
  t.eq(e:restarts("mk8s-b"), { "kubelite" }, "not restarted again")
end)

t.case("three nodes: mk8s-c's agent failing rolls every node back", function()
  local e = three { args = { ["kube-apiserver"] = (default:gsub("AlwaysAllow", "RBAC")) } }
  local before = files(e)
  e:fail { on = "config.set_args", node = "mk8s-c", error = "read-only file system" }
  local r = e:upgrade {}
  t.eq(r.code, 1, r.error)
  t.match(r.error, "node mk8s%-c %(10%.0%.0%.33%): read%-only file system")
  t.eq(e:file("args:kube-apiserver"), before["mk8s-a"], "this node byte for byte")
  -- another node's apiserver args cannot be read: the journal holds this
  -- node's value as their prior (assumed), and that is what the undo
  -- puts back, on mk8s-b (which had RBAC,Node) as on mk8s-c
  t.eq(mode(e, "mk8s-b"), "RBAC", "the assumed prior")
  t.eq(mode(e, "mk8s-c"), "RBAC", "the assumed prior")
  t.eq(e:restarts(), {})
  t.eq(e:state(), nil)
end)

t.case("three nodes: a fault at every change rolls back", function()
  local happy = three()
  t.eq(happy:upgrade({}).code, 0)
  local faults = {
    { on = "config.set_args", node = "mk8s-b" },
    { on = "config.set_args", node = "mk8s-c" },
    { on = "service.restart", node = "mk8s-b" },
    { on = "service.restart", node = "mk8s-c" },
    { on = "kube.apply", kind = "ConfigMap" },
  }
  for _, f in ipairs(faults) do
    local e = three()
    local before, snap = files(e), e:snapshot()
    f.error = "injected"
    e:fail(f)
    local r = e:upgrade {}
    local what = f.on .. " " .. tostring(f.node or f.kind)
    t.eq(r.code, 1, what .. ": " .. tostring(r.error))
    t.eq(e:snapshot(), snap, what)
    t.eq(mode(e, "mk8s-a"), "RBAC,Node", what)
    t.eq(mode(e, "mk8s-c"), "RBAC,Node", what .. ": the assumed prior")
    t.eq(e:file("args:kube-apiserver"), before["mk8s-a"], what)
    t.eq(e:state(), nil, what)
  end
end)

t.case("three nodes: an unreachable node stops the run before any change",
  function()
    local e = three { nodes = { "mk8s-b", { name = "mk8s-c", agent = "unreachable" } } }
    local before = files(e)
    local r = e:upgrade {}
    t.eq(r.code, 4, r.error)
    t.match(r.error, "node mk8s%-c %(10%.0%.0%.33%): cannot connect")
    t.eq(files(e), before)
  end)

t.case("detect reads the apiserver args", function()
  for _, m in ipairs { "RBAC", "Node,RBAC", "RBAC,Node,Webhook" } do
    local e = one((default:gsub("AlwaysAllow", m)))
    local r = e:plan {}
    t.eq(r.code, 0, m .. ": " .. tostring(r.error))
    t.eq(r.from, "0.0.0", m)
  end
  for _, m in ipairs { "AlwaysAllow", "Node,Webhook", "ABAC" } do
    local r = one((default:gsub("AlwaysAllow", m))):plan {}
    t.eq(r.code, 4, m)
  end
end)
