--- uphook.backend.mock.kinds: the mock API server's discovery (built-in kinds).
---
--- Maps Kind <-> group/version <-> resource plural <-> scope. Custom
--- kinds come from CustomResourceDefinitions held by the cluster; see
--- `from_crd`.
local schema = require "uphook.backend.mock.schema"
local ssa = require "uphook.backend.mock.ssa"
local crdschema = require "uphook.backend.mock.crdschema"

local M = {}

---@class KindInfo
---@field kind string        "Deployment"
---@field group string       "apps" ("" for core)
---@field version string     "v1"
---@field versions? table<string, boolean>  served versions (CRDs)
---@field plural string      "deployments"
---@field namespaced boolean
---@field gen boolean        the server keeps metadata.generation
---@field status boolean     status is a subresource: apply/replace ignore it
---@field crd? string        name of the defining CRD (custom kinds)
---@field ref? any           the kind's type in uphook.backend.mock.schema (built-in)
---@field schemas? table<string, table|false>  version -> openAPIV3Schema (custom)

-- kind, plural, namespaced, generation, status subresource
local CORE = {
  { "Namespace", "namespaces", false, false, true },
  { "ConfigMap", "configmaps", true, false, false },
  { "Secret", "secrets", true, false, false },
  { "Service", "services", true, false, true },
  { "ServiceAccount", "serviceaccounts", true, false, false },
  { "Pod", "pods", true, false, true },
  { "Node", "nodes", false, false, true },
  { "PersistentVolume", "persistentvolumes", false, false, true },
  { "PersistentVolumeClaim", "persistentvolumeclaims", true, false, true },
  { "Endpoints", "endpoints", true, false, false },
  { "Event", "events", true, false, false },
  { "ResourceQuota", "resourcequotas", true, false, true },
  { "LimitRange", "limitranges", true, false, false },
}

