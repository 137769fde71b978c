--- uphook.lint: load hooks without running them and check what they
--- declare (`uphook lint [path...]`).
local hookload = require "uphook.hookload"
local semver = require "uphook.semver"

local M = {}

local function hooks_under(c, path, out)
  local kind = c.sys.kind(path)
  if kind == "file" then out[#out + 1] = path; return out end
  if kind ~= "dir" then error("uphook lint: no such file or folder: "
    .. path, 0) end
  if c.sys.kind(path .. "/upgrade.lua") == "file" then
    out[#out + 1] = path .. "/upgrade.lua"
    return out
  end
  for _, name in ipairs(assert(c.sys.listdir(path))) do
    if c.sys.kind(path .. "/" .. name) == "dir" then
      hooks_under(c, path .. "/" .. name, out)
    end
  end
  return out
end

--- Findings beyond what loading already checks.
local function findings(info)
  local out = {}
  if not info.description then
    out[#out + 1] = "no description"
  end
  for _, f in ipairs(info.unknown) do
    out[#out + 1] = "unknown field '" .. f .. "' (a typo?)"
  end
  if semver.satisfies(info.version, info.from) then
    out[#out + 1] = string.format("'from' (%s) includes the target version "
      .. "%s", info.from, info.version)
  end
  if not info.has.detect then
    out[#out + 1] = "no detect: addons enabled before uphook cannot be "
      .. "upgraded"
  end
  for k, spec in pairs(info.params) do
    if spec.choices and spec.default then
      local ok = false
      for _, ch in ipairs(spec.choices) do ok = ok or ch == spec.default end
      if not ok then out[#out + 1] = "params." .. k
        .. ".default is not one of its choices" end
    end
  end
  table.sort(out)
  return out
end

function M.main(o, c, report)
  local paths = #o.operands > 0 and o.operands or { "hooks" }
  local files, bad = {}, 0
  for _, p in ipairs(paths) do hooks_under(c, p, files) end
  for _, f in ipairs(files) do
    local name = f:match("([^/]+)/upgrade%.lua$") or f
    local info, err = hookload.load(c, f, name .. "/upgrade.lua")
    if not info then
      bad = bad + 1
      io.stdout:write(string.format("%s: error: %s\n", f, err))
    else
      local fs = findings(info)
      bad = bad + #fs
      for _, w in ipairs(fs) do
        io.stdout:write(string.format("%s: warning: %s\n", f, w))
      end
      if #fs == 0 and o.verbosity >= 0 then
        io.stdout:write(string.format("%s: ok (%s, from %s)\n", f,
          info.version, info.from))
      end
    end
  end
  io.stdout:write(string.format("%d hook%s checked, %d problem%s\n", #files,
    #files == 1 and "" or "s", bad, bad == 1 and "" or "s"))
  return bad == 0 and 0 or 1
end

return M
