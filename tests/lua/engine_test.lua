local t = require "uphook.test"

local function env(extra)
  local o = { addon = "addons/hello", cluster = "fixtures_hello.yaml" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

t.case("upgrade applies and saves state", function()
  local e = env()
  local r = e:upgrade { "--color=red" }
  t.eq(r.code, 0, r.error)
  t.eq(e:get("ConfigMap", "hello", "default").data.color, "red")
  t.eq(e:state().version, "1.2.0")
  t.eq(e:state().params.color, "red")
end)

t.case("plan changes nothing", function()
  local e = env()
  local before = e:snapshot()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.eq(e:snapshot(), before)
  t.eq(r.plan[2].action, "configured")
end)

t.case("a fault rolls back", function()
  local e = env()
  local before = e:snapshot()
  e:fail { on = "kube.apply", kind = "ConfigMap", error = "boom" }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.eq(e:snapshot(), before)
end)

t.case("undeclared parameter is a usage error", function()
  local r = env():upgrade { "--colour=red" }
  t.eq(r.code, 2)
  t.match(r.error, "unknown parameter %-%-colour")
end)

t.case("choices are enforced", function()
  local r = env():upgrade { "--color=pink" }
  t.eq(r.code, 2)
  t.match(r.error, "must be one of blue, red")
end)

t.case("a hook may use coroutines, and call primitives inside one", function()
  local e = t.env { addon = "addons/gen", cluster = "fixtures_hello.yaml" }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  for i = 1, 3 do
    t.eq(e:get("ConfigMap", "gen-" .. i, "default").data.index, tostring(i))
  end
  t.ok(e:get("ConfigMap", "from-coroutine", "default"))
end)

local function sc_env()
  return t.env { addon = "addons/sc", cluster = "fixtures_sc.yaml" }
end

t.case("a module of the addon folder can be required", function()
  local r = sc_env():upgrade {}
  t.eq(r.code, 0, r.error)
end)

t.case("params detected from the cluster stand in for missing state", function()
  local e = sc_env()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:get("StorageClass", "fast").reclaimPolicy, "Retain")
  t.eq(e:state().params["reclaim-policy"], "Retain")
end)

t.case("the command line beats detected params", function()
  local e = sc_env()
  t.eq(e:upgrade({ "--reclaim-policy=Delete" }).code, 0)
  t.eq(e:get("StorageClass", "fast").reclaimPolicy, "Delete")
end)

t.case("plan of a delete and re-create shows both, changes nothing", function()
  local e = sc_env()
  local before = e:snapshot()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  local actions = {}
  for _, p in ipairs(r.plan) do
    if p.type == "kube" then actions[#actions + 1] = p.action end
  end
  t.eq(actions, { "deleted", "created" })
  t.eq(e:snapshot(), before)
end)

t.case("an immutable change without re-create fails like a server", function()
  local e = sc_env()
  e:fail { on = "kube.delete", kind = "StorageClass" }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "injected fault")
end)

-- docs/security.md "Other addons' state": saved parameters are checked
-- against the hook's choices when they are loaded (the state ConfigMap could
-- be edited, or written by another addon's hook before uphook-<addon> became
-- the host's)
t.case("a saved parameter outside the choices never reaches the hook", function()
  local e = env()
  e.backend:apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "uphook-hello", namespace = "kube-system" },
    data = { version = "1.0.0", params = "color: $(reboot)\n" } }, {})
  local before = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, 'the saved %(ConfigMap kube%-system/uphook%-hello%) '
    .. 'parameter color="%$%(reboot%)" must be one of blue, red')
  t.eq(e:snapshot(), before)
  r = e:upgrade { "--color=red" }
  t.eq(r.code, 0, r.error)
  t.eq(e:state().params.color, "red")
end)