local GROUPS = {
  { "apps", "v1", {
    { "Deployment", "deployments", true, true, true },
    { "DaemonSet", "daemonsets", true, true, true },
    { "StatefulSet", "statefulsets", true, true, true },
    { "ReplicaSet", "replicasets", true, true, true },
    { "ControllerRevision", "controllerrevisions", true, false, false },
  } },
  { "batch", "v1", {
    { "Job", "jobs", true, true, true },
    { "CronJob", "cronjobs", true, true, true },
  } },
  { "rbac.authorization.k8s.io", "v1", {
    { "Role", "roles", true, false, false },
    { "RoleBinding", "rolebindings", true, false, false },
    { "ClusterRole", "clusterroles", false, false, false },
    { "ClusterRoleBinding", "clusterrolebindings", false, false, false },
  } },
  { "storage.k8s.io", "v1", {
    { "StorageClass", "storageclasses", false, false, false },
    { "CSIDriver", "csidrivers", false, false, false },
    { "CSINode", "csinodes", false, false, false },
    { "VolumeAttachment", "volumeattachments", false, false, true },
  } },
  { "coordination.k8s.io", "v1", {
    { "Lease", "leases", true, false, false },
  } },
  { "apiextensions.k8s.io", "v1", {
    { "CustomResourceDefinition", "customresourcedefinitions", false, true,
      true },
  } },
  { "apiregistration.k8s.io", "v1", {
    { "APIService", "apiservices", false, false, true },
  } },
  { "admissionregistration.k8s.io", "v1", {
    { "ValidatingWebhookConfiguration", "validatingwebhookconfigurations",
      false, true, false },
    { "MutatingWebhookConfiguration", "mutatingwebhookconfigurations",
      false, true, false },
    -- GA in Kubernetes 1.30 (Gateway API v1.5.1's safe-upgrades policy)
    { "ValidatingAdmissionPolicy", "validatingadmissionpolicies",
      false, true, true },
    { "ValidatingAdmissionPolicyBinding",
      "validatingadmissionpolicybindings", false, true, false },
  } },
  { "policy", "v1", {
    { "PodDisruptionBudget", "poddisruptionbudgets", true, true, true },
  } },
  { "networking.k8s.io", "v1", {
    { "Ingress", "ingresses", true, true, true },
    { "NetworkPolicy", "networkpolicies", true, true, false },
    { "IngressClass", "ingressclasses", false, false, false },
  } },
  { "discovery.k8s.io", "v1", {
    { "EndpointSlice", "endpointslices", true, false, false },
  } },
  { "node.k8s.io", "v1", {
    { "RuntimeClass", "runtimeclasses", false, false, false },
  } },
  { "scheduling.k8s.io", "v1", {
    { "PriorityClass", "priorityclasses", false, false, false },
  } },
  { "autoscaling", "v2", {
    { "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, false,
      true },
  } },
}

---"apps/v1" or "v1".
---@param group string
---@param version string
---@return string
function M.api_version(group, version)
  return group == "" and version or (group .. "/" .. version)
end

ssa.link(schema.types)

---@type table<string, KindInfo>  by Kind
local by_kind = {}

local function add(group, version, row)
  local info = { kind = row[1], group = group, version = version,
                 plural = row[2], namespaced = row[3], gen = row[4],
                 status = row[5] }
  local ref = schema.kinds[M.api_version(group, version) .. "/" .. row[1]]
  info.ref = ref and schema.types[ref]
  by_kind[info.kind] = info
end
for _, r in ipairs(CORE) do add("", "v1", r) end
for _, g in ipairs(GROUPS) do
  for _, r in ipairs(g[3]) do add(g[1], g[2], r) end
end

---The built-in kind table (read-only use, please).
M.builtin = by_kind

---The resource name used in API messages: "deployments.apps",
---"configmaps".
---@param info KindInfo
---@return string
function M.resource(info)
  return info.group == "" and info.plural
         or (info.plural .. "." .. info.group)
end

---The qualified kind used in Invalid messages: "Deployment.apps",
---"Service".
---@param info KindInfo
---@return string
function M.qualified(info)
  return info.group == "" and info.kind or (info.kind .. "." .. info.group)
end

---Build a KindInfo from a stored CustomResourceDefinition.
---@param crd table
---@return KindInfo|nil
function M.from_crd(crd)
  local spec = type(crd.spec) == "table" and crd.spec or {}
  local names = type(spec.names) == "table" and spec.names or {}
  if type(names.kind) ~= "string" or type(spec.group) ~= "string" then
    return nil
  end
  local versions, first, storage = {}, nil, nil
  for _, v in ipairs(type(spec.versions) == "table" and spec.versions
                     or {}) do
    if type(v) == "table" and type(v.name) == "string"
        and v.served ~= false then
      versions[v.name] = true
      first = first or v.name
      if v.storage then storage = v.name end
    end
  end
  local has_status, schemas = false, {}
  for _, v in ipairs(type(spec.versions) == "table" and spec.versions
                     or {}) do
    if type(v) == "table" and type(v.subresources) == "table"
        and v.subresources.status ~= nil then
      has_status = true
    end
    if type(v) == "table" and type(v.name) == "string" then
      schemas[v.name] = type(v.schema) == "table"
        and type(v.schema.openAPIV3Schema) == "table"
        and v.schema.openAPIV3Schema or false
    end
  end
  return { kind = names.kind, group = spec.group,
           version = storage or first or "v1", versions = versions,
           plural = names.plural or (names.kind:lower() .. "s"),
           namespaced = spec.scope ~= "Cluster", gen = true,
           status = has_status, crd = crd.metadata and crd.metadata.name,
           schemas = schemas }
end

-- Converted schemas, by the (never changed) schema table of a stored CRD.
local converted = setmetatable({}, { __mode = "k" })

---The type of a custom kind at `version` (crdschema.from_openapi of the
---CRD version's openAPIV3Schema), converted once per schema.
---@param info KindInfo
---@param version string
---@return table
function M.custom_ref(info, version)
  local src = info.schemas and info.schemas[version]
  if not src then return crdschema.from_openapi(nil) end
  local ref = converted[src]
  if not ref then
    ref = crdschema.from_openapi(src)
    converted[src] = ref
  end
  return ref
end

---Does `info` serve `version`?
---@param info KindInfo
---@param version string
---@return boolean
function M.serves(info, version)
  if info.versions then return info.versions[version] == true end
  return info.version == version
end

---The store's key of a kind ("apps/Deployment") and of an object in it
---(namespace NUL name): lua/backend/mock/cluster.lua's and
---lua/backend/mock/reconcile.lua's one way to find an object.
---@param info table a kind's info
---@return string
function M.gk(info) return info.group .. "/" .. info.kind end

---("\0" sorts before every name character: namespace order first.)
---@param ns string|nil
---@param name string
---@return string
function M.okey(ns, name) return (ns or "") .. "\0" .. name end

---The namespace an object of `info`'s kind lives in: nil for a cluster-
---scoped kind, "default" where a namespaced one names none.
---@param info table a kind's info
---@param ns string|nil
---@return string|nil
function M.norm_ns(info, ns)
  if not info.namespaced then return nil end
  if ns == nil or ns == "" then return "default" end
  return ns
end

return M
