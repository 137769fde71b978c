--- uphook.core.hookerror: the error values a hook inspects, and error messages
--- without the engine's own positions (docs/reference.md, "Errors").
---
--- A primitive whose request failed in the world (the API server, the
--- network, the node's files, a wait) raises an error value:
---
---     { code = 409, reason = "Conflict", message = "...", details = {...},
---       url = "https://...", path = "args:kubelet" }
---
--- Only `reason` and `message` are always there. The broker sends it over
--- the pipe as a plain table; the hook child gives it the metatable
--- `uphook.error` (`tostring(err)` is the message, `error(err)` re-raises
--- it). Misuse of a primitive (a bad argument, a missing permission, a
--- change outside `upgrade`) stays a string: a bug to fix, not a condition
--- to handle. Either way no message carries `lua/<engine file>.lua:N:`.
local M = {}

--- What an error value may carry over the pipe, by type.
local FIELDS = { code = "number", reason = "string", message = "string",
  url = "string", path = "string" }

--- Plain data only (the pipe carries no functions), bounded in depth.
local function plain(v, depth)
  local t = type(v)
  if t == "string" or t == "number" or t == "boolean" then return v end
  if t ~= "table" or depth > 8 then return nil end
  local o = {}
  for k, x in pairs(v) do
    if type(k) == "string" or math.type(k) == "integer" then
      o[k] = plain(x, depth + 1)
    end
  end
  local mt = getmetatable(v)   -- keep the codecs' array marker
  if mt and rawget(mt, "__name") == "array" then setmetatable(o, mt) end
  return o
end

---An error value.
---@param reason string e.g. "Timeout", "HTTPError", "IOError"
---@param message string the readable message; names the object, URL or file
---@param extra? {code?: integer, details?: table, url?: string, path?: string}
---@return table
function M.new(reason, message, extra)
  local e = { reason = reason, message = message }
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

---Raise an error value (no position is added to tables).
---@param reason string
---@param message string
---@param extra? table
function M.raise(reason, message, extra)
  error(M.new(reason, message, extra), 0)
end

--- `lua/engine/prims.lua:426: ` and the like, at the start of a message.
local POSITION = "^@?lua/[%w_/]+%.lua:%d+: "

---The message without leading engine positions. Returns the message and
---whether a position was removed (then it came from a check the engine
---did not phrase for the hook: an internal error).
---@param msg string
---@return string, boolean
function M.clean(msg)
  local stripped = false
  while true do
    local rest = msg:gsub(POSITION, "", 1)
    if rest == msg then return msg, stripped end
    msg, stripped = rest, true
  end
end

---The text of any raised value: a string, an error value, or the
---engine's own stop values ({code=, message=}).
---@param v any
---@return string
function M.message(v)
  if type(v) == "table" then
    local mt = getmetatable(v)
    if type(v.message) == "string" then return (M.clean(v.message)) end
    if mt and mt.__tostring then return (M.clean(tostring(v))) end
    return "error"
  end
  return (M.clean(tostring(v)))
end

---What the broker sends back to the hook for a value a primitive raised:
---a plain table for an error value (anything with a string `message`),
---else a string. `prim` names the primitive for an internal error.
---@param v any
---@param prim string
---@return table|string
function M.wire(v, prim)
  if type(v) == "table" and type(v.message) == "string" then
    local e = {}
    for k, want in pairs(FIELDS) do
      if type(v[k]) == want then e[k] = v[k] end
    end
    e.message = (M.clean(v.message))
    e.reason = e.reason or "Unknown"
    if math.type(e.code) ~= "integer" then e.code = nil end
    if type(v.details) == "table" then e.details = plain(v.details, 0) end
    return e
  end
  local msg, internal = M.clean(type(v) == "table" and M.message(v)
    or tostring(v))
  if internal then return prim .. ": " .. msg end
  return msg
end

return M
