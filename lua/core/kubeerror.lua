--- uphook.core.kubeerror: Kubernetes API errors as both backends raise them,
--- and the request-body checks they share (the one home of their texts).
---
--- An error is a table {code, reason, message[, details]} whose message
--- is exactly what the API server's Status says; tostring(err) is the
--- message. Raise with error(e, 0): tables carry no position.
local M = {}

---@class ApiError
---@field code integer      HTTP status: 400, 403, 404, 409, 410, 422, 500...
---@field reason string     NotFound, AlreadyExists, Conflict, Invalid, ...
---@field message string
---@field details? table    the Status details (for Invalid: {name=, group=,
---                          kind=, causes = {{reason=, message=, field=}}})
local Error = {}
Error.__index = Error
Error.__tostring = function(e) return e.message end
Error.__name = "uphook.core.kubeerror"
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

--- A controller writing an object between a read and a write (a
--- Deployment's rollout does, every few hundred ms) makes the server
--- refuse the write as stale. Both who write with a precondition (the
--- client-side apply upgrade, undo) read again and retry, as client-go's
--- RetryOnConflict and kubectl's migrateToSSAIfNecessary do: only that 409,
--- and at most this many tries in all.
M.CONFLICT_TRIES = 5

---Is `e` the server's 409 Conflict on a stale resourceVersion (not 409
---AlreadyExists)?
---@param e any
---@return boolean
function M.is_conflict(e)
  return type(e) == "table" and e.code == 409 and e.reason == "Conflict"
end

---400 for a malformed request.
---@param message string
---@return ApiError
function M.bad_request(message)
  return M.new(400, "BadRequest", message)
end

---404 for a kind in a version the server does not serve (a custom
---resource before its CRD, or a wrong version).
---@param kind string
---@param api_version string
---@return ApiError
function M.no_match(kind, api_version)
  return M.new(404, "NotFound", string.format(
    'no matches for kind "%s" in version "%s"', kind, api_version))
end

---404 for a bare Kind nobody serves.
---@param kind string
---@return ApiError
function M.unknown_kind(kind)
  return M.new(404, "NotFound", string.format(
    'the server doesn\'t have a resource type "%s"', kind))
end

---Check a request body (apply, create, replace) before it is sent: a
---non-table is the caller's bug (raised at `level`); a missing kind or
---name is the API server's 400, raised as it would answer. `resolve`
---(the backend's kind lookup, which raises its 404) runs between the
---two, in the API server's order. A create may name the object by
---metadata.generateName.
---@generic I
---@param obj any
---@param what "apply"|"create"|"replace"
---@param level integer  error level of the caller's bug
---@param resolve fun(kind_arg: string): I
---@return I info, table metadata
function M.check_body(obj, what, level, resolve)
  if type(obj) ~= "table" then
    error(what .. ": object must be a table", level + 1)
  end
  if type(obj.apiVersion) ~= "string" or type(obj.kind) ~= "string" then
    error(M.bad_request("Object 'Kind' is missing in object: " ..
                        "apiVersion and kind are required"), 0)
  end
  local info = resolve(obj.apiVersion .. "/" .. obj.kind)
  local md = obj.metadata
  local named = type(md) == "table" and type(md.name) == "string"
    and md.name ~= ""
  if not named and not (what == "create" and type(md) == "table"
      and type(md.generateName) == "string") then
    error(M.bad_request("resource name may not be empty"), 0)
  end
  return info, md
end

return M
