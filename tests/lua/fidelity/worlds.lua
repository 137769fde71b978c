-- The worlds the fidelity cases run in, and the objects they share. Each
-- case asserts what a real kube-apiserver 1.32 does, with its source; it
-- runs on the mock (what `uphook test` and --offline use) and, when
-- UPHOOK_FAKE_DIR is set (tests/fidelity/fidelity_test.sh), against the
-- fake API server of tests/fakes, through the HTTP API the real kubectl
-- uses, and must give the same results (docs/mock.md).
--
-- Sources cited in the cases:
--   SSA   https://kubernetes.io/docs/reference/using-api/server-side-apply/
--   SMD   kubernetes-sigs/structured-merge-diff@ccf7a061 (v4.4.2)
--   API   the +listType/+mapType/+structType markers of the types, as
--         lua/backend/mock/schema.lua has them (kubernetes/client-go@c106b238,
--         v0.32.3, applyconfigurations/internal/internal.go)
--   CSA   kubernetes/client-go@c106b238 (v0.32.3):util/csaupgrade/upgrade.go
--         kubernetes/kubectl@fd89c3d1 (v0.32.3):pkg/cmd/apply/apply.go
local t = require "uphook.test"
local fieldset = require "uphook.core.fieldset"
local tables = require "uphook.core.tables"
local cluster = require "uphook.backend.mock.cluster"
local json = require "uphook.c.json"
local yaml = require "uphook.c.yaml"

local M = {}
local NS = "default"
M.NS = NS
local ARRAY = getmetatable(yaml.array {})

--- The worlds the cases run in -------------------------------------------
-- A world is what a case may do to a cluster, with any field manager:
-- apply(obj, manager, force) (forced unless force is false, as uphook's),
-- patch(kind, name, ns, merge_patch, manager),
-- create(obj, manager), replace(obj, manager), get, delete,
-- set_managed_fields(kind, name, ns, mf, rv), wait_established(crd),
-- err(fn) -> the error table fn raised.

local function err(fn)
  local ok, e = pcall(fn)
  t.ok(not ok, "expected an error")
  return e
end

local function mock_world()
  local b = cluster.new { null = yaml.null, array_mt = ARRAY,
                          json_encode = json.encode }
  local w = { err = err }
  function w.apply(obj, manager, force)
    return (b:apply(tables.copy(obj), { manager = manager, force = force }))
  end
  function w.create(obj, manager)
    return b:create(tables.copy(obj), { manager = manager })
  end
  function w.replace(obj, manager)
    return b:replace(tables.copy(obj), { manager = manager })
  end
  function w.patch(kind, name, ns, patch, manager)
    local cur = assert(b:get(kind, name, ns))
    local new = tables.merge_patch(cur, patch, yaml.null, ARRAY)
    new.metadata = tables.shallow(new.metadata)
    new.metadata.managedFields = nil
    return b:replace(new, { manager = manager })
  end
  function w.get(kind, name, ns) return b:get(kind, name, ns) end
  function w.delete(kind, name, ns) return b:delete(kind, name, ns) end
  function w.set_managed_fields(...) return b:set_managed_fields(...) end
  function w.wait_established() end
  -- a Node as its kubelet reports it (labels, Ready or not; spec: taints,
  -- unschedulable)
  function w.node(name, ready, labels, spec)
    local l = { ["kubernetes.io/hostname"] = name }
    for k, v in pairs(labels or {}) do l[k] = v end
    b:_seed { apiVersion = "v1", kind = "Node",
      metadata = { name = name, labels = l }, spec = spec,
      status = { conditions = { { type = "Ready",
        status = ready and "True" or "False" } } } }
    b:_nodes_changed()
  end
  -- objects as a fixture has them (kubectl get -o yaml)
  function w.seed(objs) b:_seed_all(tables.copy(objs)) end
  function w.list(kind) return b:list(kind, { namespace = NS }) end
  w.backend = b
  -- the object once its controller has observed its generation
  function w.settled(kind, name, ns) return b:get(kind, name, ns) end
  return w
end

-- The same world over HTTP: the fake API server of tests/fakes, through
-- the live backend's client (the requests kubectl sends: an apply PATCH
-- with fieldManager and force, POST, PUT, a merge PATCH, GET, DELETE).
local FAKE = os.getenv("UPHOOK_FAKE_DIR")
local function fake_world(dir)
  local live = require "uphook.backend.live"
  local C = { json = json, kube = require "uphook.c.kube" }
  local B = assert(live.connect({ kubeconfig = dir .. "/kubeconfig",
                                  timeout = 30 }, C))
  local OK, DONE = { [200] = true, [201] = true }, { [200] = true }
  local function path(kind, name, ns)
    B.kinds = nil      -- a CRD a case made may serve a kind now
    local info = B:_resolve(kind)
    local p = info.group == "" and ("/api/" .. info.version)
      or ("/apis/" .. info.group .. "/" .. info.version)
    if info.namespaced then
      p = p .. "/namespaces/" .. live.escape(ns or NS)
    end
    p = p .. "/" .. info.resource
    if name then p = p .. "/" .. live.escape(name) end
    return p
  end
  local function mgr(manager, force)
    return "?fieldManager=" .. live.escape(manager)
      .. (force and "&force=true" or "")
  end
  local w = { err = err }
  function w.apply(obj, manager, force)
    local md = obj.metadata
    return (B:_json("PATCH", path(obj.apiVersion .. "/" .. obj.kind,
      md.name, md.namespace) .. mgr(manager, force ~= false),
      json.encode(obj),
      live.APPLY_TYPE, OK))
  end
  function w.create(obj, manager)
    return (B:_json("POST", path(obj.apiVersion .. "/" .. obj.kind, nil,
      obj.metadata.namespace) .. mgr(manager), json.encode(obj),
      "application/json", OK))
  end
  function w.replace(obj, manager)
    local md = obj.metadata
    return (B:_json("PUT", path(obj.apiVersion .. "/" .. obj.kind, md.name,
      md.namespace) .. mgr(manager), json.encode(obj), "application/json",
      OK))
  end
  function w.patch(kind, name, ns, patch, manager)
    return (B:_json("PATCH", path(kind, name, ns) .. mgr(manager),
      json.encode(patch), "application/merge-patch+json", DONE))
  end
  function w.get(kind, name, ns) return B:get(kind, name, ns) end
  function w.delete(kind, name, ns) return B:delete(kind, name, ns) end
  function w.set_managed_fields(...) return B:set_managed_fields(...) end
  function w.wait_established(crd)
    B:watch("apiextensions.k8s.io/v1/CustomResourceDefinition", crd, nil,
      function(o)
        for _, c in ipairs(o and o.status and o.status.conditions or {}) do
          if c.type == "Established" and c.status == "True" then
            return true
          end
        end
      end, 20)
  end
  function w.node(name, ready, labels, spec)
    spec = spec or {}
    B:_json("POST", "/_fake/nodes", json.encode { name = name,
      ready = ready, labels = labels, taints = spec.taints,
      unschedulable = spec.unschedulable }, "application/json", DONE)
  end
  function w.seed(objs)
    B:_json("POST", "/_fake/seed", json.encode(objs), "application/json",
      DONE)
  end
  function w.list(kind) return B:list(kind, { namespace = NS }) end
  w.backend = B
  function w.settled(kind, name, ns)
    local _, o = B:watch(kind, name, ns, function(x)
      return x and x.status and x.status.observedGeneration
        == x.metadata.generation
    end, 20)
    return o
  end
  -- each case starts from an empty cluster, as the mock's do
  B:_json("POST", "/_fake/reset", "{}", "application/json", DONE)
  return w
