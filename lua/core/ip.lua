--- ip: parse IPv4 and IPv6 addresses (docs/contract.md §5).
---
--- ```lua
--- local ip = require "ip"
--- local a = ip.parse("10.152.183.10")        -- {version = 4, bytes = {10, 152, 183, 10}}
--- assert(ip.parse("2001:db8::1").version == 6)
--- assert(ip.is_loopback(ip.parse("127.0.0.53")))
--- assert(ip.parse("10.0.0.01") == nil)        -- leading zeros are refused
--- ```
---
--- The rules are Python's `ipaddress.ip_address` (which MicroK8s' own
--- scripts use): IPv4 is four decimal parts 0-255 without leading
--- zeros; IPv6 is eight groups of 1-4 hex digits, one `::` standing for
--- one or more zero groups, optionally ending in an IPv4 address. A zone
--- (`fe80::1%eth0`) is not part of an address: `parse` refuses it.
-- (lua/core/ip.lua is `uphook.core.ip`, for the broker's nodes.resolv_conf too;
-- stdlib/ip.lua hands it on to hooks. It requires nothing.)
local M = {}

---@class ip.Address
---@field version 4|6
---@field bytes integer[] 4 or 16 bytes, most significant first

local function v4_bytes(s)
  local parts = {}
  for p in (s .. "."):gmatch("([^.]*)%.") do parts[#parts + 1] = p end
  if #parts ~= 4 then return nil end
  for i, p in ipairs(parts) do
    if not p:match("^%d%d?%d?$") or (#p > 1 and p:sub(1, 1) == "0") then
      return nil
    end
    parts[i] = tonumber(p)
    if parts[i] > 255 then return nil end
  end
  return parts
end

local function groups(s, out)
  if s == "" then return true end
  for g in (s .. ":"):gmatch("([^:]*):") do
    if not g:match("^%x%x?%x?%x?$") then return false end
    out[#out + 1] = tonumber(g, 16)
  end
  return true
end

local function v6_bytes(s)
  local tail = {}
  local head4, v4 = s:match("^(.*:)(%d+%.%d+%.%d+%.%d+)$")
  if head4 then
    local b = v4_bytes(v4)
    if not b then return nil end
    tail = { b[1] * 256 + b[2], b[3] * 256 + b[4] }
    s = head4:sub(-2) == "::" and head4 or head4:sub(1, -2)
  end
  local left, right = s, nil
  local at = s:find("::", 1, true)
  if at then
    left, right = s:sub(1, at - 1), s:sub(at + 2)
    if right:find("::", 1, true) then return nil end
  end
  local a, b = {}, {}
  if not groups(left, a) or (right and not groups(right, b)) then
    return nil
  end
  for _, g in ipairs(tail) do b[#b + 1] = g end
  local zeros = 8 - #a - #b
  if (right and zeros < 1) or (not right and zeros ~= 0) then return nil end
  local out = {}
  local function put(g) out[#out + 1] = g >> 8; out[#out + 1] = g & 255 end
  for _, g in ipairs(a) do put(g) end
  for _ = 1, zeros do put(0) end
  for _, g in ipairs(b) do put(g) end
  return out
end

---Parse an address; nil when `s` is not one.
---Since hook API 0.2.
---@param s string
---@return ip.Address|nil
function M.parse(s)
  if type(s) ~= "string" then return nil end
  if s:find(":", 1, true) then
    local b = s:match("^[%x:.]+$") and v6_bytes(s)
    return b and { version = 6, bytes = b } or nil
  end
  local b = v4_bytes(s)
  return b and { version = 4, bytes = b } or nil
end

---Is it a loopback address: 127.0.0.0/8, or ::1?
---Since hook API 0.2.
---@param a ip.Address
---@return boolean
function M.is_loopback(a)
  if a.version == 4 then return a.bytes[1] == 127 end
  for i = 1, 15 do if a.bytes[i] ~= 0 then return false end end
  return a.bytes[16] == 1
end

return M
