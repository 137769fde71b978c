-- The mock cluster's fidelity (docs/contract.md §6).
local t = require "uphook.test"
local cluster = require "uphook.backend.mock.cluster"
local names = require "uphook.core.kinds"

local NS = "kube-system"

local function deployment(image, extra)
  local d = {
    apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "hostpath-provisioner", namespace = NS,
                 labels = { ["k8s-app"] = "hostpath-provisioner" } },
    spec = {
      replicas = 1,
      selector = { matchLabels = { ["k8s-app"] = "hostpath-provisioner" } },
      template = {
        metadata = { labels = { ["k8s-app"] = "hostpath-provisioner" } },
        spec = {
          serviceAccountName = "microk8s-hostpath",
          containers = { {
            name = "hostpath-provisioner", image = image,
            env = { { name = "NODE_NAME", valueFrom = { fieldRef = {
                      fieldPath = "spec.nodeName" } } },
                    { name = "PV_DIR", value = "/var/snap/default-storage" } },
            volumeMounts = { { name = "pv-volume",
                               mountPath = "/var/snap/default-storage" } },
          } },
          volumes = { { name = "pv-volume", hostPath = {
                          path = "/var/snap/default-storage" } } },
        },
      },
    },
  }
  for k, v in pairs(extra or {}) do d.spec[k] = v end
  return d
end

local function storageclass(extra)
  local sc = {
    apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
    metadata = { name = "microk8s-hostpath", annotations = {
      ["storageclass.kubernetes.io/is-default-class"] = "true" } },
    provisioner = "microk8s.io/hostpath",
  }
  for k, v in pairs(extra or {}) do sc[k] = v end
  return sc
end

local function service(extra)
  local s = { apiVersion = "v1", kind = "Service",
    metadata = { name = "registry", namespace = NS },
    spec = { selector = { app = "registry" },
             ports = { { name = "http", port = 5000 } } } }
  for k, v in pairs(extra or {}) do s.spec[k] = v end
  return s
end

local function fixture()
  return {
    { apiVersion = "v1", kind = "Node", metadata = { name = "node-1",
      labels = { ["kubernetes.io/arch"] = "amd64",
                 ["node-role.kubernetes.io/control-plane"] = "" } },
      status = { conditions = { { type = "Ready", status = "True" } },
                 nodeInfo = { kubeletVersion = "v1.29.4",
                              architecture = "amd64",
                              operatingSystem = "linux" },
                 addresses = { { type = "InternalIP",
                                 address = "10.0.0.5" } } } },
    deployment("cdkbot/hostpath-provisioner:1.1.0"),
    storageclass(),
    { apiVersion = "v1", kind = "ServiceAccount",
      metadata = { name = "microk8s-hostpath", namespace = NS } },
    { apiVersion = "rbac.authorization.k8s.io/v1", kind = "ClusterRole",
      metadata = { name = "microk8s-hostpath" },
      rules = { { apiGroups = { "" }, resources = { "persistentvolumes" },
                  verbs = { "get", "list" } },
                { apiGroups = { "" }, resources = { "events" },
                  verbs = { "create" } } } },
    { apiVersion = "rbac.authorization.k8s.io/v1", kind = "ClusterRoleBinding",
      metadata = { name = "microk8s-hostpath" },
      roleRef = { apiGroup = "rbac.authorization.k8s.io",
                  kind = "ClusterRole", name = "microk8s-hostpath" },
      subjects = { { kind = "ServiceAccount", name = "microk8s-hostpath",
                     namespace = NS } } },
    { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "uphook-hostpath-storage", namespace = NS },
      data = { version = "1.1.0" } },
    { apiVersion = "v1", kind = "PersistentVolumeClaim",
      metadata = { name = "data", namespace = "default" },
      spec = { accessModes = { "ReadWriteOnce" },
               storageClassName = "microk8s-hostpath",
               volumeName = "pvc-1",
               resources = { requests = { storage = "1Gi" } } },
      status = { phase = "Bound", capacity = { storage = "1Gi" } } },
    service(),
  }
end

local function new(opts)
  opts = opts or {}
  opts.objects = opts.objects or fixture()
  return cluster.new(opts)
end

local function err_of(fn)
  local ok, e = pcall(fn)
  t.ok(not ok, "expected an error")
  return e
end

--- Seeding and reads ---------------------------------------------------

