-- The undo policy (lua/engine/rollback.lua) against the mock cluster, where a
-- second writer can be put between undo's read and its write: what a
-- controller updating a Deployment's status does on a real cluster.
local t = require "uphook.test"
local cluster = require "uphook.backend.mock.cluster"
local rollback = require "uphook.engine.rollback"

local REF = { apiVersion = "v1", kind = "ConfigMap", name = "settings",
              namespace = "kube-system" }

local function cm(data)
  return { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = REF.name, namespace = REF.namespace }, data = data }
end

-- A cluster holding the upgraded object, the journal record of its prior
-- form, and a backend whose replace first lets "a controller" write the
-- object `races` times (a negative count: every time).
local function world(races)
  local c = cluster.new { objects = { cm { level = "new" } } }
  local prior = cm { level = "old" }
  local stats = { replaces = 0, races = 0 }
  local b = setmetatable({}, { __index = function(_, k)
    local f = c[k]
    return type(f) == "function" and function(_, ...) return f(c, ...) end
      or f
  end })
  function b.replace(_, obj)
    stats.replaces = stats.replaces + 1
    if races < 0 or stats.races < races then
      stats.races = stats.races + 1
      local o = c:get("v1/ConfigMap", REF.name, REF.namespace)
      o.metadata.annotations = { controller = tostring(stats.races) }
      c:replace(o)
    end
    return c:replace(obj)
  end
  local records = { { op = "kube", ref = REF, prior = prior } }
  return { backend = b }, records, c, stats
end

t.case("undo reads again and retries when another writer got in between",
function()
  local run, records, c, stats = world(2)
  local ok, problems, restored = rollback.undo(run, records)
  t.eq(ok, true, table.concat(problems, "; "))
  t.eq(restored, { "restored ConfigMap kube-system/settings" })
  local now = c:get("v1/ConfigMap", REF.name, REF.namespace)
  t.eq(now.data, { level = "old" })
  t.eq(now.metadata.annotations, nil, "the prior form, not a merge")
  t.eq(stats.replaces, 3, "two stale writes, then one that lands")
end)

t.case("undo gives up on a conflict that never clears, naming the object",
function()
  local run, records, c, stats = world(-1)
  local ok, problems = rollback.undo(run, records)
  t.eq(ok, false)
  t.eq(#problems, 1)
  t.match(problems[1], "^ConfigMap kube%-system/settings: ")
  t.match(problems[1], "Operation cannot be fulfilled")
  t.eq(stats.replaces, rollback.CONFLICT_TRIES, "bounded")
  t.eq(c:get("v1/ConfigMap", REF.name, REF.namespace).data,
       { level = "new" }, "nothing half-written")
end)

t.case("undo does not retry a refusal that is not a conflict", function()
  local run, records = world(0)
  local calls = 0
  run.backend.replace = function()
    calls = calls + 1
    error({ code = 403, reason = "Forbidden", message = "forbidden" }, 0)
  end
  local ok, problems = rollback.undo(run, records)
  t.eq(ok, false)
  t.match(problems[1], "forbidden")
  t.eq(calls, 1)
end)

t.case("undo never deletes a claim to put it back (its volume would go)",
function()
  local SC = { apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
    metadata = { name = "grows" }, provisioner = "p",
    allowVolumeExpansion = true }
  local function pvc(size)
    return { apiVersion = "v1", kind = "PersistentVolumeClaim",
      metadata = { name = "data", namespace = "default" },
      spec = { storageClassName = "grows", volumeName = "pv-1",
        accessModes = { "ReadWriteOnce" },
        resources = { requests = { storage = size } } },
      status = { phase = "Bound", capacity = { storage = "1Gi" } } }
  end
  local c = cluster.new { objects = { SC, pvc("1Gi") } }
  local prior = c:get("PersistentVolumeClaim", "data", "default")
  local grown = pvc("2Gi"); grown.status = nil
  c:apply(grown)
  local uid = c:get("PersistentVolumeClaim", "data", "default").metadata.uid
  local ref = { apiVersion = "v1", kind = "PersistentVolumeClaim",
                name = "data", namespace = "default" }
  local ok, problems = rollback.undo({ backend = c },
    { { op = "kube", ref = ref, prior = prior } })
  t.eq(ok, false)
  t.match(problems[1], "^PersistentVolumeClaim default/data: left alone: a "
    .. "PersistentVolumeClaim is never deleted to undo a change; the server "
    .. "refuses to put it back: .*can not be less than status%.capacity")
  local now = c:get("PersistentVolumeClaim", "data", "default")
  t.eq(now.metadata.uid, uid, "the claim (and its volume) is the same one")
  t.eq(now.spec.resources.requests.storage, "2Gi")
end)

-- A CRD's rollback (docs/state.md "The journal"): its prior spec comes
-- back only while that spec serves every stored version.
t.case("rollback puts a CRD's prior spec back when it serves every stored version", function()
  local e = t.env { addon = "addons/crdroll", cluster = "fixtures_crd.yaml" }
  local before = e:snapshot()
  local r = e:upgrade { "--case", "schema" }
  t.eq(r.code, 1)
  t.eq(e:snapshot(), before)
end)

t.case("a CRD whose new storage version the prior spec does not serve stays, named", function()
  local e = t.env { addon = "addons/crdroll", cluster = "fixtures_crd.yaml" }
  local r = e:upgrade { "--case", "v2" }
  t.eq(r.code, 1, r.error)
  local crd = e:get("apiextensions.k8s.io/v1/CustomResourceDefinition",
                    "widgets.demo.example.com")
  t.eq(#crd.spec.versions, 2, "the new spec stays")
  t.eq(crd.status.storedVersions, { "v1", "v2" })
  local kept
  for _, l in ipairs(r.run.restored or {}) do
    if l:find("kept the new spec", 1, true) then kept = l end
  end
  t.eq(kept, "kept the new spec (objects stored as v2, which the spec "
    .. "before does not serve) of CustomResourceDefinition widgets.demo.example.com")
end)
