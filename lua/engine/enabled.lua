--- uphook.engine.enabled: is an addon enabled? As MicroK8s decides it, from the
--- `check_status` of its addons.yaml entry
--- (canonical/microk8s@d099c907:scripts/wrappers/common/utils.py,
--- get_status and is_enabled):
---
--- * `<resource>/<name>` (`deployment.apps/coredns`, `pod/coredns`): an
---   object of that resource whose name starts with `<name>` exists, as
---   the check matches a row of `kubectl get all,ingress,ingressclass`
---   and `kubectl get clusterroles` (a pod's name has a suffix);
--- * anything else is a file on this node, after `${SNAP}`, `${SNAP_DATA}`
---   and `${SNAP_COMMON}` are expanded (`${SNAP_DATA}/var/lock/ha-cluster`).
local M = {}

---This node's snap folders and a file test, for check_status files; nil
---offline, where the node is mocked.
---@param o table options of lua/cmd/cli.lua
---@param c table the C families
---@return {kind: function, vars: table<string, string>}|nil node
function M.this_node(o, c)
  if o.offline then return nil end
  return { kind = c.sys.kind, vars = { SNAP_DATA = o.snap_data,
    SNAP_COMMON = o.snap_common,
    SNAP = c.sys.getenv("SNAP") or "/snap/microk8s/current" } }
end

-- check_status names a resource the way `kubectl get` prints it
M.RESOURCE_KINDS = { pod = "v1/Pod", service = "v1/Service",
  namespace = "v1/Namespace", configmap = "v1/ConfigMap",
  deployment = "apps/v1/Deployment", ["deployment.apps"] = "apps/v1/Deployment",
  daemonset = "apps/v1/DaemonSet", ["daemonset.apps"] = "apps/v1/DaemonSet",
  ["statefulset.apps"] = "apps/v1/StatefulSet",
  storageclass = "storage.k8s.io/v1/StorageClass",
  ["storageclass.storage.k8s.io"] = "storage.k8s.io/v1/StorageClass",
  ["ingressclass.networking.k8s.io"] = "networking.k8s.io/v1/IngressClass",
  ["clusterrole.rbac.authorization.k8s.io"] =
    "rbac.authorization.k8s.io/v1/ClusterRole" }

---@param backend Backend
---@param check string|nil the addon's check_status
---@param node? {vars: table<string,string>, kind: fun(path: string): string|nil}
---       this node's snap folders and a file test; nil when the node's
---       files are not this machine's (offline)
---@return boolean|nil enabled nil when it cannot tell (no check_status,
---       an unknown resource, an API error)
---@return "file"|nil why "file" when it cannot tell because check_status
---       is a file on this node and the node is not this machine's
---       (offline)
function M.check(backend, check, node)
  check = check or ""
  local res, name = check:match("^([%w%.%-]+)/([^/]+)$")
  local kind = res and M.RESOURCE_KINDS[res:lower()]
  if kind then
    local ok, objs = pcall(backend.list, backend, kind, {})
    if not ok then return nil end
    for _, o in ipairs(objs) do
      if o.metadata.name:sub(1, #name) == name then return true end
    end
    return false
  end
  if check:find("^%${SNAP[%w_]*}/") then
    if not node then return nil, "file" end
    local path = check:gsub("%${(SNAP[%w_]*)}", function(v)
      return node.vars[v] end)
    if path:find("${", 1, true) then return nil end
    return node.kind(path) == "file"   -- os.path.isfile
  end
  return nil
end

return M
