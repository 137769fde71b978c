-- The mock's fidelity to the API server (docs/mock.md), each case run on
-- the mock and on the fake API server (tests/lua/fidelity/worlds.lua):
-- Atomic maps, structs and lists: what an apply replaces whole, and what
-- it merges.
local t = require "uphook.test"
local json = require "uphook.c.json"
local worlds = require "worlds"

local NS, case, cm, owned, deployment =
  worlds.NS, worlds.case, worlds.cm, worlds.owned, worlds.deployment

-- API: Service.spec.selector is +mapType=atomic; SMD typed/merge.go: an
-- atomic map is a leaf, the applied value replaces the live one.
case("an atomic map is replaced whole: Service.spec.selector", function(w)
  local svc = { apiVersion = "v1", kind = "Service",
    metadata = { name = "atomic-1", namespace = NS },
    spec = { selector = { app = "web", tier = "front" },
             ports = { { port = 80 } } } }
  w.apply(svc, "kubectl")
  svc.spec.selector = { app = "web" }
  local o = w.apply(svc, "uphook")
  t.eq(o.spec.selector, { app = "web" })
end)

-- API: LabelSelector is +structType=atomic, so an applied selector
-- replaces the live one, and a Deployment's is immutable
-- (apps/validation ValidateDeploymentUpdate: "field is immutable").
case("an atomic struct is replaced whole: a Deployment's selector",
  function(w)
    w.apply(deployment("atomic-2", { app = "web", tier = "front" }),
            "kubectl")
    local e = w.err(function()
      w.apply(deployment("atomic-2", { app = "web" }), "uphook")
    end)
    t.eq(e.code, 422)
    t.eq(e.message, 'Deployment.apps "atomic-2" is invalid: spec.selector: '
      .. 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{'
      .. '"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}'
      .. ': field is immutable')
  end)

-- API: ClusterRole.rules is +listType=atomic: the applied list replaces
-- the live one, another manager's rule does not survive.
case("an atomic list is replaced whole: ClusterRole.rules", function(w)
  local cr = { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "ClusterRole", metadata = { name = "fidelity-atomic-3" },
    rules = { { apiGroups = { "" }, resources = { "pods" },
                verbs = { "get" } } } }
  w.apply(cr, "kubectl")
  cr.rules = { { apiGroups = { "" }, resources = { "nodes" },
                 verbs = { "list" } } }
  local o = w.apply(cr, "uphook")
  t.eq(#o.rules, 1)
  t.eq(o.rules[1].resources, { "nodes" })
end)

-- API: PodSpec.containers is +listType=map +listMapKey=name; a
-- container's env is keyed by name too: items merge by key, the live
-- items the applied list does not name stay (their owner keeps them).
case("a keyed list merges item by item: containers and env", function(w)
  local d = deployment("keyed-4", { app = "k" })
  d.spec.template.spec.containers[1].env = { { name = "A", value = "1" } }
  w.apply(d, "uphook")
  w.apply({ apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "keyed-4", namespace = NS },
    spec = { template = { spec = { containers = {
      { name = "app", env = { { name = "B", value = "2" } } },
      { name = "sidecar", image = "side:1" } } } } } }, "user")
  d.spec.template.spec.containers[1].image = "img:2"
  local o = w.apply(d, "uphook")
  local cs = o.spec.template.spec.containers
  t.eq(#cs, 2)
  t.eq(cs[1].name, "app")
  t.eq(cs[1].image, "img:2")
  t.eq(cs[1].env, { { name = "A", value = "1" }, { name = "B", value = "2" } })
  t.eq(cs[2].name, "sidecar")
end)

-- API: ContainerPort is keyed by containerPort and protocol, protocol
-- defaulting to TCP (the key default of the schema): a port applied
-- without protocol is the same item as the live TCP one.
case("a key field's default: container ports without protocol", function(w)
  local d = deployment("ports-5", { app = "p" })
  d.spec.template.spec.containers[1].ports = {
    { containerPort = 80, protocol = "TCP", name = "http" } }
  w.apply(d, "kubectl")
  d.spec.template.spec.containers[1].ports = { { containerPort = 80,
                                                   name = "web" } }
  local o = w.apply(d, "uphook")
  local ps = o.spec.template.spec.containers[1].ports
  t.eq(#ps, 1)
  t.eq(ps[1].name, "web")
end)

-- API: ObjectMeta.finalizers is a set (+listType=set): applied items are
-- added to the live ones, each owned by its manager.
case("a set list: finalizers are a union", function(w)
  w.apply(cm("set-6", { a = "1" },
    { metadata = { name = "set-6", namespace = NS,
                   finalizers = { "example.com/a" } } }), "kubectl")
  local o = w.apply(cm("set-6", { a = "1" },
    { metadata = { name = "set-6", namespace = NS,
                   finalizers = { "example.com/b" } } }), "uphook")
  t.eq(o.metadata.finalizers, { "example.com/a", "example.com/b" })
  w.patch("ConfigMap", "set-6", NS, { metadata = { finalizers = json.null } },
          "cleanup")
end)

-- A built-in kind's map fields are `omitempty` in its Go type
-- (ConfigMap.Data `json:"data,omitempty"`, ObjectMeta.Labels ...,
-- k8s.io/api@v0.32.3 core/v1/types.go, meta/v1/types.go), so a merge
-- patch (RFC 7386) that removes a map's last key leaves no empty map; and
-- a field an update removes is nobody's (structured-merge-diff@ccf7a061
-- merge/update.go: each manager's set loses compare.Removed).
case("a patch removing a map's last key: no empty map, the field nobody's",
  function(w)
    w.apply(cm("omit-1", { k = "v" }, { metadata = { name = "omit-1",
      namespace = NS, labels = { a = "b" } } }), "kubectl")
    local o = w.patch("ConfigMap", "omit-1", NS, { data = { k = json.null },
      metadata = { labels = { a = json.null } } }, "kubectl-patch")
    t.eq(o.data, nil)
    t.eq(o.metadata.labels, nil)
    o = w.get("ConfigMap", "omit-1", NS)
    t.eq(o.data, nil)
    t.eq(o.metadata.labels, nil)
    for _, e in ipairs(o.metadata.managedFields or {}) do
      t.eq(owned(o, e.manager, e.operation, { "f:data", "f:k" }), false)
      t.eq(owned(o, e.manager, e.operation,
        { "f:metadata", "f:labels", "f:a" }), false)
    end
  end)

-- The defaults a hook can trip over (kubernetes/kubernetes@v1.32.3
-- pkg/apis/storage/v1/defaults.go SetDefaults_StorageClass: reclaimPolicy
-- Delete, volumeBindingMode Immediate; pkg/apis/core/v1/defaults.go:
-- Service type ClusterIP, a port's protocol TCP and targetPort its port,
-- a container port's protocol TCP; pkg/apis/apps/v1/defaults.go: a
-- Deployment's replicas 1): an object read back has them.
case("server defaults: StorageClass, Service, Deployment", function(w)
  local sc = w.apply({ apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
    metadata = { name = "fid-def" }, provisioner = "fidelity.example.com" },
    "uphook")
  t.eq(sc.reclaimPolicy, "Delete")
  t.eq(sc.volumeBindingMode, "Immediate")
  local svc = w.apply({ apiVersion = "v1", kind = "Service",
    metadata = { name = "fid-def", namespace = NS },
    spec = { ports = { { port = 80 } } } }, "uphook")
  t.eq(svc.spec.type, "ClusterIP")
  t.eq(svc.spec.ports[1].protocol, "TCP")
  t.eq(svc.spec.ports[1].targetPort, 80)
  local d = deployment("fid-def", { app = "fid-def" })
  d.spec.template.spec.containers[1].ports = { { containerPort = 8080 } }
  d = w.apply(d, "uphook")
  t.eq(d.spec.replicas, 1)
  t.eq(d.spec.template.spec.containers[1].ports[1].protocol, "TCP")
  w.delete("StorageClass", "fid-def")
  w.delete("Service", "fid-def", NS)
  w.delete("Deployment", "fid-def", NS)
end)

-- API conventions (https://github.com/kubernetes/community/blob/master/
-- contributors/devel/sig-architecture/api-conventions.md, "Concurrency
-- Control and Consistency", "Metadata"): every write that changes an
-- object gives it a new resourceVersion; metadata.generation counts
-- changes of the desired state (spec), not of metadata or status.
case("resourceVersion on every change, generation on spec changes",
  function(w)
    -- (each read once its controller has written its status)
    local d = deployment("fid-gen", { app = "fid-gen" })
    t.eq(w.apply(d, "uphook").metadata.generation, 1)
    local a = w.settled("Deployment", "fid-gen", NS)
    d.metadata.labels = { x = "1" }
    local b = w.apply(d, "uphook")
    t.ok(b.metadata.resourceVersion ~= a.metadata.resourceVersion)
    t.eq(b.metadata.generation, 1)
    d.spec.template.spec.containers[1].image = "img:2"
    t.eq(w.apply(d, "uphook").metadata.generation, 2)
    local c = w.settled("Deployment", "fid-gen", NS)
    t.ok(c.metadata.resourceVersion ~= b.metadata.resourceVersion)
    -- the same again: no write
    t.eq(w.apply(d, "uphook").metadata.resourceVersion,
         c.metadata.resourceVersion)
    w.delete("Deployment", "fid-gen", NS)
  end)
