-- uphook.backend.mock.clock: mock time and scheduled events.
local t = require "uphook.test"
local clock = require "uphook.backend.mock.clock"

t.case("now starts at 2024-01-01 unless told", function()
  t.eq(clock.new():now(), 1704067200)
  t.eq(clock.new():timestamp(), "2024-01-01T00:00:00Z")
  t.eq(clock.new{ start = 5 }:now(), 5)
end)

t.case("sleep advances instantly and runs events at their time", function()
  local c = clock.new{ start = 0 }
  local seen = {}
  c:at(10, function(now) seen[#seen + 1] = "b@" .. now end)
  c:after(5, function(now) seen[#seen + 1] = "a@" .. now end)
  c:at(10, function(now) seen[#seen + 1] = "c@" .. now end)
  c:at(100, function(now) seen[#seen + 1] = "late@" .. now end)
  t.eq(c:next_event(), 5)
  c:sleep(60)
  t.eq(seen, { "a@5", "b@10", "c@10" })
  t.eq(c:now(), 60)
  t.eq(c:next_event(), 100)
  c:advance_to(30)                     -- never backwards
  t.eq(c:now(), 60)
end)

t.case("an event may schedule another within the same advance", function()
  local c = clock.new{ start = 0 }
  local at
  c:after(1, function() c:after(1, function(now) at = now end) end)
  c:sleep(5)
  t.eq(at, 2)
end)

t.case("sleep rejects a negative time", function()
  t.err(function() clock.new():sleep(-1) end, "non%-negative")
end)

t.case("rfc3339 across leap years and month ends", function()
  t.eq(clock.rfc3339(0), "1970-01-01T00:00:00Z")
  t.eq(clock.rfc3339(951782400), "2000-02-29T00:00:00Z")
  t.eq(clock.rfc3339(1709251199), "2024-02-29T23:59:59Z")
  t.eq(clock.rfc3339(4102444800), "2100-01-01T00:00:00Z")
end)
