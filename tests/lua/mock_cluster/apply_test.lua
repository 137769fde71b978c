-- The mock cluster's fidelity (docs/contract.md §6): server-side apply: what
-- an apply stores and says, and its memo.
-- The objects the cases start from: tests/lua/mock_cluster/objects.lua.
local t = require "uphook.test"
local names = require "uphook.core.kinds"
local objects = require "objects"

local NS, deployment, storageclass, service, fixture, new, err_of =
  objects.NS, objects.deployment, objects.storageclass, objects.service,
  objects.fixture, objects.new, objects.err_of

t.case("apply creates, then unchanged, then configured", function()
  local b = new()
  local cm = { apiVersion = "v1", kind = "ConfigMap",
               metadata = { name = "new", namespace = NS },
               data = { a = "1" } }
  local o, action = b:apply(cm)
  t.eq(action, "created")
  t.eq(o.data, { a = "1" })
  local rv = o.metadata.resourceVersion
  o, action = b:apply(cm)
  t.eq(action, "unchanged")
  t.eq(o.metadata.resourceVersion, rv, "unchanged is not a write")
  cm.data.a = "2"
  o, action = b:apply(cm)
  t.eq(action, "configured")
  t.ok(tonumber(o.metadata.resourceVersion) > tonumber(rv))
  -- re-applying the seeded manifest as given changes no field, but the
  -- first time uphook becomes an owner of its fields (a new
  -- managedFields entry is a write, as on a real server); then it is
  -- unchanged
  local before = b:get("Deployment", "hostpath-provisioner", NS)
  local o2, a2 = b:apply(fixture()[2])
  t.eq(a2, "configured")
  t.eq(names.clean(o2).spec, names.clean(before).spec)
  t.eq(#o2.metadata.managedFields, 2)
  t.eq(select(2, b:apply(fixture()[2])), "unchanged")
  b:apply(fixture()[5])                     -- ClusterRole
  t.eq(select(2, b:apply(fixture()[5])), "unchanged")
end)

t.case("apply keeps fields the applied object does not set", function()
  local b = new()
  local svc = b:get("Service", "registry", NS)
  t.match(svc.spec.clusterIP, "^10%.152%.183%.%d+$")
  t.eq(svc.spec.clusterIPs, { svc.spec.clusterIP })
  -- a Service applied without clusterIP keeps the assigned one
  local o, action = b:apply(service({ sessionAffinity = "ClientIP" }))
  t.eq(action, "configured")
  t.eq(o.spec.clusterIP, svc.spec.clusterIP)
  t.eq(o.spec.sessionAffinity, "ClientIP")
  t.eq(o.spec.selector, { app = "registry" })
  -- a partial object: only the image changes
  o = b:apply{ apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "hostpath-provisioner", namespace = NS,
                 labels = { ["addon.microk8s.io/name"] = "hostpath-storage" },
                 annotations = { ["addon.microk8s.io/version"] = "1.4.2" } },
    spec = { template = { spec = { containers = { {
      name = "hostpath-provisioner",
      image = "cdkbot/hostpath:1.4.2" } } } } } }
  local c = o.spec.template.spec.containers[1]
  t.eq(c.image, "cdkbot/hostpath:1.4.2")
  t.eq(#c.env, 2)
  t.eq(c.volumeMounts[1].name, "pv-volume")
  t.eq(o.spec.template.spec.serviceAccountName, "microk8s-hostpath")
  t.eq(o.metadata.labels, { ["k8s-app"] = "hostpath-provisioner",
    ["addon.microk8s.io/name"] = "hostpath-storage" })
  t.eq(o.metadata.annotations["addon.microk8s.io/version"], "1.4.2")
end)

t.case("keyed lists merge: containers, env by name, ports", function()
  local b = new()
  local d = deployment("img:1")
  local c = d.spec.template.spec.containers[1]
  c.env = { { name = "PV_DIR", value = "/new" },
            { name = "PV_RECLAIM_POLICY", value = "Retain" } }
  c.ports = { { containerPort = 9000 } }
  c.volumeMounts = { { name = "pv-volume",
                       mountPath = "/var/snap/default-storage",
                       readOnly = false } }
  d.spec.template.spec.containers[2] = { name = "sidecar", image = "s:1" }
  d.spec.template.spec.volumes = { { name = "extra", emptyDir = {} } }
  local o = b:apply(d)
  local cs = o.spec.template.spec.containers
  t.eq(#cs, 2)
  t.eq(cs[1].name, "hostpath-provisioner")
  t.eq(cs[2].name, "sidecar")
  local env = {}
  for _, e in ipairs(cs[1].env) do env[e.name] = e.value or "from" end
  t.eq(env, { NODE_NAME = "from", PV_DIR = "/new",
              PV_RECLAIM_POLICY = "Retain" })
  t.eq(cs[1].env[1].name, "NODE_NAME", "existing order kept")
  t.eq(cs[1].ports, { { containerPort = 9000, protocol = "TCP" } })
  t.eq(cs[1].volumeMounts[1].readOnly, false)
  t.eq(#o.spec.template.spec.volumes, 2, "volumes merge by name")
  -- container ports merge on containerPort+protocol
  c.ports = { { containerPort = 9000, name = "metrics" },
              { containerPort = 53, protocol = "UDP" } }
  o = b:apply(d)
  t.eq(o.spec.template.spec.containers[1].ports, {
    { containerPort = 9000, protocol = "TCP", name = "metrics" },
    { containerPort = 53, protocol = "UDP" } })
  -- Service ports merge on port+protocol
  local s = b:apply(service({ type = "NodePort",
    ports = { { port = 5000, nodePort = 32000 }, { port = 5001 } } }))
  t.eq(s.spec.ports, {
    { name = "http", port = 5000, protocol = "TCP", targetPort = 5000,
      nodePort = 32000 },
    { port = 5001, protocol = "TCP", targetPort = 5001 } })
end)

t.case("other lists are replaced (ClusterRole rules, subjects)", function()
  local b = new()
  local o = b:apply{ apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "ClusterRole", metadata = { name = "microk8s-hostpath" },
    rules = { { apiGroups = { "storage.k8s.io" },
                resources = { "storageclasses" }, verbs = { "list" } } } }
  t.eq(#o.rules, 1)
  t.eq(o.rules[1].resources, { "storageclasses" })
end)

t.case("null in the applied object removes the field", function()
  local NULL = {}
  local b = new{ null = NULL }
  local o = b:apply{ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "uphook-hostpath-storage", namespace = NS },
    data = { version = NULL, params = "x: 1" } }
  t.eq(o.data, { params = "x: 1" })
  o = b:apply{ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "c2", namespace = NS, labels = NULL },
    data = { a = "1", b = NULL } }
  t.eq(o.data, { a = "1" })
  t.eq(o.metadata.labels, nil)
end)

t.case("applied metadata.resourceVersion is a precondition", function()
  local b = new()
  local cm = b:get("ConfigMap", "uphook-hostpath-storage", NS)
  cm.metadata.managedFields = nil   -- an apply may not carry them
  cm.data.version = "1.4.2"
  local o, action = b:apply(cm)                 -- current rv: fine
  t.eq(action, "configured")
  cm.data.version = "9"                         -- now stale
  local e = err_of(function() b:apply(cm) end)
  t.eq(e.code, 409)
  t.eq(e.reason, "Conflict")
  t.eq(o.data.version, "1.4.2")
end)

t.case("generation advances on spec changes only", function()
  local b = new()
  local d0 = b:get("Deployment", "hostpath-provisioner", NS)
  local d = deployment("cdkbot/hostpath-provisioner:1.1.0")
  d.metadata.labels.extra = "yes"
  local o = b:apply(d)
  t.eq(o.metadata.generation, 1, "a label is not a spec change")
  t.ok(tonumber(o.metadata.resourceVersion) >
       tonumber(d0.metadata.resourceVersion), "but it is a write")
  o = b:apply(deployment("img:2"))
  t.eq(o.metadata.generation, 2)
  o = b:apply(deployment("img:2", { replicas = 3 }))
  t.eq(o.metadata.generation, 3)
  -- kinds without generation never get one
  local cm = b:apply{ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "uphook-hostpath-storage", namespace = NS },
    data = { version = "1.4.2" } }
  t.eq(cm.metadata.generation, nil)
  local svc = b:apply(service({ sessionAffinity = "ClientIP" }))
  t.eq(svc.metadata.generation, nil)
end)

t.case("resourceVersion advances on every write, globally", function()
  local b = new()
  local seen, last = {}, 0
  local function check(o)
    local rv = tonumber(o.metadata.resourceVersion)
    t.ok(rv > last, "resourceVersion must grow")
    t.ok(not seen[rv]); seen[rv] = true; last = rv
  end
  check(b:apply{ apiVersion = "v1", kind = "ConfigMap",
                 metadata = { name = "a", namespace = NS } })
  check(b:create{ apiVersion = "v1", kind = "ConfigMap",
                  metadata = { name = "b", namespace = NS } })
  check(b:replace{ apiVersion = "v1", kind = "ConfigMap",
                   metadata = { name = "a", namespace = NS },
                   data = { x = "1" } })
  check(b:apply{ apiVersion = "v1", kind = "ConfigMap",
                 metadata = { name = "b", namespace = NS },
                 data = { y = "1" } })
end)

t.case("dry run computes the result and stores nothing", function()
  local b = new()
  local before = b:objects()
  local o, action = b:apply(deployment("img:9"), { dry_run = true })
  t.eq(action, "configured")
  t.eq(o.spec.template.spec.containers[1].image, "img:9")
  t.eq(o.metadata.generation, 2)
  local _, a2 = b:apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "dry", namespace = NS } }, { dry_run = true })
  t.eq(a2, "created")
  b:apply(fixture()[3])                      -- uphook owns its fields
  before = b:objects()
  local _, a3 = b:apply(fixture()[3], { dry_run = true })
  t.eq(a3, "unchanged")
  t.eq(b:objects(), before)
  -- and a dry run is still validated
  t.err(function()
    b:apply(storageclass({ reclaimPolicy = "Retain" }), { dry_run = true })
  end, "reclaimPolicy: Forbidden")
end)

--- The apply memo (uphook.backend.mock.fieldmanager) -------------------------------

t.case("the same apply in two clusters gives each its own, equal object",
function()
  local a, b = new(), new()
  local x = a:apply(deployment("cdkbot/hostpath-provisioner:1.6.0"))
  local y = b:apply(deployment("cdkbot/hostpath-provisioner:1.6.0"))
  t.eq(y, x)
  x.spec.replicas = 5
  y.metadata.managedFields[1].manager = "someone"
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  t.eq(d.spec.replicas, 1)
  t.ok(d.metadata.managedFields[1].manager ~= "someone",
    "the stored object is not the one returned")
  local z = b:apply(deployment("cdkbot/hostpath-provisioner:1.7.0"))
  t.eq(z.spec.template.spec.containers[1].image,
    "cdkbot/hostpath-provisioner:1.7.0")
end)
