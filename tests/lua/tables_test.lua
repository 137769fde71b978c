-- uphook.tables.same: the strict equality a memo keys on (lua/core/tables.lua).
local t = require "uphook.test"
local tables = require "uphook.core.tables"

local ARR = { __name = "array" }
local function arr(x) return setmetatable(x, ARR) end

t.case("tables.same: equal plain data is the same", function()
  local a = { spec = { replicas = 1, list = arr { "a", { b = true } } } }
  local b = { spec = { replicas = 1, list = arr { "a", { b = true } } } }
  t.ok(tables.same(a, b), "equal data")
  t.ok(tables.same("x", "x") and tables.same(2.5, 2.5), "scalars")
end)

t.case("tables.same: 1 and 1.0 are not the same (tables.equal says equal)",
function()
  local a, b = { spec = { replicas = 1 } }, { spec = { replicas = 1.0 } }
  t.ok(tables.equal(a, b), "equal ignores the subtype")
  t.ok(not tables.same(a, b), "same does not")
  t.ok(not tables.same(1, 1.0), "top level too")
end)

t.case("tables.same: [] and {} are not the same (metatables count)", function()
  local a, b = { args = arr {} }, { args = {} }
  t.ok(tables.equal(a, b), "equal ignores metatables")
  t.ok(not tables.same(a, b), "same does not")
  t.ok(not tables.same({ args = arr {} }, { args = setmetatable({}, {}) }),
    "two different metatables")
end)

t.case("tables.same: a missing or extra key, or a deep change, differs",
function()
  t.ok(not tables.same({ a = 1 }, { a = 1, b = 2 }), "extra key")
  t.ok(not tables.same({ a = 1, b = 2 }, { a = 1 }), "missing key")
  t.ok(not tables.same({ a = { b = { c = "x" } } }, { a = { b = { c = "y" } } }),
    "deep value")
  t.ok(not tables.same({ a = false }, { a = "false" }), "type")
end)

t.case("tables.same: a table with __eq is compared raw", function()
  local mt = { __eq = function() return true end }
  local a, b = setmetatable({ x = 1 }, mt), setmetatable({ x = 2 }, mt)
  t.ok(not tables.same(a, b), "__eq not used")
  t.ok(tables.same(a, setmetatable({ x = 1 }, mt)), "same raw content")
end)

-- uphook.tables.weight (what env:calls counts against CALLS_BYTES,
-- lua/engine/prims.lua) and tables.project, in C and, where the state has no C,
-- in Lua: the same results either way.
local function lua_only_tables()
  local saved_c, saved_t = package.loaded["uphook.c.tables"],
                           package.loaded["uphook.core.tables"]
  local saved_pre = package.preload["uphook.c.tables"]
  package.loaded["uphook.c.tables"], package.loaded["uphook.core.tables"] = nil, nil
  package.preload["uphook.c.tables"] = function() error("no C here") end
  local ok, m = pcall(require, "uphook.core.tables")
  package.loaded["uphook.c.tables"], package.loaded["uphook.core.tables"] =
    saved_c, saved_t
  package.preload["uphook.c.tables"] = saved_pre
  assert(ok, m)
  return m
end

local function deep(n)
  local v = "leaf"
  for _ = 1, n do v = { v } end
  return v
end

