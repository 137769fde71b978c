--- uphook.engine.hookload: load a hook in a confined child only to read its
--- declarations (lint, list). Nothing runs but the chunk itself.
local hookdecl = require "uphook.engine.hookdecl"
local prims = require "uphook.engine.prims"
local R = require "uphook.core.run"

--- What a hook may do while its file loads: read its own folder.
local LOAD_OK = { ["__uphook.require"] = true, ["addon.read"] = true,
  ["log.info"] = true, ["log.warn"] = true, ["log.step"] = true }

local M = {}

---Where the lines a hook logs while its file loads go: kept, never shown
---(the only report method a load can reach is log, through log.*).
---@return table report
local function quiet_report()
  return { lines = {}, capture = true,
    log = function(self, _, text) self.lines[#self.lines + 1] = text end }
end

---What every hook a command loads is held to (docs/security.md
---"Unbounded list and lint"): the command's --timeout and --memory-limit.
---`list` and `lint` load many hooks under one deadline.
---@param o table the command's options (timeout, timeout_given, memory_limit)
---@param c table the C families
---@return {deadline: number, timeout: number, memory_limit: integer}
function M.limits(o, c)
  local timeout = o.timeout_given and o.timeout or 15
  return { timeout = timeout, deadline = c.sys.now() + timeout,
    memory_limit = (o.memory_limit or 256) << 20 }
end

---@param limits? {deadline: number, timeout: number, memory_limit: integer} from M.limits
---@return table|nil info, string|nil err, table|nil child
---@param c table the C families
---@param path string the hook file
---@param name string the hook, in messages
---@param keep boolean|nil return the child too, still running
function M.load(c, path, name, keep, limits)
  limits = limits or { timeout = 10, deadline = c.sys.now() + 10 }
  -- the folder resolved once and held; the hook and its modules are read
  -- beneath it (docs/security.md)
  local dir, perr = c.fs.pin(path:match("^(.*)/[^/]*$") or ".")
  if not dir then return nil, perr end
  local ok_read, src, err = pcall(c.fs.read, dir, path:match("([^/]*)$"))
  if not ok_read then return nil, tostring(src) end
  if not src then return nil, err or (path .. ": no such file") end
  if c.sys.now() >= limits.deadline then
    return nil, string.format("%s: not loaded: the command ran past "
      .. "--timeout (%g s)", name, limits.timeout)
  end
  local child, serr = c.broker.spawn { source = src, chunkname = "@" .. path,
    timeout = limits.timeout, deadline = limits.deadline,
    memory_limit = limits.memory_limit }
  if not child then return nil, serr end
  local run = R.new { phase = "load", roots = { addon = dir }, c = c,
    addon = name, report = quiet_report() }
  local ok, desc, kind = child:loaded(function(prim, args)
    if not LOAD_OK[prim] then
      error(prim .. " cannot be called while the hook file loads", 0)
    end
    return prims.dispatch(run, prim, args)
  end)
  if not ok then
    child:close()
    return nil, kind == "error" and (name .. ": " .. tostring(desc))
      or tostring(desc)
  end
  local vok, info = pcall(hookdecl.validate, desc[1], name,
    hookdecl.reserved(c), hookdecl.uphook_version(c))
  if not vok then
    child:close()
    return nil, type(info) == "table" and info.message or tostring(info)
  end
  -- what lint reads beyond the declarations: the hook's text, and the
  -- files beside it, beneath the same folder
  info.source, info.dir = src, dir
  if keep then return info, nil, child end
  child:close()
  return info
end

return M
