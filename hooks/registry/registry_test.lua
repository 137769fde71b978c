local t = require "uphook.test"

local NS = "container-registry"

local function env(o)
  o = o or {}
  return t.env { addon = ".", cluster = "fixtures/" .. (o.fixture
    or "cluster-2.7.1.yaml"), state = o.state }
end

local function image(e)
  return e:get("Deployment", "registry", NS).spec.template.spec.containers[1].image
end

--- The claim and its volume, as a user would compare them.
local function volume(e)
  local pvc = e:get("PersistentVolumeClaim", "registry-claim", NS)
  local pv = e:get("PersistentVolume", pvc.spec.volumeName)
  return { uid = pvc.metadata.uid, rv = pvc.metadata.resourceVersion,
    spec = pvc.spec, status = pvc.status, pv = pv.metadata.uid,
    path = pv.spec.hostPath.path }
end

local function size(e)
  return e:get("PersistentVolumeClaim", "registry-claim", NS)
    .spec.resources.requests.storage
end

for _, v in ipairs { "2.7.1", "2.8.1" } do
  t.case(v .. " -> 2.8.3 with no state: new image, claim and its volume untouched", function()
    local e = env { fixture = "cluster-" .. v .. ".yaml" }
    local before = volume(e)
    local svc = e:get("Service", "registry", NS)
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.eq(image(e), "registry:2.8.3")
    t.eq(e:state().version, "2.8.3")
    t.eq(e:state().history[1].from, v)
    t.eq(volume(e), before)
    for _, c in ipairs(e:calls("kube.apply")) do
      for _, o in ipairs(c[1].kind and { c[1] } or c[1]) do
        t.ok(o.kind ~= "PersistentVolumeClaim", "the claim was applied")
      end
    end
    -- NodePort 32000 and the Service's address kept
    local after = e:get("Service", "registry", NS)
    t.eq(after.spec.ports[1].nodePort, 32000)
    t.eq(after.spec.clusterIP, svc.spec.clusterIP)
    t.match(e:get("ConfigMap", "local-registry-hosting", "kube-public")
      .data["localRegistryHosting.v1"], 'host: "localhost:32000"')
    -- what enable was given is saved, read back from the claim
    t.eq(e:state().params, { size = before.spec.resources.requests.storage,
      storageclass = before.spec.storageClassName })
  end)
end

t.case("--size larger on a class that cannot expand: refused, nothing changed", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--size", "40Gi" }
  t.eq(r.code, 4)
  t.match(r.error, "size 40Gi: the claim container%-registry/registry%-claim "
    .. "%(20Gi%) cannot grow: its StorageClass microk8s%-hostpath does not "
    .. "allow volume expansion")
  t.eq(e:snapshot(), before)
end)

t.case("--size larger on an expandable class: the claim grows, same volume", function()
  local e = env { fixture = "cluster-2.8.1.yaml" }
  local before = volume(e)
  local r = e:upgrade { "--size=60Gi" }
  t.eq(r.code, 0, r.error)
  t.eq(size(e), "60Gi")
  local after = volume(e)
  t.eq(after.uid, before.uid)
  t.eq(after.pv, before.pv)
  t.eq(after.spec.storageClassName, "ssd-expandable")
  t.eq(after.spec.accessModes, before.spec.accessModes)
  t.eq(e:state().params.size, "60Gi")
end)

t.case("a rollout that fails before the claim grows: rolled back, claim untouched", function()
  local e = env { fixture = "cluster-2.8.1.yaml" }
  local before = volume(e)
  e:stall("Deployment", "registry", NS)
  local r = e:upgrade { "--size=60Gi" }
  t.eq(r.code, 1)
  t.eq(volume(e), before)
  t.eq(image(e), "registry:2.8.1")
end)

t.case("a failure after the claim grew: the claim is never deleted to shrink it (exit 6)", function()
  local e = env { fixture = "cluster-2.8.1.yaml" }
  local uid = volume(e).uid
  -- verify's read of the Service fails (the apply read it first)
  e:fail { on = "kube.get", kind = "Service", after = 1 }
  local r = e:upgrade { "--size=60Gi" }
  t.eq(r.code, 6, r.error)
  t.eq(volume(e).uid, uid)
  t.eq(size(e), "60Gi")
  -- the rest is back at 2.8.1
  t.eq(image(e), "registry:2.8.1")
end)