-- The client-side apply upgrade (docs/internals.md, "Field ownership") is
-- a write under the resourceVersion uphook read: another writer in
-- between makes the server refuse it as stale (409 Conflict). `write(o,
-- n)` changes the object `o` for the n-th of `races` such writes, each
-- just before a try; it returns the managedFields to set when the write
-- is of those alone.
local function csa_env(races, write, addon, only)
  local e = t.env { addon = addon or "addons/hello",
    cluster = "fixtures_csa.yaml" }
  local b, stats = e.backend, { patches = 0, races = 0, names = {} }
  local set = b.set_managed_fields
  b.set_managed_fields = function(self, kind, name, ...)
    stats.patches = stats.patches + 1
    stats.names[#stats.names + 1] = name
    if stats.races < races and (only == nil or only == name) then
      stats.races = stats.races + 1
      local o = self:get("v1/ConfigMap", name, "default")
      local mf = write(o, stats.races)
      if mf then set(self, "v1/ConfigMap", name, "default", mf)
      else self:replace(o) end
    end
    return set(self, kind, name, ...)
  end
  return e, stats
end

local function annotate(o, n) o.metadata.annotations.controller = tostring(n) end

local function upgraded(e, name)
  local cm = e:get("ConfigMap", name, "default")
  t.eq(cm.data, { color = "blue" }, name .. ": the dropped field is gone")
  for _, m in ipairs(cm.metadata.managedFields) do
    t.ok(m.manager ~= "kubectl-client-side-apply",
      name .. ": kubectl-client-side-apply's fields moved to uphook")
  end
  return cm
end

t.case("the client-side apply upgrade reads again when another writer "
  .. "got in between", function()
  local e, stats = csa_env(2, annotate)
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(stats.patches, 3, "two refused as stale, then one that lands")
  local cm = upgraded(e, "hello")
  t.eq(cm.metadata.annotations.controller, "2",
    "the other writer's change is kept, not overwritten")
end)

t.case("in a batch of upgrades, the stale one is sent again, and those "
  .. "never sent after it", function()
  -- one by one (the mock has no set_managed_fields_many): the first is
  -- refused, the second is not sent; both go in the second round
  local e, stats = csa_env(1, annotate, "addons/csa", "hello")
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(stats.names, { "hello", "hello", "other" })
  upgraded(e, "hello")
  upgraded(e, "other")
  -- at once (as the live backend sends them): only the stale one again
  e, stats = csa_env(1, annotate, "addons/csa", "other")
  e.backend.set_managed_fields_many = function(self, items)
    local out = {}
    for i, it in ipairs(items) do
      local ok, v = pcall(self.set_managed_fields, self, it.kind, it.name,
        it.namespace, it.managed_fields, it.resource_version)
      out[i] = ok and { ok = true, stored = v } or { ok = false, error = v }
    end
    return out
  end
  r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(stats.names, { "hello", "other", "other" })
  upgraded(e, "hello")
  upgraded(e, "other")
end)

t.case("a conflict that never clears fails the upgrade, bounded, and "
  .. "names the object", function()
  local tries = require("uphook.core.kubeerror").CONFLICT_TRIES
  -- a controller's bookkeeping: no field a client writes changes, so
  -- undo finds the object as it was
  local e, stats = csa_env(tries, function(o, n)
    local mf = o.metadata.managedFields
    mf[#mf + 1] = { manager = "controller-" .. n, operation = "Update",
      apiVersion = "v1", fieldsType = "FieldsV1",
      fieldsV1 = { ["f:data"] = { ["f:color"] = {} } } }
    return mf
  end)
  local r = e:upgrade {}
  t.eq(r.code, 4, table.concat(r.log, "\n"))
  t.match(r.error, 'Operation cannot be fulfilled on configmaps "hello"')
  t.eq(stats.patches, tries + 1,
    "bounded tries, then undo's write of the prior managedFields")
  t.eq(e:get("ConfigMap", "hello", "default").data,
    { color = "green", shade = "dark" }, "nothing changed")
end)

t.case("the broker's handler hands back every result of a primitive, and "
    .. "an error as the hook's error value", function()
  local phases = require "uphook.engine.phases"
  local run = { c = { broker = { interrupted = function() return false end } } }
  local h = phases.handler(run, function(_, name, args)
    if name == "x.fail" then error({ code = 404, reason = "NotFound",
      message = "x not found" }, 0) end
    return args[1], nil, "three", 4, args[2]
  end)
  local r = table.pack(h("x.many", { "one", "five" }))
  t.eq(r.n, 5)
  t.eq({ r[1], r[2], r[3], r[4], r[5] }, { "one", nil, "three", 4, "five" })
  local ok, err = pcall(h, "x.fail", {})
  t.ok(not ok)
  t.eq(err.reason, "NotFound")
end)
