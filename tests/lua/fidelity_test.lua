-- The mock's fidelity to the API server: one case per rule, each asserting
-- what a real kube-apiserver 1.32 does, with its source. The same cases
-- run against the fake API server of tests/fakes when UPHOOK_FAKE_DIR is
-- set (tests/fidelity/fidelity_test.sh), through the HTTP API the real
-- kubectl uses, and must give the same results.
--
-- Sources cited:
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

local NS = "default"
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

local W = {}
---Run a case in a fresh mock cluster and, with UPHOOK_FAKE_DIR, against
---the fake API server.
function W.case(name, fn)
  t.case(name, function() fn(mock_world()) end)
  if FAKE then
    t.case("[fake API server] " .. name, function() fn(fake_world(FAKE)) end)
  end
end
function W.run() end

local function cm(name, data, extra)
  local o = { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = name, namespace = NS }, data = data }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

local function owners(obj)
  local out = {}
  for _, e in ipairs(obj.metadata.managedFields or {}) do
    out[#out + 1] = e.manager .. "/" .. e.operation
  end
  table.sort(out)
  return out
end

local function owned(obj, manager, operation, path)
  for _, e in ipairs(obj.metadata.managedFields or {}) do
    if e.manager == manager and e.operation == operation then
      return fieldset.has(fieldset.from_fields(e.fieldsV1), path)
    end
  end
  return false
end

local function deployment(name, labels, extra)
  local d = { apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = name, namespace = NS },
    spec = { selector = { matchLabels = labels },
      template = { metadata = { labels = labels },
        spec = { containers = { { name = "app", image = "img:1" } } } } } }
  for k, v in pairs(extra or {}) do d.spec[k] = v end
  return d
end

local case = W.case

--- Field ownership ---------------------------------------------------------

-- SSA "Field management": "If you remove a field from a manifest and
-- apply that manifest, Server-Side Apply checks if there are any other
-- field managers that also own the field. If the field is not owned by
-- any other field managers, it is either deleted from the live object or
-- reset to its default value, if it has one."
case("a field the manager no longer applies is removed", function(w)
  w.apply(cm("own-1", { keep = "1", dropped = "2" }), "uphook")
  local o = w.apply(cm("own-1", { keep = "1" }), "uphook")
  t.eq(o.data, { keep = "1" })
  t.eq(owners(o), { "uphook/Apply" })
end)

-- SSA "Field management" (same passage): kept when another manager owns
-- it; an update (here a merge patch, as `kubectl edit` sends) makes the
-- fields it changes its manager's (SSA "Managers": Update operations).
case("a field another manager owns is kept", function(w)
  w.apply(cm("own-2", { keep = "1", dropped = "2" }), "uphook")
  w.patch("ConfigMap", "own-2", NS, { data = { dropped = "3" } },
          "kubectl-edit")
  local o = w.apply(cm("own-2", { keep = "1" }), "uphook")
  t.eq(o.data, { keep = "1", dropped = "3" })
  t.ok(owned(o, "kubectl-edit", "Update", { "f:data", "f:dropped" }))
  t.ok(not owned(o, "uphook", "Apply", { "f:data", "f:dropped" }))
end)

-- SSA "Conflicts": an apply that changes a field another manager owns
-- fails with a 409 naming the manager and the field, unless forced;
-- forced, the field changes owner.
case("conflicts: 409 unless forced, then the field changes owner",
  function(w)
    w.apply(cm("own-3", { a = "1" }), "other")
    local e = w.err(function()
      w.apply(cm("own-3", { a = "2" }), "uphook", false)
    end)
    t.eq(e.code, 409)
    t.eq(e.reason, "Conflict")
    t.eq(e.message, 'Apply failed with 1 conflict: conflict with "other": '
      .. ".data.a")
    local o = w.apply(cm("own-3", { a = "2" }), "uphook", true)
    t.eq(o.data.a, "2")
    t.ok(owned(o, "uphook", "Apply", { "f:data", "f:a" }))
    t.ok(not owned(o, "other", "Apply", { "f:data", "f:a" }))
  end)

-- SSA "Field management": applying the same value a manager owns makes
-- both owners (shared ownership), and no write happens when nothing
-- changes (the resourceVersion stays).
case("the same values again: no write; equal values: shared owners",
  function(w)
    local a = w.apply(cm("own-4", { a = "1" }), "uphook")
    local b = w.apply(cm("own-4", { a = "1" }), "uphook")
    t.eq(b.metadata.resourceVersion, a.metadata.resourceVersion)
    local c = w.apply(cm("own-4", { a = "1" }), "kubectl")
    t.ok(owned(c, "uphook", "Apply", { "f:data", "f:a" }))
    t.ok(owned(c, "kubectl", "Apply", { "f:data", "f:a" }))
    -- now uphook drops it: kubectl still owns it, it stays
    local d = w.apply(cm("own-4", {}), "uphook")
    t.eq(d.data, { a = "1" })
  end)

-- SSA "Managers" / fieldmanager: a replace (PUT) gives the fields it
-- changes to its manager (operation Update) and takes them from the
-- others.
case("a PUT's changed fields become its manager's", function(w)
  w.apply(cm("own-5", { a = "1", b = "1" }), "uphook")
  local cur = w.get("ConfigMap", "own-5", NS)
  cur.data.a = "2"
  cur.metadata.managedFields = nil
  local o = w.replace(cur, "kubectl-replace")
  t.ok(owned(o, "kubectl-replace", "Update", { "f:data", "f:a" }))
  t.ok(not owned(o, "uphook", "Apply", { "f:data", "f:a" }))
  t.ok(owned(o, "uphook", "Apply", { "f:data", "f:b" }))
  o = w.apply(cm("own-5", { b = "1" }), "uphook")
  t.eq(o.data, { a = "2", b = "1" }, "a is kubectl-replace's")
end)

--- Atomic maps, structs and lists -----------------------------------------

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

--- Immutable fields (update validation) -------------------------------------
-- Kubernetes 1.32's update validation (kubernetes/kubernetes@v1.32.3,
-- pkg/apis/<group>/validation/validation.go), the facts as data in
-- lua/backend/mock/validate.lua (IMMUTABLE, the update functions); a 422 Invalid
-- names the field, and an apply or a replace is refused alike.

local function refused(w, obj, message)
  local e = w.err(function() w.apply(obj, "uphook") end)
  t.eq(e.code, 422)
  t.eq(e.reason, "Invalid")
  t.eq(e.message, message)
end

