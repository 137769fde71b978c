-- The mock cluster's fidelity (docs/contract.md §6): immutable fields, refused
-- with the messages the API server gives.
-- The objects the cases start from: tests/lua/mock_cluster/objects.lua.
local t = require "uphook.test"
local objects = require "objects"

local NS, deployment, storageclass, service, fixture, new, err_of =
  objects.NS, objects.deployment, objects.storageclass, objects.service,
  objects.fixture, objects.new, objects.err_of

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
