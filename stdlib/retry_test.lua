-- Tests for stdlib/retry.lua. Sleep and log are injected through the
-- module's test seams (retry.sleep, retry.log): no real time passes.
local t = require "uphook.test"
local retry = require "retry"

local slept, warned
local function reset()
  slept, warned = {}, {}
  retry.sleep = function(s) slept[#slept + 1] = s end
  retry.log = { warn = function(fmt, ...) warned[#warned + 1] = fmt:format(...) end }
end

-- fn that fails `k` times (with errs[i] or "fail i"), then returns ...
local function flaky(k, errs, ...)
  local results, calls = table.pack(...), 0
  return function()
    calls = calls + 1
    if calls <= k then error((errs and errs[calls]) or ("fail " .. calls), 0) end
    return table.unpack(results, 1, results.n)
  end, function() return calls end
end

t.case("first success returns every result, no sleep", function()
  reset()
  local fn, calls = flaky(0, nil, 1, nil, "three")
  t.eq(table.pack(retry(fn)), { n = 3, 1, nil, "three" })
  t.eq(calls(), 1)
  t.eq(slept, {})
end)

t.case("retries with exponential backoff, then succeeds", function()
  reset()
  local fn, calls = flaky(3, nil, "ok")
  t.eq(retry(fn, { attempts = 5, delay = 1, backoff = 2 }), "ok")
  t.eq(calls(), 4)
  t.eq(slept, { 1, 2, 4 })
  t.eq(warned[1], "attempt 1 of 5 failed: fail 1; retrying in 1s")
  t.eq(#warned, 3)
end)

t.case("defaults: 3 attempts, delay 1, backoff 2", function()
  reset()
  local fn, calls = flaky(10)
  t.err(function() retry(fn) end, "^fail 3 %(failed after 3 attempts%)$")
  t.eq(calls(), 3)
  t.eq(slept, { 1, 2 })
end)

t.case("max_delay caps each delay", function()
  reset()
  local fn = flaky(10)
  t.err(function() retry(fn, { attempts = 6, delay = 3, backoff = 3, max_delay = 10 }) end,
        "after 6 attempts")
  t.eq(slept, { 3, 9, 10, 10, 10 })
end)

t.case("delay 0 does not sleep", function()
  reset()
  local fn = flaky(2, nil, true)
  t.eq(retry(fn, { delay = 0 }), true)
  t.eq(slept, {})
end)

t.case("retry_on false re-raises at once with the count", function()
  reset()
  local fn, calls = flaky(10, { "transient", "fatal" })
  t.err(function()
    retry(fn, { attempts = 5, retry_on = function(e) return e ~= "fatal" end })
  end, "^fatal %(failed after 2 attempts%)$")
  t.eq(calls(), 2)
  t.eq(slept, { 1 })
end)

t.case("one attempt: singular wording", function()
  reset()
  t.err(function() retry(flaky(1), { attempts = 1 }) end, "^fail 1 %(failed after 1 attempt%)$")
end)

t.case("table errors keep their fields and get attempts", function()
  reset()
  local api = { code = 409, reason = "Conflict", message = "the object has been modified" }
  local fn = flaky(10, { api, api, api })
  local ok, e = pcall(retry, fn, { retry_on = function(err) return err.code == 409 end })
  t.ok(not ok)
  t.eq(e, { code = 409, reason = "Conflict", attempts = 3,
            message = "the object has been modified (failed after 3 attempts)" })
  t.eq(api.message, "the object has been modified", "the original is not changed")
  t.match(warned[1], "failed: the object has been modified; retrying")
end)

t.case("without the sleep seam or __uphook it does not wait", function()
  reset()
  retry.sleep = nil
  local fn = flaky(2, nil, "ok")
  t.eq(retry(fn, { delay = 1000 }), "ok")  -- real sleep would be noticed; the mock clock costs nothing
  t.eq(slept, {})
end)

t.case("misuse raises", function()
  reset()
  t.err(function() retry(nil) end, "fn must be a function")
  t.err(function() retry(function() end, "x") end, "opts must be a table")
  t.err(function() retry(function() end, { tries = 3 }) end, "unknown option 'tries'")
  t.err(function() retry(function() end, { attempts = 0 }) end, "attempts must be an integer >= 1")
  t.err(function() retry(function() end, { attempts = 1.5 }) end, "attempts must be an integer")
  t.err(function() retry(function() end, { delay = -1 }) end, "delay must be >= 0")
  t.err(function() retry(function() end, { backoff = 0.5 }) end, "backoff must be >= 1")
  t.err(function() retry(function() end, { max_delay = -1 }) end, "max_delay must be >= 0")
  t.err(function() retry(function() end, { retry_on = true }) end,
        "option retry_on must be a function, got boolean")
end)
