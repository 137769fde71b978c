-- The mock cluster's fidelity (docs/contract.md §6): seeding and reads,
-- deletes, snapshots, and prepared seeds.
-- The objects the cases start from: tests/lua/mock_cluster/objects.lua.
local t = require "uphook.test"
local cluster = require "uphook.backend.mock.cluster"
local objects = require "objects"

local NS, deployment, fixture, new, err_of =
  objects.NS, objects.deployment, objects.fixture, objects.new,
  objects.err_of

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

t.case("list{metadata = true}: apiVersion, kind and metadata only, as the "
    .. "API server's PartialObjectMetadataList", function()
  local b = new()
  b:apply{ apiVersion = "v1", kind = "Secret", type = "Opaque",
           metadata = { name = "s", namespace = "default",
                        labels = { owner = "helm" } },
           data = { k = "dg==" } }
  local l = b:list("Secret", { namespace = "default",
    labels = { owner = "helm" }, metadata = true })
  t.eq(#l, 1)
  local keys = {}
  for k in pairs(l[1]) do keys[#keys + 1] = k end
  table.sort(keys)
  t.eq(keys, { "apiVersion", "kind", "metadata" })
  t.eq({ l[1].apiVersion, l[1].kind }, { "v1", "Secret" })
  t.eq(l[1].metadata.resourceVersion,
       b:get("Secret", "s", "default").metadata.resourceVersion)
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
