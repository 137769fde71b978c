--- uphook.cmd.testchild: `uphook.test` as a test file sees it in the confined
--- test child (docs/security.md, "Test files").
---
--- A *_test.lua file runs in the hook child's sandbox (no io, os,
--- debug, package; the seccomp filter): its cases, assertions and
--- t.each_fault run here (uphook.cmd.testlib); a t.env is a handle on an
--- environment the broker holds, and each of its methods one request to
--- the broker (`__test.env`, `__test.call`), whose answers are plain data.
--- host/testchild.c loads this module with the two request functions.
local _, lib, env_request, call_request = ...

local M = {}
for k, v in pairs(lib) do
  if k ~= "take_cases" then M[k] = v end
end

-- A request's error, raised at the test file's line (`level` 3: the
-- caller of ask's caller): the broker's message without the position the
-- request function gives it, named after the method (`what`) unless it
-- already says it.
local function ask(what, fn, ...)
  local r = table.pack(pcall(fn, ...))
  if not r[1] then
    local msg = tostring(r[2]):gsub("^[^\n]-%.lua:%d+: ", "", 1)
    if what and msg:sub(1, #what + 1) ~= what .. ":" then
      msg = what .. ": " .. msg
    end
    error(msg, 3)
  end
  return table.unpack(r, 2, r.n)
end

--- The methods of an environment, as the broker's lua/cmd/testenv.lua has them.
local METHODS = { "upgrade", "plan", "get", "list", "state", "seed_state",
  "args", "file", "files", "calls", "changes", "snapshot", "stall",
  "unstall", "apply", "patch", "delete", "clear_faults", "restarts",
  "kubelet_config", "copy_to" }

local Env = {}
Env.__index = Env
for _, m in ipairs(METHODS) do
  -- not a tail call: ask's error names the test file's line, the caller's
  Env[m] = function(self, ...)
    local r = table.pack(ask("env:" .. m, call_request, self.id, m, ...))
    return table.unpack(r, 1, r.n)
  end
end

---Inject a fault (see the broker's Env:fail); returns it, with :clear().
function Env:fail(f)
  local id = ask("env:fail", call_request, self.id, "fail", f)
  local env = self
  local fault = {}
  for k, v in pairs(type(f) == "table" and f or {}) do fault[k] = v end
  return setmetatable(fault, { __index = { clear = function()
    ask("f:clear", call_request, env.id, "clear_fault", id)
  end } })
end

---A fresh mock world for one hook run (the broker makes it).
---@param o table
---@return table env
function M.env(o)
  return setmetatable({ id = ask("t.env", env_request, o) }, Env)
end

---A case that renders with the real Helm: skipped, saying why, when
---Helm cannot run here (the broker knows); with CI=true a failure.
---@param name string
---@param fn fun()
function M.helm_case(name, fn)
  return lib.helm_case(name, fn, ask("t.helm_case", call_request, 0,
    "helm_missing"))
end

---Run the test file's chunk and return what the broker needs: the cases
---(names, skips) and whether the file is serial, and the runner the
---"case" phase calls.
---@param chunk function
---@return table descriptor, table runner
function M.__load(chunk)
  lib.take_cases()
  chunk()
  local cases = lib.take_cases()
  local desc = { cases = {}, serial = cases.serial == true }
  for i, c in ipairs(cases) do
    desc.cases[i] = { name = c.name, skip = c.skip }
  end
  local runner = {
    case = function(ctx)
      local c = cases[ctx.index]
      if not (c and c.fn) then error("no case " .. tostring(ctx.index), 0) end
      c.fn()
    end,
  }
  return desc, runner
end

return M