end

---Run a case in a fresh mock cluster and, with UPHOOK_FAKE_DIR, against
---the fake API server.
---@param name string
---@param fn fun(w: table)
function M.case(name, fn)
  t.case(name, function() fn(mock_world()) end)
  if FAKE then
    t.case("[fake API server] " .. name, function() fn(fake_world(FAKE)) end)
  end
end

-- a ConfigMap in NS
function M.cm(name, data, extra)
  local o = { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = name, namespace = NS }, data = data }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- "manager/operation" of each managedFields entry of obj, sorted
function M.owners(obj)
  local out = {}
  for _, e in ipairs(obj.metadata.managedFields or {}) do
    out[#out + 1] = e.manager .. "/" .. e.operation
  end
  table.sort(out)
  return out
end

-- does manager's entry for operation own path (a fieldset path)
function M.owned(obj, manager, operation, path)
  for _, e in ipairs(obj.metadata.managedFields or {}) do
    if e.manager == manager and e.operation == operation then
      return fieldset.has(fieldset.from_fields(e.fieldsV1), path)
    end
  end
  return false
end

-- a Deployment in NS: one container img:1, extra under spec
function M.deployment(name, labels, extra)
  local d = { apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = name, namespace = NS },
    spec = { selector = { matchLabels = labels },
      template = { metadata = { labels = labels },
        spec = { containers = { { name = "app", image = "img:1" } } } } } }
  for k, v in pairs(extra or {}) do d.spec[k] = v end
  return d
end

-- an apply of obj is refused with a 422 Invalid saying message
function M.refused(w, obj, message)
  local e = w.err(function() w.apply(obj, "uphook") end)
  t.eq(e.code, 422)
  t.eq(e.reason, "Invalid")
  t.eq(e.message, message)
end

return M
