-- The mock cluster's fidelity (docs/contract.md §6): custom resources, served
-- once their CRD is; APIService and Secret stringData.
-- The objects the cases start from: tests/lua/mock_cluster/objects.lua.
local t = require "uphook.test"
local cluster = require "uphook.backend.mock.cluster"
local objects = require "objects"

local NS, new, err_of = objects.NS, objects.new, objects.err_of

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

t.case("api_versions: the built-in kinds, a CRD's served versions once it "
    .. "exists, an APIService's group/version (as discovery says them)",
    function()
  local b = new()
  local function serves(v)
    for _, x in ipairs(b:api_versions()) do if x == v then return true end end
    return false
  end
  t.ok(serves("v1") and serves("v1/ConfigMap") and serves("apps/v1")
       and serves("apps/v1/Deployment"))
  t.ok(not serves("metallb.io/v1beta1/IPAddressPool"))
  b:apply(crd())
  t.ok(serves("metallb.io/v1beta1") and serves("metallb.io/v1beta1/IPAddressPool"))
  b:apply { apiVersion = "apiregistration.k8s.io/v1", kind = "APIService",
    metadata = { name = "v1beta1.metrics.k8s.io" },
    spec = { group = "metrics.k8s.io", version = "v1beta1",
      groupPriorityMinimum = 100, versionPriority = 100 } }
  t.ok(serves("metrics.k8s.io/v1beta1"))
end)
