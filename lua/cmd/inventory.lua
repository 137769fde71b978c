--- uphook.cmd.inventory: every addon found and what uphook knows of it
--- (repository, hook, enabled, installed version, upgradable): the rows
--- that `uphook list` prints and `uphook doctor` reads. A helper of the
--- commands, not a command (docs/internals.md, "The layers").
local Backend = require "uphook.backend.connect"
local enabled = require "uphook.engine.enabled"
local hookload = require "uphook.engine.hookload"
local lease = require "uphook.engine.lease"
local prims = require "uphook.engine.prims"
local Report = require "uphook.cmd.report"
local R = require "uphook.core.run"
local semver = require "uphook.core.semver"
local state = require "uphook.engine.state"

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

--- No state: ask the hook's detect, read-only, as an upgrade would, with
--- `state:` the folder of the state named state_name (lua/engine/lease.lua).
local function detect(o, c, backend, r, a, state_name)
  local dir = c.fs.pin(a.dir) or a.dir
  local files = o.offline and o.state_dir and (o.state_dir .. "/offline")
                or o.snap_data
  local run = R.new { phase = "detect", plan = true, c = c,
    backend = backend, addon = a.name, hostname = c.sys.hostname(),
    roots = { addon = dir, args = files .. "/args", bin = files .. "/bin",
              certs = files .. "/certs",
              plugins = o.offline and o.state_dir
                and (o.state_dir .. "/offline/plugins")
                or (o.snap_common .. "/plugins"),
              state = lease.state_root((o.state_dir or (o.snap_common
                .. "/var/lib/uphook")) .. "/addons/" .. a.name, a.name, state_name) },
    perms = r.perms, report = Report.new { capture = true },
    timeout = math.max(0, o.limits.deadline - c.sys.now()) }
  -- list and doctor never ask: detect reads a Secret's data and sends a
  -- request only under what the state records as granted (docs/security.md,
  -- "Consent"); it runs when there is no state, so under nothing
  run.granted = {}
  local ok, res = r.child:run("detect", { addon = a.name, plan = true,
    args = {}, positional = {}, dir = dir }, function(name, args)
      local okd, v1, v2 = pcall(prims.dispatch, run, name, args)
      if okd then return v1, v2 end
      error(type(v1) == "table" and v1.message or v1, 0)
    end)
  if ok and type(res[1]) == "string" then return res[1] end
end

local function row(o, c, backend, r, a, report)
  local why
  r.enabled, why = enabled.check(backend, a.check_status,
    enabled.this_node(o, c))
  -- `list` says why (its legend): a file --offline has no copy of
  r.enabled_file = why == "file" and a.check_status or nil
  local name
  local ok, st = pcall(function()
    name = lease.of_addon(backend, c, a)
    return state.read(R.new { backend = backend, addon = a.name, c = c,
      report = report, state_name = name })
  end)
  r.installed = ok and st and st.version or nil
  r.detected = false
  if not r.installed and r.has_detect and r.child then
    r.installed = detect(o, c, backend, r, a, name)
    r.detected = r.installed ~= nil
  end
  if r.child then r.child:close(); r.child = nil end
  r.has_detect, r.perms = nil, nil
  if r.enabled == false then
    r.upgradable = false      -- upgrade refuses an addon not enabled (exit 4)
  elseif r.installed and r.target then
    -- another build of the target's version is upgradable too (upgrade's
    -- rule, lua/engine/phases.lua: semver.at)
    local okc, cmp = pcall(semver.compare, r.installed, r.target)
    r.upgradable = okc and cmp <= 0
      and not semver.at(r.installed, r.target)
      and semver.satisfies(r.installed, r.from_range) or false
  else
    r.upgradable = false
  end
  return r
end

--- The journal an interrupted upgrade of `a` left on this node, if any.
local function pending_journal(o, c, a)
  local dir = o.state_dir or (o.snap_common .. "/var/lib/uphook")
  local path = dir .. "/journal/" .. a.name .. ".journal"
  return c.sys.kind(path) and path or nil
end

