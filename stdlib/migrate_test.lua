-- Tests for stdlib/migrate.lua. A fake log is injected through the
-- module's test seam (migrate.log), so these run without hook globals.
local t = require "uphook.test"
local migrate = require "migrate"

local steps_logged
migrate.log = {
  step = function(fmt, ...) steps_logged[#steps_logged + 1] = fmt:format(...) end,
  info = function() end, warn = function() end,
}

local function recorder()
  steps_logged = {}
  local ran = {}
  local function fn(_, from, to) ran[#ran + 1] = from .. ">" .. to end
  return ran, fn
end

t.case("runs the chain in order and logs each step", function()
  local ran, fn = recorder()
  local m = migrate.new()
  m:step("1.2.0", "1.3.0", fn)          -- added out of order on purpose
  m:step("1.0.0", "1.1.0", fn)
  m:step("1.1.0", "1.2.0", fn)
  local done = m:run { from = "1.0.0", to = "1.3.0" }
  t.eq(ran, { "1.0.0>1.1.0", "1.1.0>1.2.0", "1.2.0>1.3.0" })
  t.eq(steps_logged, { "migrate 1.0.0 -> 1.1.0", "migrate 1.1.0 -> 1.2.0",
                       "migrate 1.2.0 -> 1.3.0" })
  t.eq(done, { { from = "1.0.0", to = "1.1.0" }, { from = "1.1.0", to = "1.2.0" },
               { from = "1.2.0", to = "1.3.0" } })
end)

t.case("starts in the middle and stops at ctx.to", function()
  local ran, fn = recorder()
  local m = migrate.new()
    :step("1.0.0", "1.1.0", fn):step("1.1.0", "1.2.0", fn):step("1.2.0", "1.3.0", fn)
  m:run { from = "1.1.0", to = "1.2.0" }
  t.eq(ran, { "1.1.0>1.2.0" })
end)

t.case("a range from covers versions with no work of their own", function()
  local ran, fn = recorder()
  local m = migrate.new()
  m:step(">=1.1.0 <1.4.0", "1.4.2", fn)
  m:step("1.4.2", "2.0.0", fn)
  m:run { from = "1.3.7", to = "2.0.0" }
  t.eq(ran, { "1.3.7>1.4.2", "1.4.2>2.0.0" })
  t.eq(steps_logged, { "migrate 1.3.7 -> 1.4.2", "migrate 1.4.2 -> 2.0.0" })
end)

t.case("a partial from is an X-range, as in npm", function()
  local ran, fn = recorder()
  local m = migrate.new():step("1.2", "1.3.0", fn):step("v1.3.0", "1.4.0", fn)
  m:run { from = "1.2.5", to = "1.4.0" }
  t.eq(ran, { "1.2.5>1.3.0", "1.3.0>1.4.0" })
end)

t.case("ctx passes through; fn gets ctx, current and to", function()
  local got
  local m = migrate.new():step("1.x", "2.0.0", function(ctx, from, to)
    got = { ctx.addon, from, to }
  end)
  steps_logged = {}
  m:run { addon = "dns", from = "v1.5", to = "2.0.0" }
  t.eq(got, { "dns", "v1.5", "2.0.0" })
end)

t.case("from == to runs nothing", function()
  local ran, fn = recorder()
  local m = migrate.new():step("1.0.0", "1.1.0", fn)
  t.eq(m:run { from = "1.1.0", to = "1.1.0" }, {})
  t.eq(m:run { from = "v1.1", to = "1.1.0" }, {})
  t.eq(ran, {})
end)

t.case("a gap between steps is no path, and nothing runs", function()
  local ran, fn = recorder()
  local m = migrate.new():step("1.0.0", "1.1.0", fn):step("1.2.0", "1.3.0", fn)
  local e = t.err(function() m:run { from = "1.0.0", to = "1.3.0" } end,
                  "no path from 1%.0%.0 to 1%.3%.0 %(stuck at 1%.1%.0%)")
  t.match(e, "known steps: 1%.0%.0 %-> 1%.1%.0, 1%.2%.0 %-> 1%.3%.0")
  t.eq(ran, {})
end)

t.case("an unknown from, a downgrade and an overshoot are no path", function()
  local _, fn = recorder()
  local m = migrate.new():step("1.0.0", "1.1.0", fn):step("1.1.0", "1.3.0", fn)
  t.err(function() m:run { from = "0.9.0", to = "1.1.0" } end,
        "no path from 0%.9%.0 to 1%.1%.0; known steps")
  t.err(function() m:run { from = "1.1.0", to = "1.0.0" } end, "no path")
  -- 1.1.0 -> 1.3.0 would pass 1.2.0: not taken when ctx.to is 1.2.0
  t.err(function() m:run { from = "1.1.0", to = "1.2.0" } end,
        "no path from 1%.1%.0 to 1%.2%.0")
  t.err(function() migrate.new():run { from = "1.0.0", to = "1.1.0" } end,
        "known steps: %(none%)")
end)

t.case("the first matching step in order of addition wins", function()
  local ran, fn = recorder()
  local m = migrate.new()
  m:step("1.0.0", "1.2.0", fn)           -- a shortcut, added first
  m:step("1.0.0", "1.1.0", fn)
  m:step("1.1.0", "1.2.0", fn)
  m:run { from = "1.0.0", to = "1.2.0" }
  t.eq(ran, { "1.0.0>1.2.0" })
  ran[1] = nil
  m:run { from = "1.0.0", to = "1.1.0" }  -- the shortcut overshoots: skipped
  t.eq(ran, { "1.0.0>1.1.0" })
end)

t.case("path() previews without running", function()
  local ran, fn = recorder()
  local m = migrate.new():step("1.0.0", "1.1.0", fn):step("~1.1", "1.2.0", fn)
  local p = m:path("1.0.0", "1.2.0")
  t.eq(#p, 2)
  t.eq({ p[2].from, p[2].to }, { "1.1.0", "1.2.0" })
  t.eq(ran, {})
  local none, err = m:path("2.0.0", "3.0.0")
  t.eq(none, nil)
  t.match(err, "no path")
end)

t.case("a failing step stops the chain with its name in the error", function()
  local ran, fn = recorder()
  local m = migrate.new()
  m:step("1.0.0", "1.1.0", fn)
  m:step("1.1.0", "1.2.0", function() error("boom", 0) end)
  m:step("1.2.0", "1.3.0", fn)
  t.err(function() m:run { from = "1.0.0", to = "1.3.0" } end,
        "^migrate 1%.1%.0 %-> 1%.2%.0: boom$")
  t.eq(ran, { "1.0.0>1.1.0" })
  local api = { code = 409, message = "conflict" }
  local m2 = migrate.new():step("1.0.0", "1.1.0", function() error(api) end)
  local ok, e = pcall(m2.run, m2, { from = "1.0.0", to = "1.1.0" })
  t.ok(not ok)
  t.ok(e == api, "table errors pass through unchanged")
end)

t.case("bad steps and bad ctx are errors naming the problem", function()
  local m = migrate.new()
  t.err(function() m:step(1, "1.0.0", function() end) end, "'from' must be a string")
  t.err(function() m:step("1.0.0", "x", function() end) end,
        "step 'to': invalid version 'x'")
  t.err(function() m:step(">=a", "1.0.0", function() end) end,
        "step 'from': invalid range '>=a'")
  t.err(function() m:step("1.0.0", "1.1.0") end, "fn must be a function")
  t.err(function() m:step("1.1.0", "1.0.0", function() end) end,
        "does not go forward")
  t.err(function() m:run() end, "needs the hook's ctx")
  t.err(function() m:run { from = "nope", to = "1.0.0" } end,
        "ctx.from: invalid version 'nope'")
  t.err(function() m:run { from = "1.0.0" } end, "ctx.to: invalid version")
end)
