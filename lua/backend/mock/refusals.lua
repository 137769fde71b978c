--- uphook.backend.mock.refusals: the mock API server's refusals of a
--- request on one object (404 NotFound, 409 AlreadyExists and Conflict,
--- 422 Invalid, 403 Forbidden), named by its kind as the API server names
--- them. They are uphook.core.kubeerror's errors, which also has the
--- refusals that name no object (400, a kind nobody serves).
local kinds = require "uphook.backend.mock.kinds"

local kubeerror = require "uphook.core.kubeerror"

local M = {}

---404: `deployments.apps "x" not found`.
---@param info KindInfo
---@param name string
function M.not_found(info, name)
  return kubeerror.new(404, "NotFound",
    string.format('%s "%s" not found', kinds.resource(info), name))
end

---409: `configmaps "x" already exists`.
---@param info KindInfo
---@param name string
function M.already_exists(info, name)
  return kubeerror.new(409, "AlreadyExists",
    string.format('%s "%s" already exists', kinds.resource(info), name))
end

---409 on a stale resourceVersion.
---@param info KindInfo
---@param name string
function M.conflict(info, name)
  return kubeerror.new(409, "Conflict", string.format(
    'Operation cannot be fulfilled on %s "%s": the object has been ' ..
    'modified; please apply your changes to the latest version and try ' ..
    'again', kinds.resource(info), name))
end

---409 on a uid precondition.
---@param want string the uid the request names
---@param have string the object's uid
---@return ApiError
function M.uid_conflict(want, have)
  return kubeerror.new(409, "Conflict", string.format(
    "Precondition failed: UID in precondition: %s, UID in object meta: %s",
    want, have))
end

--- A field error's text ("<field>: <type>: <detail>") -> the StatusCause
--- the API server sends for it.
local CAUSE_REASONS = { ["Invalid value"] = "FieldValueInvalid",
  Forbidden = "FieldValueForbidden", ["Required value"] = "FieldValueRequired",
  ["Duplicate value"] = "FieldValueDuplicate",
  ["Unsupported value"] = "FieldValueNotSupported" }

local function cause(text)
  local field, body = text:match("^(.-): (.*)$")
  if not field then return { reason = "FieldValueInvalid", message = text } end
  local typ = body:match("^([^:]+)")
  return { reason = CAUSE_REASONS[typ] or "FieldValueInvalid",
           message = body, field = field }
end

---422 with field errors, formatted like apimachinery's aggregate:
---one error alone, several as "[a, b]"; details as the server's.
---@param info KindInfo
---@param name string
---@param causes string[] field errors, "<field>: <type>: <detail>"
function M.invalid(info, name, causes)
  local body = #causes == 1 and causes[1]
               or ("[" .. table.concat(causes, ", ") .. "]")
  local list = {}
  for i, c in ipairs(causes) do list[i] = cause(c) end
  local details = { name = name, kind = info.kind, causes = list }
  if info.group ~= "" then details.group = info.group end
  return kubeerror.new(422, "Invalid", string.format('%s "%s" is invalid: %s',
    kinds.qualified(info), name, body), details)
end

---403 from an admission plugin.
---@param info KindInfo
---@param name string
---@param why string
function M.forbidden(info, name, why)
  return kubeerror.new(403, "Forbidden", string.format('%s "%s" is forbidden: %s',
    kinds.resource(info), name, why))
end

return M
