--- uphook.backend.mock.clock: a mock clock for the offline backend (docs/contract.md §6).
---
--- Time is a number of mock seconds. `sleep` and `advance` move it
--- forward instantly and run the events scheduled on the way, in time
--- order (ties in the order they were scheduled), so a five-minute
--- rollout timeout costs no real time.
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

local last_t, last_s       -- the mock's time changes seldom: the last one

---Seconds since the epoch as an RFC 3339 UTC timestamp, as the API
---server writes them ("2024-01-01T00:00:00Z"). Pure arithmetic
---(days-from-civil inverse), no os.date.
---@param t number
---@return string
function M.rfc3339(t)
  t = math.floor(t)
  if t == last_t then return last_s end
  local days, secs = t // 86400, t % 86400
  -- Howard Hinnant's civil_from_days
  local z = days + 719468
  local era = z // 146097
  local doe = z - era * 146097
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
  local mp = (5 * doy + 2) // 153
  local d = doy - (153 * mp + 2) // 5 + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  last_t, last_s = t, string.format("%04d-%02d-%02dT%02d:%02d:%02dZ", y, m,
    d, secs // 3600, secs % 3600 // 60, secs % 60)
  return last_s
end

---The current mock time as an RFC 3339 timestamp.
---@return string
function Clock:timestamp()
  return M.rfc3339(self.t)
end

return M
