--- uphook.engine.prims: the broker side of every hook primitive
--- (docs/contract.md §4): the dispatch of a call from the hook, and the
--- one rule it applies first (only upgrade may change anything). The
--- handlers are in lua/engine/prims/, one file per family; their argument
--- checks are lua/engine/prims/args.lua, their permissions
--- lua/engine/permissions.lua.
---
--- Each handler runs in the trusted parent. Policy is there, once, for
--- every backend: argument checks, permissions, the read-only rule of
--- detect/check/verify, plan recording, journaling, labels. The backend
--- only touches the world.
local tables = require "uphook.core.tables"
local kube = require "uphook.engine.prims.kube"
local files = require "uphook.engine.prims.files"

local M = {}

local H = {}   -- handlers by primitive name: "kube_apply", ...
for _, family in ipairs { kube, require "uphook.engine.prims.nodes",
    require "uphook.engine.prims.config", require "uphook.engine.prims.net",
    require "uphook.engine.prims.addon",
    (require "uphook.engine.prims.helm") } do
  for name, h in pairs(family.handlers) do H[name] = h end
end

M.rolled_out = kube.rolled_out     -- the rollout rules (tests/lua)
M.file_mode = files.file_mode      -- a write's mode (tests/lua/files_test.lua)

--- The primitives and which of them change anything: host/prims.def, the
--- one list (the hook's stubs are made from it too). Every primitive has a
--- handler here and every handler a primitive, or the engine fails at load.
local MUTATING = require("uphook.c.broker").prims()
for name in pairs(MUTATING) do
  assert(H[name:gsub("%.", "_")], "host/prims.def: no handler for " .. name)
end
for h in pairs(H) do
  local name = h:gsub("^(_*[^_]+)_", "%1.", 1)
  assert(MUTATING[name] ~= nil, "lua/engine/prims/: " .. name
    .. " is not in host/prims.def")
end

--- Only `uphook test` records the calls (env:calls), and only so much:
--- CALLS_MAX calls, and their arguments while they total under
--- CALLS_BYTES (tables.weight; past it a call is kept with args = {}).
M.CALLS_MAX, M.CALLS_BYTES = 10000, 16 << 20

---Record one call for env:calls (bounded).
---@param run uphook.Run
---@param name string the primitive
---@param args table its arguments
function M.record_call(run, name, args)
  local calls = run.calls
  if #calls >= M.CALLS_MAX then return end
  local left = M.CALLS_BYTES - (calls.bytes or 0)
  local w = left > 0 and tables.weight(args, left) or left + 1
  if w > left then args = {} else calls.bytes = (calls.bytes or 0) + w end
  calls[#calls + 1] = { name = name, args = args }
end

---Is `name` a primitive a hook can call (`kube.apply`, ...)?
---@param name string
---@return boolean
function M.is_primitive(name)
  return type(name) == "string" and H[name:gsub("%.", "_")] ~= nil
end

--- Dispatch one call from the hook: policy first, then the handler.
---@param run uphook.Run
---@param name string the primitive, e.g. "kube.apply"
---@param args table its arguments, nils as null
---@return any ... the primitive's results
function M.dispatch(run, name, args)
  local h = H[name:gsub("%.", "_")]
  if not h or type(args) ~= "table" then
    error("unknown primitive " .. tostring(name), 0)
  end
  if MUTATING[name] and run.phase ~= "upgrade" then
    error(string.format("%s is not allowed in %s: only upgrade may change "
      .. "anything", name, run.phase), 0)
  end
  local n = #args
  for i = 1, n do
    if args[i] == run.null then args[i] = nil end
  end
  if run.calls then M.record_call(run, name, args) end
  return h(run, table.unpack(args, 1, n))
end

return M
