--- uphook.backend.mock.clock: a mock clock for the offline backend (docs/contract.md §6).
---
--- Time is a number of mock seconds. `sleep` and `advance` move it
--- forward instantly and run the events scheduled on the way, in time
--- order (ties in the order they were scheduled), so a five-minute
--- rollout timeout costs no real time.
local timefmt = require "uphook.core.timefmt"

local M = {}

---@class MockClock
---@field private t number          current mock time (seconds)
---@field private events table[]    pending {at, seq, fn}, unsorted
---@field private seq integer
local Clock = {}
Clock.__index = Clock

--- 2024-01-01T00:00:00Z: timestamps look real and stay deterministic.
M.DEFAULT_START = 1704067200

---Create a clock.
---@param opts? {start?: number}
---@return MockClock
function M.new(opts)
  local start = opts and opts.start or M.DEFAULT_START
  return setmetatable({ t = start, events = {}, seq = 0 }, Clock)
end

---The current mock time in seconds.
---@return number
function Clock:now()
  return self.t
end

---Schedule fn() to run when the clock reaches `at` (absolute seconds).
---An event in the past runs at the next advance.
---@param at number
---@param fn fun(now: number)
function Clock:at(at, fn)
  self.seq = self.seq + 1
  self.events[#self.events + 1] = { at = at, seq = self.seq, fn = fn }
end

---Schedule fn() to run `delay` seconds from now.
---@param delay number
---@param fn fun(now: number)
function Clock:after(delay, fn)
  self:at(self.t + delay, fn)
end

---The time of the earliest pending event, or nil.
---@return number|nil
function Clock:next_event()
  local best
  for _, e in ipairs(self.events) do
    if not best or e.at < best then best = e.at end
  end
  return best
end

-- Remove and return the earliest event due at or before `limit`.
local function pop_due(self, limit)
  local bi, best
  for i, e in ipairs(self.events) do
    if e.at <= limit and (not best or e.at < best.at
        or (e.at == best.at and e.seq < best.seq)) then
      bi, best = i, e
    end
  end
  if bi then table.remove(self.events, bi) end
  return best
end

---Move the clock to `target` (never backwards), running every event due
---on the way at its own time.
---@param target number
function Clock:advance_to(target)
  while true do
    local e = pop_due(self, target)
    if not e then break end
    if e.at > self.t then self.t = e.at end
    e.fn(self.t)
  end
  if target > self.t then self.t = target end
end

---Advance the clock by `seconds` (see advance_to).
---@param seconds number
function Clock:sleep(seconds)
  assert(type(seconds) == "number" and seconds >= 0,
         "sleep: seconds must be a non-negative number")
  self:advance_to(self.t + seconds)
end
Clock.advance = Clock.sleep

---Seconds since the epoch as an RFC 3339 UTC timestamp
---(lua/core/timefmt.lua, the one home of the format).
M.rfc3339 = timefmt.format

---The current mock time as an RFC 3339 timestamp.
---@return string
function Clock:timestamp()
  return M.rfc3339(self.t)
end

return M
