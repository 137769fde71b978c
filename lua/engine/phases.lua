--- uphook.engine.phases: the phases of one upgrade (docs/contract.md §3), the
--- same for the live cluster, `--offline` and `uphook test`.
---
--- load -> detect (only without state) -> range check -> consent (live
--- upgrades: lua/engine/consent.lua) -> check -> upgrade -> verify -> commit
--- state | rollback from the journal.
---
--- Its tier is lua/engine (docs/internals.md, "The layers").
local semver = require "uphook.core.semver"
local params = require "uphook.engine.params"
local prims = require "uphook.engine.prims"
local rollback = require "uphook.engine.rollback"
local plan = require "uphook.engine.plan"
local state = require "uphook.engine.state"
local R = require "uphook.core.run"
local tables = require "uphook.core.tables"
local hookerror = require "uphook.core.hookerror"
local lease = require "uphook.engine.lease"
local nodes = require "uphook.engine.nodes"
local consent = require "uphook.engine.consent"
local plantext = require "uphook.engine.plantext"
local hookdecl = require "uphook.engine.hookdecl"
local apiversion = require "uphook.engine.apiversion"
local permissions = require "uphook.engine.permissions"
local wait = require "uphook.engine.wait"

local M = {}

-- exit codes (docs/contract.md §1)
M.OK, M.FAILED, M.USAGE, M.NOHOOK, M.EARLY, M.LOCKED, M.STUCK =
  R.OK, R.FAILED, R.USAGE, R.NOHOOK, R.EARLY, R.LOCKED, R.STUCK

local stop = R.stop
M.stop = stop

--- Parameters ----------------------------------------------------------------

--- Problems of values, by name: choices here, pattern and check in the
--- child (they are hook code). `values` maps names to strings.
local function value_problems(run, values)
  local problems, checked, n = {}, {}, 0
  for k, v in pairs(values) do
    local spec = run.hook.params[k]
    local p = spec and params.choice_problem(spec, v)
    if p then problems[k] = p
    elseif spec and (spec.pattern or spec.has_check) then
      checked[k] = v
      n = n + 1
    end
  end
  if n == 0 then return problems end
  run.phase = "params"
  local ok, res = run.child:run("__params", { values = checked,
    ctx = { addon = run.addon, params = run.params or values } },
    run.handler)
  if not ok then
    stop(M.EARLY, "checking the parameters failed: " .. tostring(res))
  end
  for k, p in pairs(type(res[1]) == "table" and res[1] or {}) do
    problems[k] = tostring(p)
  end
  return problems
end

local function first_problem(problems)
  local first = tables.keys(problems)[1]
  return first, problems[first]
end

---The command line's values: a problem is a usage error (exit 2).
local function check_given(run, given)
  local k, p = first_problem(value_problems(run, given))
  if k then
    stop(M.USAGE, string.format("%s: --%s %s, got %q", run.addon, k, p,
      given[k]))
  end
end

---Saved (or detected) values still in use must hold too: a hand-edited
---ConfigMap, or one written by another hook, stops the run (exit 4).
local function check_base(run, base, given, saved)
  local used = {}
  for k, v in pairs(base or {}) do
    if given[k] == nil and run.hook.params[k] then used[k] = v end
  end
  local k, p = first_problem(value_problems(run, used))
  if k then
    -- a record of failed runs only has no params: they were detected
    local whose = saved and saved.params and ("saved (ConfigMap "
      .. "kube-system/" .. lease.of(run) .. ")") or "detected"
    stop(M.EARLY, string.format("the %s parameter %s=%q %s; give --%s "
      .. "VALUE, or --reset-params", whose, k, tostring(used[k]), p, k))
  end
end

--- Running phases in the child -------------------------------------------------