-- networking ValidateIngressClassUpdate: ValidateImmutableField on
-- spec.controller (the issue's example).
case("IngressClass.spec.controller is immutable", function(w)
  local ic = { apiVersion = "networking.k8s.io/v1", kind = "IngressClass",
    metadata = { name = "fidelity-ic" },
    spec = { controller = "k8s.io/ingress-nginx" } }
  w.apply(ic, "kubectl-client-side-apply")
  ic.spec.controller = "example.com/other"
  refused(w, ic, 'IngressClass.networking.k8s.io "fidelity-ic" is invalid: '
    .. 'spec.controller: Invalid value: "example.com/other": field is '
    .. 'immutable')
  w.delete("IngressClass", "fidelity-ic")
end)

-- core ValidateSecretUpdate: ValidateImmutableField on type.
case("Secret.type is immutable", function(w)
  local s = { apiVersion = "v1", kind = "Secret",
    metadata = { name = "imm-secret", namespace = NS }, type = "Opaque",
    data = { a = "YQ==" } }
  w.apply(s, "kubectl")
  s.type = "kubernetes.io/basic-auth"
  refused(w, s, 'Secret "imm-secret" is invalid: type: Invalid value: '
    .. '"kubernetes.io/basic-auth": field is immutable')
end)

-- scheduling ValidatePriorityClassUpdate: "value: Forbidden: may not be
-- changed in an update."
case("PriorityClass.value may not change", function(w)
  local pc = { apiVersion = "scheduling.k8s.io/v1", kind = "PriorityClass",
    metadata = { name = "fidelity-pc" }, value = 1000 }
  w.apply(pc, "kubectl")
  pc.value = 2000
  refused(w, pc, 'PriorityClass.scheduling.k8s.io "fidelity-pc" is '
    .. 'invalid: value: Forbidden: may not be changed in an update.')
  w.delete("PriorityClass", "fidelity-pc")
end)

-- storage ValidateCSIDriverUpdate: attachRequired is immutable;
-- podInfoOnMount is mutable since 1.29 (the API reference says so).
case("CSIDriver.spec.attachRequired is immutable, podInfoOnMount is not",
  function(w)
    local d = { apiVersion = "storage.k8s.io/v1", kind = "CSIDriver",
      metadata = { name = "fidelity.csi.example.com" },
      spec = { attachRequired = true, podInfoOnMount = false } }
    w.apply(d, "kubectl")
    d.spec.podInfoOnMount = true
    t.eq(w.apply(d, "uphook").spec.podInfoOnMount, true)
    d.spec.attachRequired = false
    refused(w, d, 'CSIDriver.storage.k8s.io "fidelity.csi.example.com" is '
      .. 'invalid: spec.attachRequired: Invalid value: false: field is '
      .. 'immutable')
    w.delete("CSIDriver", "fidelity.csi.example.com")
  end)

-- rbac ValidateRoleBindingUpdate: "cannot change roleRef".
case("a RoleBinding's roleRef cannot change", function(w)
  local rb = { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "RoleBinding", metadata = { name = "imm-rb", namespace = NS },
    roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = "Role",
                name = "a" },
    subjects = { { kind = "ServiceAccount", name = "default",
                   namespace = NS } } }
  w.apply(rb, "kubectl")
  rb.roleRef.name = "b"
  refused(w, rb, 'RoleBinding.rbac.authorization.k8s.io "imm-rb" is '
    .. 'invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:'
    .. '"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: cannot change '
    .. 'roleRef')
end)

-- core ValidatePersistentVolumeUpdate: the volume source is fixed once
-- created (the real message goes on with a diff of the two sources).
case("a PersistentVolume's volume source is immutable", function(w)
  local pv = { apiVersion = "v1", kind = "PersistentVolume",
    metadata = { name = "fidelity-pv" },
    spec = { capacity = { storage = "1Gi" }, accessModes = { "ReadWriteOnce" },
      persistentVolumeReclaimPolicy = "Retain",
      hostPath = { path = "/srv/a" } } }
  w.apply(pv, "kubectl")
  pv.spec.persistentVolumeReclaimPolicy = "Delete"
  t.eq(w.apply(pv, "uphook").spec.persistentVolumeReclaimPolicy, "Delete")
  pv.spec.hostPath.path = "/srv/b"
  local e = w.err(function() w.apply(pv, "uphook") end)
  t.eq(e.code, 422)
  t.match(e.message, '^PersistentVolume "fidelity%-pv" is invalid: '
    .. 'spec%.persistentvolumesource: Forbidden: '
    .. 'spec%.persistentvolumesource is immutable after creation')
  w.delete("PersistentVolume", "fidelity-pv")
end)

-- apps ValidateStatefulSetUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/apps/validation/validation.go): the spec may change only in
-- the fields it names, one Forbidden on spec for any other.
case("a StatefulSet's spec: only replicas, template, updateStrategy... change",
  function(w)
    local function sts(extra)
      local o = { apiVersion = "apps/v1", kind = "StatefulSet",
        metadata = { name = "fid-sts", namespace = NS },
        spec = { serviceName = "fid-sts", replicas = 1,
          selector = { matchLabels = { app = "fid-sts" } },
          template = { metadata = { labels = { app = "fid-sts" } },
            spec = { containers = { { name = "c", image = "img:1" } } } } } }
      for k, v in pairs(extra or {}) do o.spec[k] = v end
      return o
    end
    w.apply(sts(), "uphook")
    local o = w.apply(sts { replicas = 2, minReadySeconds = 5 }, "uphook")
    t.eq(o.spec.replicas, 2)
    refused(w, sts { replicas = 2, minReadySeconds = 5,
      serviceName = "other" }, 'StatefulSet.apps "fid-sts" is invalid: '
      .. "spec: Forbidden: updates to statefulset spec for fields other "
      .. "than 'replicas', 'ordinals', 'template', 'updateStrategy', "
      .. "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
      .. "forbidden")
    w.delete("StatefulSet", "fid-sts", NS)
  end)

-- storage ValidateStorageClassUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/storage/validation/validation.go): parameters, provisioner
-- and reclaimPolicy Forbidden ("updates to ... are forbidden."),
-- volumeBindingMode ValidateImmutableField; allowVolumeExpansion may
-- change.
case("a StorageClass: parameters, provisioner, reclaimPolicy, binding mode fixed",
  function(w)
    local function sc(extra)
      local o = { apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
        metadata = { name = "fid-sc" }, provisioner = "fidelity.example.com",
        parameters = { tier = "a" }, reclaimPolicy = "Delete",
        volumeBindingMode = "Immediate" }
      for k, v in pairs(extra or {}) do o[k] = v end
      return o
    end
    w.apply(sc(), "uphook")
    t.eq(w.apply(sc { allowVolumeExpansion = true }, "uphook")
           .allowVolumeExpansion, true)
    refused(w, sc { allowVolumeExpansion = true, parameters = { tier = "b" } },
      'StorageClass.storage.k8s.io "fid-sc" is invalid: parameters: '
      .. "Forbidden: updates to parameters are forbidden.")
    refused(w, sc { allowVolumeExpansion = true,
      provisioner = "other.example.com" }, 'StorageClass.storage.k8s.io '
      .. '"fid-sc" is invalid: provisioner: Forbidden: updates to '
      .. "provisioner are forbidden.")
    refused(w, sc { allowVolumeExpansion = true, reclaimPolicy = "Retain" },
      'StorageClass.storage.k8s.io "fid-sc" is invalid: reclaimPolicy: '
      .. "Forbidden: updates to reclaimPolicy are forbidden.")
    refused(w, sc { allowVolumeExpansion = true,
      volumeBindingMode = "WaitForFirstConsumer" }, 'StorageClass.storage.'
      .. 'k8s.io "fid-sc" is invalid: volumeBindingMode: Invalid value: '
      .. '"WaitForFirstConsumer": field is immutable')
    w.delete("StorageClass", "fid-sc")
  end)