t.case("enable's deprecated size=NNGi (microk8s upgrade registry:size=60Gi)", function()
  local e = env { fixture = "cluster-2.8.1.yaml" }
  local r = e:upgrade { "size=60Gi" }
  t.eq(r.code, 0, r.error)
  t.eq(size(e), "60Gi")
  local warned = false
  for _, l in ipairs(r.log) do
    if l:find("size=60Gi is deprecated: use --size 60Gi", 1, true) then warned = true end
  end
  t.ok(warned, "no deprecation warning in " .. table.concat(r.log, "\n"))
end)

t.case("a positional argument that is not size=NNGi: refused before any change", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "30Gi" }
  t.eq(r.code, 4)
  t.match(r.error, 'registry takes %-%-size and %-%-storageclass %(or the deprecated size=NNGi%), not "30Gi"')
  t.eq(e:snapshot(), before)
end)

t.case("a size under 20Gi or not in Gi: usage error, as enable refuses it", function()
  for _, bad in ipairs { "10Gi", "20G", "0020Gi", "lots" } do
    local e = env()
    local r = e:upgrade { "--size", bad }
    t.eq(r.code, 2, bad)
    t.match(r.error, "at least 20Gi")
  end
end)

t.case("a smaller size: refused, a claim cannot shrink", function()
  local e = env { fixture = "cluster-2.8.1.yaml" }
  local before = e:snapshot()
  local r = e:upgrade { "--size", "20Gi" }
  t.eq(r.code, 4)
  t.match(r.error, "size 20Gi is smaller than the claim's 40Gi")
  t.eq(e:snapshot(), before)
end)

t.case("--storageclass other than the claim's: refused", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--storageclass", "ssd" }
  t.eq(r.code, 4)
  t.match(r.error, "%-%-storageclass ssd: the claim container%-registry/registry%-claim is on microk8s%-hostpath")
  t.eq(e:snapshot(), before)
  -- the class it is on is accepted
  t.eq(e:upgrade({ "--storageclass", "microk8s-hostpath" }).code, 0)
end)

t.case("no claim: refused with what to run", function()
  local e = env()
  e:delete("PersistentVolumeClaim", "registry-claim", NS)
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "registry%-claim is missing")
end)

t.case("already at 2.8.3: nothing to do; --size at 2.8.3 grows the claim", function()
  local e = env { fixture = "cluster-2.8.1.yaml" }
  t.eq(e:upgrade({}).code, 0)
  local again = e:upgrade {}
  t.eq(again.code, 0)
  t.ok(again.noop, "a second run did something")
  local r = e:upgrade { "--size", "50Gi" }
  t.eq(r.code, 0, r.error)
  t.ok(not r.noop, "--size at the current version was not applied")
  t.eq(size(e), "50Gi")
end)

t.case("plan changes nothing and shows the grown claim", function()
  local e = env { fixture = "cluster-2.8.1.yaml" }
  local before = e:snapshot()
  local r = e:plan { "--size", "60Gi" }
  t.eq(r.code, 0, r.error)
  t.eq(e:snapshot(), before)
  t.eq(e:state(), nil)
  local claim, deployment = false, false
  for _, x in ipairs(r.plan) do
    if x.type == "kube" and x.kind == "PersistentVolumeClaim" then claim = true end
    if x.type == "kube" and x.kind == "Deployment" then deployment = true end
  end
  t.ok(claim and deployment, "the plan lacks the claim or the Deployment")
end)

t.each_fault(function() return env() end)

t.case("state saved by uphook is used instead of detect; its saved size is kept", function()
  local e = env { fixture = "cluster-2.8.1.yaml",
    state = { version = "2.8.1", params = { size = "40Gi", storageclass = "ssd-expandable" } } }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(#e:state().history, 1)
  t.eq(e:state().history[1].from, "2.8.1")
  t.eq(size(e), "40Gi")
end)
