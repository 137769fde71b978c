-- Tests of the hostpath-storage upgrade hook, from the real 1.0.0, 1.1.0,
-- 1.3.0 (MicroK8s 1.24), 1.4.2 and 1.5.0 (MicroK8s 1.29) manifests
-- (fixtures/, placeholders filled as enable fills them) to 1.6.0.
local t = require "uphook.test"

local CLASS = "microk8s-hostpath"
local NS = "kube-system"
local DEFAULT = "storageclass.kubernetes.io/is-default-class"
local VERSIONS = { "1.0.0", "1.1.0", "1.3.0", "1.4.2" }
local ADDON = "."      -- this folder (t.env paths are relative to the test file)

local function env(fixture, extra)
  local o = { addon = ADDON, cluster = "fixtures/cluster-" .. fixture .. ".yaml" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

-- Every PV and PVC, whole (resourceVersion and uid included): equal
-- before and after means nobody wrote to them.
local function volumes(e)
  return { pvs = e:list("PersistentVolume"),
           pvcs = e:list("PersistentVolumeClaim") }
end

local function class(e) return e:get("StorageClass", CLASS) end

local function image(e)
  local d = e:get("Deployment", "hostpath-provisioner", NS)
  return d.spec.template.spec.containers[1].image, d
end

local function env_of(dep)
  local out = {}
  for _, v in ipairs(dep.spec.template.spec.containers[1].env) do
    out[v.name] = v.value or "(from " .. next(v.valueFrom) .. ")"
  end
  return out
end

-- The ClusterRole's rules as "group/resource" -> set of verbs.
local function rules(e)
  local out = {}
  for _, r in ipairs(e:get("ClusterRole", CLASS).rules) do
    for _, res in ipairs(r.resources) do
      local key = (r.apiGroups[1] or "") .. "/" .. res
      out[key] = out[key] or {}
      for _, v in ipairs(r.verbs) do out[key][v] = true end
    end
  end
  return out
end

local function upgraded(e, r)
  t.eq(r.code, 0, r.error)
  local sc = class(e)
  t.eq(sc.provisioner, "microk8s.io/hostpath")
  t.eq(sc.volumeBindingMode, "WaitForFirstConsumer")
  local img, dep = image(e)
  t.eq(img, "cdkbot/hostpath-provisioner:1.6.0")
  local ev = env_of(dep)
  t.eq(ev.PV_DIR, "/var/snap/microk8s/common/default-storage")
  t.eq(ev.BUSYBOX_IMAGE, "busybox:1.28.4")
  t.eq(ev.NAMESPACE, "(from fieldRef)")
  t.eq(dep.spec.template.spec.volumes[1].hostPath.path,
       "/var/snap/microk8s/common/default-storage")
  local rs = rules(e)
  t.ok(rs["/persistentvolumes"].patch, "PV patch")
  t.ok(rs["/pods"].create and rs["/nodes"].get, "pods and nodes")
  t.ok(rs["coordination.k8s.io/leases"].update, "leases")
  t.ok(rs["/endpoints"].create, "endpoints")
  t.eq(e:state().version, "1.6.0")
  t.eq(#e:calls("kube.rollout"), 1)
  return sc
end

-- 1. An upgrade from each previous version in the corpus -----------------

for _, v in ipairs(VERSIONS) do
  t.case(v .. " -> 1.6.0 without state: detected, upgraded, volumes untouched",
    function()
      local e = env(v)
      local vols = volumes(e)
      local r = e:upgrade {}
      local sc = upgraded(e, r)
      t.eq(sc.reclaimPolicy, "Delete")
      t.eq(sc.metadata.annotations[DEFAULT], "true")
      t.eq(volumes(e), vols, "PVs and PVCs untouched")
      t.eq(#vols.pvs, 2)
      t.eq(#vols.pvcs, 2)
      t.eq(e:state().history[1].from, v)
      t.eq(e:state().params, { ["reclaim-policy"] = "Delete",
                               ["default-class"] = "true" })
    end)

  t.case(v .. " -> 1.6.0 with state saved by uphook", function()
    local e = env(v, { state = { version = v } })
    local r = e:upgrade {}
    upgraded(e, r)
    t.eq(e:state().history[1].from, v)
  end)
end

t.case("1.1.0: the StorageClass is recreated, not patched; PVs keep their class",
  function()
    local e = env("1.1.0")
    local old = class(e)
    t.eq(old.volumeBindingMode, "Immediate")    -- the server's default
    local r = e:upgrade {}
    upgraded(e, r)
    t.eq(#e:calls("kube.delete"), 1)
    t.eq(e:calls("kube.delete")[1][1], "StorageClass")
    t.ok(class(e).metadata.uid ~= old.metadata.uid, "a new object")
    for _, pv in ipairs(e:list("PersistentVolume")) do
      t.eq(pv.spec.storageClassName, CLASS)
      t.eq(pv.status.phase, "Bound")
    end
  end)

t.case("1.4.2: nothing immutable changes, so the class is only configured",
  function()
    local e = env("1.4.2")
    local uid = class(e).metadata.uid
    upgraded(e, e:upgrade {})
    t.eq(#e:calls("kube.delete"), 0)
    t.eq(class(e).metadata.uid, uid)
  end)

t.case("1.3.0 (MicroK8s 1.24): its class has no reclaimPolicy; nothing immutable changes",
  function()
    local e = env("1.3.0")
    local uid = class(e).metadata.uid
    t.eq(class(e).reclaimPolicy, "Delete")     -- the server's default
    upgraded(e, e:upgrade {})
    t.eq(#e:calls("kube.delete"), 0)
    t.eq(class(e).metadata.uid, uid)
  end)

t.case("1.5.0 (MicroK8s 1.29) enabled with -r Retain -d false: kept, class not recreated",
  function()
    local e = env("1.5.0")
    local uid = class(e).metadata.uid
    local vols = volumes(e)
    local sc = upgraded(e, e:upgrade {})
    t.eq(sc.reclaimPolicy, "Retain")
    t.eq(sc.metadata.annotations[DEFAULT], "false")
    t.eq(sc.metadata.uid, uid)
    t.eq(volumes(e), vols, "PVs and PVCs untouched")
    t.eq(e:state().history[1].from, "1.5.0")
    t.eq(e:state().params, { ["reclaim-policy"] = "Retain",
                             ["default-class"] = "false" })
  end)

-- 2. Parameters preserved with no state ---------------------------------

t.case("no state: Retain and a non-default class are read back from the live class",
  function()
    local e = env("1.4.2-retain")
    local vols = volumes(e)
    local nfs = e:get("StorageClass", "nfs-csi")
    local r = e:upgrade {}
    local sc = upgraded(e, r)
    t.eq(sc.reclaimPolicy, "Retain")
    t.eq(sc.metadata.annotations[DEFAULT], "false")
    t.eq(#e:calls("kube.delete"), 0, "nothing immutable changed")
    t.eq(e:get("StorageClass", "nfs-csi"), nfs, "the other class untouched")
    t.eq(volumes(e), vols)
    -- detect handed them to the engine, which saved them
    t.eq(e:state().params, { ["reclaim-policy"] = "Retain",
                             ["default-class"] = "false" })
  end)

t.case("state params that disagree with the live class: the live class wins",
  function()
    -- saved Delete/true, but the class was since made Retain/non-default
    local e = env("1.4.2-retain", { state = { version = "1.4.2",
      params = { ["reclaim-policy"] = "Delete", ["default-class"] = "true" } } })
    local r = e:upgrade {}
    local sc = upgraded(e, r)
    t.eq(sc.reclaimPolicy, "Retain")
    t.eq(sc.metadata.annotations[DEFAULT], "false")
    t.eq(#e:calls("kube.delete"), 0)
    t.match(table.concat(r.log, "\n"),
            "keeping %-%-reclaim%-policy=Retain from the live StorageClass")
  end)

t.case("no state, 1.0.0 made non-default by hand: recreated non-default",
  function()
    local e = env("1.0.0")
    -- what `kubectl annotate --overwrite` would have left
    e:patch("StorageClass", CLASS, nil,
      { metadata = { annotations = { [DEFAULT] = "false" } } },
      { manager = "kubectl-annotate" })
    upgraded(e, e:upgrade {})
    t.eq(class(e).metadata.annotations[DEFAULT], "false")
    t.eq(#e:calls("kube.delete"), 1)
  end)

-- 3. Parameters given on the command line --------------------------------

t.case("--reclaim-policy=Delete over a live Retain: recreated; PVs keep Retain",
  function()
    local e = env("1.4.2-retain")
    local vols = volumes(e)
    local r = e:upgrade { "--reclaim-policy=Delete" }
    local sc = upgraded(e, r)
    t.eq(sc.reclaimPolicy, "Delete")
    t.eq(sc.metadata.annotations[DEFAULT], "false", "default-class kept")
    t.eq(#e:calls("kube.delete"), 1)
    t.eq(volumes(e), vols)
    for _, pv in ipairs(e:list("PersistentVolume")) do
      t.eq(pv.spec.persistentVolumeReclaimPolicy, "Retain")
    end
    t.eq(e:state().params["reclaim-policy"], "Delete")
  end)

t.case("--default-class true (space form) only patches the annotation", function()
  local e = env("1.4.2-retain")
  local uid = class(e).metadata.uid
  local sc = upgraded(e, e:upgrade { "--default-class", "true" })
  t.eq(sc.metadata.annotations[DEFAULT], "true")
  t.eq(sc.reclaimPolicy, "Retain", "reclaim policy kept")
  t.eq(sc.metadata.uid, uid)
end)

t.case("enable's short options: -r Retain -d false, and -rRetain -dfalse", function()
  for _, args in ipairs { { "-r", "Retain", "-d", "false" },
                          { "-rRetain", "-dfalse" } } do
    local e = env("1.4.2")
    local sc = upgraded(e, e:upgrade(args))
    t.eq(sc.reclaimPolicy, "Retain", table.concat(args, " "))
    t.eq(sc.metadata.annotations[DEFAULT], "false")
    t.eq(e:state().params, { ["reclaim-policy"] = "Retain",
                             ["default-class"] = "false" })
  end
  local e = env("1.4.2")
  local r = e:upgrade { "-r", "Recycle" }
  t.eq(r.code, 2)
  t.match(r.error, "must be one of Delete, Retain")
end)

t.case("at 1.6.0, -r Retain alone runs the hook again (planned, journaled)", function()
  local e = env("1.4.2")
  t.eq(e:upgrade({}).code, 0)
  local again = e:upgrade {}
  t.ok(again.noop, "no parameter: nothing to do")
  local r = e:upgrade { "-r", "Retain" }
  t.eq(r.code, 0, r.error)
  t.ok(not r.noop, "the parameter was not applied")
  t.eq(class(e).reclaimPolicy, "Retain")
  t.eq(e:state().params["reclaim-policy"], "Retain")
end)

t.case("--reclaim-policy=Retain from 1.1.0: recreated with Retain", function()
  local e = env("1.1.0")
  local sc = upgraded(e, e:upgrade { "--reclaim-policy=Retain" })
  t.eq(sc.reclaimPolicy, "Retain")
  t.eq(sc.metadata.annotations[DEFAULT], "true")
end)

t.case("--reset-params ignores the live class: enable's defaults", function()
  local e = env("1.4.2-retain")
  local sc = upgraded(e, e:upgrade { "--reset-params" })
  t.eq(sc.reclaimPolicy, "Delete")
  t.eq(sc.metadata.annotations[DEFAULT], "true")
end)

t.case("a bad --reclaim-policy is a usage error, nothing changes", function()
  local e = env("1.1.0")
  local before = e:snapshot()
  local r = e:upgrade { "--reclaim-policy=Recycle" }
  t.eq(r.code, 2)
  t.match(r.error, "must be one of Delete, Retain")
  t.eq(e:snapshot(), before)
end)

-- 4. plan changes nothing -------------------------------------------------

for _, v in ipairs { "1.0.0", "1.1.0", "1.3.0", "1.4.2", "1.4.2-retain", "1.5.0" } do
  t.case("plan from " .. v .. " changes nothing", function()
    local e = env(v)
    local before = e:snapshot()
    local r = e:plan {}
    t.eq(r.code, 0, r.error)
    t.eq(e:snapshot(), before)
    t.eq(e:state(), nil)
    t.ok(#r.plan > 0, "the plan lists the changes")
  end)
end

t.case("plan from 1.1.0 shows the StorageClass deleted and created", function()
  local e = env("1.1.0")
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  local seen = {}
  for _, p in ipairs(r.plan) do
    if p.type == "kube" and p.kind == "StorageClass" then
      seen[#seen + 1] = p.action
    end
  end
  t.eq(seen, { "deleted", "created" })
end)

-- 5. A fault at every change rolls back to the fixture exactly -----------

for _, v in ipairs { "1.0.0", "1.1.0", "1.3.0", "1.4.2", "1.4.2-retain", "1.5.0" } do
  t.case("from " .. v .. ": a fault at every change rolls back exactly",
    function()
      local n = t.each_fault(function() return env(v) end)
      t.ok(n >= 5, "changes seen: " .. n)
    end)
end

t.case("a provisioner that never rolls out: verify times out, all rolled back",
  function()
    local e = env("1.1.0")
    local before = e:snapshot()
    e:stall("Deployment", "hostpath-provisioner", NS)
    local r = e:upgrade {}
    t.eq(r.code, 1)
    t.match(r.error, "rollout of Deployment kube%-system/hostpath%-provisioner")
    t.eq(e:snapshot(), before)
    t.eq(e:state(), nil)
  end)

-- 6. A second run is a no-op -----------------------------------------------

for _, v in ipairs(VERSIONS) do
  t.case("from " .. v .. ": a second run changes nothing", function()
    local e = env(v)
    t.eq(e:upgrade {}.code, 0)
    local after, applies = e:snapshot(), #e:calls("kube.apply")
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.eq(r.log, {}, "the hook's upgrade did not run")
    t.eq(#e:calls("kube.apply"), applies)
    t.eq(e:snapshot(), after)
    t.eq(#e:state().history, 1)
  end)
end

t.case("a 1.6.0 install without state is detected as current", function()
  local e = env("1.4.2")
  t.eq(e:upgrade {}.code, 0)
  local after = e:snapshot()
  -- drop the state: detect must read 1.6.0 from the image tag
  e:delete("v1/ConfigMap", "uphook-hostpath-storage", NS)
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(r.log, {}, "detect ran, upgrade did not")
  t.ok(#e:calls("kube.get") > 0, "detect read the cluster")
  after["v1/ConfigMap/kube-system/uphook-hostpath-storage"] = nil
  t.eq(e:snapshot(), after)
end)

-- Detection and preflight ---------------------------------------------------

t.case("not enabled: detect finds nothing, exit 4", function()
  local e = t.env { addon = ADDON }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "does not look installed")
end)

t.case("a foreign microk8s-hostpath class stops the upgrade before any change",
  function()
    local e = env("1.1.0")
    e:delete("storage.k8s.io/v1/StorageClass", CLASS)
    e:apply({ apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
      metadata = { name = CLASS }, provisioner = "rancher.io/local-path" })
    local before = e:snapshot()
    local r = e:upgrade {}
    t.eq(r.code, 4)
    t.match(r.error, "provisioner rancher.io/local%-path")
    t.eq(e:snapshot(), before)
  end)

t.case("a class deleted by hand is created again from the parameters", function()
  local e = env("1.4.2", { state = { version = "1.4.2",
    params = { ["reclaim-policy"] = "Retain", ["default-class"] = "false" } } })
  e:delete("storage.k8s.io/v1/StorageClass", CLASS)
  local vols = volumes(e)
  local sc = upgraded(e, e:upgrade {})
  t.eq(sc.reclaimPolicy, "Retain", "the saved parameter, the class being gone")
  t.eq(sc.metadata.annotations[DEFAULT], "false")
  t.eq(volumes(e), vols)
end)

t.case("a user's label on the class survives its recreation", function()
  local e = env("1.1.0")
  -- `kubectl label`
  e:patch("StorageClass", CLASS, nil,
    { metadata = { labels = { team = "storage" } } },
    { manager = "kubectl-label" })
  upgraded(e, e:upgrade {})
  t.eq(class(e).metadata.labels.team, "storage")
end)