-- apiextensions ValidateCustomResourceDefinitionUpdate
-- (kubernetes/apiextensions-apiserver@0350e46e pkg/apis/apiextensions/
-- validation/validation.go): spec.scope is ValidateImmutableField (so is
-- spec.group, which also names the CRD).
case("a CRD's scope is immutable", function(w)
  local crd = { apiVersion = "apiextensions.k8s.io/v1",
    kind = "CustomResourceDefinition",
    metadata = { name = "gadgets.fidelity.example.com" },
    spec = { group = "fidelity.example.com", scope = "Namespaced",
      names = { plural = "gadgets", singular = "gadget", kind = "Gadget",
                listKind = "GadgetList" },
      versions = { { name = "v1", served = true, storage = true,
        schema = { openAPIV3Schema = { type = "object",
          ["x-kubernetes-preserve-unknown-fields"] = true } } } } } }
  w.apply(crd, "uphook")
  w.wait_established("gadgets.fidelity.example.com")
  crd.spec.scope = "Cluster"
  refused(w, crd, 'CustomResourceDefinition.apiextensions.k8s.io '
    .. '"gadgets.fidelity.example.com" is invalid: spec.scope: Invalid '
    .. 'value: "Cluster": field is immutable')
  w.delete("CustomResourceDefinition", "gadgets.fidelity.example.com")
end)

-- core ValidatePersistentVolumeClaimUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go): "spec is immutable after
-- creation except resources.requests and volumeAttributesClassName for
-- bound claims" (the real message goes on with a diff of the two specs);
-- with RecoverVolumeExpansionFailure (beta, on in 1.32) a request may go
-- down but not to status.capacity or below ("field can not be less than
-- status.capacity"). Growing is the PersistentVolumeClaimResize admission
-- plugin's (plugin/pkg/admission/storage/persistentvolume/resize/
-- admission.go): only with a StorageClass that has allowVolumeExpansion,
-- else 403.
case("a bound PVC: only its requests change, never to its capacity or below",
  function(w)
    local function sc(name, grow)
      return { apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
        metadata = { name = name }, provisioner = "fidelity.example.com",
        allowVolumeExpansion = grow }
    end
    local function pvc(name, class, size)
      return { apiVersion = "v1", kind = "PersistentVolumeClaim",
        metadata = { name = name, namespace = NS },
        spec = { storageClassName = class, accessModes = { "ReadWriteOnce" },
          volumeName = "pv-" .. name,
          resources = { requests = { storage = size } } } }
    end
    local bound = pvc("fid-data", "fid-grow", "1Gi")
    bound.status = { phase = "Bound", capacity = { storage = "1Gi" } }
    local fixed = pvc("fid-fixed", "fid-fixed", "1Gi")
    fixed.status = { phase = "Bound", capacity = { storage = "1Gi" } }
    w.seed { sc("fid-grow", true), sc("fid-fixed", false), bound, fixed }
    -- the class, the access modes: refused
    local e = w.err(function()
      w.apply(pvc("fid-data", "fid-fixed", "1Gi"), "uphook")
    end)
    t.eq(e.code, 422)
    t.match(e.message, '^PersistentVolumeClaim "fid%-data" is invalid: '
      .. "spec: Forbidden: spec is immutable after creation except "
      .. "resources%.requests and volumeAttributesClassName for bound claims")
    t.match(e.message, 'StorageClassName: "fid%-fixed"')
    local p = pvc("fid-data", "fid-grow", "1Gi")
    p.spec.accessModes = { "ReadWriteMany" }
    e = w.err(function() w.apply(p, "uphook") end)
    t.match(e.message, "spec is immutable after creation")
    -- grown, with a class that allows it
    local o = w.apply(pvc("fid-data", "fid-grow", "2Gi"), "uphook")
    t.eq(o.spec.resources.requests.storage, "2Gi")
    -- shrunk to below its capacity: refused
    e = w.err(function()
      w.apply(pvc("fid-data", "fid-grow", "512Mi"), "uphook")
    end)
    t.eq(e.code, 422)
    t.eq(e.message, 'PersistentVolumeClaim "fid-data" is invalid: '
      .. "spec.resources.requests.storage: Forbidden: field can not be less "
      .. "than status.capacity")
    -- a class without allowVolumeExpansion: no growing (admission, 403)
    e = w.err(function()
      w.apply(pvc("fid-fixed", "fid-fixed", "2Gi"), "uphook")
    end)
    t.eq(e.code, 403)
    t.eq(e.message, 'persistentvolumeclaims "fid-fixed" is forbidden: only '
      .. "dynamically provisioned pvc can be resized and the storageclass "
      .. "that provisions the pvc must support resize")
    t.eq(w.get("PersistentVolumeClaim", "fid-fixed", NS)
           .spec.resources.requests.storage, "1Gi")
  end)

