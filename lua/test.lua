--- uphook.test: the hook-test harness (SPEC §6).
---
--- Test files call `t.case(name, fn)`; the runner executes every case of
--- every file, one fresh environment per file and, for hook runs, one
--- fresh sandbox over fresh mocks per `t.env`.
local M = {}

local cases = {}        -- cases registered by the file being loaded
local current_file = "?"

---Render a value for assertion messages, bounded in size.
---@param v any
---@param depth? integer
---@return string
local function repr(v, depth, seen)
  depth = depth or 0
  if type(v) == "string" then return string.format("%q", v) end
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

---Deep equality; returns false and the path of the first difference.
local function deq(a, b, path, seen)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then
    return false, path
  end
  seen = seen or {}
  if seen[a] == b then return true end
  seen[a] = b
  for k, v in pairs(a) do
    local ok, p = deq(v, b[k], path .. "." .. tostring(k), seen)
    if not ok then return false, p end
  end
  for k in pairs(b) do
    if a[k] == nil then return false, path .. "." .. tostring(k) end
  end
  return true
end
M.deep_equal = deq

local function fail(msg, level)
  error(msg, (level or 2) + 1)
end

---Register a test case.
---@param name string
---@param fn fun()
function M.case(name, fn)
  assert(type(name) == "string", "t.case: name must be a string")
  assert(type(fn) == "function", "t.case: fn must be a function")
  cases[#cases + 1] = { name = name, fn = fn, file = current_file }
end

---Register a skipped test case; it is reported, never silent.
---@param name string
---@param why string
function M.skip(name, why)
  cases[#cases + 1] = { name = name, skip = why or "skipped",
                        file = current_file }
end

---Assert deep equality.
---@param actual any
---@param expected any
---@param msg? string
function M.eq(actual, expected, msg)
  local ok, path = deq(actual, expected, "")
  if not ok then
    local where = (path ~= "" and " at " .. path:sub(2)) or ""
    fail(string.format("%sexpected %s, got %s%s",
      msg and (msg .. ": ") or "", repr(expected), repr(actual), where), 2)
  end
end

---Assert that v is truthy.
---@param v any
---@param msg? string
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
function M.err(fn, pattern)
  local ok, e = pcall(fn)
  if ok then fail("expected an error, got none", 2) end
  e = type(e) == "table" and (e.message or repr(e)) or tostring(e)
  if pattern and not e:find(pattern) then
    fail(string.format("expected error matching %q, got %q", pattern, e), 2)
  end
  return e
end

--- Runner -------------------------------------------------------------

local function collect(path, loader)
  cases, current_file = {}, path
  local ok, e = pcall(loader, path)
  local got = cases
  cases = {}
  if not ok then
    return nil, e
  end
  return got
end

local function traceback(e)
  if type(e) == "table" then e = e.message or repr(e) end
  return debug.traceback(tostring(e), 2)
end

local function short_trace(tb)
  -- keep the message and the frames in test/hook files, drop the harness
  local out = {}
  for line in tb:gmatch("[^\n]+") do
    if not line:find("lua/test.lua", 1, true)
       and not line:find("[C]: in function 'xpcall'", 1, true) then
      out[#out + 1] = line
    end
  end
  return table.concat(out, "\n    ")
end

---Run test files. `opts.loader(path)` loads and runs a test file (so the
---C host can give it a fresh environment); `opts.filter` selects by name;
---`opts.report(result)` sees every result.
---@return table results, integer passed, integer failed, integer skipped
function M.run(files, opts)
  local results, np, nf, ns = {}, 0, 0, 0
  local out = opts.out or io.write
  for _, path in ipairs(files) do
    local list, lerr = collect(path, opts.loader)
    if not list then
      nf = nf + 1
      out(string.format("FAIL %s (loading)\n    %s\n", path, tostring(lerr)))
      results[#results + 1] = { file = path, name = "(load)", ok = false,
                                err = tostring(lerr), time = 0 }
    end
    for _, c in ipairs(list or {}) do
      if not opts.filter or c.name:find(opts.filter, 1, true) then
        local r = { file = path, name = c.name }
        local t0 = opts.clock and opts.clock() or 0
        if c.skip then
          r.skipped, ns = c.skip, ns + 1
          out(string.format("skip %s: %s (%s)\n", path, c.name, c.skip))
        else
          local ok, e = xpcall(c.fn, traceback)
          r.ok, r.err = ok, (not ok) and short_trace(e) or nil
          if ok then np = np + 1 else nf = nf + 1 end
          out(string.format("%s %s: %s\n", ok and "ok  " or "FAIL", path,
                            c.name))
          if not ok then out("    " .. r.err .. "\n") end
        end
        r.time = (opts.clock and opts.clock() or 0) - t0
        results[#results + 1] = r
        if opts.after_case then opts.after_case() end
      end
    end
  end
  return results, np, nf, ns
end

return M
