-- uphook.tables.same: the strict equality a memo keys on (lua/tables.lua).
local t = require "uphook.test"
local tables = require "uphook.tables"

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
