--- ranges: MetalLB address ranges, as `microk8s enable metallb` takes them.
---
--- A range is `FIRST-LAST` (both IPv4 or both IPv6, FIRST <= LAST) or a
--- CIDR `ADDRESS/PREFIX` (host bits allowed, as Go's net.ParseCIDR and so
--- MetalLB accept them: enable's own example is 192.168.1.240/24). IPv4
--- parts are decimal 0-255 without leading zeros (Go rejects them);
--- IPv6 is RFC 4291 text (`::` once, an IPv4 tail allowed, no zone).
--- A bare address is refused with a hint to write it as /32 or /128:
--- MetalLB's IPAddressPool does not take it.
---
--- The enable script reads `$1` and splits it on blanks and commas; the
--- MicroK8s CLI passes `metallb:RANGES` through as `RANGES`. Here every
--- positional argument is split the same way and a leading `metallb:` is
--- dropped, so `metallb:A,B`, `A,B`, `A B` and `A, B` are the same.
local M = {}

---Parse dotted IPv4; returns a list of 4 numbers or nil and why.
---@param s string
---@return integer[]|nil, string?
function M.ipv4(s)
  local parts = { s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$") }
  if #parts ~= 4 then return nil, "not an IPv4 address" end
  local out = {}
  for i, p in ipairs(parts) do
    if #p > 1 and p:sub(1, 1) == "0" then
      return nil, "IPv4 part '" .. p .. "' has a leading zero"
    end
    local n = tonumber(p)
    if #p > 3 or n > 255 then
      return nil, "IPv4 part '" .. p .. "' is above 255"
    end
    out[i] = n
  end
  return out
end

-- The 16-bit groups of one side of "::" (may be empty).
local function groups(side, allow_v4_tail)
  local out = {}
  if side == "" then return out end
  local items = {}
  for g in (side .. ":"):gmatch("([^:]*):") do items[#items + 1] = g end
  for i, g in ipairs(items) do
    if i == #items and allow_v4_tail and g:find(".", 1, true) then
      local v4, err = M.ipv4(g)
      if not v4 then return nil, err end
      out[#out + 1] = v4[1] * 256 + v4[2]
      out[#out + 1] = v4[3] * 256 + v4[4]
    elseif g:match("^%x%x?%x?%x?$") then
      out[#out + 1] = tonumber(g, 16)
    else
      return nil, "bad IPv6 group '" .. g .. "'"
    end
  end
  return out
end

---Parse IPv6 text; returns a list of 8 numbers (16-bit groups) or nil and why.
---@param s string
---@return integer[]|nil, string?
function M.ipv6(s)
  if not s:find(":", 1, true) then return nil, "not an IPv6 address" end
  if s:find("%%") then return nil, "IPv6 zones (%name) are not allowed" end
  local head, tail = s:match("^(.-)::(.*)$")
  if head and tail:find("::", 1, true) then
    return nil, "'::' appears more than once"
  end
  local left, right, err
  if head then
    left, err = groups(head, false)
    if not left then return nil, err end
    right, err = groups(tail, true)
    if not right then return nil, err end
    if #left + #right > 7 then return nil, "too many IPv6 groups" end
  else
    left, err = groups(s, true)
    if not left then return nil, err end
    right = {}
    if #left ~= 8 then return nil, "an IPv6 address has 8 groups" end
  end
  local out = {}
  for _, g in ipairs(left) do out[#out + 1] = g end
  for _ = 1, 8 - #left - #right do out[#out + 1] = 0 end
  for _, g in ipairs(right) do out[#out + 1] = g end
  return out
end

---Parse either family: the parts, then 4 or 6.
local function address(s)
  local v4, e4 = M.ipv4(s)
  if v4 then return v4, 4 end
  if s:find(":", 1, true) then
    local v6, e6 = M.ipv6(s)
    if v6 then return v6, 6 end
    return nil, nil, e6
  end
  if s:match("^[%d.]+$") then return nil, nil, e4 end
  return nil, nil, "not an IPv4 or IPv6 address"
end

local function compare(a, b)
  for i = 1, #a do
    if a[i] ~= b[i] then return a[i] < b[i] and -1 or 1 end
  end
  return 0
end

---Check one range; returns true, or nil and a message naming it.
---@param r string
---@return true|nil, string?
function M.check(r)
  local function bad(why)
    return nil, string.format("%q is not a valid IP range: %s", r, why)
  end
  if type(r) ~= "string" or r == "" then return bad("it is empty") end
  local first, last = r:match("^([^-]*)%-(.*)$")
  if first then
    if last:find("-", 1, true) then return bad("more than one '-'") end
    local a, fa, ea = address(first)
    if not a then return bad(string.format("'%s' is %s", first, ea)) end
    local b, fb, eb = address(last)
    if not b then return bad(string.format("'%s' is %s", last, eb)) end
    if fa ~= fb then
      return bad("it mixes IPv4 and IPv6")
    end
    if compare(a, b) > 0 then
      return bad(string.format("%s is above %s", first, last))
    end
    return true
  end
  local addr, prefix = r:match("^([^/]*)/(.*)$")
  if addr then
    local a, fam, ea = address(addr)
    if not a then return bad(string.format("'%s' is %s", addr, ea)) end
    local max = fam == 4 and 32 or 128
    if not prefix:match("^%d+$") or (#prefix > 1 and prefix:sub(1, 1) == "0")
       or tonumber(prefix) > max then
      return bad(string.format("the prefix length must be 0-%d, got '%s'",
        max, prefix))
    end
    return true
  end
  local a, fam = address(r)
  if a then
    return bad(string.format("a single address needs a prefix: write %s/%d",
      r, fam == 4 and 32 or 128))
  end
  return bad("expected FIRST-LAST or ADDRESS/PREFIX "
    .. "(e.g. 10.64.140.43-10.64.140.49 or 192.168.1.240/28)")
end

---Split positional arguments into ranges (see the top); nil when none
---were given. Raises on the first bad range, naming it.
---@param args string[]
---@return string[]|nil
function M.parse_args(args)
  local out = {}
  for _, a in ipairs(args or {}) do
    a = a:gsub("^metallb:", "")
    for r in a:gmatch("[^,%s]+") do
      local ok, err = M.check(r)
      if not ok then error(err, 0) end
      out[#out + 1] = r
    end
  end
  if #out == 0 then return nil end
  return out
end

return M
