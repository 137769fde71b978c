--- uphook.core.names: object names, namespaces and kind arguments as the API
--- server validates them (docs/security.md, "What permissions
--- guarantee"), checked before any request, and so before any URL, is
--- built from them: a name such as `..` or `a/b` would otherwise make
--- the request go to another path.
---
--- Every check is linear in its input and refuses long input first, so
--- no hook text costs the broker more than one pass.
local kinds = require "uphook.core.kinds"

local M = {}

M.MAX_KIND = 512      -- "group/version/Kind": a subdomain, a label, a name
M.MAX_SUBDOMAIN = 253
M.MAX_LABEL = 63

local SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower "
  .. "case alphanumeric characters, '-' or '.', and must start and end "
  .. "with an alphanumeric character"
local LABEL = "a lowercase RFC 1123 label must consist of lower case "
  .. "alphanumeric characters or '-', and must start and end with an "
  .. "alphanumeric character"
local LABEL1035 = "a DNS-1035 label must consist of lower case "
  .. "alphanumeric characters or '-', start with an alphabetic character, "
  .. "and end with an alphanumeric character"
local SEGMENT = "may not be '.' or '..' and may not contain '/' or '%'"

--- Hook text in a message: at most 64 bytes of it, %q-quoted.
---@param s any hook text
---@return string
function M.quote(s)
  s = tostring(s)
  if #s > 64 then
    return string.format("%q... (%d bytes)", s:sub(1, 64), #s)
  end
  return string.format("%q", s)
end

local function label_ok(s, first)
  return #s >= 1 and #s <= M.MAX_LABEL and not s:find("[^a-z0-9%-]")
    and s:find(first or "^[a-z0-9]") ~= nil and s:find("[a-z0-9]$") ~= nil
end

---Is s a DNS-1123 label (namespaces)?
---@param s string
---@return boolean
function M.is_label(s)
  return type(s) == "string" and label_ok(s)
end

---Is s a DNS-1123 subdomain (most object names)?
---@param s string
---@return boolean
function M.is_subdomain(s)
  if type(s) ~= "string" or #s < 1 or #s > M.MAX_SUBDOMAIN
     or s:find("[^a-z0-9%-%.]") then
    return false
  end
  local i = 1
  while true do
    local dot = s:find(".", i, true)
    local part = s:sub(i, (dot or #s + 1) - 1)
    if not (#part >= 1 and part:find("^[a-z0-9]")
            and part:find("[a-z0-9]$")) then
      return false
    end
    if not dot then return true end
    i = dot + 1
  end
end

-- RBAC objects take any path segment (ClusterRole "system:node"), the
-- Service a DNS-1035 label, Namespaces a label; the rest a subdomain
-- (as k8s.io/apimachinery's validation does for each kind).
local SEGMENT_KINDS = { Role = true, ClusterRole = true, RoleBinding = true,
  ClusterRoleBinding = true }

--- "apps/v1/Deployment" -> "Deployment": the kind part of kinds.split,
--- the one parser of a kind argument.
local function short_kind(kind)
  return (select(2, kinds.split(kind)))
end
M.short_kind = short_kind

---Why `name` is not a valid name for `kind` ("Deployment",
---"apps/v1/Deployment"), or nil when it is.
---@param kind string
---@param name string
---@return string|nil why
function M.name_problem(kind, name)
  local k = short_kind(kind)
  if type(name) ~= "string" then return "a name must be a string" end
  if SEGMENT_KINDS[k] then
    if name == "" or name == "." or name == ".." or name:find("[/%%]")
       or #name > M.MAX_SUBDOMAIN then
      return "a name " .. SEGMENT
    end
  elseif k == "Namespace" then
    if not label_ok(name) then return LABEL end
  elseif k == "Service" then
    if not label_ok(name, "^[a-z]") then return LABEL1035 end
  elseif not M.is_subdomain(name) then
    return SUBDOMAIN
  end
end

---Raise unless `name` is valid for `kind` (fname: "kube.get").
---@param kind string the kind argument
---@param name any
---@param fname string the primitive, for the message
function M.check_name(kind, name, fname)
  local why = M.name_problem(kind, name)
  if why then
    error(string.format("%s: %s name %s is invalid: %s", fname,
      short_kind(kind), M.quote(name), why), 0)
  end
end

---Raise unless `ns` (a namespace argument or metadata.namespace) is a
---label.
---@param ns any
---@param fname string the primitive, for the message
function M.check_namespace(ns, fname)
  if type(ns) ~= "string" or not label_ok(ns) then
    error(string.format("%s: namespace %s is invalid: %s", fname,
      M.quote(ns), LABEL), 0)
  end
end

---Raise unless `kind` is a kind argument: "Kind", "version/Kind" or
---"group/version/Kind", at most MAX_KIND bytes of [A-Za-z0-9.-/].
---@param kind any
---@param fname string the primitive, for the message
function M.check_kind(kind, fname)
  if #kind < 1 or #kind > M.MAX_KIND or kind:find("[^%w%.%-/]")
     or kind:find("//", 1, true) or kind:find("^/") or kind:find("/$") then
    error(string.format("%s: invalid kind %s: \"Kind\", \"v1/Kind\" or "
      .. "\"group/version/Kind\" expected", fname, M.quote(kind)), 0)
  end
  local slashes = select(2, kind:gsub("/", ""))
  if slashes > 2 then
    error(string.format("%s: invalid kind %s: \"Kind\", \"v1/Kind\" or "
      .. "\"group/version/Kind\" expected", fname, M.quote(kind)), 0)
  end
end

return M
