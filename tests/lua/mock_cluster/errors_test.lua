-- The mock cluster's fidelity (docs/contract.md §6): errors: NotFound,
-- AlreadyExists, Conflict, namespaces that must exist, invalid names.
-- The objects the cases start from: tests/lua/mock_cluster/objects.lua.
local t = require "uphook.test"
local objects = require "objects"

local NS, deployment, storageclass, fixture, new, err_of =
  objects.NS, objects.deployment, objects.storageclass, objects.fixture,
  objects.new, objects.err_of

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
