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

-- issue 15 point 9: saved parameters are checked against the hook's
-- choices when they are loaded (the state ConfigMap could be edited, or
-- written by another addon's hook before uphook-<addon> became the host's)
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
