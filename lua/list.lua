--- uphook.list: every addon found, with its repository, whether it is
--- enabled, the installed version, the hook's target and whether an
--- upgrade is possible (`uphook list [--output json]`).
local Backend = require "uphook.backend"
local enabled = require "uphook.enabled"
local hookload = require "uphook.hookload"
local prims = require "uphook.prims"
local Report = require "uphook.report"
local R = require "uphook.run"
local semver = require "uphook.semver"
local state = require "uphook.state"

local M = {}

--- Hook declarations, read in confined children BEFORE the backend
--- connects: a forked child must never inherit libcurl's copies of the
--- cluster credentials.
local function declarations(c, a, limits)
  local r = { repo = a.repo, name = a.name, hook = a.hook ~= nil }
  local listed = a.version ~= "" and a.version or nil
  if a.hook then
    local info, err, child = hookload.load(c, a.hook, a.name .. "/upgrade.lua",
      true, limits)
    if info then
      r.target, r.from_range, r.has_detect = info.version, info.from,
        info.has.detect
      -- addons.yaml's version lags what the hook installs (docs/microk8s.md)
      if listed ~= info.version then r.addons_yaml_version = listed end
      r.perms = info.perms    -- detect reads Secrets only as declared
      if info.has.detect then r.child = child else child:close() end
    else
      r.error = err
    end
  end
  return r
end

--- No state: ask the hook's detect, read-only, as an upgrade would.
local function detect(o, c, backend, r, a, report)
  local dir = c.fs.pin(a.dir) or a.dir
  local files = o.offline and o.state_dir and (o.state_dir .. "/offline")
                or o.snap_data
  local run = R.new { phase = "detect", plan = true, c = c,
    backend = backend, addon = a.name, hostname = c.sys.hostname(),
    roots = { addon = dir, args = files .. "/args", bin = files .. "/bin",
              state = (o.state_dir or (o.snap_common .. "/var/lib/uphook"))
                      .. "/addons/" .. a.name },
    perms = r.perms, report = Report.new { capture = true },
    timeout = math.max(0, o.limits.deadline - c.sys.now()) }
  local ok, res = r.child:run("detect", { addon = a.name, plan = true,
    args = {}, positional = {}, dir = dir }, function(name, args)
      local okd, v1, v2 = pcall(prims.dispatch, run, name, args)
      if okd then return v1, v2 end
      error(type(v1) == "table" and v1.message or v1, 0)
    end)
  if ok and type(res[1]) == "string" then return res[1] end
end

local function row(o, c, backend, r, a, report)
  r.enabled = enabled.check(backend, a.check_status, enabled.this_node(o, c))
  local ok, st = pcall(state.read, R.new { backend = backend,
    addon = a.name, c = c, report = report })
  r.installed = ok and st and st.version or nil
  r.detected = false
  if not r.installed and r.has_detect and r.child then
    r.installed = detect(o, c, backend, r, a, report)
    r.detected = r.installed ~= nil
  end
  if r.child then r.child:close(); r.child = nil end
  r.has_detect, r.perms = nil, nil
  if r.installed and r.target then
    local okc, cmp = pcall(semver.compare, r.installed, r.target)
    r.upgradable = okc and cmp < 0
      and semver.satisfies(r.installed, r.from_range) or false
  else
    r.upgradable = false
  end
  return r
end

---The rows of `uphook list`, and the backend they were read from.
---@return table[] rows, Backend backend
---@param o table options of host/cli.c
---@param c table the C families
---@param report table lua/report.lua
function M.rows(o, c, report)
  local rows = {}
  o.limits = o.limits or hookload.limits(o, c)   -- doctor sets it first
  for i, a in ipairs(o.addons or {}) do
    rows[i] = declarations(c, a, o.limits)
  end
  local L = o.state_dir and { state_dir = o.state_dir } or nil
  local backend = Backend.connect(o, c, report, L)
  for i, a in ipairs(o.addons or {}) do
    row(o, c, backend, rows[i], a, report)
  end
  return rows, backend
end

---@param o table options of host/cli.c
---@param c table the C families
---@param report table lua/report.lua
---@return integer exit code
function M.main(o, c, report)
  local rows = M.rows(o, c, report)
  if o.output == "json" then
    for _, r in ipairs(rows) do io.stdout:write(c.json.encode(r), "\n") end
    return 0
  end
  local esc = require("uphook.escape").text   -- hook text, as in plans
  local fmt = "%-14s %-22s %-8s %-10s %-10s %s\n"
  io.stdout:write(string.format(fmt, "REPO", "ADDON", "ENABLED",
    "INSTALLED", "HOOK", "UPGRADE"))
  for _, r in ipairs(rows) do
    io.stdout:write(string.format(fmt, esc(r.repo), esc(r.name),
      r.enabled == nil and "?" or (r.enabled and "yes" or "no"),
      r.installed and (esc(r.installed) .. (r.detected and "*" or "")) or "-",
      esc(r.target or (r.hook and "error" or "none")),
      r.upgradable and ("yes -> " .. esc(r.target)) or "no"))
    if r.error then io.stderr:write("  ", esc(r.error), "\n") end
  end
  io.stdout:write("(* installed version found by the hook's detect: no uphook "
    .. "state yet)\n")
  return 0
end

return M