t.case("seed keeps what the fixture sets and fills server fields", function()
  local b = new()
  t.eq(b.name, "mock")
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  t.eq(d.metadata.generation, 1)
  t.match(d.metadata.uid, "^%x+%-")
  t.match(d.metadata.resourceVersion, "^%d+$")
  t.eq(d.metadata.creationTimestamp, "2024-01-01T00:00:00Z")
  t.eq(d.spec.template.spec.containers[1].image,
       "cdkbot/hostpath-provisioner:1.1.0")
  -- a settled cluster: seeded workloads are rolled out
  t.eq(d.status.observedGeneration, 1)
  t.eq(d.status.updatedReplicas, 1)
  local pvc = b:get("PersistentVolumeClaim", "data", "default")
  t.eq(pvc.status.phase, "Bound")
  local given = new{ objects = { { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "x", namespace = NS, uid = "u-1",
                 resourceVersion = "500" } } } }
  local cm = given:get("ConfigMap", "x", NS)
  t.eq(cm.metadata.uid, "u-1")
  t.eq(cm.metadata.resourceVersion, "500")
  t.eq(cm.metadata.generation, nil, "ConfigMaps have no generation")
  given:apply{ apiVersion = "v1", kind = "ConfigMap",
               metadata = { name = "x", namespace = NS }, data = { a = "1" } }
  t.ok(tonumber(given:get("ConfigMap", "x", NS).metadata.resourceVersion)
       > 500, "resourceVersion continues after the seeded one")
end)

t.case("kind arguments: Kind, v1/Kind, group/version/Kind", function()
  local b = new()
  t.ok(b:get("Deployment", "hostpath-provisioner", NS))
  t.ok(b:get("apps/v1/Deployment", "hostpath-provisioner", NS))
  t.ok(b:get("v1/ConfigMap", "uphook-hostpath-storage", NS))
  t.ok(b:get("storage.k8s.io/v1/StorageClass", "microk8s-hostpath"))
  t.eq(b:get("Deployment", "nope", NS), nil)
  local e = err_of(function() b:get("apps/v1beta1/Deployment", "x", NS) end)
  t.eq(e.code, 404)
  t.eq(e.message, 'no matches for kind "Deployment" in version ' ..
                  '"apps/v1beta1"')
  e = err_of(function() b:get("Gizmo", "x", NS) end)
  t.eq(e.code, 404)
  t.eq(tostring(e), 'the server doesn\'t have a resource type "Gizmo"')
end)

t.case("ValidatingAdmissionPolicy and its binding are served (GA in 1.30)", function()
  local b = new()
  b:apply { apiVersion = "admissionregistration.k8s.io/v1",
    kind = "ValidatingAdmissionPolicy", metadata = { name = "safe-upgrades" },
    spec = { failurePolicy = "Fail", validations = { { expression = "true" } } } }
  b:apply { apiVersion = "admissionregistration.k8s.io/v1",
    kind = "ValidatingAdmissionPolicyBinding",
    metadata = { name = "safe-upgrades" },
    spec = { policyName = "safe-upgrades", validationActions = { "Deny" } } }
  t.eq(b:get("ValidatingAdmissionPolicy", "safe-upgrades").spec.failurePolicy, "Fail")
  t.eq(b:get("ValidatingAdmissionPolicyBinding", "safe-upgrades").spec.policyName,
    "safe-upgrades")
end)

t.case("RuntimeClass (node.k8s.io/v1, which every real cluster serves) is served, cluster-scoped", function()
  local b = new()
  t.eq(b:namespaced("node.k8s.io/v1", "RuntimeClass"), false)
  b:apply { apiVersion = "node.k8s.io/v1", kind = "RuntimeClass",
    metadata = { name = "kata" }, handler = "kata" }
  t.eq(b:get("RuntimeClass", "kata").handler, "kata")
  t.eq(b:get("RuntimeClass", "kata").metadata.namespace, nil)
end)

