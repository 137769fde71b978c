-- The Backend (lua/core/backend.lua, docs/internals.md "The backend
-- interface"): the live backend and the mock implement every method the
-- engine calls, so the tests that run on the mock run the production path.
local t = require "uphook.test"
local backend = require "uphook.core.backend"

t.case("the mock of a world with nodes implements the whole Backend", function()
  local e = t.env { addon = "addons/knob", cluster = "fixtures_nodes.yaml",
    nodes = { { name = "node-b" } } }
  t.eq(backend.missing(e.backend), {})
end)

t.case("the live backend's class implements the whole Backend", function()
  local live = require "uphook.backend.live"
  t.eq(backend.missing(setmetatable({}, live.Live)), {})
  -- and the optional methods the engine uses where they are
  for _, m in ipairs(backend.OPTIONAL) do
    t.eq(type(live.Live[m]), "function", m)
  end
end)

t.case("a backend that lacks a method is named by what it lacks", function()
  local partial = { get = function() end, list = function() end }
  local missing = backend.missing(partial)
  t.ok(#missing > 0)
  t.eq(missing[1], "apply")
  for _, m in ipairs(missing) do t.ok(m ~= "get" and m ~= "list", m) end
  -- without nodes, the node methods are not asked for
  t.eq(#backend.missing(partial, false), #backend.REQUIRED - 2)
end)
