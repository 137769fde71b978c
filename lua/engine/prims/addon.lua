--- uphook.engine.prims.addon: addon.read, log.*, and the child's internal
--- requests (sleep, require of a module beside the hook).
local plan = require "uphook.engine.plan"
local wait = require "uphook.engine.wait"
local args = require "uphook.engine.prims.args"
local files = require "uphook.engine.prims.files"
local apiversion = require "uphook.engine.apiversion"
local checktype = args.checktype
local split_path, fs_ok = files.split_path, files.fs_ok

local M = {}
local H = {}   -- handlers by primitive name (prims.lua dispatches)
M.handlers = H

---addon.read: the file's bytes, for the hook alone; a big file comes as
---a payload (host/payload.h), the open file, spliced into the hook's
---pipe when the answer is sent.
---@param run uphook.Run
---@param rel string a path in the addon folder
---@return string|userdata
function H.addon_read(run, rel)
  checktype(rel, "string", 1, "read")
  local _, dir, r = split_path(run, "addon:" .. rel, 1, "addon.read")
  local s = fs_ok("addon:" .. rel, run.c.fs.read(dir, r, true))
  if s == nil then
    error(string.format("addon.read: %s has no file %s", run.addon, rel), 0)
  end
  return s
end

--- What a hook may log in one run: every message is cut at LOG_LINE
--- bytes, and past LOG_LINES messages or LOG_BYTES in all the rest is
--- dropped (one warning says so), so neither the report, the plan's
--- steps nor the terminal grow with what the hook sends.
M.LOG_LINE, M.LOG_LINES, M.LOG_BYTES = 4096, 20000, 4 << 20

local function log_budget(run, msg)
  msg = tostring(msg)
  if #msg > M.LOG_LINE then
    msg = msg:sub(1, M.LOG_LINE) .. string.format(" ... (%d bytes)", #msg)
  end
  local used = run.logged or { lines = 0, bytes = 0 }
  run.logged = used
  if used.dropped then return nil end
  used.lines, used.bytes = used.lines + 1, used.bytes + #msg
  if used.lines > M.LOG_LINES or used.bytes > M.LOG_BYTES then
    used.dropped = true
    run.report:log("warn", string.format("the hook logged more than %d "
      .. "lines or %d MiB; the rest of its log is dropped", M.LOG_LINES,
      M.LOG_BYTES >> 20))
    return nil
  end
  return msg
end

for _, level in ipairs { "info", "warn", "step" } do
  H["log_" .. level] = function(run, msg)
    msg = log_budget(run, msg)
    if not msg then return end
    run.report:log(level, msg)
    if level == "step" then plan.step(run, msg)
    else plan.log(run, level, msg) end
  end
end

---The child's sleep: on the backend's clock, within the deadline; a
---quiet wait (lua/engine/wait.lua): it answers a signal and renews the
---Lease, and shows nothing (a hook's polling loop logs what it awaits).
---@param run uphook.Run
---@param seconds number
function H.__uphook_sleep(run, seconds)
  checktype(seconds, "number", 1, "sleep")
  local s = math.max(0, math.min(seconds, run:remaining()))
  wait.new(run, "sleep", s, { quiet = true }):sleep(s)
end

---A deprecated convenience the standard library met in the child
---(manifest.load): kept, with one warning, for a hook of an older API;
---false when the hook must fail (lua/engine/apiversion.lua).
---@param run uphook.Run
---@param key string a key of apiversion.DEPRECATED
---@param where string the hook's file and line
---@param detail string|nil
---@return boolean kept
function H.__uphook_deprecated(run, key, where, detail)
  checktype(key, "string", 1, "deprecated")
  checktype(where, "string", 2, "deprecated")
  if not apiversion.DEPRECATED[key] then
    error("deprecated: no such deprecation: " .. key:sub(1, 64), 0)
  end
  if detail ~= nil then checktype(detail, "string", 3, "deprecated") end
  return apiversion.use(run, key, apiversion.hook_where(run, where:sub(1, 512)),
    detail and detail:sub(1, 512))
end

--- Module names: dotted identifiers (linear checks, at most 256 bytes).
---@param run uphook.Run
---@param name string
---@return string|nil source
---@return string|nil chunkname
function H.__uphook_require(run, name)
  checktype(name, "string", 1, "require")
  if #name > 256 or not name:find("^[%w_][%w_.]*$")
     or name:find("..", 1, true) then
    return nil
  end
  local rel = name:gsub("%.", "/") .. ".lua"
  local src = run.c.fs.read(run.roots.addon, rel)
  if not src then return nil end
  return src, "@" .. run.roots.addon .. "/" .. rel
end

return M