---Is the upgrade whose journal is at `journal` running now? It is when
---an uphook process holds this node's addon lock (a run holds it from
---before its journal is made until after it is gone; docs/state.md "Who
---is running"): then "in progress (PID n, node N, since T)", else nil
---(the journal is an interrupted run's).
---@param o table options (offline, state_dir, snap_data)
---@param c table the C families
---@param journal string the journal's path
---@return string|nil
function M.in_progress(o, c, journal)
  local dir = o.offline and o.state_dir and (o.state_dir .. "/lock")
    or (o.snap_data and (o.snap_data .. "/var/lock"))
  if not dir then return nil end
  local pid, cmd = c.sys.lock_holder(dir .. "/.microk8s-addon-lock")
  -- an uphook process: its argv[0] is uphook (not `microk8s enable`)
  local exe = tostring(cmd):match("^(%S+)") or ""
  if not pid or not (exe == "uphook" or exe:find("/uphook$")) then
    return nil
  end
  local since = "?"
  local recs = c.journal.replay(journal)
  local t = type(recs) == "table" and recs[1] and recs[1].time
  if type(t) == "number" and t > 0 then
    since = require("uphook.core.timefmt").format(t)
  end
  return string.format("in progress (PID %d, node %s, since %s)", pid,
    c.sys.hostname(), since)
end

--- A live cluster that does not answer is found once, with one request
--- (discovery, which every read needs first): the message, or nil.
local function unreachable(backend)
  if not backend.discover then return nil end
  local ok, err = pcall(backend.discover, backend)
  -- a connection error is a string; an HTTP error (401, 500) a table:
  -- the server answered, and each row says what it could read
  if not ok and type(err) == "string" then return err end
end

---The rows of `uphook list`, the backend they were read from (nil: none
---could be made), and why the cluster could not be read (unreachable, or
---past the time limit).
---@param o table options of host/cli.c
---@param c table the C families
---@param report table lua/cmd/report.lua
---@return table[] rows, Backend|nil backend, string|nil problem
function M.rows(o, c, report)
  local rows = {}
  o.limits = o.limits or hookload.limits(o, c)   -- doctor sets it first
  for i, a in ipairs(o.addons or {}) do
    rows[i] = declarations(c, a, o.limits)
  end
  -- the C families take absolute folders (as cli.lua's layout makes them)
  if o.state_dir then o.state_dir = c.sys.realpath(o.state_dir) or o.state_dir end
  local L = o.state_dir and { state_dir = o.state_dir } or nil
  -- no cluster (no kubeconfig, a bad one): the rows say what is known
  -- here, the problem is said once
  local okc, backend = pcall(Backend.connect, o, c, report, L)
  local problem
  if not okc then
    problem, backend = require("uphook.core.hookerror").message(backend), nil
  else
    -- one time limit for the whole command (--timeout, default 15 s)
    if backend.set_deadline then backend:set_deadline(o.limits.deadline) end
    problem = unreachable(backend)
  end
  if problem then
    problem = problem .. ": whether addons are enabled and their installed "
      .. "versions are unknown"
  end
  for i, a in ipairs(o.addons or {}) do
    local r = rows[i]
    r.pending_journal = pending_journal(o, c, a)
    r.in_progress = r.pending_journal and M.in_progress(o, c, r.pending_journal)
    if not problem and c.sys.now() >= o.limits.deadline then
      M.timed_out = true
      problem = string.format("list ran out of its time limit (%g s, "
        .. "--timeout): the rows from %s/%s on are not read", o.limits.timeout,
        a.repo, a.name)
    end
    if problem then
      if r.child then r.child:close(); r.child = nil end
      r.has_detect, r.perms, r.upgradable = nil, nil, false
      r.unread = true         -- what list shows as ?
    else
      row(o, c, backend, r, a, report)
    end
    -- an upgrade refuses until recover has run (exit 6)
    if r.pending_journal then r.upgradable = false end
  end
  return rows, backend, problem
end

---A row as list's JSON event (docs/output.md): `installed` from the
---state, `detected` from the hook's detect, `source` says which one
---`upgradable` was decided from.
---@param r table a row of M.rows
---@return table
function M.event(r)
  return { event = "addon", repo = r.repo, name = r.name, hook = r.hook,
    enabled = r.enabled, target = r.target, from_range = r.from_range,
    addons_yaml_version = r.addons_yaml_version,
    installed = not r.detected and r.installed or nil,
    detected = r.detected and r.installed or nil,
    source = r.installed and (r.detected and "detect" or "state") or nil,
    upgradable = r.upgradable or false,
    pending_journal = r.pending_journal ~= nil, journal = r.pending_journal,
    in_progress = r.in_progress,
    error = r.error }
end

return M
