--- semver: Semantic Versioning 2.0 versions and npm-style ranges (docs/contract.md §5).
---
--- ```lua
--- local semver = require "semver"
--- semver.compare("1.2.3-rc.1", "1.2.3")          --> -1
--- semver.satisfies("v1.3.0", ">=1.1.0 <1.4.2")   --> true
--- semver.satisfies("1.4.0-rc.1", "^1.2")         --> false (pre-release rule)
--- semver.satisfies("1.0.0+7bfce061", "1.0.0")     --> true (build ignored)
--- semver.at("1.0.0+7bfce061", "1.0.0+e9783f86")   --> false
--- ```
---
--- Versions: `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, optionally preceded by
--- `v` (or `=`) and surrounded by spaces. Numeric parts have no leading
--- zeros. `parse` also accepts the partial forms `1` and `1.2` (missing parts
--- are 0, no pre-release or build allowed); in a *range*, a partial version
--- is an X-range instead (`=1.2` means `1.2.x`).
---
--- Ranges follow npm (node-semver): comparators `=`, `<`, `<=`, `>`, `>=`
--- joined by spaces (all must hold), `||` between alternatives, `^`, `~`
--- (`~>`), X-ranges (`1.x`, `1.2.*`, `*`, empty), hyphen ranges
--- (`1.2.3 - 2.3.4`). A version with a pre-release tag only satisfies a
--- comparator set in which some comparator carries a pre-release on the
--- same `MAJOR.MINOR.PATCH` (so `^1.2.0` does not accept `1.5.0-rc.1`, but
--- `>=1.5.0-rc.0 <2` does).
---
--- Errors: `parse` and `valid_range` return `nil, message`; `compare` and
--- `satisfies` raise. Every message names the bad input.
--
-- This is uphook.core.semver, a module of the engine (it checks a hook's
-- `version` and `from` with it) that requires nothing; hooks get it as
-- `require "semver"`, which stdlib/semver.lua re-exports.
local M = {}

local MAX_LENGTH = 256          -- as node-semver
local MAX_DIGITS = 15           -- keeps every number an exact integer

---@class semver.Version
---@field major integer
---@field minor integer
---@field patch integer
---@field prerelease (string|integer)[] dot-separated pre-release identifiers; numeric ones are integers
---@field build? string build metadata after `+` (ignored when comparing)

local Version = {}
Version.__index = Version

---Render a parsed version as a canonical string (`1.2.3-rc.1+b5`).
---@param v semver.Version
---@return string
function M.format(v)
  local s = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if #v.prerelease > 0 then
    local ids = {}
    for i, id in ipairs(v.prerelease) do ids[i] = tostring(id) end
    s = s .. "-" .. table.concat(ids, ".")
  end
  if v.build then s = s .. "+" .. v.build end
  return s
end
Version.__tostring = M.format

-- A numeric identifier: digits, no leading zero, bounded length.
local function number(s, what)
  if not s:match("^%d+$") then return nil, what .. " is not a number" end
  if #s > 1 and s:sub(1, 1) == "0" then
    return nil, what .. " has a leading zero"
  end
  if #s > MAX_DIGITS then return nil, what .. " is too large" end
  return math.tointeger(tonumber(s))
end

-- Split dot-separated identifiers of a pre-release or build part.
local function identifiers(s, what, numeric)
  local out = {}
  if s == "" then return nil, what .. " is empty" end
  for id in (s .. "."):gmatch("(.-)%.") do
    if id == "" then return nil, what .. " has an empty identifier" end
    if not id:match("^[0-9A-Za-z%-]+$") then
      return nil, what .. " has an invalid character in '" .. id .. "'"
    end
    if numeric and id:match("^%d+$") then
      local n, err = number(id, what .. " identifier '" .. id .. "'")
      if not n then return nil, err end
      out[#out + 1] = n
    else
      out[#out + 1] = id
    end
  end
  return out
end

-- Split "core-pre+build" (pre-release may contain '-', core cannot).
local function split_version(s)
  local core, rest = s, ""
  local plus = s:find("+", 1, true)
  local build
  if plus then core, build = s:sub(1, plus - 1), s:sub(plus + 1) end
  local dash = core:find("-", 1, true)
  if dash then core, rest = core:sub(1, dash - 1), core:sub(dash + 1) end
  return core, dash and rest or nil, build
end

local function strip(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- Parse after the input was checked to be a bounded string.
local function parse_text(text)
  local s = strip(text):gsub("^[vV=]", "", 1)
  local core, pre, build = split_version(s)
  local parts = {}
  for p in (core .. "."):gmatch("(.-)%.") do parts[#parts + 1] = p end
  if core == "" or #parts > 3 then
    return nil, "expected MAJOR.MINOR.PATCH"
  end
  local names = { "major", "minor", "patch" }
  local v = setmetatable({ major = 0, minor = 0, patch = 0, prerelease = {} },
                         Version)
  for i, p in ipairs(parts) do
    local n, err = number(p, names[i] .. " version '" .. p .. "'")
    if not n then return nil, err end
    v[names[i]] = n
  end
  if (pre or build) and #parts < 3 then
    return nil, "a pre-release or build needs MAJOR.MINOR.PATCH"
  end
  if pre then
    local ids, err = identifiers(pre, "pre-release", true)
    if not ids then return nil, err end
    v.prerelease = ids
  end
  if build then
    local ok, err = identifiers(build, "build metadata", false)
    if not ok then return nil, err end
    v.build = build
  end
  return v
end

-- Parsed versions, by text (bounded as range_cache below); each caller
-- gets its own copy, which it may change.
local version_cache, version_count = {}, 0

local function fresh(v)
  local pre = {}
  for i, id in ipairs(v.prerelease) do pre[i] = id end
  return setmetatable({ major = v.major, minor = v.minor, patch = v.patch,
    prerelease = pre, build = v.build }, Version)
end

---Parse a version. A leading `v` is allowed; `1` and `1.2` parse as
---`1.0.0` and `1.2.0`.
---@param v string
---@return semver.Version|nil version
---@return string? err names the input and what is wrong with it
function M.parse(v)
  if type(v) ~= "string" then
    return nil, "invalid version: expected a string, got " .. type(v)
  end
  if #v > MAX_LENGTH then
    return nil, string.format("invalid version '%s...': longer than %d",
                              v:sub(1, 40), MAX_LENGTH)
  end
  local hit = version_cache[v]
  if hit then return fresh(hit) end
  local parsed, err = parse_text(v)
  if not parsed then
    return nil, string.format("invalid version '%s': %s", v, err)
  end
  if version_count < 256 then
    version_cache[v], version_count = fresh(parsed), version_count + 1
  end
  return parsed
end

-- A version argument: a string (parsed) or an already parsed table.
local function version_arg(v, level)
  if type(v) == "table" and math.type(v.major) == "integer"
     and math.type(v.minor) == "integer" and math.type(v.patch) == "integer"
     and type(v.prerelease) == "table" then
    return v
  end
  local parsed, err = M.parse(v)
  if not parsed then error("semver: " .. err, level + 1) end
  return parsed
end

local function cmp(a, b)
  if a < b then return -1 elseif a > b then return 1 end
  return 0
end

-- SemVer 2.0 §11: numeric identifiers sort before alphanumeric ones.
local function compare_ids(x, y)
  local nx, ny = type(x) == "number", type(y) == "number"
  if nx and ny then return cmp(x, y) end
  if nx then return -1 end
  if ny then return 1 end
  return cmp(x, y)
end

local function compare_pre(a, b)
  local pa, pb = a.prerelease, b.prerelease
  if #pa == 0 and #pb == 0 then return 0 end
  if #pa == 0 then return 1 end      -- a release ranks above its pre-releases
  if #pb == 0 then return -1 end
  for i = 1, math.max(#pa, #pb) do
    if pa[i] == nil then return -1 end
    if pb[i] == nil then return 1 end
    local c = compare_ids(pa[i], pb[i])
    if c ~= 0 then return c end
  end
  return 0
end

local function compare_parsed(a, b)
  return cmp(a.major, b.major) ~= 0 and cmp(a.major, b.major)
      or cmp(a.minor, b.minor) ~= 0 and cmp(a.minor, b.minor)
      or cmp(a.patch, b.patch) ~= 0 and cmp(a.patch, b.patch)
      or compare_pre(a, b)
end

---Compare two versions with SemVer 2.0 precedence (build metadata is
---ignored). Raises an error naming an invalid version.
---@param a string|semver.Version
---@param b string|semver.Version
---@return integer # -1 when a < b, 0 when equal, 1 when a > b
function M.compare(a, b)
  return compare_parsed(version_arg(a, 2), version_arg(b, 2))
end

---Whether an installed version `v` is the version `target` a hook
---installs: equal precedence and, when `target` carries build metadata,
---the same build metadata. `1.0.0+e9783f86` is not `1.0.0+7bfce061`
---though neither precedes the other (an addon whose version string never
---changed, told apart by a fingerprint of its content: docs/guide.md
---"Versions that never changed"); a `target` without build metadata is
---any build of its version. Raises an error naming an invalid version.
---
---Since hook API 0.2.
---@param v string|semver.Version
---@param target string|semver.Version
---@return boolean
function M.at(v, target)
  local a, b = version_arg(v, 2), version_arg(target, 2)
  return compare_parsed(a, b) == 0 and (b.build == nil or a.build == b.build)
end

--- Ranges -------------------------------------------------------------

-- A range is a list of comparator sets; a set is a list of
-- {op = "<"|"<="|">"|">="|"=", v = Version}; an empty set matches all.

local function is_x(p) return p == nil or p == "x" or p == "X" or p == "*" end

local function V(major, minor, patch, pre)
  return setmetatable({ major = major, minor = minor, patch = patch,
                        prerelease = pre or {} }, Version)
end

-- Parse a partial version of a range: {major?, minor?, patch?, pre}.
-- Missing or x parts are nil; a part after an x part must be x too.
local function parse_partial(s)
  local body = s:gsub("^[vV=]", "", 1)
  local core, pre, build = split_version(body)
  local parts, n = {}, 0
  for p in (core .. "."):gmatch("(.-)%.") do
    n = n + 1
    if n > 3 then return nil, "more than three version parts" end
    if is_x(p) then
      parts[n] = false
    else
      local v, err = number(p, "version part '" .. p .. "'")
      if not v then return nil, err end
      if n > 1 and parts[n - 1] == false then
        return nil, "a number after a wildcard"
      end
      parts[n] = v
    end
  end
  local r = { major = parts[1] or nil, minor = parts[2] or nil,
              patch = parts[3] or nil, prerelease = {} }
  if (pre or build) and not r.patch then
    return nil, "a pre-release or build needs MAJOR.MINOR.PATCH"
  end
  if pre then
    local ids, err = identifiers(pre, "pre-release", true)
    if not ids then return nil, err end
    r.prerelease = ids
  end
  if build then
    local ok, err = identifiers(build, "build metadata", false)
    if not ok then return nil, err end
  end
  return r
end

local function full(p) return V(p.major, p.minor, p.patch, p.prerelease) end

-- The lowest version of a partial (x parts = 0).
local function low(p)
  return V(p.major or 0, p.minor or 0, p.patch or 0, p.prerelease)
end

-- The first version above a partial with x parts: 1.x -> 2.0.0-0.
local function above(p)
  if p.minor == nil then return V(p.major + 1, 0, 0, { 0 }) end
  return V(p.major, p.minor + 1, 0, { 0 })
end

-- Desugar one comparator token into `out`.
local function primitive(op, p, out)
  if p.major == nil then                  -- "*", "x", ">=*", "<*", ">*"
    if op == "<" or op == ">" then
      out[#out + 1] = { op = "<", v = V(0, 0, 0, { 0 }) }
    end
    return
  end
  local partial = p.patch == nil
  if not partial then
    out[#out + 1] = { op = (op == "" and "=" or op), v = full(p) }
  elseif op == "" or op == "=" then
    out[#out + 1] = { op = ">=", v = low(p) }
    out[#out + 1] = { op = "<", v = above(p) }
  elseif op == ">" then                   -- >1.2 -> >=1.3.0
    local a = above(p); a.prerelease = {}
    out[#out + 1] = { op = ">=", v = a }
  elseif op == ">=" then
    out[#out + 1] = { op = ">=", v = low(p) }
  elseif op == "<" then                   -- <1.2 -> <1.2.0-0
    local l = low(p); l.prerelease = { 0 }
    out[#out + 1] = { op = "<", v = l }
  else                                    -- <=1.2 -> <1.3.0-0
    out[#out + 1] = { op = "<", v = above(p) }
  end
end

local function tilde(p, out)
  if p.major == nil then return end
  out[#out + 1] = { op = ">=", v = low(p) }
  if p.minor == nil then
    out[#out + 1] = { op = "<", v = V(p.major + 1, 0, 0, { 0 }) }
  else
    out[#out + 1] = { op = "<", v = V(p.major, p.minor + 1, 0, { 0 }) }
  end
end

local function caret(p, out)
  if p.major == nil then return end
  out[#out + 1] = { op = ">=", v = low(p) }
  local hi
  if p.major > 0 or p.minor == nil then
    hi = V(p.major + 1, 0, 0, { 0 })
  elseif p.minor > 0 or p.patch == nil then
    hi = V(0, p.minor + 1, 0, { 0 })
  else
    hi = V(0, 0, p.patch + 1, { 0 })
  end
  out[#out + 1] = { op = "<", v = hi }
end

local OPS = { [""] = true, ["="] = true, ["<"] = true, ["<="] = true,
              [">"] = true, [">="] = true, ["~"] = "tilde", ["~>"] = "tilde",
              ["^"] = "caret" }

local function comparator(tok, out)
  local op, rest = tok:match("^([<>=~^]*)(.*)$")
  if not OPS[op] then return nil, "unknown operator '" .. op .. "'" end
  if rest == "" then return nil, "operator '" .. op .. "' without a version" end
  local p, err = parse_partial(rest)
  if not p then return nil, "'" .. tok .. "': " .. err end
  if OPS[op] == "tilde" then tilde(p, out)
  elseif OPS[op] == "caret" then caret(p, out)
  else primitive(op, p, out) end
  return true
end

local function hyphen(a, b, out)
  local pa, err = parse_partial(a)
  if not pa then return nil, "'" .. a .. "': " .. err end
  local pb, err2 = parse_partial(b)
  if not pb then return nil, "'" .. b .. "': " .. err2 end
  if pa.major ~= nil then out[#out + 1] = { op = ">=", v = low(pa) } end
  if pb.major == nil then return true end
  if pb.patch ~= nil then
    out[#out + 1] = { op = "<=", v = full(pb) }
  else
    out[#out + 1] = { op = "<", v = above(pb) }
  end
  return true
end

local function parse_set(s)
  local set = {}
  s = strip(s)
  local a, b = s:match("^(%S+)%s+%-%s+(%S+)$")
  if a then
    local ok, err = hyphen(a, b, set)
    if not ok then return nil, err end
    return set
  end
  s = s:gsub("([<>=~^]+)%s+", "%1")       -- ">= 1.2.3" -> ">=1.2.3"
  for tok in s:gmatch("%S+") do
    local ok, err = comparator(tok, set)
    if not ok then return nil, err end
  end
  return set
end

-- Parsed ranges, by text; bounded so a hostile caller cannot grow it.
local range_cache, cache_count = {}, 0

local function parse_range(r)
  if type(r) ~= "string" then
    return nil, "invalid range: expected a string, got " .. type(r)
  end
  if range_cache[r] then return range_cache[r] end
  if #r > MAX_LENGTH then
    return nil, string.format("invalid range '%s...': longer than %d",
                              r:sub(1, 40), MAX_LENGTH)
  end
  local sets = {}
  for alt in (r .. "||"):gmatch("(.-)||") do
    local set, err = parse_set(alt)
    if not set then
      return nil, string.format("invalid range '%s': %s", r, err)
    end
    sets[#sets + 1] = set
  end
  if cache_count < 256 then
    range_cache[r], cache_count = sets, cache_count + 1
  end
  return sets
end

local function test_comparator(c, v)
  local d = compare_parsed(v, c.v)
  if c.op == "=" then return d == 0
  elseif c.op == "<" then return d < 0
  elseif c.op == "<=" then return d <= 0
  elseif c.op == ">" then return d > 0
  end
  return d >= 0
end

local function test_set(set, v)
  for _, c in ipairs(set) do
    if not test_comparator(c, v) then return false end
  end
  if #v.prerelease == 0 then return true end
  -- npm: a pre-release needs a comparator with a pre-release on the same
  -- major.minor.patch, so "^1.2.3" never opts into "1.9.0-beta".
  for _, c in ipairs(set) do
    local cv = c.v
    if #cv.prerelease > 0 and cv.major == v.major and cv.minor == v.minor
       and cv.patch == v.patch then
      return true
    end
  end
  return false
end

---Check an npm-style range without testing a version against it.
---@param r string
---@return true|nil ok
---@return string? err names the range and the bad part
function M.valid_range(r)
  local sets, err = parse_range(r)
  if not sets then return nil, err end
  return true
end

---Whether version `v` satisfies range `range` (npm semantics, including
---the pre-release rule above). Raises an error naming an invalid version
---or range.
---@param v string|semver.Version
---@param range string
---@return boolean
function M.satisfies(v, range)
  local sets, err = parse_range(range)
  if not sets then error("semver: " .. err, 2) end
  local ver = version_arg(v, 2)
  for _, set in ipairs(sets) do
    if test_set(set, ver) then return true end
  end
  return false
end

-- A desugared bound may overflow a part: ">999984.999999999999999" is
-- ">=999984.1000000000000000.0", "^0.0.999999999999999" ends below
-- "0.0.1000000000000000-0". No version has a part that large, so the
-- bound equals the one with the overflow carried into the part above;
-- nil when even the major overflows (past the largest version).
local TOP = math.tointeger(10 ^ MAX_DIGITS)
local function carried(v)
  local major, minor, patch = v.major, v.minor, v.patch
  if patch >= TOP then minor, patch = minor + 1, 0 end
  if minor >= TOP then major, minor, patch = major + 1, 0, 0 end
  if major >= TOP then return nil end
  return V(major, minor, patch, v.prerelease)
end

---The desugared form of a range, as npm prints it (`>=1.2.0 <2.0.0-0`,
---alternatives joined by `||`, `*` for any); mainly for messages and tests.
---@param range string
---@return string|nil
---@return string? err
function M.normalize_range(range)
  local sets, err = parse_range(range)
  if not sets then return nil, err end
  local out = {}
  for i, set in ipairs(sets) do
    local cs = {}
    for _, c in ipairs(set) do
      local v = carried(c.v)
      if v then
        cs[#cs + 1] = (c.op == "=" and "" or c.op) .. M.format(v)
      elseif c.op:sub(1, 1) == ">" then
        -- a lower bound above the largest version: nothing matches
        cs = { "<0.0.0-0" }
        break
      end
      -- an upper bound above the largest version holds for every version:
      -- left out, so the text parses back
    end
    out[i] = #cs == 0 and "*" or table.concat(cs, " ")
  end
  return table.concat(out, "||")
end

---Shorthands: `semver.lt(a, b)` is `compare(a, b) < 0`, and so on.
---@param a string|semver.Version
---@param b string|semver.Version
---@return boolean
function M.lt(a, b) return compare_parsed(version_arg(a, 2), version_arg(b, 2)) < 0 end
---@param a string|semver.Version
---@param b string|semver.Version
---@return boolean
function M.gt(a, b) return compare_parsed(version_arg(a, 2), version_arg(b, 2)) > 0 end
---@param a string|semver.Version
---@param b string|semver.Version
---@return boolean
function M.eq(a, b) return compare_parsed(version_arg(a, 2), version_arg(b, 2)) == 0 end

return M
