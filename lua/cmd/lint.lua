--- uphook.cmd.lint: load hooks without running them and check what they
--- declare (`uphook lint [path...]`).
local hookload = require "uphook.engine.hookload"
local permissions = require "uphook.engine.permissions"
local semver = require "uphook.core.semver"
local apiversion = require "uphook.engine.apiversion"

local M = {}

local function hooks_under(c, path, out)
  local kind = c.sys.kind(path)
  if kind == "file" then out[#out + 1] = path; return out end
  if kind == "other" then
    return nil, "uphook lint: " .. path .. ": not a regular file (a FIFO, "
      .. "device or socket is refused)"
  end
  if kind ~= "dir" then
    return nil, "uphook lint: no such file or folder: " .. path
  end
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
  -- a version with build metadata upgrades the other builds of itself
  -- (docs/guide.md "Versions that never changed"), which `from` includes
  if semver.satisfies(info.version, info.from)
     and not (semver.parse(info.version) or {}).build then
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
  for _, f in ipairs(info.decl.unknown) do
    out[#out + 1] = "unknown parameter field '" .. f .. "' (a typo?)"
  end
  table.sort(out)
  return out
end

--- Each default against its param's pattern and check, in the hook's
--- confined child (both are hook code).
local function default_findings(info, child, out)
  local defaults = {}
  for k, spec in pairs(info.params) do
    if spec.default and (spec.pattern or spec.has_check) then
      defaults[k] = spec.default
    end
  end
  if not next(defaults) then return end
  local ok, res = child:run("__params", { values = defaults,
    ctx = { addon = info.name, params = defaults } }, function(prim)
      error(prim .. " cannot be called while parameters are checked", 0)
    end)
  local problems = ok and res[1] or { ["?"] = tostring(res) }
  local names = {}
  for k in pairs(problems) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    out[#out + 1] = string.format("params.%s.default %q %s", k,
      tostring(defaults[k]), tostring(problems[k]))
  end
end

--- A hook of an older API: the deprecated uses its source and the files
--- it loads show, each with its line and the new form (docs/guide.md §12).
local function deprecated_findings(c, info, name, out)
  local function read(rel)
    local ok, text = pcall(c.fs.read, info.dir, rel)
    return ok and type(text) == "string" and text or nil
  end
  for _, w in ipairs(apiversion.lint(info, name, info.source or "", read)) do
    out[#out + 1] = w
  end
end

local esc = require("uphook.core.escape").text   -- hook text, as in plans
--- What a reader should know, not a problem: bin: and plugins: files
--- change on this node only (args: reach every node through
--- config.set_args), and so does a config file under args:, which is no
--- service's flags (docs/guide.md §6 "Several nodes").
local function notes(info)
  local out = {}
  for _, p in ipairs(info.permissions or {}) do
    if permissions.args_config_file(p) then
      out[#out + 1] = string.format("%s is a config file, not a service's "
        .. "flags: it cannot change on every node (config.set_args changes "
        .. "flags, and MicroK8s's cluster agent cannot write a file); on a "
        .. "cluster of several nodes write it with {nodes = \"this\"} and "
        .. "run the upgrade on every node", esc(p))
    elseif permissions.scope(p) == "this node only" then
      out[#out + 1] = string.format("%s changes on this node only: on "
        .. "a cluster of several nodes the others keep theirs", esc(p))
    end
  end
  return out
end

local function describe(info)
  return (info.description and ("    " .. esc(info.description) .. "\n")
    or "") .. "    permissions: " .. (#info.permissions > 0
    and esc(table.concat(info.permissions, ", ")) or "none") .. "\n"
end

---@param o table options of host/cli.c
---@param c table the C families
---@param report table lua/cmd/report.lua
---@return integer exit code
function M.main(o, c, report)
  local paths = #o.operands > 0 and o.operands or { "." }
  local files, bad = {}, 0
  for _, p in ipairs(paths) do
    local ok, err = hooks_under(c, p, files)
    if not ok then
      report:error(err)
      return require("uphook.core.run").USAGE
    end
  end
  local limits = hookload.limits(o, c)
  for _, f in ipairs(files) do
    local name = f:match("([^/]+)/upgrade%.lua$") or f
    local info, err, child = hookload.load(c, f, name .. "/upgrade.lua", true,
      limits)
    if not info then
      bad = bad + 1
      io.stdout:write(string.format("%s: error: %s\n", f, esc(err)))
    else
      info.name = name
      local fs = findings(info)
      default_findings(info, child, fs)
      deprecated_findings(c, info, name .. "/upgrade.lua", fs)
      child:close()
      bad = bad + #fs
      for _, w in ipairs(fs) do
        io.stdout:write(string.format("%s: warning: %s\n", f, esc(w)))
      end
      for _, n in ipairs(o.verbosity >= 0 and notes(info) or {}) do
        io.stdout:write(string.format("%s: note: %s\n", f, n))
      end
      if #fs == 0 and o.verbosity >= 0 then
        io.stdout:write(string.format("%s: ok (%s, from %s)\n", f,
          esc(info.version), esc(info.from)))
      end
      if o.verbosity >= 0 then io.stdout:write(describe(info)) end
    end
  end
  io.stdout:write(string.format("%d hook%s checked, %d problem%s\n", #files,
    #files == 1 and "" or "s", bad, bad == 1 and "" or "s"))
  return bad == 0 and 0 or 1
end

return M
