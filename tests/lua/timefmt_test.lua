-- Wall-clock time and RFC 3339 timestamps (lua/core/timefmt.lua): exact
-- UTC arithmetic, the same on every machine whatever its time zone.
-- tests/cli/timezone_test.sh runs this file under zones with summer time.
local t = require "uphook.test"
local timefmt = require "uphook.core.timefmt"
local lease = require "uphook.engine.lease"

t.case("format and parse are exact and inverse, leap years and month ends "
    .. "included", function()
  t.eq(timefmt.format(0), "1970-01-01T00:00:00Z")
  t.eq(timefmt.format(951782400), "2000-02-29T00:00:00Z")
  t.eq(timefmt.format(1719792000, true), "2024-07-01T00:00:00.000000Z")
  t.eq(timefmt.parse("2024-07-01T00:00:00.000000Z"), 1719792000)
  t.eq(timefmt.parse("2024-07-01T02:00:00+02:00"), 1719792000)
  t.eq(timefmt.parse("2024-06-30T19:30:00-04:30"), 1719792000)
  t.eq(timefmt.parse("2024-07-01T00:00:00.5Z"), 1719792000.5)
  for _, s in ipairs { 0, 68169600, 951782399, 1709251199, 1719792000,
      1730595600, 4102444800, 253402300799 } do
    t.eq(timefmt.parse(timefmt.format(s)), s, timefmt.format(s))
    t.eq(timefmt.parse(timefmt.format(s, true)), s)
  end
  t.eq(timefmt.parse("yesterday"), nil)
  t.eq(timefmt.parse("2024-07-01T00:00:00"), nil)   -- no zone: not RFC 3339
  t.eq(timefmt.parse(42), nil)
end)

t.case("a Lease whose holder stopped renewing is stale once its duration "
    .. "has passed, in summer as in winter, whatever offset its time has",
    function()
  -- (the parse before lua/core/timefmt.lua read the offset as UTC: the
  -- third Lease stayed held for two hours past its duration)
  for renewed, at in pairs { ["2024-07-01T00:00:00.000000Z"] = 1719792000,
      ["2024-01-15T00:00:00.000000Z"] = 1705276800,
      ["2024-07-01T02:00:00.000000+02:00"] = 1719792000 } do
    local obj = { spec = { holderIdentity = "other-node/uphook-7",
      renewTime = renewed, leaseDurationSeconds = 60 } }
    local function run_at(now)
      return { hostname = "this-node", pid = 1, clock_wall = function()
        return now end }
    end
    t.eq(lease.stale(run_at(at + 30), obj), nil, renewed .. ": held")
    t.eq(lease.stale(run_at(at + 61), obj), "it expired", renewed)
  end
end)
