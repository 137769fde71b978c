--- uphook.engine.deprecations: the Kubernetes API versions that stopped being
--- served, and in which release, as the Deprecated API Migration Guide
--- lists them: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
--- (kubernetes/website, content/en/docs/reference/using-api/
--- deprecation-guide.md; the v1.16 and v1.22 sections as of commit
--- 02afb71016ac558fc5836738711e78e77b1ad44a, v1.25 to v1.32 as the page
--- reads on 2026-12-01). Data for `uphook doctor` (lua/cmd/doctor.lua); add a
--- release's section when the guide gains one.
local M = {}

---@class Removal
---@field removed string  the first minor release that does not serve it
---@field api string      the apiVersion that is gone
---@field kinds string[]
---@field use string|nil  the apiVersion to move to (nil: none, the API is gone)

---@type Removal[]
M.REMOVED = {
  { removed = "1.16", api = "extensions/v1beta1", kinds = { "NetworkPolicy" },
    use = "networking.k8s.io/v1" },
  { removed = "1.16", api = "extensions/v1beta1", kinds = { "PodSecurityPolicy" },
    use = "policy/v1beta1" },
  { removed = "1.16", api = "extensions/v1beta1",
    kinds = { "DaemonSet", "Deployment", "ReplicaSet" }, use = "apps/v1" },
  { removed = "1.16", api = "apps/v1beta1",
    kinds = { "Deployment", "StatefulSet", "ReplicaSet" }, use = "apps/v1" },
  { removed = "1.16", api = "apps/v1beta2",
    kinds = { "DaemonSet", "Deployment", "StatefulSet", "ReplicaSet" },
    use = "apps/v1" },

  { removed = "1.22", api = "admissionregistration.k8s.io/v1beta1",
    kinds = { "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration" },
    use = "admissionregistration.k8s.io/v1" },
  { removed = "1.22", api = "apiextensions.k8s.io/v1beta1",
    kinds = { "CustomResourceDefinition" }, use = "apiextensions.k8s.io/v1" },
  { removed = "1.22", api = "apiregistration.k8s.io/v1beta1",
    kinds = { "APIService" }, use = "apiregistration.k8s.io/v1" },
  { removed = "1.22", api = "authentication.k8s.io/v1beta1",
    kinds = { "TokenReview" }, use = "authentication.k8s.io/v1" },
  { removed = "1.22", api = "authorization.k8s.io/v1beta1",
    kinds = { "LocalSubjectAccessReview", "SelfSubjectAccessReview",
              "SubjectAccessReview" }, use = "authorization.k8s.io/v1" },
  { removed = "1.22", api = "certificates.k8s.io/v1beta1",
    kinds = { "CertificateSigningRequest" }, use = "certificates.k8s.io/v1" },
  { removed = "1.22", api = "coordination.k8s.io/v1beta1", kinds = { "Lease" },
    use = "coordination.k8s.io/v1" },
  { removed = "1.22", api = "extensions/v1beta1", kinds = { "Ingress" },
    use = "networking.k8s.io/v1" },
  { removed = "1.22", api = "networking.k8s.io/v1beta1",
    kinds = { "Ingress", "IngressClass" }, use = "networking.k8s.io/v1" },
  { removed = "1.22", api = "rbac.authorization.k8s.io/v1beta1",
    kinds = { "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding" },
    use = "rbac.authorization.k8s.io/v1" },
  { removed = "1.22", api = "scheduling.k8s.io/v1beta1",
    kinds = { "PriorityClass" }, use = "scheduling.k8s.io/v1" },
  { removed = "1.22", api = "storage.k8s.io/v1beta1",
    kinds = { "CSIDriver", "CSINode", "StorageClass", "VolumeAttachment" },
    use = "storage.k8s.io/v1" },

  { removed = "1.25", api = "batch/v1beta1", kinds = { "CronJob" },
    use = "batch/v1" },
  { removed = "1.25", api = "discovery.k8s.io/v1beta1",
    kinds = { "EndpointSlice" }, use = "discovery.k8s.io/v1" },
  { removed = "1.25", api = "events.k8s.io/v1beta1", kinds = { "Event" },
    use = "events.k8s.io/v1" },
  { removed = "1.25", api = "autoscaling/v2beta1",
    kinds = { "HorizontalPodAutoscaler" }, use = "autoscaling/v2" },
  { removed = "1.25", api = "policy/v1beta1", kinds = { "PodDisruptionBudget" },
    use = "policy/v1" },
  { removed = "1.25", api = "policy/v1beta1", kinds = { "PodSecurityPolicy" } },
  { removed = "1.25", api = "node.k8s.io/v1beta1", kinds = { "RuntimeClass" },
    use = "node.k8s.io/v1" },

  { removed = "1.26", api = "flowcontrol.apiserver.k8s.io/v1beta1",
    kinds = { "FlowSchema", "PriorityLevelConfiguration" },
    use = "flowcontrol.apiserver.k8s.io/v1" },
  { removed = "1.26", api = "autoscaling/v2beta2",
    kinds = { "HorizontalPodAutoscaler" }, use = "autoscaling/v2" },

  { removed = "1.27", api = "storage.k8s.io/v1beta1",
    kinds = { "CSIStorageCapacity" }, use = "storage.k8s.io/v1" },

  { removed = "1.29", api = "flowcontrol.apiserver.k8s.io/v1beta2",
    kinds = { "FlowSchema", "PriorityLevelConfiguration" },
    use = "flowcontrol.apiserver.k8s.io/v1" },

  { removed = "1.32", api = "flowcontrol.apiserver.k8s.io/v1beta3",
    kinds = { "FlowSchema", "PriorityLevelConfiguration" },
    use = "flowcontrol.apiserver.k8s.io/v1" },
}

local by_key
---The removal of an apiVersion and kind, if the guide lists one.
---@param api string
---@param kind string
---@return Removal|nil
function M.find(api, kind)
  if not by_key then
    by_key = {}
    for _, r in ipairs(M.REMOVED) do
      for _, k in ipairs(r.kinds) do by_key[r.api .. "/" .. k] = r end
    end
  end
  return by_key[api .. "/" .. kind]
end

---The minor number of "1.25" (or "v1.25.3").
---@param v string
---@return integer|nil
function M.minor(v)
  local minor = tostring(v):match("^v?1%.(%d+)")
  return minor and math.tointeger(tonumber(minor))
end

return M
