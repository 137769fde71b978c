--- migrate: run version-to-version migration steps in order (docs/contract.md §5).
---
--- ```lua
--- local migrate = require "migrate"
--- local m = migrate.new()
--- m:step("1.1.0", "1.2.0", function(ctx) ... end)
--- m:step(">=1.2.0 <1.4.0", "1.4.2", function(ctx) ... end) -- covers 1.2.x-1.3.x
--- return { ..., upgrade = function(ctx) m:run(ctx) end }
--- ```
---
--- Rules (decided here, see also the tests):
--- * A step's `from` is an exact version `MAJOR.MINOR.PATCH[-pre]`
---   (compared by semver precedence, so `v1.1.0` matches `1.1.0`) or any
---   npm range (`>=1.2.0 <1.4.0`, `1.3.x`, and `1.3`, which as in npm means
---   `1.3.x`) that the current version satisfies. Its
---   `to` is an exact version; a step only runs when its `to` is above
---   the current version.
--- * `run` starts at `ctx.from` and repeatedly takes the first step, in
---   the order they were added, whose `from` accepts the current version
---   and whose `to` is above the current version and not above `ctx.to`;
---   the current version becomes that step's `to`. It stops when the
---   current version equals `ctx.to`; steps beyond that are not run.
--- * Versions in between need a step each: a version that no step accepts
---   is "no path" and an error, never skipped silently. Cover versions that
---   need no work with a range `from` (or a step with an empty function).
--- * The whole path is computed before the first step runs, so "no path"
---   fails before anything changes (exit 4, docs/contract.md §1). The error lists the
---   known steps.
--- * `ctx.from == ctx.to` runs nothing. Downgrades have no path.
--- * Each step is logged with `log.step("migrate %s -> %s", current, to)`
---   (the actual current version, also when the step's `from` is a
---   range) and called as `fn(ctx, current, to)`. A string error from a
---   step is re-raised prefixed with `migrate <from> -> <to>: `; any other
---   error value is re-raised unchanged.
local semver = require "semver"

local M = {}

---Test seam: a `log` table used instead of the global `log` when set.
---@type table|nil
M.log = nil

local function global(name)
  local ok, v = pcall(function() return _ENV[name] end)
  if ok then return v end
  return nil
end

---@class migrate.Step
---@field from string exact version or semver range
---@field to string exact version
---@field fn fun(ctx: table, from: string, to: string)
---@field exact semver.Version|nil the parsed `from` when it is a version

---@class migrate.Migration
---@field steps migrate.Step[]
local Migration = {}
Migration.__index = Migration

---Create an empty migration.
---@return migrate.Migration
function M.new()
  return setmetatable({ steps = {} }, Migration)
end

---Add a step from `from` (a version or a semver range) to version `to`.
---Raises on a bad version, range or function. Returns the migration, so
---calls chain.
---@param from string
---@param to string
---@param fn fun(ctx: table, from: string, to: string)
---@return migrate.Migration
function Migration:step(from, to, fn)
  if type(from) ~= "string" then
    error("migrate: step 'from' must be a string, got " .. type(from), 2)
  end
  local tov, terr = semver.parse(to)
  if not tov then error("migrate: step 'to': " .. terr, 2) end
  if type(fn) ~= "function" then
    error(string.format("migrate: step %s -> %s: fn must be a function, got %s",
                        from, to, type(fn)), 2)
  end
  local exact = from:match("^%s*[vV=]?%d+%.%d+%.%d+") and semver.parse(from)
  if not exact then
    local ok, err = semver.valid_range(from)
    if not ok then error("migrate: step 'from': " .. err, 2) end
  elseif semver.compare(exact, tov) >= 0 then
    error(string.format("migrate: step %s -> %s does not go forward", from, to), 2)
  end
  self.steps[#self.steps + 1] = { from = from, to = to, fn = fn, exact = exact }
  return self
end

local function accepts(step, current)
  if step.exact then return semver.compare(step.exact, current) == 0 end
  return semver.satisfies(current, step.from)
end

local function known(self)
  local out = {}
  for i, s in ipairs(self.steps) do out[i] = s.from .. " -> " .. s.to end
  if #out == 0 then return "(none)" end
  return table.concat(out, ", ")
end

---The steps `run` would take from version `from` to version `to`, without
---running them: a list of `{from=, to=, step=}`, or nil and an error that
---lists the known steps.
---@param from string
---@param to string
---@return {from: string, to: string, step: migrate.Step}[]|nil path
---@return string? err
function Migration:path(from, to)
  local cur, err = semver.parse(from)
  if not cur then return nil, "migrate: ctx.from: " .. err end
  local target, terr = semver.parse(to)
  if not target then return nil, "migrate: ctx.to: " .. terr end
  local path, current = {}, from
  while semver.compare(cur, target) ~= 0 do
    local found
    for _, s in ipairs(self.steps) do
      local sto = semver.parse(s.to)
      if semver.compare(sto, cur) > 0 and semver.compare(sto, target) <= 0
         and accepts(s, cur) then
        found = s
        break
      end
    end
    if not found then
      local where = current == from and "" or
                    string.format(" (stuck at %s)", current)
      return nil, string.format("migrate: no path from %s to %s%s; known steps: %s",
                                from, to, where, known(self))
    end
    path[#path + 1] = { from = current, to = found.to, step = found }
    current, cur = found.to, semver.parse(found.to)
  end
  return path
end

---Run the steps from `ctx.from` to `ctx.to` (see the rules at the top).
---Returns the list of `{from=, to=}` pairs that ran.
---@param ctx {from: string, to: string}
---@return {from: string, to: string}[]
function Migration:run(ctx)
  if type(ctx) ~= "table" then
    error("migrate: run(ctx) needs the hook's ctx table, got " .. type(ctx), 2)
  end
  local path, err = self:path(ctx.from, ctx.to)
  if not path then error(err, 2) end
  local log = M.log or global("log")
  local done = {}
  for i, p in ipairs(path) do
    if log then log.step("migrate %s -> %s", p.from, p.to) end
    local ok, e = pcall(p.step.fn, ctx, p.from, p.to)
    if not ok then
      if type(e) == "string" then
        error(string.format("migrate %s -> %s: %s", p.from, p.to, e), 0)
      end
      error(e, 0)
    end
    done[i] = { from = p.from, to = p.to }
  end
  return done
end

return M
