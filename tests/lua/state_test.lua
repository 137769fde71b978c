-- The history of failed runs (lua/engine/state.lua, docs/state.md): what
-- state.record writes to the state ConfigMap, against the mock cluster.
-- The command-line runs are tests/cli/history_test.sh's; here the cases it
-- cannot reach from outside.
local t = require "uphook.test"
local state = require "uphook.engine.state"

local C = require("uphook.core.cfamilies").load()
local REF = { apiVersion = "v1", kind = "ConfigMap", name = "uphook-hello",
              namespace = "kube-system" }

-- a run record as state.record takes it, over an env's mock cluster
local function world(st)
  local e = t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml",
    state = st }
  return { backend = e.backend, addon = "hello", c = C,
           clock_wall = function() return 0 end }, e
end

local function entry(code, result, err)
  return { from = "1.0.0", to = "2.0.0", code = code, result = result,
           error = err }
end

local function history(e)
  local cm = e:get("ConfigMap", REF.name, REF.namespace)
  return cm and C.yaml.decode(cm.data.history or "[]"), cm
end

t.case("a journal kept with the state ConfigMap in it: no entry is written "
  .. "(recover puts the ConfigMap back and would find it changed)", function()
  local run, e = world { version = "1.0.0" }
  local pending = { { op = "begin" }, { op = "kube", ref = REF } }
  t.eq(state.record(run, entry(6, "rollback incomplete", "x"), pending), false)
  t.eq(history(e), {})
  -- another object in the journal does not stop it
  pending[2].ref = { apiVersion = "v1", kind = "ConfigMap", name = "other",
    namespace = "kube-system" }
  t.eq(state.record(run, entry(6, "rollback incomplete", "x"), pending), true)
  t.eq(#history(e), 1)
end)

t.case("an entry keeps the error's first line, at most 200 characters, and "
  .. "the other keys of the ConfigMap", function()
  local run, e = world { version = "1.0.0", params = { a = "b" },
    permissions = { "kube:default" } }
  local _, before = history(e)
  state.record(run, entry(1, "rolled back",
    string.rep("e", 300) .. "\nsecond"))
  local h, cm = history(e)
  t.eq(#h[1].error, 200)
  t.match(h[1].error, "^e+%.%.%.$")
  t.eq(h[1].time, "1970-01-01T00:00:00Z")
  t.eq({ cm.data.version, cm.data.params, cm.data.permissions },
    { before.data.version, before.data.params, before.data.permissions })
end)

t.case("a record of failed runs only reads as no state: no version, params "
  .. "or permissions", function()
  local run, e = world()
  state.record(run, entry(4, "failed", "no"))
  local st = state.read(run)
  t.eq({ st.version, st.params, st.permissions }, {})
  t.eq(#st.history, 1)
  local _, cm = history(e)
  t.eq(cm.metadata.labels["app.kubernetes.io/managed-by"], "uphook")
end)

-- Same-named addons of different repositories (docs/state.md "Which
-- repository"): each its own state ConfigMap and Lease, named by
-- lease.resolve against the mock cluster as against a live one
local lease = require "uphook.engine.lease"
local names = require "uphook.core.names"
local A = "core /var/snap/microk8s/common/addons/core"
local B = "web /home/u/web-addons"

local function seed(e, name, data)
  e.backend:apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = name, namespace = "kube-system" }, data = data }, {})
end

t.case("lease.resolve: the repository recorded in uphook-<addon> keeps it, "
  .. "another gets uphook-<addon>-<suffix>", function()
  local _, e = world()
  t.eq(lease.resolve(e.backend, C, "hello", A), "uphook-hello")
  seed(e, "uphook-hello", { version = "1.0.0", repository = A })
  t.eq(lease.resolve(e.backend, C, "hello", A), "uphook-hello")
  local own = lease.resolve(e.backend, C, "hello", B)
  t.eq(own, "uphook-hello-" .. C.hash.sha256(B):sub(1, 10))
  t.ok(names.is_subdomain(own) and #own <= 253, own)
  t.eq(lease.resolve(e.backend, C, "hello", nil), "uphook-hello")
  -- B's own state stays B's when uphook-hello goes (the user made uphook
  -- forget A's addon), and A then starts afresh under uphook-hello
  seed(e, own, { version = "2.0.0", repository = B })
  e.backend:delete("v1/ConfigMap", "uphook-hello", "kube-system")
  t.eq(lease.resolve(e.backend, C, "hello", B), own)
  t.eq(lease.resolve(e.backend, C, "hello", A), "uphook-hello")
end)

t.case("lease.resolve: a state that records no repository (an older "
  .. "uphook's) is claimed by the next upgrade of any of them", function()
  local _, e = world()
  seed(e, "uphook-hello", { version = "1.0.0" })
  t.eq(lease.resolve(e.backend, C, "hello", A), "uphook-hello")
  t.eq(lease.resolve(e.backend, C, "hello", B), "uphook-hello")
end)

t.case("a new record of failed runs is its repository's; an existing "
  .. "one's repository is not changed", function()
  local run, e = world()
  run.repository, run.state_name = B, lease.name("hello", lease.suffix(C, B))
  state.record(run, entry(4, "failed", "no"))
  local cm = e:get("ConfigMap", run.state_name, "kube-system")
  t.eq(cm.data.repository, B)
  t.eq(e:get("ConfigMap", "uphook-hello", "kube-system"), nil)
  seed(e, "uphook-hello", { version = "1.0.0" })
  run.state_name = nil
  state.record(run, entry(4, "failed", "no"))
  t.eq(e:get("ConfigMap", "uphook-hello", "kube-system").data.repository, nil)
end)

t.case("lease.journaled: only this addon's names are taken from a journal",
  function()
  t.eq(lease.journaled("web", "uphook-web"), "uphook-web")
  t.eq(lease.journaled("web", "uphook-web-0123456789"), "uphook-web-0123456789")
  t.eq(lease.journaled("web", "uphook-web-012345678"), nil)
  t.eq(lease.journaled("web", "uphook-dns"), nil)
  t.eq(lease.journaled("web", "uphook-web-../../x"), nil)
  t.eq(lease.journaled("web", nil), nil)
end)
