-- The broker's own work counts against --timeout (docs/security.md
-- "Broker work outside the timeout" and "Limits"): a request the broker
-- is slow to serve is stopped at the deadline plus the child's grace
-- (1 s), however the engine's pcalls try to swallow it, and the run still
-- ends rolled back.
local t = require "uphook.test"
local C = require("uphook.core.cfamilies").load()

local GRACE = 1      -- host/broker.c: what the child gets past its deadline
local SLACK = 1.5    -- a loaded machine, the test's own work

local HOOK = [[return { version = "1.0.0", from = "*", permissions = {},
  upgrade = function() nodes.list() end }]]

local function spawn(timeout, source)
  local child = assert(C.broker.spawn { source = source or HOOK, chunkname = "=t",
    timeout = timeout, deadline = C.sys.now() + timeout })
  local ok, desc = child:loaded(function() error("no call at load") end)
  assert(ok, desc)
  return child
end

-- child:run(phase, {}, handler), then close: ok, err, kind, seconds taken
local function run_timed(child, handler)
  local t0 = C.sys.now()
  local ok, err, kind = child:run("upgrade", {}, handler)
  local took = C.sys.now() - t0
  child:close()
  return ok, err, kind, took
end

t.case("a handler that never returns is stopped at the deadline", function()
  local ok, err, kind, took = run_timed(spawn(1), function()
    while true do end
  end)
  t.eq(ok, false)
  t.eq(kind, "timeout")
  t.match(err, "ran past %-%-timeout")
  t.ok(took < 1 + GRACE + SLACK, "took " .. took .. " s")
end)

t.case("pcall in the engine cannot swallow the broker's timeout", function()
  local ok, _, kind, took = run_timed(spawn(1), function()
    while true do pcall(function() while true do end end) end
  end)
  t.eq(ok, false)
  t.eq(kind, "timeout")
  t.ok(took < 1 + GRACE + SLACK, "took " .. took .. " s")
end)

t.case("a request served past the deadline is not answered", function()
  local child = spawn(1)
  local ok, err, kind = child:run("upgrade", {}, function()
    C.sys.sleep(1 + GRACE + 0.2)   -- C: no count hook fires; returns late
    return {}
  end)
  child:close()
  t.eq(ok, false)
  t.eq(kind, "timeout")
  t.match(err, "and was killed; its nodes%.list request was being served$")
end)

t.case("a request that fails past the deadline is named in the timeout", function()
  -- a download whose own time limit ends with the run's, on a machine too
  -- loaded to answer within the grace: the user still learns which
  -- request it was and why it failed
  local child = spawn(1)
  -- (in a coroutine made in time, which the broker's deadline hook does
  -- not reach: the error is raised past the deadline, as a C function's)
  local ok, err, kind = child:run("upgrade", {}, coroutine.wrap(function()
    C.sys.sleep(1 + GRACE + 0.2)
    error("https://127.0.0.1:1/slow: Operation timed out", 0)
  end))
  child:close()
  t.eq(ok, false)
  t.eq(kind, "timeout")
  t.match(err, "ran past %-%-timeout %(1 s%) and was killed; its nodes%.list "
    .. "request was being served and failed: https://127%.0%.0%.1:1/slow: "
    .. "Operation timed out$")
end)

t.case("a request stopped by the deadline is named with its URL", function()
  -- a download still in its transfer when the broker's deadline passes
  -- (its own time limit not reached in time on a machine this slow): the
  -- message names the URL it was fetching
  local child = spawn(1, [[return { version = "1.0.0", from = "*",
    permissions = {}, upgrade = function()
      net.download("https://127.0.0.1:1/slow", { sha256 = "0" }) end }]])
  local ok, err, kind = child:run("upgrade", {}, function()
    C.sys.sleep(1 + GRACE + 0.2)
    return {}
  end)
  child:close()
  t.eq(ok, false)
  t.eq(kind, "timeout")
  t.match(err, "and was killed; its net%.download request "
    .. "%(https://127%.0%.0%.1:1/slow%) was being served$")
end)

t.case("an answer that cannot be sent kills the hook and says why", function()
  -- addon.read of a big file answers with the open file (host/payload.h),
  -- spliced into the pipe when the answer is sent: a file cut short in
  -- between cannot fill its frame
  local dir = assert(C.sys.mkdtemp())
  local path = dir .. "/big.yaml"
  local f = assert(io.open(path, "w"))
  f:write(string.rep("a: b\n", 40000))
  f:close()
  local ok, err, kind = run_timed(spawn(5, [[return { version = "1.0.0",
    from = "*", permissions = {},
    upgrade = function() addon.read("big.yaml") end }]]), function()
      local payload = assert(C.fs.read(dir, "big.yaml", true))
      t.eq(type(payload), "userdata")
      assert(io.open(path, "w")):close()   -- cut to nothing, in place
      return payload
    end)
  C.sys.rmtree(dir)
  t.eq(ok, false)
  t.eq(kind, "crash")
  t.match(err, "^the answer to its addon%.read request could not be sent "
    .. "%(a file of 200000 bytes could not be sent: it shrank while it was "
    .. "being sent%), and the hook process was killed$")
end)

t.case("after a nested request the outer one keeps its own deadline", function()
  -- a handler that runs another child (with a later deadline) and then
  -- keeps working is still stopped at its own child's deadline
  local ok, err, kind, took = run_timed(spawn(1), function()
    local iok, ires = run_timed(spawn(30), function() return {} end)
    assert(iok, tostring(ires))
    while true do end
  end)
  t.eq(ok, false)
  t.eq(kind, "timeout")
  t.match(err, "ran past %-%-timeout %(1 s%)")
  t.ok(took < 1 + GRACE + SLACK, "took " .. took .. " s")
end)

t.case("after a call the broker's state carries no deadline", function()
  local child = spawn(1)
  local ok, res = child:run("upgrade", {}, function() return {} end)
  child:close()
  t.eq(ok, true, tostring(res))
  C.sys.sleep(1 + GRACE + 0.1)
  -- past that child's deadline, the parent's own code still runs
  local n = 0
  for _ = 1, 1e6 do n = n + 1 end
  t.eq(n, 1e6)
end)

t.case("a slow request in the broker ends the upgrade rolled back", function()
  local e = t.env { addon = "addons/slowbroker", cluster = "fixtures_hello.yaml",
    timeout = 1 }
  local before = e:snapshot()
  local real = e.backend.get
  e.backend.get = function(self, kind, name, ns)
    if name == "slow" then while true do end end
    return real(self, kind, name, ns)
  end
  local t0 = C.sys.now()
  local r = e:upgrade {}
  local took = C.sys.now() - t0
  e.backend.get = real
  t.eq(r.code, 1, r.error)
  t.match(r.error, "timeout")
  t.eq(e:snapshot(), before)
  t.ok(took < 1 + GRACE + SLACK, "took " .. took .. " s")
end)