-- core ValidatePodUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go): ValidateContainerUpdates
-- refuses adding or removing containers; then the spec, its updatable
-- fields (images, activeDeadlineSeconds, tolerations, ...) set to the old
-- values, must be as it was ("pod updates may not change fields other
-- than ...", followed by a cmp.Diff of the two specs).
case("a Pod's spec may not change but its images", function(w)
  local pod = { apiVersion = "v1", kind = "Pod",
    metadata = { name = "fid-pod", namespace = NS },
    spec = { containers = { { name = "c", image = "img:1" } } } }
  w.apply(pod, "uphook")
  pod.spec.containers[1].image = "img:2"
  t.eq(w.apply(pod, "uphook").spec.containers[1].image, "img:2")
  pod.spec.containers[1].env = { { name = "A", value = "1" } }
  local e = w.err(function() w.apply(pod, "uphook") end)
  t.eq(e.code, 422)
  t.match(e.message, '^Pod "fid%-pod" is invalid: spec: Forbidden: pod '
    .. "updates may not change fields other than `spec%.containers%[%*%]%."
    .. "image`,`spec%.initContainers%[%*%]%.image`,`spec%."
    .. "activeDeadlineSeconds`,`spec%.tolerations` %(only additions to "
    .. "existing tolerations%),`spec%.terminationGracePeriodSeconds` %(allow "
    .. "it to be set to 1 if it was previously negative%)\n  core%.PodSpec{")
  pod.spec.containers[1].env = nil
  pod.spec.containers[2] = { name = "d", image = "img:1" }
  refused(w, pod, 'Pod "fid-pod" is invalid: spec.containers: Forbidden: '
    .. "pod updates may not add or remove containers")
  t.eq(#w.get("Pod", "fid-pod", NS).spec.containers, 1)
  w.delete("Pod", "fid-pod", NS)
end)

-- storage ValidateVolumeAttachmentUpdate: "Spec is read-only" -- any
-- change is field.Invalid on spec (the real message prints the new spec
-- as Go's %#v of storage.VolumeAttachmentSpec, with pointers, so only
-- its shape is asserted).
case("a VolumeAttachment's spec is immutable", function(w)
  local va = { apiVersion = "storage.k8s.io/v1", kind = "VolumeAttachment",
    metadata = { name = "fidelity-va" },
    spec = { attacher = "fidelity.csi.example.com", nodeName = "n1",
      source = { persistentVolumeName = "pv-a" } } }
  w.apply(va, "kubectl")
  va.spec.nodeName = "n2"
  local e = w.err(function() w.apply(va, "uphook") end)
  t.eq(e.code, 422)
  t.match(e.message, '^VolumeAttachment%.storage%.k8s%.io "fidelity%-va" '
    .. 'is invalid: spec: Invalid value: .*: field is immutable$')
  w.delete("VolumeAttachment", "fidelity-va")
end)

-- batch validateJobSpecUpdate: ValidateImmutableField on completionMode
-- (and podFailurePolicy, backoffLimitPerIndex).
case("a Job's completionMode is immutable", function(w)
  local job = { apiVersion = "batch/v1", kind = "Job",
    metadata = { name = "imm-job", namespace = NS },
    spec = { completions = 2, completionMode = "NonIndexed",
      template = { spec = { restartPolicy = "Never",
        containers = { { name = "c", image = "img:1" } } } } } }
  w.apply(job, "kubectl")
  job.spec.completionMode = "Indexed"
  refused(w, job, 'Job.batch "imm-job" is invalid: spec.completionMode: '
    .. 'Invalid value: "Indexed": field is immutable')
end)

-- batch validateJobSpecUpdate -> validateCompletions: completions is
-- immutable for a NonIndexed Job; an Indexed Job's may change, but only
-- to its (new) parallelism (ElasticIndexedJob, GA in 1.31):
-- "can only be modified in tandem with spec.parallelism".
case("a Job's completions: immutable unless Indexed, with parallelism",
  function(w)
    local function job(name, mode, completions, parallelism)
      return { apiVersion = "batch/v1", kind = "Job",
        metadata = { name = name, namespace = NS },
        spec = { completions = completions, parallelism = parallelism,
          completionMode = mode,
          template = { spec = { restartPolicy = "Never",
            containers = { { name = "c", image = "img:1" } } } } } }
    end
    w.apply(job("imm-job-n", "NonIndexed", 2, 2), "kubectl")
    refused(w, job("imm-job-n", "NonIndexed", 3, 3), 'Job.batch "imm-job-n" '
      .. 'is invalid: spec.completions: Invalid value: 3: field is immutable')
    w.apply(job("imm-job-i", "Indexed", 2, 2), "kubectl")
    local o = w.apply(job("imm-job-i", "Indexed", 3, 3), "uphook")
    t.eq(o.spec.completions, 3)
    refused(w, job("imm-job-i", "Indexed", 4, 3), 'Job.batch "imm-job-i" is '
      .. 'invalid: spec.completions: Invalid value: 4: can only be modified '
      .. 'in tandem with spec.parallelism')
  end)

--- Services: type changes and IP families ----------------------------------
-- core ValidateServiceUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go) and the Service strategy's
-- dropTypeDependentFields (pkg/registry/core/service/strategy.go).

local function service(name, spec)
  spec.ports = spec.ports or { { port = 80 } }
  return { apiVersion = "v1", kind = "Service",
    metadata = { name = name, namespace = NS }, spec = spec }
end

-- validateUpgradeDowngradeIPFamilies: "may not change once set" on
-- ipFamilies[0]; validateServiceClusterIPsRelatedFields: the cluster IP
-- must be of the family ipFamilies names.
case("a Service's ipFamilies may not change once set", function(w)
  local o = w.apply(service("fam", { selector = { app = "a" } }), "kubectl")
  local ip = o.spec.clusterIP
  t.match(ip, "^%d+%.%d+%.%d+%.%d+$")
  t.eq(w.apply(service("fam", { selector = { app = "a" },
    ipFamilies = { "IPv4" } }), "uphook").spec.clusterIP, ip)
  refused(w, service("fam", { selector = { app = "a" },
    ipFamilies = { "IPv6" } }), 'Service "fam" is invalid: '
    .. '[spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6"}: may '
    .. 'not change once set, spec.clusterIPs[0]: Invalid value: "' .. ip
    .. '": expected an IPv6 value as indicated by `ipFamilies[0]`]')
end)

-- dropTypeDependentFields: a Service turned ExternalName loses its
-- cluster IPs and IP families (the request left them as they were, so
-- the strategy wipes them and releases the IP); turned back, it gets a
-- new cluster IP. clusterIP's "may not change once set" does not apply
-- to or from ExternalName (validateUpgradeDowngradeClusterIPs).
case("a Service turned ExternalName drops its cluster IP, and back",
  function(w)
    w.apply(service("ext", { type = "ClusterIP", selector = { app = "a" } }),
            "kubectl")
    local o = w.apply(service("ext", { type = "ExternalName",
      externalName = "db.example.com" }), "uphook")
    t.eq(o.spec.type, "ExternalName")
    t.eq(o.spec.clusterIP, nil)
    t.eq(o.spec.clusterIPs, nil)
    t.eq(o.spec.ipFamilies, nil)
    o = w.apply(service("ext", { type = "ClusterIP" }), "uphook")
    t.eq(o.spec.externalName, nil)
    t.match(o.spec.clusterIP, "^%d+%.%d+%.%d+%.%d+$")
  end)

-- core ValidateServiceUpdate -> validateServiceClusterIPsRelatedFields
-- (kubernetes/kubernetes@v1.32.3 pkg/apis/core/validation/validation.go):
-- a cluster IP, once set, "may not change once set"; left out of a
-- request, the allocated one is kept.
case("a Service's clusterIP may not change once set", function(w)
  local o = w.apply(service("fid-ip", { clusterIP = "10.152.183.200" }),
                    "uphook")
  t.eq(o.spec.clusterIP, "10.152.183.200")
  refused(w, service("fid-ip", { clusterIP = "10.152.183.201" }),
    'Service "fid-ip" is invalid: spec.clusterIPs[0]: Invalid value: '
    .. '[]string{"10.152.183.201"}: may not change once set')
  o = w.apply(service("fid-ip", {}), "uphook")
  t.eq(o.spec.clusterIP, "10.152.183.200")
  w.delete("Service", "fid-ip", NS)
end)

-- core ValidateService, its ExternalName case (kubernetes/kubernetes@
-- v1.32.3 pkg/apis/core/validation/validation.go): externalName is
-- required (field.Required) and a DNS-1123 subdomain (a trailing dot,
-- fully qualified, allowed); clusterIPs, ipFamilies and ipFamilyPolicy
-- "may not be set for ExternalName services" (the strategy has copied
-- clusterIP into clusterIPs before).
case("an ExternalName Service needs an externalName and has no cluster IP",
  function(w)
    local function ext(extra)
      local spec = { type = "ExternalName" }
      for k, v in pairs(extra) do spec[k] = v end
      return service("fid-ext", spec)
    end
    refused(w, ext {}, 'Service "fid-ext" is invalid: spec.externalName: '
      .. "Required value")
    refused(w, ext { externalName = "Not_A_Host" }, 'Service "fid-ext" is '
      .. 'invalid: spec.externalName: Invalid value: "Not_A_Host": a '
      .. "lowercase RFC 1123 subdomain must consist of lower case "
      .. "alphanumeric characters, '-' or '.', and must start and end with "
      .. "an alphanumeric character (e.g. 'example.com', regex used for "
      .. "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
      .. "[a-z0-9])?)*')")
    refused(w, ext { externalName = "db.example.com",
      clusterIP = "10.152.183.77" }, 'Service "fid-ext" is invalid: '
      .. "spec.clusterIPs: Forbidden: may not be set for ExternalName "
      .. "services")
    local o = w.apply(ext { externalName = "db.example.com." }, "uphook")
    t.eq(o.spec.externalName, "db.example.com.")
    t.eq(o.spec.clusterIP, nil)
    -- an update may not drop it either (uphook owns it: applied without
    -- it, it would go)
    refused(w, ext {}, 'Service "fid-ext" is invalid: spec.externalName: '
      .. "Required value")
    w.delete("Service", "fid-ext", NS)
  end)

-- dropTypeDependentFields: NodePort -> ClusterIP drops the node ports the
-- request left as they were (here kubectl still owns one, so the apply's
-- merge keeps it); ValidateService refuses a node port it did change:
-- "may not be used when `type` is 'ClusterIP'".
case("a NodePort Service turned ClusterIP drops its node ports", function(w)
  w.apply(service("np", { type = "NodePort", selector = { app = "a" },
    ports = { { port = 80, nodePort = 30080 } } }), "kubectl")
  local e = w.err(function()
    w.apply(service("np", { type = "ClusterIP", selector = { app = "a" },
      ports = { { port = 80, nodePort = 30081 } } }), "uphook")
  end)
  t.eq(e.code, 422)
  t.eq(e.message, 'Service "np" is invalid: spec.ports[0].nodePort: '
    .. "Forbidden: may not be used when `type` is 'ClusterIP'")
  local o = w.apply(service("np", { type = "ClusterIP",
    selector = { app = "a" }, ports = { { port = 80 } } }), "uphook")
  t.eq(o.spec.type, "ClusterIP")
  t.eq(#o.spec.ports, 1)
  t.eq(o.spec.ports[1].nodePort, nil)
end)

-- validateLoadBalancerClassField: a LoadBalancer's loadBalancerClass
-- "may not change once set".
case("a LoadBalancer's loadBalancerClass may not change", function(w)
  w.apply(service("lb", { type = "LoadBalancer", selector = { app = "a" },
    loadBalancerClass = "example.com/a" }), "kubectl")
  refused(w, service("lb", { type = "LoadBalancer", selector = { app = "a" },
    loadBalancerClass = "example.com/b" }), 'Service "lb" is invalid: '
    .. 'spec.loadBalancerClass: Invalid value: "example.com/b": may not '
    .. 'change once set')
end)

--- Custom resources: the CRD's markers ---------------------------------------

local CRD = {
  apiVersion = "apiextensions.k8s.io/v1", kind = "CustomResourceDefinition",
  metadata = { name = "widgets.fidelity.example.com" },
  spec = { group = "fidelity.example.com", scope = "Namespaced",
    names = { plural = "widgets", singular = "widget", kind = "Widget",
              listKind = "WidgetList" },
    versions = { { name = "v1", served = true, storage = true,
      schema = { openAPIV3Schema = { type = "object", properties = {
        spec = { type = "object", properties = {
          ports = { type = "array", ["x-kubernetes-list-type"] = "map",
            ["x-kubernetes-list-map-keys"] = { "name" },
            items = { type = "object", required = { "name" }, properties = {
              name = { type = "string" }, port = { type = "integer" } } } },
          tags = { type = "array", items = { type = "string" } },
          labels = { type = "object", ["x-kubernetes-map-type"] = "atomic",
            additionalProperties = { type = "string" } },
          extra = { type = "object",
                    ["x-kubernetes-preserve-unknown-fields"] = true },
        } } } } } } } } }

local function widget(spec)
  return { apiVersion = "fidelity.example.com/v1", kind = "Widget",
    metadata = { name = "w", namespace = NS }, spec = spec }
end

-- SSA "Custom resources" + kube-openapi schemaconv: x-kubernetes-list-type
-- map merges by the map keys; an array without x-kubernetes-list-type is
-- atomic; x-kubernetes-map-type: atomic replaces the map whole; unknown
-- fields under x-kubernetes-preserve-unknown-fields merge key by key.
case("a CRD's x-kubernetes-* markers decide how its fields merge",
  function(w)
    w.apply(CRD, "uphook")
    w.wait_established(CRD.metadata.name)
    w.apply(widget { ports = { { name = "a", port = 1 } }, tags = { "x" },
      labels = { a = "1", b = "2" }, extra = { one = { x = 1 } } }, "kubectl")
    local o = w.apply(widget { ports = { { name = "b", port = 2 } },
      tags = { "y" }, labels = { a = "1" }, extra = { one = { y = 2 } } },
      "uphook")
    t.eq(o.spec.ports, { { name = "a", port = 1 }, { name = "b", port = 2 } })
    t.eq(o.spec.tags, { "y" })
    t.eq(o.spec.labels, { a = "1" })
    t.eq(o.spec.extra, { one = { x = 1, y = 2 } })
    w.delete("CustomResourceDefinition", CRD.metadata.name)
  end)

--- kubectl's client-side apply and its upgrade --------------------------------

-- What `microk8s enable` leaves: `kubectl apply` (client side) creates
-- the object with manager kubectl-client-side-apply (operation Update)
-- owning every field it set, and the last-applied-configuration
-- annotation (kubectl apply.go; SSA "Upgrading from client-side apply").
local function enabled(w, name, data)
  local o = cm(name, data)
  o.metadata.annotations = { [fieldset.LAST_APPLIED] = json.encode(o) .. "\n" }
  return w.create(o, "kubectl-client-side-apply")
end

-- CSA: without the upgrade, the client-side manager keeps owning what it
-- set, so a field a new version drops stays (the issue's first finding).
case("client-side apply: its fields stay owned by it under uphook's apply",
  function(w)
    local made = enabled(w, "csa-1", { keep = "1", dropped = "2" })
    t.eq(owners(made), { "kubectl-client-side-apply/Update" })
    local o = w.apply(cm("csa-1", { keep = "1" }), "uphook")
    t.eq(o.data, { keep = "1", dropped = "2" })
  end)

-- CSA: UpgradeManagedFields moves kubectl-client-side-apply's fields to
-- the Apply manager (as `kubectl apply --server-side` does after its
-- first server-side apply, migrateToSSAIfNecessary); then the fields the
-- new version drops go, and the stale annotation with them.
case("client-side apply upgraded: dropped fields go, uphook owns the rest",
  function(w)
    local made = enabled(w, "csa-2", { keep = "1", dropped = "2" })
    local mf = made.metadata.managedFields
    local up = fieldset.upgrade(mf, fieldset.csa_managers(mf), "uphook")
    t.ok(up, "there is something to upgrade")
    local moved = w.set_managed_fields("ConfigMap", "csa-2", NS, up,
                                       made.metadata.resourceVersion)
    t.eq(moved.data, made.data, "the upgrade changes no field")
    t.eq(owners(moved), { "uphook/Apply" })
    local o = w.apply(cm("csa-2", { keep = "1" }), "uphook")
    t.eq(o.data, { keep = "1" })
    t.eq(o.metadata.annotations, nil)
    -- a stale resourceVersion is refused (the patch's precondition)
    local e = w.err(function()
      w.set_managed_fields("ConfigMap", "csa-2", NS, up,
                           made.metadata.resourceVersion)
    end)
    t.eq(e.code, 409)
  end)

W.run()

--- The controllers: rollouts per node, Pods -----------------------------
-- kubectl rollout status (kubectl@fd89c3d1:pkg/polymorphichelpers/
-- rollout_status.go): a DaemonSet is rolled out when updatedNumberScheduled
-- and numberAvailable reach desiredNumberScheduled. The DaemonSet
-- controller schedules a pod on each Node whose labels match the
-- template's nodeSelector and whose NoSchedule/NoExecute taints it
-- tolerates (it adds not-ready, unreachable, *-pressure and unschedulable
-- tolerations itself, daemon/util/daemonset_util.go); a pod on a NotReady
-- node never becomes available (kubelet does not run it).
local rolled_out = require("uphook.engine.prims").rolled_out

local function daemonset(pod_spec)
  local ps = { containers = { { name = "c", image = "img:1" } } }
  for k, v in pairs(pod_spec or {}) do ps[k] = v end
  return { apiVersion = "apps/v1", kind = "DaemonSet",
    metadata = { name = "ds", namespace = NS },
    spec = { selector = { matchLabels = { app = "ds" } },
      template = { metadata = { labels = { app = "ds" } }, spec = ps } } }
end

-- the Pods in NS whose names start with prefix, sorted by name
local function pods_of(w, prefix)
  local out = {}
  for _, p in ipairs(w.list("v1/Pod")) do
    if p.metadata.name:sub(1, #prefix) == prefix then out[#out + 1] = p end
  end
  table.sort(out, function(a, b) return a.metadata.name < b.metadata.name end)
  return out
end

case("a DaemonSet rollout does not finish with a NotReady node", function(w)
  local pool = { ["fidelity.example.com/pool"] = "a" }
  w.node("fid-n1", true, pool)
  w.node("fid-n2", false, pool)
  w.apply(daemonset { nodeSelector = pool }, "uphook")
  local ds = w.settled("DaemonSet", "ds", NS)
  local done, why = rolled_out(ds)
  t.eq(done, false)
  t.eq(why, "1/2 updated pods available")
  t.eq(ds.status.numberUnavailable, 1)
  -- the node comes back (its kubelet reports Ready): the rollout finishes
  w.node("fid-n2", true, pool)
  done, why = rolled_out(w.settled("DaemonSet", "ds", NS))
  t.eq(done, true, why)
  t.eq(why, "2/2 pods updated and available")
  w.delete("DaemonSet", "ds", NS)
end)

-- The scheduler places a Deployment's or StatefulSet's pods only on a
-- Node whose labels match the template's nodeSelector and whose taints
-- it tolerates; the node lifecycle controller taints a NotReady node
-- node.kubernetes.io/not-ready:NoSchedule (kubernetes/kubernetes@v1.32.3
-- pkg/controller/nodelifecycle, TaintNodeNotReady), and that node's
-- kubelet runs nothing. So with only NotReady nodes to go to, the pods
-- stay Pending, none is available, and kubectl rollout status waits
-- (rollout_status.go: availableReplicas < updatedReplicas; a
-- StatefulSet's readyReplicas < replicas); it finishes when a node is
-- Ready.
case("a Deployment rollout does not finish with only NotReady nodes",
  function(w)
    local pool = { ["fidelity.example.com/pool"] = "d" }
    w.node("fid-d1", false, pool)
    local d = deployment("nr", { app = "nr" }, { replicas = 2 })
    d.spec.template.spec.nodeSelector = pool
    w.apply(d, "uphook")
    local done, why = rolled_out(w.settled("Deployment", "nr", NS))
    t.eq(done, false)
    t.eq(why, "0/2 updated replicas available")
    w.node("fid-d1", true, pool)
    done, why = rolled_out(w.settled("Deployment", "nr", NS))
    t.eq(done, true, why)
    t.eq(why, "2/2 replicas updated and available")
    w.delete("Deployment", "nr", NS)
  end)

case("a StatefulSet rollout does not finish with only NotReady nodes",
  function(w)
    local pool = { ["fidelity.example.com/pool"] = "s" }
    w.node("fid-s1", false, pool)
    local ss = { apiVersion = "apps/v1", kind = "StatefulSet",
      metadata = { name = "nr", namespace = NS },
      spec = { serviceName = "nr", replicas = 1,
        selector = { matchLabels = { app = "nrs" } },
        template = { metadata = { labels = { app = "nrs" } },
          spec = { nodeSelector = pool,
            containers = { { name = "c", image = "img:1" } } } } } }
    w.apply(ss, "uphook")
    local done, why = rolled_out(w.settled("StatefulSet", "nr", NS))
    t.eq(done, false)
    t.eq(why, "0/1 pods ready")
    w.node("fid-s1", true, pool)
    done = rolled_out(w.settled("StatefulSet", "nr", NS))
    t.eq(done, true)
    w.delete("StatefulSet", "nr", NS)
  end)

-- kube-scheduler (kubernetes/kubernetes@v1.32.3 pkg/scheduler/framework/
-- plugins: NodeAffinity's nodeSelector match, TaintToleration for
-- NoSchedule/NoExecute taints, NodeUnschedulable) binds a pod to a node
-- (spec.nodeName); a pod it can bind nowhere stays Pending without one.
-- A NotReady node carries node.kubernetes.io/not-ready:NoSchedule
-- (nodelifecycle, TaintNodeNotReady).
case("a Deployment's pods go to a Ready node; none: Pending", function(w)
  local pool = { ["fidelity.example.com/pool"] = "p" }
  w.node("fid-p1", false, pool)
  w.node("fid-p2", true, pool, { taints = { { key = "dedicated",
    value = "gpu", effect = "NoSchedule" } } })
  -- p1 is NotReady, p2's taint is not tolerated: nowhere to run
  local d = deployment("web", { app = "web" })
  d.spec.template.spec.nodeSelector = pool
  w.apply(d, "uphook")
  t.eq((rolled_out(w.settled("Deployment", "web", NS))), false)
  local ps = pods_of(w, "web-")
  t.eq(#ps, 1)
  t.eq(ps[1].spec.nodeName, nil)
  t.eq(ps[1].status.phase, "Pending")
  -- a toleration for p2's taint: the pods go there and are Ready
  d.spec.template.spec.tolerations = { { key = "dedicated",
    operator = "Exists", effect = "NoSchedule" } }
  w.apply(d, "uphook")
  t.eq((rolled_out(w.settled("Deployment", "web", NS))), true)
  ps = pods_of(w, "web-")
  t.eq(#ps, 1)
  t.eq(ps[1].spec.nodeName, "fid-p2")
  t.eq(ps[1].status.phase, "Running")
  t.eq(ps[1].status.conditions[1].status, "True")
end)

-- The DaemonSet controller (daemon/util/daemonset_util.go) adds the
-- not-ready, unreachable, *-pressure and unschedulable tolerations to its
-- pods itself, so a NotReady node gets one (never available); a taint it
-- does not tolerate keeps it off a node; nodeSelector picks nodes.
case("a DaemonSet runs where its nodeSelector and tolerations let it",
  function(w)
    local pool = { ["fidelity.example.com/pool"] = "t" }
    w.node("fid-t1", true, pool, { taints = { { key = "dedicated",
      value = "gpu", effect = "NoSchedule" } } })
    w.node("fid-t2", false, pool, { taints = { {
      key = "node.kubernetes.io/not-ready", effect = "NoExecute" } } })
    w.node("fid-t3", true, pool)
    w.apply(daemonset { nodeSelector = pool }, "uphook")
    local st = w.settled("DaemonSet", "ds", NS).status
    -- t1's taint is not tolerated; t2's not-ready taint is (but t2 is
    -- NotReady: its pod never becomes available)
    t.eq(st.desiredNumberScheduled, 2)
    t.eq(st.numberAvailable, 1)
    local on = {}
    for _, p in ipairs(pods_of(w, "ds-")) do
      on[p.spec.nodeName] = p.status.conditions[1].status
    end
    t.eq(on, { ["fid-t2"] = "False", ["fid-t3"] = "True" })
    w.apply(daemonset { tolerations = { { key = "dedicated",
      operator = "Equal", value = "gpu", effect = "NoSchedule" } },
      nodeSelector = { ["kubernetes.io/hostname"] = "fid-t1" } }, "uphook")
    local ds = w.settled("DaemonSet", "ds", NS)
    t.eq(ds.status.desiredNumberScheduled, 1)
    t.eq((rolled_out(ds)), true)
    local ps = pods_of(w, "ds-")
    t.eq(#ps, 1)
    t.eq(ps[1].spec.nodeName, "fid-t1")
    w.delete("DaemonSet", "ds", NS)
  end)

-- Controller-made objects differ from run to run on a real cluster (new
-- Pod names, ReplicaSet hashes): a snapshot leaves them out unless asked.
t.case("env:snapshot() leaves out controller-made objects unless asked",
  function()
    local e = t.env { addon = "addons/hello" }
    e:apply({ apiVersion = "v1", kind = "Pod",
      metadata = { name = "web-1", namespace = NS },
      spec = { containers = { { name = "c", image = "img:1" } } } })
    e:apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "cm", namespace = NS }, data = { a = "1" } })
    local key = "v1/Pod/" .. NS .. "/web-1"
    t.eq(e:snapshot()[key], nil)
    t.ok(e:snapshot()["v1/ConfigMap/" .. NS .. "/cm"])
    t.eq(e:snapshot({ controller_made = true })[key].metadata.name, "web-1")
    t.err(function() e:snapshot { controler_made = true } end,
          "controler_made")
  end)

-- Workloads have Pods, as their controllers make them (a Deployment's
-- through its ReplicaSet: <rs>-<5 chars>, labelled pod-template-hash; a
-- DaemonSet's one per node, spec.nodeName; a StatefulSet's <name>-<i>),
-- so a check_status of pod/<name> (microk8s-core-addons' addons.yaml:
-- pod/coredns, pod/metrics-server, pod/speaker) says enabled offline.
-- Deployment controller: pkg/controller/deployment/sync.go
-- getNewReplicaSet (name <deployment>-<pod-template-hash>, the hash in
-- the pod labels and selector); ReplicaSet controller: pods named by
-- generateName <rs>- (pkg/controller/controller_utils.go
-- getPodsPrefix); the garbage collector deletes dependents
-- (ownerReferences) of a deleted owner.
local enabled = require "uphook.engine.enabled"

case("workloads have Pods; check_status pod/<name> sees them", function(w)
  local pool = { ["fidelity.example.com/pool"] = "w" }
  w.node("fid-w1", true, pool)
  w.node("fid-w2", false, pool)
  t.eq(enabled.check(w.backend, "pod/web"), false)
  local d = deployment("web", { app = "web" }, { replicas = 2 })
  d.spec.template.spec.nodeSelector = pool
  w.apply(d, "uphook")
  w.settled("Deployment", "web", NS)
  local ps = pods_of(w, "web-")
  t.eq(#ps, 2)
  local hash = ps[1].metadata.labels["pod-template-hash"]
  t.ok(hash, "pod-template-hash label")
  t.eq(ps[1].metadata.labels.app, "web")
  t.eq(ps[1].metadata.ownerReferences[1].kind, "ReplicaSet")
  t.eq(ps[1].metadata.ownerReferences[1].name, "web-" .. hash)
  t.ok(ps[1].metadata.name:match("^web%-" .. hash .. "%-%w%w%w%w%w$"),
       ps[1].metadata.name)
  t.eq(ps[1].spec.nodeName, "fid-w1")
  t.eq(ps[1].status.conditions[1].status, "True")
  t.eq(enabled.check(w.backend, "pod/web"), true)
  -- a new image: new Pods (new names), the old ones gone
  local before = ps[1].metadata.name
  d.spec.template.spec.containers[1].image = "img:2"
  w.apply(d, "uphook")
  w.settled("Deployment", "web", NS)
  ps = pods_of(w, "web-")
  t.eq(#ps, 2)
  t.ok(ps[1].metadata.name ~= before and ps[2].metadata.name ~= before)
  t.eq(ps[1].spec.containers[1].image, "img:2")
  t.ok(ps[1].metadata.labels["pod-template-hash"] ~= hash)
  -- a DaemonSet: one per node; the NotReady node's pod is not Ready
  w.apply(daemonset { nodeSelector = pool }, "uphook")
  w.settled("DaemonSet", "ds", NS)
  ps = pods_of(w, "ds-")
  t.eq(#ps, 2)
  local on = {}
  for _, p in ipairs(ps) do
    on[p.spec.nodeName] = p.status.conditions[1].status
  end
  t.eq(on, { ["fid-w1"] = "True", ["fid-w2"] = "False" })
  -- a StatefulSet: <name>-0, <name>-1
  w.apply({ apiVersion = "apps/v1", kind = "StatefulSet",
    metadata = { name = "db", namespace = NS },
    spec = { serviceName = "db", replicas = 2,
      selector = { matchLabels = { app = "db" } },
      template = { metadata = { labels = { app = "db" } },
        spec = { nodeSelector = pool,
          containers = { { name = "c", image = "img:1" } } } } } }, "uphook")
  w.settled("StatefulSet", "db", NS)
  local names = {}
  for _, p in ipairs(pods_of(w, "db-")) do names[#names + 1] = p.metadata.name end
  table.sort(names)
  t.eq(names, { "db-0", "db-1" })
  -- deleted workloads take their Pods along
  w.delete("Deployment", "web", NS)
  w.delete("DaemonSet", "ds", NS)
  w.delete("StatefulSet", "db", NS)
  t.eq(#pods_of(w, "web-"), 0)
  t.eq(#pods_of(w, "ds-"), 0)
  t.eq(#pods_of(w, "db-"), 0)
  t.eq(enabled.check(w.backend, "pod/web"), false)
end)

-- The Deployment controller (pkg/controller/deployment/sync.go,
-- getNewReplicaSet and scale) keeps one ReplicaSet per template it ran,
-- <name>-<pod-template-hash>, with the revision annotation: the new one
-- gets the replicas and the next revision, the old ones are scaled to 0
-- and kept (revisionHistoryLimit, default 10); its Pods are the new
-- ReplicaSet's (ownerReferences with its uid). The garbage collector
-- deletes a deleted Deployment's ReplicaSets.
case("a Deployment's ReplicaSets: the current one has the pods, older ones 0",
  function(w)
    local function rs_of(name)
      local out = {}
      for _, rs in ipairs(w.list("apps/v1/ReplicaSet")) do
        local o = rs.metadata.ownerReferences or {}
        if o[1] and o[1].kind == "Deployment" and o[1].name == name then
          out[rs.metadata.labels["pod-template-hash"]] = rs
        end
      end
      return out
    end
    local d = deployment("fid-rs", { app = "fid-rs" }, { replicas = 2 })
    w.apply(d, "uphook")
    local dep = w.settled("Deployment", "fid-rs", NS)
    local ps = pods_of(w, "fid-rs-")
    local h1 = ps[1].metadata.labels["pod-template-hash"]
    local rs1 = rs_of("fid-rs")[h1]
    t.ok(rs1, "the ReplicaSet fid-rs-<pod-template-hash> is stored")
    t.eq(rs1.metadata.name, "fid-rs-" .. h1)
    t.eq(rs1.metadata.ownerReferences[1].uid, dep.metadata.uid)
    t.eq(rs1.metadata.annotations["deployment.kubernetes.io/revision"], "1")
    t.eq(rs1.spec.replicas, 2)
    t.eq(rs1.spec.selector.matchLabels, { app = "fid-rs",
                                          ["pod-template-hash"] = h1 })
    t.eq(rs1.status.readyReplicas, 2)
    t.eq(ps[1].metadata.ownerReferences[1].uid, rs1.metadata.uid)
    -- a new image: a new ReplicaSet, revision 2; the old one at 0
    d.spec.template.spec.containers[1].image = "img:2"
    w.apply(d, "uphook")
    w.settled("Deployment", "fid-rs", NS)
    local all = rs_of("fid-rs")
    local n, new = 0, nil
    for h, rs in pairs(all) do
      n = n + 1
      if h ~= h1 then new = rs end
    end
    t.eq(n, 2)
    t.eq(all[h1].spec.replicas, 0)
    t.eq(new.spec.replicas, 2)
    t.eq(new.metadata.annotations["deployment.kubernetes.io/revision"], "2")
    ps = pods_of(w, "fid-rs-")
    t.eq(#ps, 2)
    t.eq(ps[1].metadata.ownerReferences[1].name, new.metadata.name)
    -- deleted, it takes them along
    w.delete("Deployment", "fid-rs", NS)
    t.eq(next(rs_of("fid-rs")), nil)
  end)

-- A fixture made with `kubectl get -o yaml` lists the Pods that run: they
-- are the workload's (its controller adopts them by its selector), and no
-- others are made; a workload the fixture lists no Pods of gets its own.
case("a fixture's own Pods are kept, no others made", function(w)
  local pod = { apiVersion = "v1", kind = "Pod", metadata = {
      name = "web-abc-xyz12", namespace = NS, labels = { app = "web" } },
    spec = { containers = { { name = "app", image = "img:1" } } },
    status = { phase = "Running" } }
  w.seed { deployment("web", { app = "web" }), pod,
           deployment("api", { app = "api" }) }
  w.settled("Deployment", "web", NS)
  w.settled("Deployment", "api", NS)
  local ps = pods_of(w, "web-")
  t.eq(#ps, 1)
  t.eq(ps[1].metadata.name, "web-abc-xyz12")
  ps = pods_of(w, "api-")
  t.eq(#ps, 1)
  t.eq(ps[1].metadata.labels.app, "api")
end)
