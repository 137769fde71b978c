--- uphook.kinds: small helpers for naming Kubernetes objects.
local M = {}

---"group/version/Kind" of an object, the form backends accept.
---@param obj table
---@return string
function M.gvk(obj)
  return obj.apiVersion .. "/" .. obj.kind
end

---"namespace/name" or "name".
function M.joinname(name, namespace)
  if namespace and namespace ~= "" then return namespace .. "/" .. name end
  return name
end

function M.objname(obj)
  local md = obj.metadata or {}
  return M.joinname(tostring(md.name), md.namespace)
end

---"Kind namespace/name", for messages and plans.
function M.label(ref)
  return ref.kind .. " " .. M.joinname(ref.name, ref.namespace)
end

---Split "group/version/Kind", "v1/Kind" or "Kind".
---@return string|nil apiVersion, string kind
function M.split(kind)
  local av, k = kind:match("^(.+)/([^/]+)$")
  if av then return av, k end
  return nil, kind
end

return M