---The broker's handler of a run: each call from the hook through
---`dispatch` (prims.dispatch), every result handed back, an error as the
---value the hook sees (lua/core/hookerror.lua).
---@param run uphook.Run
---@param dispatch? fun(run: uphook.Run, name: string, args: table): ... (default prims.dispatch)
---@return fun(name: string, args: table): ...
function M.handler(run, dispatch)
  dispatch = dispatch or prims.dispatch
  return function(name, args)
    if run.c.broker.interrupted() then
      error("interrupted by a signal", 0)
    end
    local res = table.pack(pcall(dispatch, run, name, args))
    if res[1] then return table.unpack(res, 2, res.n) end
    error(hookerror.wire(res[2], name), 0)
  end
end

-- The phases a hook may leave out: one it does not declare does nothing
-- (host/child.c runs it as a no-op), so the child is not asked.
local OPTIONAL = { check = true, verify = true }

local function call_phase(run, name, ctx)
  run.phase = name
  if OPTIONAL[name] and run.hook and run.hook.has[name] == nil then
    return {}
  end
  local ok, value, kind, trace = run.child:run(name, ctx, run.handler)
  if ok then return value end
  if run.c.broker.interrupted() then
    kind, value = "interrupted", "interrupted by a signal during " .. name
  end
  run.trace = trace
  -- a timeout may stop the broker between a change and its bookkeeping:
  -- once anything is journaled, it ends as a failure after a change
  local after = run.changed or kind == "interrupted"
    or (kind == "timeout" and #run.records > 0)
  stop(after and M.FAILED or M.EARLY,
    kind == "error" and (name .. " failed: " .. tostring(value))
    or tostring(value))
end

local function ctx_of(run)
  local given = {}
  for k in pairs(run.given or {}) do given[k] = true end
  return { addon = run.addon, from = run.from, to = run.to,
    params = run.params, args = run.argv, positional = run.positional,
    given = given, reset_params = run.reset or false,
    plan = run.plan or false, dir = run.roots.addon }
end

--- The whole upgrade -------------------------------------------------------------

local function load_hook(run, o)
  local conf = { source = o.source, chunkname = o.chunkname,
    memory_limit = o.memory_limit, deadline = run.deadline,
    timeout = o.timeout }
  local child, err = (o.spawn or run.c.broker.spawn)(conf)
  if not child then stop(M.EARLY, err) end
  run.child = child
  run.phase = "load"
  local ok, desc, kind = child:loaded(run.handler)
  if not ok then
    stop(M.EARLY, kind == "error" and (o.hook_name .. ": " .. tostring(desc))
      or tostring(desc))
  end
  return hookdecl.validate(desc[1], o.hook_name, hookdecl.reserved(run.c),
    hookdecl.uphook_version(run.c))
end

local function find_from(run, saved)
  if saved and saved.version then return saved.version end
  if not run.hook.has.detect then
    stop(M.EARLY, string.format("cannot tell which version of %s is "
      .. "installed: no uphook state and the hook has no detect", run.addon))
  end
  local res = call_phase(run, "detect", ctx_of(run))
  local v, detected = res[1], res[2]
  if type(detected) == "table" then run.detected = detected end
  if v == nil or v == run.null then
    stop(M.EARLY, string.format("%s does not look installed: detect found "
      .. "no version (enable it first)", run.addon))
  end
  if type(v) ~= "string" or not semver.parse(v) then
    stop(M.EARLY, "detect returned " .. tostring(v)
      .. ", not a version")
  end
  return v
end


--- A hook's report while its plan only looks for drift: nothing shown.
local function muted(report)
  local function none() end
  return setmetatable({ log = none, info = none, progress = none,
    event = function() return true end, transfer_progress = false },
    { __index = report })
end

local function shown(v)
  return v == false and "absent" or string.format("%q", tostring(v))
end

--- Drift at the hook's version: the node args a run of the hook would
--- change now (docs/guide.md §6). `uphook plan` at the current version is
--- the hook's plan; `upgrade` runs it silently first and, when it finds
--- drift, reports it and goes on as an upgrade (journaled, planned,
--- confirmed like one). Returns the list of drifted settings.
local function drift(run, ctx)
  if not permissions.on_nodes(run.hook.perms) then return {} end
  local report, was_plan = run.report, run.plan
  run.plan = true
  if not was_plan then run.report = muted(report) end
  local ok, err = pcall(function()
    call_phase(run, "check", ctx)
    nodes.preflight(run)
    call_phase(run, "upgrade", ctx)
    if was_plan then call_phase(run, "verify", ctx) end
  end)
  run.report, run.plan = report, was_plan
  if not ok then error(err, 0) end
  local found = {}
  for _, e in ipairs(run.entries) do
    if e.type == "file" and e.path:match("^args:") then
      found[#found + 1] = string.format("%s on %s differs from what the hook "
        .. "sets", e.path, e.node and ("node " .. e.node) or "this node")
    elseif e.type == "node_args" and not e.this then
      -- only what was read is drift: an assumed value is this node's
      for _, ch in ipairs(e.changes) do
        if ch.how == "read" then
          found[#found + 1] = string.format("args:%s on node %s (%s): %s "
            .. "is %s (read), the hook sets %s", e.service, e.node,
            tostring(e.address), ch.flag, shown(ch.prior), shown(ch.new))
        end
      end
    end
  end
  if not was_plan then
    run.entries, run.planned, run.deleted, run.step_no = {}, {}, {}, nil
    run.changed_nodes, run.changed_here = {}, nil
  end
  return found
end
M.drift = drift

--- At the hook's own version (docs/state.md "At the current version"):
--- parameters that change what was saved are applied, as `helm upgrade
--- --set` does at the same chart version; node settings that drifted are
--- repaired (docs/guide.md §6); otherwise nothing to do.
---@return boolean again true: run the hook again (new params, or drift)
local function at_current(run, kept)
  local before = params.merge(run.hook.decl, kept, nil)
  if params.same(before, run.params) then
    local found = drift(run, ctx_of(run))
    if #found > 0 then
      for _, f in ipairs(found) do run.report:log("warn", "drift: " .. f) end
      run.repaired = true
      -- under plan, the drift pass was the plan: its entries are shown
      return not run.plan
    end
    run.report:info(string.format("%s is already at %s%s: nothing to do",
      run.addon, run.to, next(run.given) and " with these parameters" or ""))
    run.noop = true
    return false
  end
  local changed = {}
  for k, v in pairs(run.params) do
    if before[k] ~= v then
      changed[#changed + 1] = string.format("%s %s -> %s", k,
        tostring(before[k]), v)
    end
  end
  table.sort(changed)
  run.reconfigure = table.concat(changed, ", ")
  run.report:info(string.format("%s is at %s: applying the new parameters "
    .. "(%s)", run.addon, run.to, run.reconfigure))
  return true
end

--- Before the first change of an upgrade: what the hook is and may do
--- (description, permissions, the new ones marked), then the user's yes
--- when it needs one (lua/engine/consent.lua). A plan shows the same header.
local function announce(run, first, confirm)
  local h = plan.header(run)
  if not run.report:event({ event = "hook", addon = run.addon,
      from = run.from, to = run.to, description = h.description,
      permissions = h.permissions }) then
    for _, l in ipairs(plantext.header_lines(h, {}, "Upgrading")) do
      run.report:info(l)
    end
  end
  if confirm and permissions.on_nodes(run.hook.perms) then
    local ok, top = pcall(nodes.topology, run)
    local n = ok and #top.others or 0
    run.other_nodes = n > 0 and n or nil
  end
  consent.ask(run, first, confirm, stop, M.EARLY)
  run.granted = nil     -- the yes: every declared permission from here on
end

--- This repository's state ConfigMap, Lease and node folder (docs/
--- state.md "Which repository"), named before any hook code runs: the
--- hook's `state:` is its own state's folder.
local function own_names(run)
  run.state_name = run.state_name
    or lease.resolve(run.backend, run.c, run.addon, run.repository)
  local root = run.roots and run.roots.state
  local own = root and lease.state_root(root, run.addon, run.state_name)
  if own and own ~= root then
    local ok, err = run.c.sys.mkdirs(own)
    if not ok then stop(M.EARLY, err) end
    run.roots = tables.shallow(run.roots)
    run.roots.state = own
  end
