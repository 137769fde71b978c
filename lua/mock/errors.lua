--- uphook.mock.errors: Kubernetes Status errors as the mock raises them.
---
--- Every error is a table {code, reason, message[, details]} whose
--- message is what the API server's Status says; tostring(err) is the
--- message. Raise with error(e) (tables carry no position).
local kinds = require "uphook.mock.kinds"

local M = {}

---@class ApiError
---@field code integer      HTTP status: 404, 409, 422, 403, 400
---@field reason string     NotFound, AlreadyExists, Conflict, Invalid,
---                          Forbidden or BadRequest
---@field message string
---@field details? table    {causes = {string...}} for Invalid
local Error = {}
Error.__index = Error
Error.__tostring = function(e) return e.message end
Error.__name = "uphook.mock.error"
M.Error = Error

---Make an error table.
---@param code integer
---@param reason string
---@param message string
---@param details? table
---@return ApiError
function M.new(code, reason, message, details)
  return setmetatable({ code = code, reason = reason, message = message,
                        details = details }, Error)
end

---Is v an error made here?
---@param v any
---@return boolean
function M.is(v)
  return getmetatable(v) == Error
end

---404: `deployments.apps "x" not found`.
---@param info KindInfo
---@param name string
function M.not_found(info, name)
  return M.new(404, "NotFound",
    string.format('%s "%s" not found', kinds.resource(info), name))
end

---409: `configmaps "x" already exists`.
---@param info KindInfo
---@param name string
function M.already_exists(info, name)
  return M.new(409, "AlreadyExists",
    string.format('%s "%s" already exists', kinds.resource(info), name))
end

---409 on a stale resourceVersion.
---@param info KindInfo
---@param name string
function M.conflict(info, name)
  return M.new(409, "Conflict", string.format(
    'Operation cannot be fulfilled on %s "%s": the object has been ' ..
    'modified; please apply your changes to the latest version and try ' ..
    'again', kinds.resource(info), name))
end

---409 on a uid precondition.
function M.uid_conflict(want, have)
  return M.new(409, "Conflict", string.format(
    "Precondition failed: UID in precondition: %s, UID in object meta: %s",
    want, have))
end

---422 with field errors, formatted like apimachinery's aggregate:
---one error alone, several as "[a, b]".
---@param info KindInfo
---@param name string
---@param causes string[]
function M.invalid(info, name, causes)
  local body = #causes == 1 and causes[1]
               or ("[" .. table.concat(causes, ", ") .. "]")
  return M.new(422, "Invalid", string.format('%s "%s" is invalid: %s',
    kinds.qualified(info), name, body), { causes = causes })
end

---403 from an admission plugin.
---@param info KindInfo
---@param name string
---@param why string
function M.forbidden(info, name, why)
  return M.new(403, "Forbidden", string.format('%s "%s" is forbidden: %s',
    kinds.resource(info), name, why))
end

---404 for a kind in a version the server does not serve (a custom
---resource before its CRD, or a wrong version).
---@param kind string
---@param api_version string
function M.no_match(kind, api_version)
  return M.new(404, "NotFound", string.format(
    'no matches for kind "%s" in version "%s"', kind, api_version))
end

---404 for a bare Kind nobody serves.
---@param kind string
function M.unknown_kind(kind)
  return M.new(404, "NotFound", string.format(
    'the server doesn\'t have a resource type "%s"', kind))
end

---400 for a malformed request (missing kind, name...).
---@param message string
function M.bad_request(message)
  return M.new(400, "BadRequest", message)
end

return M
