-- The history of failed runs (lua/state.lua, docs/state.md): what
-- state.record writes to the state ConfigMap, against the mock cluster.
-- The command-line runs are tests/cli/history_test.sh's; here the cases it
-- cannot reach from outside.
local t = require "uphook.test"
local cluster = require "uphook.mock.cluster"
local state = require "uphook.state"

local C = require("uphook.cfamilies").load()
local REF = { apiVersion = "v1", kind = "ConfigMap", name = "uphook-demo",
              namespace = "kube-system" }

local function world(objects)
  local c = cluster.new { objects = objects or {} }
  local b = setmetatable({}, { __index = function(_, k)
    local f = c[k]
    return type(f) == "function" and function(_, ...) return f(c, ...) end
      or f
  end })
  return { backend = b, addon = "demo", yaml = C.yaml,
           clock_wall = function() return 0 end }, c
end

local function history(c)
  local cm = c:get("v1/ConfigMap", REF.name, REF.namespace)
  return cm and C.yaml.decode(cm.data.history), cm
end

t.case("a journal kept with the state ConfigMap in it: no entry is written "
  .. "(recover puts the ConfigMap back and would find it changed)", function()
  local run, c = world { { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = REF.name, namespace = REF.namespace },
    data = { version = "1.0.0", history = "[]" } } }
  local pending = { { op = "begin" }, { op = "kube", ref = REF, prior = nil } }
  t.eq(state.record(run, { from = "1.0.0", to = "2.0.0", code = 6,
    result = "rollback incomplete", error = "x" }, pending), false)
  t.eq(history(c), {})
  -- another object in the journal does not stop it
  pending[2].ref = { apiVersion = "v1", kind = "ConfigMap", name = "other",
    namespace = "kube-system" }
  t.eq(state.record(run, { from = "1.0.0", to = "2.0.0", code = 6,
    result = "rollback incomplete", error = "x" }, pending), true)
  t.eq(#history(c), 1)
end)

t.case("an entry keeps the error's first line, at most 200 characters, and "
  .. "the other keys of the ConfigMap", function()
  local run, c = world { { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = REF.name, namespace = REF.namespace },
    data = { version = "1.0.0", params = "a: b\n", permissions = "[]" } } }
  state.record(run, { from = "1.0.0", to = "2.0.0", code = 1,
    result = "rolled back", error = string.rep("e", 300) .. "\nsecond" })
  local h, cm = history(c)
  t.eq(#h[1].error, 200)
  t.match(h[1].error, "%.%.%.$")
  t.eq(h[1].time, "1970-01-01T00:00:00Z")
  t.eq({ cm.data.version, cm.data.params, cm.data.permissions },
    { "1.0.0", "a: b\n", "[]" })
end)

t.case("a record of failed runs only reads as no state: no version, params "
  .. "or permissions", function()
  local run, c = world()
  state.record(run, { from = "1.0.0", to = "2.0.0", code = 4,
    result = "failed", error = "no" })
  local st = state.read(run)
  t.eq(st.version, nil)
  t.eq(st.params, nil)
  t.eq(st.permissions, nil)
  t.eq(#st.history, 1)
  local _, cm = history(c)
  t.eq(cm.metadata.labels["app.kubernetes.io/managed-by"], "uphook")
end)
