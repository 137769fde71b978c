--- uphook.engine.hookdecl: the table a hook file returns, checked
--- (docs/contract.md §2): its fields and their types, the version and the
--- range, the permissions, the parameters. Bounded, so that checking a
--- declaration costs the broker little whatever the hook sends
--- (docs/security.md).
local semver = require "uphook.core.semver"
local params = require "uphook.engine.params"
local permissions = require "uphook.engine.permissions"
local R = require "uphook.core.run"
local apiversion = require "uphook.engine.apiversion"

local M = {}

local stop = R.stop

local FIELDS = { version = "string", from = "string", permissions = "table",
  params = "table", positional = "table", description = "string",
  uphook = "string",
  detect = "function",
  check = "function", upgrade = "function", verify = "function" }
local REQUIRED = { "version", "from", "permissions", "upgrade" }

-- What a hook may declare: bounded, so that checking a declaration costs
-- the broker little whatever the hook sends (docs/security.md).
M.MAX_PERMS = 256
M.MAX_VERSION, M.MAX_RANGE, M.MAX_TEXT = 256, 1024, 4096

---uphook's long option names (host/cli.c), which no param may take.
---@return table<string, true>|nil
---@param c table|nil the C families (c.cli.options)
function M.reserved(c)
  if not (c and c.cli and c.cli.options) then return nil end
  local set = {}
  for _, n in ipairs(c.cli.options) do set[n] = true end
  return set
end

---This uphook's version (`uphook --version`), against which a hook's
---`uphook` range is checked.
---@param c table|nil the C families (c.cli.version)
---@return string|nil
function M.uphook_version(c)
  return c and c.cli and c.cli.version or nil
end

---Check the hook table's description; returns the hook info or raises.
---@param reserved table<string, true>|nil names params may not take
---@param desc table {types=, data=}: what host/child_hook.c's uh_child_describe sent
---@param name string the hook, in messages ("dns/upgrade.lua")
---@param uphook string|nil this uphook's version (M.uphook_version)
---@return table info version, from, perms, params, decl, has, unknown, api
function M.validate(desc, name, reserved, uphook)
  local types, data = desc.types or {}, desc.data or {}
  local function bad(msg) stop(R.EARLY, name .. ": " .. msg) end
  -- first: a hook for a newer uphook may declare what this one cannot read
  local api = apiversion.check(data.uphook, uphook, bad)
  for _, f in ipairs(REQUIRED) do
    if types[f] == nil then bad("field '" .. f .. "' is missing") end
  end
  for f, t in pairs(types) do
    if FIELDS[f] and FIELDS[f] ~= t then
      bad(string.format("field '%s' must be a %s, got %s", f, FIELDS[f], t))
    end
  end
  local function short(f, max)
    if #data[f] > max then
      bad(string.format("field '%s' is longer than %d bytes", f, max))
    end
  end
  short("version", M.MAX_VERSION)
  short("from", M.MAX_RANGE)
  if data.description then short("description", M.MAX_TEXT) end
  if #data.permissions > M.MAX_PERMS then
    bad("more than " .. M.MAX_PERMS .. " permissions")
  end
  if not semver.parse(data.version) then
    bad("field 'version' is not a semantic version: " .. data.version)
  end
  local okr, rerr = semver.valid_range(data.from)
  if data.from:match("^%s*$") then okr, rerr = false, "it is empty" end
  if not okr then bad("field 'from' is not a version range: "
    .. tostring(rerr)) end
  local perms = permissions.parse(data.permissions, bad)
  local decl = params.declare(data, bad, reserved)
  local unknown = {}
  for f in pairs(types) do if not FIELDS[f] then unknown[#unknown + 1] = f end end
  table.sort(unknown)
  return { version = data.version, from = data.from, perms = perms,
    permissions = data.permissions, params = decl.params, decl = decl,
    description = data.description, has = types, unknown = unknown,
    api = api, uphook = data.uphook }
end

return M