for _, impl in ipairs { { "C", tables }, { "Lua", lua_only_tables() } } do
  local name, T = impl[1], impl[2]
  t.case("tables.weight (" .. name .. "): strings their length, tables 16, "
    .. "anything else 8", function()
    t.eq(T.weight("abc", 100), 3, "a string")
    t.eq(T.weight(42, 100), 8, "a number")
    t.eq(T.weight({ a = "xy" }, 100), 16 + 1 + 2, "a map")
    t.eq(T.weight(arr { 1, true }, 100), 16 + 8 + 8 + 8 + 8, "a list")
    t.eq(T.weight({ m = { k = "v" } }, 100), 16 + 1 + (16 + 1 + 1), "nested")
  end)
  t.case("tables.weight (" .. name .. "): below depth 8 a table counts 8",
  function()
    -- deep(n): n tables down to "leaf"; each level 16 + its key (8)
    t.eq(T.weight(deep(2), 1000), 16 + 8 + 16 + 8 + 4, "two levels")
    t.eq(T.weight(deep(12), 1000), 9 * (16 + 8) + 8, "cut at depth 8")
  end)
  -- tables.project: what undo checks an object still holds (rollback's
  -- made record, docs/state.md)
  t.case("tables.project (" .. name .. "): stored cut down to the applied "
    .. "fields", function()
    local stored = { kind = "Deployment", status = { ready = 1 },
      metadata = { name = "d", uid = "u", labels = { a = "1", b = "2" } },
      spec = { replicas = 2, template = { containers = arr {
        { name = "c", image = "new", ports = arr { { p = 1 } } } } } } }
    local applied = { kind = "Deployment",
      metadata = { name = "d", labels = { a = "x" }, gone = "y" },
      spec = { template = { containers = arr { { name = "c",
        image = "old" } } } } }
    local got = T.project(stored, applied)
    t.eq(got, { kind = "Deployment", metadata = { name = "d",
      labels = { a = "1" } }, spec = { template = { containers = arr {
      { name = "c", image = "new" } } } } })
    t.eq(getmetatable(got.spec.template.containers), getmetatable(arr {}),
      "a list stays a list")
    t.ok(got.metadata ~= stored.metadata, "new tables where they differ")
  end)
  t.case("tables.project (" .. name .. "): a list of another length, or "
    .. "a value that is not a table on both sides, is stored's", function()
    local l = arr { 1, 2, 3 }
    local got = T.project({ l = l, m = { k = 1 }, s = "x" },
      { l = arr { 1 }, m = "scalar", s = { deep = true } })
    t.ok(rawequal(got.l, l), "the list of another length, shared")
    t.eq(got.m, { k = 1 })
    t.eq(got.s, "x")
    t.eq(T.project("a", { x = 1 }), "a")
    t.eq(T.project({ x = 1 }, nil), { x = 1 })
    -- a metatable whose __index a raw read would miss: done as Lua does
    local s = setmetatable({}, { __index = function() return 5 end })
    t.eq(T.project(s, { y = 1 }), { y = 5 })
  end)
  t.case("tables.copy (" .. name .. "): the note says whether a null was "
    .. "met and whether the copy holds an empty table", function()
    local null = setmetatable({}, { __name = "null" })
    local function note_of(v, drop)
      local note = {}
      local c = T.copy(v, null, drop, note)
      return note, c
    end
    local n, c = note_of({ a = { b = { c = 1 } }, l = arr { 1, 2 } })
    t.eq(n, {}, "no null, nothing empty")
    t.eq(c, { a = { b = { c = 1 } }, l = { 1, 2 } })
    t.eq(note_of({ a = { b = {} } }), { empty = true }, "an empty map deep down")
    t.eq(note_of({ l = arr {} }), { empty = true }, "an empty list")
    t.eq(note_of({ a = { b = null } }, false), { null = true },
      "a null kept: not empty")
    n, c = note_of({ a = { b = null } }, true)
    t.eq(n, { null = true, empty = true }, "dropping the null leaves {} behind")
    t.eq(c, { a = {} })
    t.eq(note_of({ l = arr { null } }, true), { null = true },
      "a null list item stays")
  end)
  t.case("tables.weight (" .. name .. "): stops once past left", function()
    local big = {}
    for i = 1, 1000 do big[i] = string.rep("x", 100) end
    local w = T.weight(big, 500)
    t.ok(w > 500 and w < 1000, "stopped soon past 500, got " .. w)
    t.eq(T.weight(big, 1 << 30), 16 + 1000 * (8 + 100), "all of it")
  end)
end
