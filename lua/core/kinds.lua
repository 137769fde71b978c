--- uphook.core.kinds: naming Kubernetes objects and the fields the API server
--- owns, the one home of both for the engine and both backends.
local M = {}

---"group/version/Kind" of an object, the form backends accept.
---@param obj table
---@return string
function M.gvk(obj)
  return obj.apiVersion .. "/" .. obj.kind
end

---"namespace/name" or "name".
---@param name string
---@param namespace? string
---@return string
function M.joinname(name, namespace)
  if namespace and namespace ~= "" then return namespace .. "/" .. name end
  return name
end

---"namespace/name" of an object.
---@param obj table
---@return string
function M.objname(obj)
  local md = obj.metadata or {}
  return M.joinname(tostring(md.name), md.namespace)
end

---"Kind namespace/name", for messages and plans.
---@param ref {kind: string, name: string, namespace?: string}
---@return string
function M.label(ref)
  return ref.kind .. " " .. M.joinname(ref.name, ref.namespace)
end

---Parse a kind argument: "group/version/Kind", "v1/Kind" or "Kind"; the
---one parser of a kind argument (linear: one backtrack from the end to
---the last slash). A trailing slash leaves an empty kind, which the name
---checks refuse (lua/core/names.lua).
---@param kind string
---@return string|nil apiVersion, string kind
function M.split(kind)
  local av, k = kind:match("^(.*)/([^/]*)$")
  if av then return av, k end
  return nil, kind
end

---Split an apiVersion into group and version ("v1" -> "", "v1").
---@param api_version string
---@return string group, string version
function M.split_api_version(api_version)
  local g, v = api_version:match("^(.+)/([^/]+)$")
  if g then return g, v end
  return "", api_version
end

--- The workloads: the kinds whose controller runs Pods from their pod
--- template and whose spec.selector is immutable (the mock's validation
--- and controllers, lua/backend/mock).
M.WORKLOADS = { Deployment = true, DaemonSet = true, StatefulSet = true,
  ReplicaSet = true }

--- The field manager of uphook's writes: server-side apply with conflicts
--- forced (docs/contract.md §4), and its updates.
M.FIELD_MANAGER = "uphook"

--- The metadata fields the API server sets and keeps itself: a client's
--- value is ignored on write (or, for resourceVersion and uid, is a
--- precondition), so a restore must not send them back and a comparison
--- of what a hook changed leaves them out. managedFields is the server's
--- record of field ownership (docs/internals.md, "Field ownership"): it
--- is restored separately, through backend:set_managed_fields.
M.SERVER_METADATA = { "uid", "resourceVersion", "generation",
  "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
  "selfLink", "managedFields" }

---Set of M.SERVER_METADATA, for lookups.
---@type table<string, boolean>
M.IS_SERVER_METADATA = {}
for _, f in ipairs(M.SERVER_METADATA) do M.IS_SERVER_METADATA[f] = true end

---The kinds whose deletion can lose data (a volume, a claim, a
---namespace's objects, a CRD's custom objects): kube.delete and kube.prune
---refuse them without allow_data_loss, and a rollback never deletes one
---to restore it.
---@type table<string, boolean>
M.DATA_LOSS = {
  PersistentVolume = true, PersistentVolumeClaim = true, Namespace = true,
  CustomResourceDefinition = true,
}

---Metadata as a client writes it: a shallow copy of `md` without the
---server's fields (M.SERVER_METADATA; the tables below are shared).
---@param md table?
---@return table
function M.client_metadata(md)
  local out = {}
  for k, v in pairs(md or {}) do
    if not M.IS_SERVER_METADATA[k] then out[k] = v end
  end
  return out
end

---The API groups that kube-apiserver itself serves (Kubernetes 1.16 to
---1.35, with the groups it has since removed): only these change with a
---Kubernetes release, so only their versions can be gone after a snap
---refresh (`uphook doctor`, docs/microk8s.md). Every other group is served
---by a CRD or an aggregated API an addon installs, or is no served API at
---all (kube-apiserver's configuration files: audit.k8s.io Policy,
---eventratelimit.admission.k8s.io Configuration).
---@type table<string, boolean>
M.BUILTIN_GROUPS = {}
for _, g in ipairs { "", "admissionregistration.k8s.io",
  "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
  "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch",
  "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
  "events.k8s.io", "extensions", "flowcontrol.apiserver.k8s.io",
  "internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io",
  "policy", "rbac.authorization.k8s.io", "resource.k8s.io",
  "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io" } do
  M.BUILTIN_GROUPS[g] = true
end

---The object as a client would write it back: a shallow copy without the
---server's metadata fields and without status (the tables below the top
---level and metadata are shared with `obj`).
---@param obj table
---@return table
function M.clean(obj)
  local o = {}
  for k, v in pairs(obj) do o[k] = v end
  o.metadata, o.status = M.client_metadata(obj.metadata), nil
  return o
end

return M
