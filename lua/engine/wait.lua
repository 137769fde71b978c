--- uphook.engine.wait: every wait of a run, one way (docs/state.md
--- "Signals", docs/output.md "Waits"). A wait
--- * answers a signal: its tick, which the backend calls at least every
---   M.TICK seconds (host/curl_tick.h under a watch or a polled request;
---   between slices of a sleep), raises "interrupted by a signal" after
---   the first SIGINT or SIGTERM, and during the rollback after a signal
---   that came then (M.ABANDONED: the rollback stops, the journal stays);
--- * renews the Lease at least every lease.RENEW seconds;
--- * is visible: what is awaited, elapsed and limit, through
---   report:waiting (a status line on a TTY, a line every M.HEARTBEAT
---   seconds off one, a `wait` event under --output json).
---
--- Imports: uphook.engine.lease.
local lease = require "uphook.engine.lease"

local M = {}

---Seconds between two looks at the signal flags.
M.TICK = 0.2
---Seconds between two heartbeats of a wait off a TTY (and JSON events).
M.HEARTBEAT = 10
---What a wait of the rollback raises after a signal during it.
M.ABANDONED = "stopped by a signal during the rollback"

---@class uphook.Wait
---@field run uphook.Run
---@field what string what is awaited, in words
---@field limit number seconds
---@field t0 number when it began (the backend's clock)
---@field beat number when the last heartbeat went out
---@field status? string the last thing seen ("2/3 replicas updated")
local W = {}
W.__index = W

---Raise when a signal asks the run to stop waiting.
---@param run table a run, or recover's run record
function M.check(run)
  local b = run.c and run.c.broker
  if not (b and b.interrupted) then return end
  if run.rolling_back then
    if b.abandoned and b.abandoned() then error(M.ABANDONED, 0) end
  elseif b.interrupted() then
    error("interrupted by a signal", 0)
  end
end

---Has a signal during the rollback asked it to stop?
---@param run table
---@return boolean
function M.abandoned(run)
  local b = run.c and run.c.broker
  return run.rolling_back == true and b ~= nil and b.abandoned ~= nil
    and b.abandoned() == true
end

---Begin a wait.
---@param run table
---@param what string "the rollout of Deployment kube-system/coredns"
---@param limit number seconds
---@param o? {quiet?: boolean} quiet: signals and the Lease only, no report
---@return uphook.Wait
function M.new(run, what, limit, o)
  local t0 = run.backend:now()
  local w = setmetatable({ run = run, what = what, limit = limit, t0 = t0,
    beat = t0, quiet = o and o.quiet }, W)
  w.fn = function() w:tick() end
  return w
end

---What the wait has seen last (shown with it).
---@param text string|nil
function W:see(text) self.status = text end

---One look: the signals, the Lease, the heartbeat. The backend calls it
---(as `w.fn`) at least every M.TICK seconds of the wait.
function W:tick()
  local run = self.run
  M.check(run)
  lease.renew(run)
  local now = run.backend:now()
  local beat = now - self.beat >= M.HEARTBEAT
  if beat then self.beat = now end
  local report = run.report
  if report and report.waiting and not self.quiet then
    report:waiting({ what = self.what, elapsed = now - self.t0,
      limit = self.limit, status = self.status }, beat)
  end
end

---Sleep `seconds` of the backend's clock, ticking in between.
---@param seconds number
function W:sleep(seconds)
  local b = self.run.backend
  local stop = b:now() + seconds
  while true do
    self:tick()
    local left = stop - b:now()
    if left <= 0 then return end
    b:sleep(math.min(M.TICK, left))
  end
end

---The wait is over: its status line goes.
function W:done()
  local report = self.run.report
  if report and report.clear_status then report:clear_status() end
end

---Run `fn(w)` as a wait; the status line goes whatever happens.
---@generic T
---@param run table
---@param what string
---@param limit number
---@param fn fun(w: uphook.Wait): T
---@return T
function M.run(run, what, limit, fn)
  local w = M.new(run, what, limit)
  local r = table.pack(pcall(fn, w))
  w:done()
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

return M
