--- uphook.cmd.testlib: what a test file calls, besides t.env: the cases, the
--- assertions, and the fault sweep (docs/contract.md §6).
---
--- Pure Lua over plain data: it runs in the confined test child (as part
--- of `uphook.test`, docs/security.md), where a test's environments are
--- proxies of the broker's, and in the trusted runner of the project's
--- own tests; lua/cmd/test.lua is the runner and the environments.
local tables = require "uphook.core.tables"
local textdiff = require "uphook.core.textdiff"

local M = {}

local cases = {}        -- the cases of the file being loaded
local names = {}        -- their names (a set)

---Take the cases registered since the last call (the runner's).
---@return table cases  {name, fn|skip}... and `serial`
function M.take_cases()
  local got = cases
  cases, names = {}, {}
  return got
end

---Render a value for assertion messages, bounded in size.
---@param v any
---@param depth? integer
---@return string
local function repr(v, depth, seen)
  depth = depth or 0
  if type(v) == "string" then    -- on one line: %q breaks it at a newline
    return (string.format("%q", v):gsub("\\\n", "\\n"))
  end
  if type(v) ~= "table" then return tostring(v) end
  seen = seen or {}
  if seen[v] or depth > 4 then return "{...}" end
  seen[v] = true
  local keys, out = {}, {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == "number" or type(a) == "string")
    then return a < b end
    return type(a) < type(b)
  end)
  for i, k in ipairs(keys) do
    if i > 20 then out[#out + 1] = "..."; break end
    local ks = (type(k) == "string" and k:match("^[%a_][%w_]*$")) and k
               or "[" .. repr(k, depth + 1, seen) .. "]"
    out[#out + 1] = ks .. "=" .. repr(v[k], depth + 1, seen)
  end
  seen[v] = nil
  return "{" .. table.concat(out, ", ") .. "}"
end
M.repr = repr

---Deep equality: true, or false and the path of the first difference
---(".spec.replicas"; "" when the values themselves differ).
---@param a any
---@param b any
---@return boolean equal, string|nil path
function M.deep_equal(a, b)
  return tables.diff(a, b)
end

local function fail(msg, level)
  error(msg, (level or 2) + 1)
end

---Register a test case.
---@param name string
---@param fn fun()
function M.case(name, fn)
  if type(name) ~= "string" then
    error("t.case: name must be a string", 2)
  end
  if type(fn) ~= "function" then error("t.case: fn must be a function", 2) end
  if names[name] then             -- the report and --filter go by name
    error(string.format("t.case: a case named %q exists already", name), 2)
  end
  names[name] = true
  cases[#cases + 1] = { name = name, fn = fn }
end

---Run this file's cases one after another, never in parallel workers
---(for tests that share something outside their t.env, like a server).
function M.serial()
  cases.serial = true
end

---Register a skipped test case; it is reported, never silent.
---@param name string
---@param why string
function M.skip(name, why)
  cases[#cases + 1] = { name = name, skip = why or "skipped" }
end

---A case that renders with the real Helm: registered when `why` (why
---Helm cannot run here) is nil; else skipped saying why, or, when `ci`
---(CI=true), a case that fails saying why. uphook.test's t.helm_case
---(lua/cmd/test.lua, lua/cmd/testchild.lua) gives `why` and `ci`.
---@param name string
---@param fn fun()
---@param why string|nil
---@param ci boolean|nil
function M.helm_case(name, fn, why, ci)
  if not why then return M.case(name, fn) end
  if ci then
    return M.case(name, function() error("CI=true and " .. why, 0) end)
  end
  M.skip(name, why)
end

--- Assertions ---------------------------------------------------------------

local SHORT = 160        -- a failure that fits shows both values whole
local MAX_PATHS = 10     -- a longer one shows the differing paths

local function brief(v, n)
  if v == nil then return "(absent)" end
  local s = repr(v)
  if #s > n then s = s:sub(1, n - 3) .. "..." end
  return s
end

local DIFF_OUT = 40      -- the changed lines a string diff shows
local WINDOW = 30        -- a long line shown around its first difference
local LINE_MAX = 200     -- a line of a string diff is cut there

-- Line n of s that starts at byte `from` (nil past the end).
local function line_at(s, from)
  if from > #s then return nil end
  return s:match("^[^\n]*", from)
end

-- Two strings that differ, for a failure message (docs/reference.md
-- `t.eq`): where they first differ; with several lines, both lines there
-- and the line diff `uphook plan` shows (lua/core/textdiff.lua), else
-- both around that position. Each line starts with `indent`.
local function string_difference(actual, expected, indent)
  local at, line, col = textdiff.first_difference(expected, actual)
  if expected:find("\n", 1, true) or actual:find("\n", 1, true) then
    local from = at - col + 1
    local le, la = line_at(expected, from), line_at(actual, from)
    local out = { string.format("%sline %d differs: expected %s, got %s",
      indent, line, le and brief(le, LINE_MAX) or "no line " .. line,
      la and brief(la, LINE_MAX) or "no line " .. line),
      indent .. "diff (- expected, + got):" }
    local body, summary = textdiff.lines(expected, actual, { out = DIFF_OUT })
    if summary then out[#out + 1] = indent .. "  " .. summary end
    for _, l in ipairs(body) do
      if #l > LINE_MAX then l = l:sub(1, LINE_MAX - 3) .. "..." end
      out[#out + 1] = indent .. "  " .. l
    end
    return out
  end
  local from = math.max(1, at - WINDOW)
  local function window(s)
    return (from > 1 and "..." or "") .. repr(s:sub(from, at + WINDOW))
      .. (#s > at + WINDOW and "..." or "")
  end
  return { string.format("%sthe strings differ at character %d (%d and %d "
    .. "long): expected %s, got %s", indent, at, #expected, #actual,
    window(expected), window(actual)) }
end

-- Who owns which field (metadata.managedFields) differs wherever a field
-- does: those paths are listed after the fields themselves.
local function in_managed_fields(path)
  return path:find(".managedFields", 1, true) ~= nil
end

local LOOK = 200         -- the paths a failure collects, to order them

-- The failure message of t.eq: both values when they are short, else the
-- paths where they differ (at most MAX_PATHS, the fields before their
-- managedFields entries), each with its two values.
local function eq_message(actual, expected, msg)
  local pre = msg and (msg .. ": ") or ""
  local ra, re = repr(actual), repr(expected)
  local diffs = tables.differences(actual, expected, LOOK + 1)
  if #ra + #re <= SHORT then
    local where = diffs[1] and diffs[1].path ~= ""
      and (" at " .. diffs[1].path) or ""
    return string.format("%sexpected %s, got %s%s", pre, re, ra, where)
  end
  if type(actual) == "string" and type(expected) == "string" then
    return pre .. "expected equal strings:\n"
      .. table.concat(string_difference(actual, expected, "  "), "\n")
  end
  local fields, owners = {}, {}
  for _, d in ipairs(diffs) do
    local into = in_managed_fields(d.path) and owners or fields
    into[#into + 1] = d
  end
  for _, d in ipairs(owners) do fields[#fields + 1] = d end
  local n = #diffs > LOOK and ("more than " .. LOOK) or tostring(#diffs)
  local head
  if #diffs == 1 then head = "1 path differs"
  elseif #diffs <= MAX_PATHS then head = n .. " paths differ"
  else
    head = string.format("%s paths differ%s, the first %d", n, #owners > 0
      and string.format(" (%s%d in metadata.managedFields, listed last)",
        #diffs > LOOK and "at least " or "", #owners) or "", MAX_PATHS)
  end
  local lines = { string.format("%sexpected equal values; %s:", pre, head) }
  for i = 1, math.min(#fields, MAX_PATHS) do
    local d = fields[i]
    local path = d.path == "" and "(the value)" or d.path
    if type(d.a) == "string" and type(d.b) == "string"
       and #repr(d.a) + #repr(d.b) > 140 then
      lines[#lines + 1] = "  " .. path .. ":"
      for _, l in ipairs(string_difference(d.a, d.b, "    ")) do
        lines[#lines + 1] = l
      end
    else
      lines[#lines + 1] = string.format("  %s: expected %s, got %s", path,
        brief(d.b, 70), brief(d.a, 70))
    end
  end
  return table.concat(lines, "\n")
end

local function eq(actual, expected, msg, level)
  if not tables.equal(actual, expected) then
    fail(eq_message(actual, expected, msg), level + 1)
  end
end

---Assert deep equality. On failure, short values are shown whole; long
---ones (two clusters) as the paths that differ, with both values; two
---long strings as where they first differ: the line and a line diff
---when they have several lines, else both around that character.
---@param actual any
---@param expected any
---@param msg? string
function M.eq(actual, expected, msg)
  eq(actual, expected, msg, 2)
end

---Assert that v is truthy.
---@param v any
---@param msg? string
---@return any v
function M.ok(v, msg)
  if not v then fail(msg or ("expected a true value, got " .. repr(v)), 2) end
  return v
end

---Assert that s matches a Lua pattern.
---@param s any
---@param pattern string
function M.match(s, pattern)
  if type(s) ~= "string" or not s:find(pattern) then
    fail(string.format("expected %s to match %q", repr(s), pattern), 2)
  end
end

---Assert that fn raises an error matching pattern.
---@param fn fun()
---@param pattern? string
---@return string message the error's message
function M.err(fn, pattern)
  local ok, e = pcall(fn)
  if ok then fail("expected an error, got none", 2) end
  e = type(e) == "table" and (e.message or repr(e)) or tostring(e)
  if pattern and not e:find(pattern) then
    fail(string.format("expected error matching %q, got %q", pattern, e), 2)
  end
  return e
end

--- The fault sweep -----------------------------------------------------------

local function change_label(ch)
  return (ch.path or ((ch.kind and (ch.kind .. " ") or "")
    .. tostring(ch.name))) .. (ch.node and (" on " .. ch.node) or "")
end

---Fault every change an upgrade makes, in turn, and check that each one
---is rolled back exactly. A first run of `env_fn()` without a fault
---records the changes (applies, deletes, file writes, installs,
---restarts, each other node's args change and restart, the state
---commit); then, for each change, a fresh
---`env_fn()` fails at it and the upgrade must exit 4 when it was the
---first change (nothing to undo) or 1 after one, with the fault's
---message, leaving the cluster (`env:snapshot()`), the node's files and
---the state as they were.
---@param env_fn fun(): table a fresh env each call (`t.env{...}`)
---@param opts? {args?: string[]} the upgrade's command-line arguments
---@return integer changes the number of changes faulted
function M.each_fault(env_fn, opts)
  if type(env_fn) ~= "function" then
    fail("t.each_fault: env_fn must be a function that returns a fresh env", 2)
  end
  opts = opts or {}
  for k in pairs(opts) do      -- `arg =` would sweep without the arguments
    if k ~= "args" then
      fail(string.format('t.each_fault: unknown key "%s" (known: args)',
        tostring(k)), 2)
    end
  end
  local args = opts.args or {}
  local happy = env_fn()
  local hr = happy:upgrade(args)
  eq(hr.code, 0, "the upgrade without a fault (" .. tostring(hr.error)
    .. ")", 2)
  local seen, changes = {}, happy:changes()
  if #changes == 0 then fail("t.each_fault: the upgrade changed nothing", 2) end
  for i, ch in ipairs(changes) do
    -- counted per node: a change on another node is its agent's request
    local key = ch.on .. "\0" .. tostring(ch.node)
    seen[key] = (seen[key] or 0) + 1
    local what = string.format("a fault at change %d of %d (%s #%d, %s)",
      i, #changes, ch.on, seen[key], change_label(ch))
    local msg = string.format("[injected fault %d]", i)
    local e = env_fn()
    local before, files, st = e:snapshot(), e:files(), e:state()
    e:fail { on = ch.on, node = ch.node, after = seen[key] - 1, error = msg }
    local r = e:upgrade(args)
    eq(r.code, i == 1 and 4 or 1, what .. ": the exit code ("
      .. tostring(r.error) .. ")", 2)
    if type(r.error) ~= "string" or not r.error:find(msg, 1, true) then
      fail(string.format("%s: expected the error to name %s, got %s", what,
        msg, repr(r.error)), 2)
    end
    eq(e:snapshot(), before, what .. ": the cluster", 2)
    eq(e:files(), files, what .. ": the node's files", 2)
    eq(e:state(), st, what .. ": the state", 2)
  end
  return #changes
end

return M
