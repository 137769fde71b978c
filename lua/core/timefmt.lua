--- uphook.core.timefmt: wall-clock time and RFC 3339 timestamps, the one
--- home of both (docs/state.md: the state's and the Lease's times). Pure
--- arithmetic in UTC (Howard Hinnant's civil-day algorithms): no os.date,
--- no local time zone, so a timestamp reads back as the same second on
--- any machine.
local M = {}

---Seconds since the epoch: the run's clock (mocked under test), else the
---machine's.
---@param run {clock_wall?: fun(): number}
---@return number
function M.wall(run)
  return run.clock_wall and run.clock_wall() or os.time()
end

-- days since 1970-01-01 -> year, month, day (civil_from_days)
local function civil(days)
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
  return y, m, d
end

-- year, month, day -> days since 1970-01-01 (days_from_civil)
local function days_from(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400
  local doy = (153 * (m > 2 and m - 3 or m + 9) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

local last_t, last_micro, last_s   -- the mock's time changes seldom

---Seconds since the epoch as an RFC 3339 UTC timestamp, as the API
---server writes them: "2024-01-01T00:00:00Z", or with `micro` the
---MicroTime of a Lease, "2024-01-01T00:00:00.000000Z".
---@param t number
---@param micro? boolean
---@return string
function M.format(t, micro)
  t = math.floor(t)
  if t == last_t and micro == last_micro then return last_s end
  local y, m, d = civil(t // 86400)
  local secs = t % 86400
  last_t, last_micro = t, micro
  last_s = string.format("%04d-%02d-%02dT%02d:%02d:%02d%sZ", y, m, d,
    secs // 3600, secs % 3600 // 60, secs % 60, micro and ".000000" or "")
  return last_s
end

---An RFC 3339 timestamp as seconds since the epoch (a fraction and an
---offset honoured), or nil when it is not one.
---@param s any
---@return number|nil
function M.parse(s)
  if type(s) ~= "string" then return nil end
  local y, mo, d, h, mi, sec, rest =
    s:match("^(%d%d%d%d)-(%d%d)-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(.*)$")
  if not y then return nil end
  local frac, zone = rest:match("^(%.?%d*)(.*)$")
  local t = days_from(tonumber(y), tonumber(mo), tonumber(d)) * 86400
    + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(sec)
  if frac ~= "" and frac ~= "." then t = t + tonumber("0" .. frac) end
  if zone == "Z" or zone == "z" then return t end
  local sign, oh, om = zone:match("^([+-])(%d%d):(%d%d)$")
  if not sign then return nil end
  local off = tonumber(oh) * 3600 + tonumber(om) * 60
  return sign == "+" and t - off or t + off
end

return M