t.case("list: namespace, equality label selectors, sorted", function()
  local b = new()
  for _, n in ipairs({ "b", "a", "c" }) do
    b:apply{ apiVersion = "v1", kind = "ConfigMap",
             metadata = { name = n, namespace = "default",
                          labels = { tier = n == "c" and "x" or "y" } } }
  end
  b:apply{ apiVersion = "v1", kind = "ConfigMap",
           metadata = { name = "a", namespace = NS, labels = { tier = "y" } } }
  local names = {}
  for _, o in ipairs(b:list("ConfigMap", { labels = { tier = "y" } })) do
    names[#names + 1] = o.metadata.namespace .. "/" .. o.metadata.name
  end
  t.eq(names, { "default/a", "default/b", "kube-system/a" })
  t.eq(#b:list("ConfigMap", { namespace = "default" }), 3)
  t.eq(#b:list("v1/Node"), 1)
  t.eq(b:list("ConfigMap", { namespace = "default" })[1].kind, "ConfigMap")
end)

t.case("deep copies: callers cannot reach stored objects", function()
  local objs = fixture()
  local b = cluster.new{ objects = objs }
  objs[2].spec.replicas = 7                      -- the fixture itself
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  t.eq(d.spec.replicas, 1)
  d.spec.replicas = 9                            -- a returned object
  d.metadata.labels.x = "y"
  t.eq(b:get("Deployment", "hostpath-provisioner", NS).spec.replicas, 1)
  local applied = deployment("img:2")
  local out = b:apply(applied)
  applied.spec.template.spec.containers[1].image = "mutated"
  out.spec.template.spec.containers[1].image = "mutated too"
  t.eq(b:get("Deployment", "hostpath-provisioner", NS)
         .spec.template.spec.containers[1].image, "img:2")
  b:list("Deployment")[1].spec.replicas = 5
  b:objects()[1].metadata.name = "renamed"
  t.eq(b:get("Deployment", "hostpath-provisioner", NS).spec.replicas, 1)
  t.ok(b:get("v1/Node", "node-1"))
end)

--- Server-side apply ----------------------------------------------------

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

--- Immutable fields ------------------------------------------------------

t.case("StorageClass: each immutable field with its message", function()
  local b = new()
  local function msg(extra)
    local e = err_of(function() b:apply(storageclass(extra)) end)
    t.eq(e.code, 422)
    t.eq(e.reason, "Invalid")
    return e.message
  end
  local pre = 'StorageClass.storage.k8s.io "microk8s-hostpath" is invalid: '
  t.eq(msg({ reclaimPolicy = "Retain" }), pre ..
       "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.")
  t.eq(msg({ volumeBindingMode = "WaitForFirstConsumer" }), pre ..
       'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field ' ..
       'is immutable')
  t.eq(msg({ provisioner = "other" }), pre ..
       "provisioner: Forbidden: updates to provisioner are forbidden.")
  t.eq(msg({ parameters = { pvDir = "/x" } }), pre ..
       "parameters: Forbidden: updates to parameters are forbidden.")
  t.eq(msg({ parameters = { a = "b" }, reclaimPolicy = "Retain" }), pre ..
       "[parameters: Forbidden: updates to parameters are forbidden., " ..
       "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.]")
  -- the defaults the server filled in are not changes
  b:apply(storageclass())                    -- uphook owns its fields
  local _, action = b:apply(storageclass({ reclaimPolicy = "Delete",
                                            volumeBindingMode = "Immediate" }))
  t.eq(action, "configured", "uphook now owns the two fields")
  t.eq(select(2, b:apply(storageclass({ reclaimPolicy = "Delete",
    volumeBindingMode = "Immediate" }))), "unchanged")
  _, action = b:apply(storageclass({ allowVolumeExpansion = true }))
  t.eq(action, "configured")
  -- the way out: delete and recreate
  t.eq(b:delete("StorageClass", "microk8s-hostpath"), true)
  local o
  o, action = b:apply(storageclass({
    volumeBindingMode = "WaitForFirstConsumer" }))
  t.eq(action, "created")
  t.eq(o.volumeBindingMode, "WaitForFirstConsumer")
end)

t.case("workload selectors are immutable", function()
  local b = new()
  local d = deployment("img:1")
  d.spec.selector.matchLabels = { app = "other" }
  d.spec.template.metadata.labels = { app = "other" }
  local e = err_of(function() b:apply(d) end)
  t.eq(e.code, 422)
  -- LabelSelector is atomic (+structType=atomic): the applied selector
  -- replaces the live one whole, it is not merged into it
  t.eq(e.message, 'Deployment.apps "hostpath-provisioner" is invalid: ' ..
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:' ..
    'map[string]string{"app":"other"}, ' ..
    'MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is ' ..
    'immutable')
  -- a selector that does not match the template is its own error
  -- (on update, SSA merges the labels, so show it on a new object)
  local bad = deployment("img:1")
  bad.metadata.name = "bad"
  bad.spec.template.metadata.labels = { app = "x" }
  e = err_of(function() b:apply(bad) end)
  t.eq(e.message, 'Deployment.apps "bad" is invalid: ' ..
    'spec.template.metadata.labels: Invalid value: ' ..
    'map[string]string{"app":"x"}: ' ..
    '`selector` does not match template `labels`')
  -- DaemonSet
  local ds = deployment("img:1")
  ds.kind, ds.metadata.name, ds.spec.replicas = "DaemonSet", "ds", nil
  b:apply(ds)
  ds.spec.selector = { matchLabels = { ["k8s-app"] = "hostpath-provisioner",
                                       v = "2" } }
  ds.spec.template.metadata.labels.v = "2"
  e = err_of(function() b:apply(ds) end)
  t.eq(e.message, 'DaemonSet.apps "ds" is invalid: spec.selector: ' ..
    'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{' ..
    '"k8s-app":"hostpath-provisioner", "v":"2"}, MatchExpressions:' ..
    '[]v1.LabelSelectorRequirement(nil)}: field is immutable')
  -- StatefulSet: the server's own wording covers the selector
  local sts = deployment("img:1")
  sts.kind, sts.metadata.name = "StatefulSet", "sts"
  sts.spec.serviceName = "sts"
  b:apply(sts)
  sts.spec.selector = ds.spec.selector
  sts.spec.template.metadata.labels.v = "2"
  e = err_of(function() b:apply(sts) end)
  t.eq(e.message, 'StatefulSet.apps "sts" is invalid: spec: Forbidden: ' ..
    "updates to statefulset spec for fields other than 'replicas', " ..
    "'ordinals', 'template', 'updateStrategy', " ..
    "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are " ..
    "forbidden")
  sts.spec.selector = deployment("x").spec.selector
  sts.spec.replicas = 3
  local _, action = b:apply(sts)
  t.eq(action, "configured", "template and replicas may change")
end)

t.case("Service clusterIP is immutable", function()
  local b = new()
  local ip = b:get("Service", "registry", NS).spec.clusterIP
  local e = err_of(function()
    b:apply(service({ clusterIP = "10.152.183.200" }))
  end)
  t.eq(e.code, 422)
  t.eq(e.message, 'Service "registry" is invalid: spec.clusterIPs[0]: ' ..
    'Invalid value: []string{"10.152.183.200"}: may not change once set')
  b:apply(service())                         -- uphook owns its fields
  local o = b:apply(service({ clusterIP = ip }))
  t.eq(o.spec.clusterIP, ip, "the same IP is no change")
  -- replace without clusterIP keeps the allocated one (as PUT does)
  local s = b:get("Service", "registry", NS)
  s.spec.clusterIP, s.spec.clusterIPs = nil, nil
  t.eq(b:replace(s).spec.clusterIP, ip)
  -- through replace, the change is rejected too
  s = b:get("Service", "registry", NS)
  s.spec.clusterIP = "10.152.183.201"
  t.err(function() b:replace(s) end, "may not change once set")
  -- a second Service gets a different address
  local s2 = b:apply{ apiVersion = "v1", kind = "Service",
    metadata = { name = "other", namespace = NS },
    spec = { ports = { { port = 80 } } } }
  t.ok(s2.spec.clusterIP ~= ip)
  local hl = b:apply{ apiVersion = "v1", kind = "Service",
    metadata = { name = "headless", namespace = NS },
    spec = { clusterIP = "None" } }
  t.eq(hl.spec.clusterIP, "None")
end)

t.case("PVC: storageClassName, volumeName, shrinking", function()
  local b = new()
  local function pvc(spec)
    local p = { apiVersion = "v1", kind = "PersistentVolumeClaim",
      metadata = { name = "data", namespace = "default" }, spec = spec }
    return p
  end
  local e = err_of(function()
    b:apply(pvc({ storageClassName = "other" }))
  end)
  t.eq(e.code, 422)
  t.match(e.message, '^PersistentVolumeClaim "data" is invalid: spec: ' ..
    "Forbidden: spec is immutable after creation except " ..
    "resources%.requests and volumeAttributesClassName for bound claims")
  t.match(e.message, 'StorageClassName: "other"')
  e = err_of(function() b:apply(pvc({ volumeName = "pvc-2" })) end)
  t.match(e.message, "spec is immutable after creation")
  t.match(e.message, 'VolumeName: "pvc%-2"')
  -- only grow, and only when the class allows expansion
  e = err_of(function()
    b:apply(pvc({ resources = { requests = { storage = "2Gi" } } }))
  end)
  t.eq(e.code, 403)
  t.eq(e.message, 'persistentvolumeclaims "data" is forbidden: only ' ..
    "dynamically provisioned pvc can be resized and the storageclass " ..
    "that provisions the pvc must support resize")
  b:apply(storageclass({ allowVolumeExpansion = true }))
  local o = b:apply(pvc({ resources = { requests = { storage = "2Gi" } } }))
  t.eq(o.spec.resources.requests.storage, "2Gi")
  e = err_of(function()
    b:apply(pvc({ resources = { requests = { storage = "512Mi" } } }))
  end)
  t.eq(e.message, 'PersistentVolumeClaim "data" is invalid: ' ..
    "spec.resources.requests.storage: Forbidden: field can not be less " ..
    "than status.capacity")
  -- without a recorded capacity, the classic rule and message
  local b2 = new{ objects = { storageclass({ allowVolumeExpansion = true }),
    { apiVersion = "v1", kind = "PersistentVolumeClaim",
      metadata = { name = "d", namespace = "default" },
      spec = { resources = { requests = { storage = "10Gi" } } },
      status = { phase = "Bound" } } } }
  e = err_of(function()
    b2:apply{ apiVersion = "v1", kind = "PersistentVolumeClaim",
      metadata = { name = "d", namespace = "default" },
      spec = { resources = { requests = { storage = "1Gi" } } } }
  end)
  t.eq(e.message, 'PersistentVolumeClaim "d" is invalid: ' ..
    "spec.resources.requests.storage: Forbidden: field can not be less " ..
    "than previous value")
  -- a new claim gets the default class
  t.eq(b2:get("PersistentVolumeClaim", "d", "default")
         .spec.storageClassName, "microk8s-hostpath")
end)

t.case("more immutables: roleRef, Job template, immutable ConfigMap",
function()
  local b = new()
  local crb = fixture()[6]
  crb.roleRef.name = "other"
  t.eq(err_of(function() b:apply(crb) end).message,
    'ClusterRoleBinding.rbac.authorization.k8s.io "microk8s-hostpath" ' ..
    'is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:' ..
    '"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"other"}: ' ..
    "cannot change roleRef")
  local job = { apiVersion = "batch/v1", kind = "Job",
    metadata = { name = "migrate", namespace = NS },
    spec = { template = { spec = { restartPolicy = "Never",
      containers = { { name = "m", image = "m:1" } } } } } }
  b:apply(job)
  job.spec.template.spec.containers[1].image = "m:2"
  t.err(function() b:apply(job) end,
        '^Job%.batch "migrate" is invalid: spec%.template: Invalid value: ' ..
        '.*: field is immutable$')
  local cm = { apiVersion = "v1", kind = "ConfigMap", immutable = true,
    metadata = { name = "frozen", namespace = NS }, data = { a = "1" } }
  b:apply(cm)
  cm.data.a = "2"
  t.eq(err_of(function() b:apply(cm) end).message,
    'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable ' ..
    "when `immutable` is set")
end)

--- Errors -------------------------------------------------------------

t.case("NotFound, AlreadyExists, Conflict messages", function()
  local b = new()
  local e = err_of(function()
    b:replace{ apiVersion = "apps/v1", kind = "Deployment",
               metadata = { name = "x", namespace = NS } }
  end)
  t.ok(require("uphook.core.kubeerror").is(e), "an API error table, got "
    .. type(e))
  t.eq(e.code, 404)
  t.eq(e.reason, "NotFound")
  t.eq(e.message, 'deployments.apps "x" not found')
  t.eq(tostring(e), 'deployments.apps "x" not found')
  e = err_of(function()
    b:replace{ apiVersion = "v1", kind = "ConfigMap",
               metadata = { name = "x", namespace = NS } }
  end)
  t.eq(e.message, 'configmaps "x" not found')
  e = err_of(function() b:create(fixture()[7]) end)
  t.eq(e.code, 409)
  t.eq(e.reason, "AlreadyExists")
  t.eq(e.message, 'configmaps "uphook-hostpath-storage" already exists')
  e = err_of(function() b:create(storageclass()) end)
  t.eq(e.message,
       'storageclasses.storage.k8s.io "microk8s-hostpath" already exists')
  local cm = b:get("ConfigMap", "uphook-hostpath-storage", NS)
  cm.data.version = "1.2.0"
  local stale = b:replace(cm)
  t.eq(stale.data.version, "1.2.0")
  cm.data.version = "1.3.0"   -- cm still carries the old resourceVersion
  e = err_of(function() b:replace(cm) end)
  t.eq(e.code, 409)
  t.eq(e.reason, "Conflict")
  t.eq(e.message, 'Operation cannot be fulfilled on configmaps ' ..
    '"uphook-hostpath-storage": the object has been modified; please ' ..
    'apply your changes to the latest version and try again')
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  b:apply(deployment("img:2"))
  e = err_of(function() b:replace(d) end)
  t.match(e.message, '^Operation cannot be fulfilled on deployments%.apps ' ..
                     '"hostpath%-provisioner"')
  -- no resourceVersion: an unconditional PUT
  cm.metadata.resourceVersion = nil
  t.eq(b:replace(cm).data.version, "1.3.0")
end)

t.case("namespaces must exist, except the built-in ones", function()
  local b = new()
  local e = err_of(function()
    b:apply{ apiVersion = "v1", kind = "ConfigMap",
             metadata = { name = "a", namespace = "metallb-system" } }
  end)
  t.eq(e.code, 404)
  t.eq(e.message, 'namespaces "metallb-system" not found')
  local ns = b:apply{ apiVersion = "v1", kind = "Namespace",
                      metadata = { name = "metallb-system" } }
  t.eq(ns.metadata.namespace, nil)
  t.eq(b:get("Namespace", "metallb-system").status.phase, "Active")
  b:apply{ apiVersion = "v1", kind = "ConfigMap",
           metadata = { name = "a", namespace = "metallb-system" } }
  t.ok(b:get("ConfigMap", "a", "metallb-system"))
  -- deleting the namespace takes its objects
  t.eq(b:delete("Namespace", "metallb-system"), true)
  t.eq(b:get("ConfigMap", "a", "metallb-system"), nil)
  t.eq(b:delete("Namespace", "metallb-system"), false)
end)

t.case("invalid names are rejected like the server does", function()
  local b = new()
  local e = err_of(function()
    b:apply{ apiVersion = "v1", kind = "ConfigMap",
             metadata = { name = "Bad_Name", namespace = NS } }
  end)
  t.eq(e.code, 422)
  t.match(e.message, '^ConfigMap "Bad_Name" is invalid: metadata%.name: ' ..
          'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')
  -- a subdomain bounds the whole name (253), not each part: a part of 64
  -- is valid (IsDNS1123Subdomain), where a Namespace's label is not
  local long = string.rep("a", 64) .. ".example"
  t.eq(select(2, b:apply{ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = long, namespace = NS } }), "created")
  e = err_of(function()
    b:apply{ apiVersion = "v1", kind = "Namespace",
             metadata = { name = string.rep("a", 64) } }
  end)
  t.eq(e.code, 422)
  t.match(e.message, "a lowercase RFC 1123 label must consist")
  e = err_of(function()
    b:apply{ apiVersion = "v1", kind = "ConfigMap",
             metadata = { name = string.rep("a", 254), namespace = NS } }
  end)
  t.match(e.message, "a lowercase RFC 1123 subdomain")
  -- RBAC names may carry colons
  local _, action = b:apply{ apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "ClusterRole", metadata = { name = "system:microk8s:x" } }
  t.eq(action, "created")
end)

--- Custom resources -----------------------------------------------------

local function crd()
  return { apiVersion = "apiextensions.k8s.io/v1",
    kind = "CustomResourceDefinition",
    metadata = { name = "ipaddresspools.metallb.io" },
    spec = { group = "metallb.io", scope = "Namespaced",
      names = { kind = "IPAddressPool", plural = "ipaddresspools",
                listKind = "IPAddressPoolList", singular = "ipaddresspool" },
      versions = { { name = "v1beta1", served = true, storage = true,
                     subresources = { status = {} } } } } }
end

local function pool(v)
  return { apiVersion = "metallb.io/" .. (v or "v1beta1"),
    kind = "IPAddressPool",
    metadata = { name = "default-addresspool", namespace = NS },
    spec = { addresses = { "10.64.140.43-10.64.140.49" } } }
end

t.case("custom resources are rejected until their CRD exists", function()
  local b = new()
  local e = err_of(function() b:apply(pool()) end)
  t.eq(e.code, 404)
  t.eq(e.reason, "NotFound")
  t.eq(e.message, 'no matches for kind "IPAddressPool" in version ' ..
                  '"metallb.io/v1beta1"')
  t.err(function() b:get("IPAddressPool", "x", NS) end,
        'resource type "IPAddressPool"')
  local c, action = b:apply(crd())
  t.eq(action, "created")
  t.eq(c.metadata.generation, 1)
  local got = b:get("CustomResourceDefinition", "ipaddresspools.metallb.io")
  local conds = {}
  for _, x in ipairs(got.status.conditions) do conds[x.type] = x.status end
  t.eq(conds, { Established = "True", NamesAccepted = "True" })
  local p
  p, action = b:apply(pool())
  t.eq(action, "created")
  t.eq(p.metadata.generation, 1, "custom resources keep a generation")
  t.ok(b:get("IPAddressPool", "default-addresspool", NS))
  t.ok(b:get("metallb.io/v1beta1/IPAddressPool", "default-addresspool", NS))
  t.eq(#b:list("IPAddressPool"), 1)
  e = err_of(function() b:apply(pool("v1")) end)
  t.eq(e.message, 'no matches for kind "IPAddressPool" in version ' ..
                  '"metallb.io/v1"')
  -- deleting the CRD deletes its resources, and the kind goes away
  t.eq(b:delete("CustomResourceDefinition", "ipaddresspools.metallb.io"),
       true)
  t.err(function() b:apply(pool()) end, "no matches for kind")
  -- seeded in any order, a fixture's CRs resolve
  local b2 = cluster.new{ objects = { pool(), crd() } }
  t.ok(b2:get("IPAddressPool", "default-addresspool", NS))
  -- a CRD must be named plural.group
  local bad = crd(); bad.metadata.name = "pools"
  t.err(function() b:apply(bad) end,
        'must be spec%.names%.plural%+"%."%+spec%.group')
end)

t.case("an unknown kind in a fixture is an error", function()
  t.err(function() cluster.new{ objects = { pool() } } end,
        'no matches for kind "IPAddressPool"')
end)

t.case("APIService becomes Available, Secret stringData folds", function()
  local b = new()
  b:apply{ apiVersion = "apiregistration.k8s.io/v1", kind = "APIService",
    metadata = { name = "v1beta1.metrics.k8s.io" },
    spec = { group = "metrics.k8s.io", version = "v1beta1" } }
  local a = b:get("APIService", "v1beta1.metrics.k8s.io")
  t.eq(a.status.conditions[1].type, "Available")
  t.eq(a.status.conditions[1].status, "True")
  local s = b:apply{ apiVersion = "v1", kind = "Secret",
    metadata = { name = "s", namespace = NS },
    stringData = { token = "hello" } }
  t.eq(s.data, { token = "aGVsbG8=" })
  t.eq(s.stringData, nil)
end)

--- Rollouts and the clock -----------------------------------------------

local function rolled_out(d)
  if not d or not d.status then return false end
  local s, want = d.status, d.spec.replicas or 1
  return s.observedGeneration == d.metadata.generation
     and (s.updatedReplicas or 0) == want
     and (s.availableReplicas or 0) == want
end

t.case("workloads roll out at once", function()
  local b = new()
  b:apply(deployment("img:2", { replicas = 3 }))
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  t.ok(rolled_out(d))
  t.eq(d.status.readyReplicas, 3)
  local conds = {}
  for _, c in ipairs(d.status.conditions) do conds[c.type] = c.reason end
  t.eq(conds, { Available = "MinimumReplicasAvailable",
                Progressing = "NewReplicaSetAvailable" })
  local t0 = b:now()
  local ok, last = b:watch("Deployment", "hostpath-provisioner", NS,
                           rolled_out, 300)
  t.ok(ok)
  t.eq(last.spec.replicas, 3)
  t.eq(b:now(), t0, "a satisfied watch takes no mock time")
  -- DaemonSet follows the number of nodes
  local ds = deployment("img:1")
  ds.kind, ds.metadata.name, ds.spec.replicas = "DaemonSet", "ds", nil
  b:apply(ds)
  local s = b:get("DaemonSet", "ds", NS).status
  t.eq(s.desiredNumberScheduled, 1)
  t.eq(s.updatedNumberScheduled, 1)
  t.eq(s.numberAvailable, 1)
  b:apply{ apiVersion = "v1", kind = "Node", metadata = { name = "node-2" } }
  s = b:get("DaemonSet", "ds", NS).status
  t.eq(s.desiredNumberScheduled, 2)
  t.eq(s.numberReady, 2)
  -- StatefulSet
  local sts = deployment("img:1")
  sts.kind, sts.metadata.name = "StatefulSet", "sts"
  b:apply(sts)
  s = b:get("StatefulSet", "sts", NS).status
  t.eq(s.currentRevision, s.updateRevision)
  t.eq(s.readyReplicas, 1)
  t.eq(s.observedGeneration, 1)
  -- a Job completes
  b:apply{ apiVersion = "batch/v1", kind = "Job",
    metadata = { name = "j", namespace = NS },
    spec = { template = { spec = { restartPolicy = "Never",
      containers = { { name = "m", image = "m:1" } } } } } }
  local j = b:get("Job", "j", NS)
  t.eq(j.status.succeeded, 1)
  t.eq(j.status.conditions[2].type, "Complete")
end)

t.case("a stalled rollout times out in mock time, not real time", function()
  local b = new()
  b:stall("Deployment", "hostpath-provisioner", NS)
  b:apply(deployment("img:2", { replicas = 2 }))
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  t.eq(d.status.observedGeneration, d.metadata.generation)
  t.eq(d.status.updatedReplicas, 1)
  t.ok(not rolled_out(d))
  -- (a real 300 s wait would outlast the suite's deadline)
  local t0 = b:now()
  local ok, last = b:watch("apps/v1/Deployment", "hostpath-provisioner", NS,
                           rolled_out, 300)
  t.eq(ok, false)
  t.eq(last.status.updatedReplicas, 1)
  t.eq(b:now() - t0, 300)
  -- unstall finishes it
  b:unstall("Deployment", "hostpath-provisioner", NS)
  t.ok(rolled_out(b:get("Deployment", "hostpath-provisioner", NS)))
  -- a stall for N seconds finishes on the mock clock
  b:stall("Deployment", "hostpath-provisioner", NS, 30)
  b:apply(deployment("img:3", { replicas = 2 }))
  t.ok(not rolled_out(b:get("Deployment", "hostpath-provisioner", NS)))
  local calls = 0
  t0 = b:now()
  ok, last = b:watch("Deployment", "hostpath-provisioner", NS, function(o)
    calls = calls + 1
    return rolled_out(o)
  end, 300)
  t.ok(ok)
  t.eq(b:now() - t0, 30)
  t.eq(calls, 2, "fn sees the current object and the one change")
  t.eq(last.spec.template.spec.containers[1].image, "img:3")
end)

t.case("watch an absent object until it appears or the timeout", function()
  local b = new()
  local ok, last = b:watch("ConfigMap", "later", NS,
                           function(o) return o ~= nil end, 10)
  t.eq(ok, false)
  t.eq(last, nil)
  b.clock:after(5, function()
    b:apply{ apiVersion = "v1", kind = "ConfigMap",
             metadata = { name = "later", namespace = NS } }
  end)
  local t0 = b:now()
  ok, last = b:watch("ConfigMap", "later", NS,
                     function(o) return o ~= nil end, 10)
  t.ok(ok)
  t.eq(last.metadata.name, "later")
  t.eq(b:now() - t0, 5)
end)

t.case("sleep and now use the mock clock", function()
  local b = new()
  local t0 = b:now()
  b:sleep(3600)
  t.eq(b:now() - t0, 3600)
  local clock = require("uphook.backend.mock.clock").new{ start = 0 }
  local b2 = new{ clock = clock }
  t.eq(b2:now(), 0)
  b2:sleep(1.5)
  t.eq(clock:now(), 1.5)
  t.eq(require("uphook.backend.mock.clock").rfc3339(1704067200 + 86400 * 60 + 61),
       "2024-03-01T00:01:01Z")
end)

t.case("restart records the service and the mock time", function()
  local b = new()
  b:sleep(10)
  b:restart("kubelite")
  t.eq(b.restarts, { { service = "kubelite", time = b:now() } })
end)

t.case("delete: true, then false; cluster-scoped ignores namespace",
function()
  local b = new()
  t.eq(b:delete("ServiceAccount", "microk8s-hostpath", NS), true)
  t.eq(b:delete("ServiceAccount", "microk8s-hostpath", NS), false)
  t.eq(b:get("ServiceAccount", "microk8s-hostpath", NS), nil)
  t.eq(b:delete("ClusterRole", "microk8s-hostpath", "ignored"), true)
end)

t.case("snapshot and restore", function()
  local b = new()
  local snap = b:snapshot()
  local before = b:objects()
  b:apply(deployment("img:2"))
  b:delete("StorageClass", "microk8s-hostpath")
  b:restore(snap)
  t.eq(b:objects(), before)
end)

t.case("nodes in the shape of nodes.list()", function()
  local b = new()
  t.eq(b:nodes(), { { name = "node-1", ready = true,
    roles = { "control-plane" }, arch = "amd64", os = "linux",
    kubelet_version = "v1.29.4",
    labels = { ["kubernetes.io/arch"] = "amd64",
               ["node-role.kubernetes.io/control-plane"] = "" },
    addresses = { { type = "InternalIP", address = "10.0.0.5" } },
    unschedulable = false } })
  t.eq(b:this_node().name, "node-1")
end)

--- Speed ----------------------------------------------------------------

t.case("a prepared seed gives independent clusters", function()
  local seed = cluster.seed(fixture())
  local a, b = cluster.new{ seed = seed }, cluster.new{ seed = seed }
  t.eq(a:objects(), b:objects())
  t.eq(a:objects(), cluster.new{ objects = fixture() }:objects())
  a:stall("Deployment", "hostpath-provisioner", NS)
  a:apply(deployment("img:2"))
  a:delete("StorageClass", "microk8s-hostpath")
  t.eq(b:get("Deployment", "hostpath-provisioner", NS)
         .spec.template.spec.containers[1].image,
       "cdkbot/hostpath-provisioner:1.1.0")
  t.ok(b:get("StorageClass", "microk8s-hostpath"))
  t.eq(cluster.new{ seed = seed }:objects(), b:objects())
  -- status writes do not leak into the seed either
  t.eq(b:get("Deployment", "hostpath-provisioner", NS).status.updatedReplicas,
       1)
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