end

--- This repository's state and Lease: the Lease taken (not by plan),
--- then the state read.
local function own_state(run)
  if not run.plan then lease.lock(run) end
  local saved = state.read(run)
  if saved and saved.repository and run.repository
      and saved.repository ~= run.repository then
    -- another repository's upgrade claimed the name since it was
    -- resolved, or an addon named <addon>-<suffix> holds it: it is not
    -- this one's to read, lock or write
    stop(M.LOCKED, string.format("the state ConfigMap %s/%s is the "
      .. "repository %s's, not this one's (%s): run the command again (when "
      .. "another upgrade took it meanwhile, the next run finds its own)",
      lease.NAMESPACE, lease.of(run), saved.repository, run.repository))
  end
  return saved
end

local function body(run, o)
  own_names(run)
  run.hook = load_hook(run, o)
  run.to, run.perms = run.hook.version, run.hook.perms
  for _, f in ipairs(run.hook.unknown) do
    run.report:log("warn", "the hook has an unknown field '" .. f .. "'")
  end
  local given, positional = params.parse(o.argv or {}, run.hook.decl,
    run.addon, function(msg) stop(M.USAGE, msg) end, function(extra)
      return apiversion.use(run, "positional", o.hook_name .. ":"
        .. apiversion.positional_line(o.source), string.format("%s; %s "
        .. "declares %s", table.concat(extra, " "), run.addon,
        #run.hook.decl.positional == 0 and "none"
          or #run.hook.decl.positional))
    end)
  run.positional, run.given = positional, given
  run.reset = o.reset_params == true
  check_given(run, given)
  local saved = own_state(run)
  local first
  run.new_permissions, first = consent.new_permissions(run.hook, saved,
    run.repository)
  run.granted = consent.granted(run.hook, saved, run.repository)
  if saved and saved.permissions and not consent.covers(saved,
      run.repository) then
    -- recorded for another repository, or without one: asked again
    run.other_repository = saved.repository or false
  end
  run.from = find_from(run, saved)
  -- without state, the parameters detect read back from the cluster
  -- stand in for saved ones: the user keeps the settings they enabled with
  local kept = saved and saved.params or run.detected
  local base = not run.reset and kept or nil
  check_base(run, base, given, saved)
  run.params = params.merge(run.hook.decl, base, given)
  -- build metadata tells builds of one version apart (`1.0.0+<fingerprint>`,
  -- docs/guide.md "Versions that never changed"); `from` ignores it
  if semver.at(run.from, run.to) then
    if not at_current(run, kept) then return M.OK end
  elseif not semver.satisfies(run.from, run.hook.from) then
    stop(M.EARLY, string.format("%s %s cannot be upgraded by this hook: it "
      .. "upgrades versions %s to %s", run.addon, run.from, run.hook.from,
      run.to))
  end
  if not run.plan then announce(run, first, o.confirm) end
  local ctx = ctx_of(run)
  call_phase(run, "check", ctx)
  -- node settings change on every node: each must be Ready and its
  -- cluster-agent answer before the first change (docs/guide.md §6)
  if permissions.on_nodes(run.hook.perms) then nodes.preflight(run) end
  call_phase(run, "upgrade", ctx)
  call_phase(run, "verify", ctx)
  run.phase = "commit"
  if not run.plan then state.commit(run, saved) end
  return M.OK
end

local function new_run(o)
  -- the engine's options are the run's (lua/core/run.lua builds it), but
  -- for what the command decides: plan or not, the crash point (test-only)
  local run = R.new(setmetatable({ plan = o.command == "plan",
    crash_after = tonumber(o.c.sys.getenv("UPHOOK_CRASH_AFTER") or "") },
    { __index = o }))
  -- until the user's yes nothing is granted but what the state records
  -- (set once it is read): docs/security.md, "Consent"
  run.granted = {}
  run.handler = M.handler(run)
  return run
end

--- Undo every journaled change, saying so when `loud`; true when all of it
--- was undone.
local function undo_all(run, loud)
  run.c.broker.rolling_back(true)
  run.rolling_back = true
  -- past --timeout: the rollback's requests each get their own timeout
  if run.backend.set_deadline then run.backend:set_deadline(nil) end
  if loud then
    run.report:info(string.format("Rolling back %d change%s...",
      #run.records, #run.records == 1 and "" or "s"))
    -- test-only: the rollback waits (at most 60 s) until the file this
    -- names exists, so a test can show that a signal during it ends it
    local gate = run.c.sys.getenv("UPHOOK_TEST_ROLLBACK_GATE")
    local t0 = run.c.sys.now()
    while gate and not run.c.sys.read(gate) and run.c.sys.now() - t0 < 60
        and not wait.abandoned(run) do
      run.c.sys.sleep(0.05)
    end
  end
  local ok, problems, restored = rollback.undo(run, rollback.full_records(run))
  run.c.broker.rolling_back(false)
  run.rolling_back = false
  run.restored = restored
  if not ok then
    run.problems = problems
    return false
  end
  rollback.finish(run)
  return true
end

local function fail(run, err)
  if not R.is_stop(err) then
    err = { code = run.changed and M.FAILED or M.EARLY,
            message = hookerror.message(err) }
  end
  run.error = err.message
  if err.code == M.FAILED or run.changed then
    return undo_all(run, true) and M.FAILED or M.STUCK
  end
  -- the first change failed after its record: undo what it may have left
  -- (undo is idempotent) and drop the journal; the exit code stays
  if #run.records > 0 and not undo_all(run, false) then return M.STUCK end
  return err.code
end

---What `run` takes: the run record's options (lua/core/run.lua), and:
---@class uphook.EngineOptions: uphook.RunOptions
---@field command "upgrade"|"plan"
---@field source string the hook file's text
---@field chunkname string "@<path>", for tracebacks
---@field hook_name string "<addon>/upgrade.lua", for messages
---@field memory_limit? integer bytes of Lua memory for the hook
---@field reset_params? boolean `--reset-params`
---@field spawn? fun(conf: table): table? makes the child (broker.spawn)
---@field release? fun(child: table) used instead of child:close()
---@field confirm? fun(lines: string[]): true|nil, string|nil the user's
---  yes (live upgrades only; nil: never asks)
---@field record_failures? boolean a failed run goes into the state's history

---Run one upgrade or plan. Returns the exit code and the run record.
---@param o uphook.EngineOptions
---@return integer code, uphook.Run run
function M.run(o)
  local run = new_run(o)
  local t0 = o.c.sys.now()
  local ok, code = pcall(body, run, o)
  if ok then
    rollback.finish(run)
  else
    code = fail(run, code)
    -- the state's history says so too (not under uphook test: its
    -- snapshots compare a rolled-back cluster with the one before; not a
    -- consent refused: that promises nothing was changed)
    if o.record_failures and not run.plan and run.from and not run.refused
        and (code == M.FAILED or code == M.EARLY or code == M.STUCK) then
      state.record_failure(run, code)
    end
  end
  if run.child then
    if o.release then o.release(run.child) else run.child:close() end
  end
  lease.unlock(run)
  run.elapsed = o.c.sys.now() - t0
  return code, run
end

M.plan = plan
return M
