--- uphook.cmd.cli: what each command does, given the options host/cli.c
--- parsed. Exit codes are docs/contract.md §1's.
local escape = require "uphook.core.escape"
local enabled = require "uphook.engine.enabled"
local engine = require "uphook.engine.phases"
local Backend = require "uphook.backend.connect"
local lease = require "uphook.engine.lease"
local plan = require "uphook.engine.plan"
local plantext = require "uphook.engine.plantext"
local rollback = require "uphook.engine.rollback"
local Report = require "uphook.cmd.report"
local R = require "uphook.core.run"
local tables = require "uphook.core.tables"
local selfcmd = require "uphook.cmd.selfcmd"
local state = require "uphook.engine.state"
local waits = require "uphook.engine.wait"
local inventory = require "uphook.cmd.inventory"

local M = {}

local function writer(f)
  return function(s) f:write(s); f:flush() end
end

local function new_report(o, c)
  return Report.new { format = o.output, tty = o.tty, err_tty = o.err_tty,
    term_dumb = o.term_dumb, no_color = o.no_color, plan = o.command == "plan",
    verbosity = o.verbosity, write = writer(io.stdout),
    ewrite = writer(io.stderr), json = c.json, clock = c.sys.wall,
    event_log = c.testpoint.event_log }
end

local function must(v, err)
  if v == nil then error(err, 0) end
  return v
end

--- Where this run keeps its files.
local function layout(o, c, addon)
  -- resolved once (symlinks followed this one time) and held as a
  -- descriptor: every addon: read of the run resolves beneath it
  -- (docs/security.md)
  addon.dir = must(c.fs.pin(addon.dir))
  local dir = o.state_dir
  if not dir and o.offline then
    -- a throwaway world: M.main removes it when the command ends
    dir = must(c.sys.mkdtemp())
    o.temporary_dir = dir
  end
  dir = dir or (o.snap_common .. "/var/lib/uphook")
  must(c.sys.mkdirs(dir))
  dir = must(c.sys.realpath(dir))
  if dir:sub(1, 1) ~= "/" then   -- the C families take absolute folders
    must(c.sys.mkdirs(dir))
    dir = must(c.sys.realpath(dir))
  end
  local files = o.offline and (dir .. "/offline") or o.snap_data
  local L = { state_dir = dir, journal_dir = dir .. "/journal",
    cache_dir = dir .. "/cache",
    journal_path = dir .. "/journal/" .. addon.name .. ".journal",
    roots = { args = files .. "/args", bin = files .. "/bin",
      plugins = o.offline and (files .. "/plugins")
        or (o.snap_common .. "/plugins"), certs = files .. "/certs",
      addon = addon.dir, state = dir .. "/addons/" .. addon.name } }
  -- $SNAP_COMMON/plugins, where `microk8s <name>` looks for a plugin, is
  -- made when missing, as the state folder is (docs/reference.md "config")
  for _, d in ipairs { L.journal_dir, L.cache_dir, L.roots.state,
                       L.roots.args, L.roots.bin, L.roots.plugins } do
    if not (o.offline == nil and (d == L.roots.args or d == L.roots.bin))
    then must(c.sys.mkdirs(d)) end
  end
  return L
end

--- Who holds the lock, as the user knows it: `microk8s enable dns` for
--- MicroK8s's enable/disable wrappers, else its command line.
local function lock_holder(c, path)
  local pid, cmd = c.sys.lock_holder(path)
  if not pid then return "another process (an upgrade, or microk8s "
    .. "enable/disable)" end
  local verb, rest = cmd:match("scripts/wrappers/(%a+)%.py%s*(.-)%s*$")
  if verb == "enable" or verb == "disable" then
    cmd = "microk8s " .. verb .. (rest ~= "" and (" " .. rest) or "")
  end
  if #cmd > 80 then cmd = cmd:sub(1, 77) .. "..." end
  return string.format("PID %d, `%s`", pid, require("uphook.core.escape").text(cmd))
end

--- The lock `microk8s enable/disable` take; an offline world keeps its
--- own under its state dir. After a second of waiting, uphook says who
--- holds it; when the wait is over, the message names the holder.
local function node_lock(o, c, cmd, L, wait, report)
  if cmd == "plan" or c.sys.getenv("MICROK8S_ADDONS_SKIP_LOCK") == "1" then
    return true
  end
  local dir = o.offline and (L.state_dir .. "/lock")
              or (o.snap_data .. "/var/lock")
  c.sys.mkdirs(dir)
  local path = dir .. "/.microk8s-addon-lock"
  wait = wait or o.lock_wait
  local lock, err, why = c.sys.lock(path, math.min(wait, 1))
  if lock or why ~= "locked" then return lock, err end
  if wait > 1 then
    if report then
      report:info(string.format("waiting for the addon lock (held by %s) "
        .. "...", lock_holder(c, path)))
    end
    lock, err, why = c.sys.lock(path, wait - 1)
    if lock or why ~= "locked" then return lock, err end
  end
  return nil, string.format("the addon lock %s is held by %s; waited %g s "
    .. "(--lock-wait)", path, lock_holder(c, path), wait)
end

--- An addon that is not enabled is not upgraded: `microk8s enable`
--- installs its current version.
local function refuse_disabled(o, c, report, backend)
  local a = o.addon
  if enabled.check(backend, a.check_status, enabled.this_node(o, c)) == false then
    report:error(string.format("Addon %s is not enabled: 'microk8s enable "
      .. "%s/%s' installs its current version", a.name, a.repo, a.name))
    return engine.EARLY
  end
end

-- The outcome of a plan that ran: the plan, as text or a plan event.
local function print_plan(o, c, report, code, run)
  local h = plan.header(run)
  local arr = c.json.array    -- an empty list is [] in JSON, not {}
  if not report:event({ event = "plan", addon = run.addon, from = run.from,
      to = run.to, description = h.description,
      permissions = arr(h.permissions), entries = arr(run.entries),
      impact = arr(plantext.impacts(run.entries)),
      summary = plan.summary(run.entries) }) then
    -- at the installed version a plan is "Nothing to do", unless the
    -- hook asks for new permissions or waited for the yes: then its
    -- header and what waits for the yes are shown (docs/security.md)
    if run.noop and not (next(run.new_permissions or {}) or run.withheld)
    then
      io.stdout:write(string.format("Plan for %s %s -> %s\nNothing to "
        .. "do.\n", run.addon, tostring(run.from), tostring(run.to)))
    else
      io.stdout:write(plantext.render(run.entries, { header = h,
        full = o.full, null = run.null }))
    end
  end
  report:event({ event = "result", code = code, addon = run.addon,
    from = run.from, to = run.to, noop = run.noop or nil })
end

-- The outcome of an upgrade that ended well: what changed, and how long
-- it took.
local function print_upgraded(o, c, report, code, run, secs)
  if run.noop then    -- "nothing to do" was said; JSON gets its result
    report:event({ event = "result", code = code, addon = run.addon,
      from = run.from, to = run.to, noop = true, seconds = secs })
  else
    if not report:event({ event = "result", code = code, addon = run.addon,
        from = run.from, to = run.to,
        changes = c.json.array(plan.changes(run.entries)),
        summary = plan.summary(run.entries), seconds = secs }) then
      if o.verbosity >= 0 then
        io.stdout:write(plantext.render(run.entries, { changed_only = true,
          null = run.null }))
      end
      report:outcome(string.format("Upgraded %s from %s to %s in %.2f s. "
        .. "State: ConfigMap %s/%s.", run.addon, run.from, run.to, secs,
        lease.NAMESPACE, lease.of(run)))
    end
  end
end

local function print_outcome(o, c, report, code, run)
  report:clear_status()     -- the status line goes before the outcome
  if o.command == "plan" and code == engine.OK then
    return print_plan(o, c, report, code, run)
  end
  local secs = run.elapsed or 0
  if code == engine.OK then
    return print_upgraded(o, c, report, code, run, secs)
  end
  report:error(run.error or "failed")
  if run.trace and o.verbosity > 0 then
    io.stderr:write(escape.lines(run.trace), "\n")   -- hook text in frames
  end
  if code == engine.FAILED then
    report:outcome(string.format("Rolled back: %d change%s undone; %s is "
      .. "unchanged.", #(run.restored or {}), #(run.restored or {}) == 1
      and "" or "s", run.addon))
  elseif code == engine.STUCK then
    for _, p in ipairs(run.problems or {}) do report:error("cannot undo " .. p) end
    report:error(string.format("rollback incomplete: the journal is kept "
      .. "at %s; run: %s", run.journal_path,
      selfcmd.line(o, c, "recover", run.addon)))
  end
  report:event({ event = "result", code = code, addon = run.addon,
    error = run.error, seconds = secs, journal = code == engine.STUCK
    and run.journal_path or nil })
end

--- `uphook upgrade <addon> --help`: the hook's parameters, read from its
--- declarations in a confined child; nothing else runs.
local function addon_help(o, c, report)
  local info, err = require("uphook.engine.hookload").load(c, o.addon.hook,
    o.addon.name .. "/upgrade.lua")
  if not info then report:error(err); return engine.EARLY end
  io.stdout:write(escape.lines(require("uphook.engine.params").help(info,
    o.addon.name, o.command)))
  return engine.OK
end

--- A worker node (var/lock/clustered.lock) refuses, as `microk8s enable`
--- does there (canonical/microk8s@d099c907:scripts/wrappers/common/utils.py,
--- is_cluster_locked).
local function worker_node(o, c)
  if o.command ~= "upgrade" or o.offline then return nil end
  local lock = o.snap_data .. "/var/lock/clustered.lock"
  return c.sys.kind(lock) and lock
end

local function upgrade(o, c, report)
  local addon = o.addon
  if o.help then return addon_help(o, c, report) end
  local L = layout(o, c, addon)
  -- the hook through the held folder too (it was read by path before)
  local hook_rel = addon.hook:match("([^/]+)$")
  local source = must(c.fs.read(addon.dir, hook_rel), addon.hook
    .. ": no such file")
  -- the lock first: a journal is only "left behind" when no upgrade of
  -- ours is running
  local lock, lerr = node_lock(o, c, o.command, L, nil, report)
  if not lock then
    local running = c.sys.kind(L.journal_path)
      and inventory.in_progress(o, c, L.journal_path)
    report:error(running and string.format("an upgrade of %s is %s: wait "
      .. "for it (%s)", addon.name, running, lerr) or lerr)
    return engine.LOCKED
  end
  if c.sys.kind(L.journal_path) then
    report:error(string.format("an interrupted upgrade of %s left a journal "
      .. "(%s): first run: %s", addon.name, L.journal_path,
      selfcmd.line(o, c, "recover", addon.name)))
    return engine.STUCK
  end
  -- the hook child is forked before any request hands a credential to
  -- libcurl (docs/security.md "Credentials"), and the enabled check is
  -- such a request
  local child, serr = c.broker.spawn { source = source,
    chunkname = "@" .. addon.hook, memory_limit = o.memory_limit << 20,
    deadline = c.sys.now() + (o.timeout or R.DEFAULT_TIMEOUT), timeout = o.timeout }
  if not child then report:error(serr); return engine.EARLY end
  local backend, net, host = Backend.connect(o, c, report, L)
  local refused = refuse_disabled(o, c, report, backend)
  if refused then child:close(); return refused end
  local code, run = engine.run { command = o.command, addon = addon.name,
    spawn = function() return child end,
    source = source, chunkname = "@" .. addon.hook,
    hook_name = addon.name .. "/upgrade.lua", argv = o.hook_args,
    reset_params = o.reset_params,
    backend = backend, net = net, roots = L.roots, c = c,
    journal_path = L.journal_path, cache_dir = L.cache_dir,
    ca_file = o.ca_file, plan_fetch = o.plan_fetch, helm_path = o.helm,
    hostname = host, report = report, repo = addon.repo,
    repository = lease.repository(c, addon),
    -- where nodes.resolv_conf reads this node's resolv.conf files: the
    -- offline world's, or (test-only) UPHOOK_TEST_HOST_ROOT's
    host_root = o.offline and (L.state_dir .. "/offline/host")
      or c.sys.getenv("UPHOOK_TEST_HOST_ROOT"),
    timeout = o.timeout, memory_limit = o.memory_limit << 20,
    state_quota = o.state_quota,
    bases = { snap_data = o.snap_data, snap_common = o.snap_common },
    confirm = require("uphook.cmd.confirm").new(o, report, nil,
      c.broker.interrupted),
    record_failures = true,
    clock_wall = c.sys.wall, pid = c.sys.pid() }
  print_outcome(o, c, report, code, run)
  if type(lock) == "userdata" then lock:release() end
  return code
end

--- An addon whose upgrade is an executable `upgrade` script: it runs in
--- uphook's place, as `microk8s enable` runs an enable script: under the
--- node lock, with MICROK8S_ADDONS_SKIP_LOCK=1 so that what it runs
--- (`microk8s enable ...`) does not wait for that lock, with the
--- arguments after the addon; its exit code is the command's.
local function script(o, c, report)
  local addon = o.addon
  -- its output is its own, not JSON events, and it ends without uphook's
  -- result event: refused before anything runs
  if o.output == "json" then
    report:error(string.format("the upgrade of %s is a script (%s): its "
      .. "output is not JSON; run it without --output json", addon.name,
      addon.script))
    return engine.EARLY
  end
  local L = layout(o, c, addon)
  local lock, lerr = node_lock(o, c, "upgrade", L, nil, report)
  if not lock then report:error(lerr); return engine.LOCKED end
  local backend = Backend.connect(o, c, report, L)
  local refused = refuse_disabled(o, c, report, backend)
  if backend.close then backend:close() end
  if refused then return refused end
  local argv = { addon.script }
  for _, a in ipairs(o.hook_args) do argv[#argv + 1] = a end
  if o.temporary_dir then c.sys.rmtree(o.temporary_dir) end
  local _, err = c.sys.exec(addon.script, argv,
    { MICROK8S_ADDONS_SKIP_LOCK = "1" }, type(lock) == "userdata" and lock
    or nil)
  report:error(err)
  return engine.EARLY
end

--- The Lease of an interrupted run of this node goes with its journal;
--- without a journal, only a stale one (docs/state.md). Best effort: a
--- cluster that cannot be reached only gets a warning. `run`: recover's,
--- naming the Lease its journal does; nil: this repository's (resolved).
local function release_lease(o, c, report, L, run, recovered)
  local name = run and lease.of(run) or lease.name(o.addon.name)
  local ok, err = pcall(function()
    local backend, host = run and run.backend, run and run.hostname
    if not backend then
      local b, _, h = Backend.connect(o, c, report, L)
      backend, host = b, h
      name = lease.of_addon(backend, c, o.addon)
    end
    local done = lease.release({ backend = backend, addon = o.addon.name,
      hostname = host or c.sys.hostname(), c = c, state_name = name },
      recovered)
    if done then report:info(done) end
  end)
  if not ok then
    report:log("warn", string.format("could not check the Lease %s/%s: %s",
      lease.NAMESPACE, name, type(err) == "table"
      and (err.message or "error") or tostring(err)))
  end
end

--- `recover --dry-run`: what recover would undo, in words; nothing is
--- changed and no lock is taken (as plan takes none).
local function recover_preview(o, c, report, run, begin, body, L)
  local steps = rollback.preview(run, body)
  local left = 0
  if not report:event({ event = "recover_plan", addon = o.addon.name,
      from = begin.from, to = begin.to, journal = L.journal_path,
      steps = c.json.array(steps) }) then
    io.stdout:write(string.format("Recovering %s would undo the interrupted "
      .. "upgrade %s -> %s (journal %s), in this order:\n", o.addon.name,
      tostring(begin.from or "(none)"), tostring(begin.to),
      L.journal_path))
    if #steps == 0 then io.stdout:write("  nothing: no change was made\n") end
    for i, st in ipairs(steps) do
      io.stdout:write(string.format("  %d. %s\n", i,
        escape.text(st.text)))
    end
  end
  for _, st in ipairs(steps) do
    if st.action == "leave" then left = left + 1 end
  end
  if left > 0 then
    report:info(string.format("%d change%s would be left alone: recover "
      .. "would keep the journal and exit 6", left, left == 1 and "" or "s"))
  end
  report:info("Nothing was changed (--dry-run). To recover, run: "
    .. selfcmd.line(o, c, "recover", o.addon.name))
  report:event({ event = "result", code = engine.OK, addon = o.addon.name,
    dry_run = true, steps = #steps, left_alone = left })
  return engine.OK
end

--- The version recover leaves the addon at (the state's, else the one
--- the interrupted upgrade started from) and what to run next.
local function recovered_line(o, c, run, begin, n)
  local ok, st = pcall(state.read, run)
  local at = ok and st and st.version or begin.from
  local name = o.addon.name
  return string.format("Recovered %s: %d change%s undone; %s is %s, as "
    .. "before the interrupted upgrade to %s.", name, n, n == 1 and "" or "s",
    name, at and ("at " .. at) or "as it was", tostring(begin.to)),
    string.format("Next: %s (with 'plan' for 'upgrade': what it would do)",
    selfcmd.line(o, c, "upgrade", name)), at
end

--- recover itself: undo the journal's records, say so in the history,
--- then remove the journal and the interrupted run's Lease.
local function recover_undo(o, c, report, run, L, begin, body)
  -- a signal now ends recover's waits and keeps the journal (exit 6)
  c.broker.rolling_back(true)
  run.rolling_back = true
  -- each step as it is done: a node's restart waits up to 5 min
  local ok, problems, restored = rollback.undo(run, body, function(done, text)
    if done then report:info(text) else report:error("cannot undo " .. text) end
  end)
  c.broker.rolling_back(false)
  -- the history says so, as for the run it recovers (docs/state.md)
  if begin.from then
    state.note(run, { from = begin.from, to = begin.to,
      code = ok and engine.OK or engine.STUCK,
      result = ok and "recovered" or "recover incomplete",
      error = not ok and ("cannot undo " .. tostring(problems[1])) or nil },
      not ok and body or nil)
  end
  if not ok then
    for _, p in ipairs(problems) do
      if p:find(waits.ABANDONED, 1, true) then report:error("not undone: " .. p) end
    end
    report:error(string.format("recovery incomplete; the journal is kept "
      .. "at %s; when what is named above is fixed, run again: %s",
      L.journal_path, selfcmd.line(o, c, "recover", o.addon.name)))
    return engine.STUCK
  end
  rollback.remove(c.journal, c.fs, L.journal_path, body)
  release_lease(o, c, report, L, run, true)
  local done, next_step, at = recovered_line(o, c, run, begin, #restored)
  report:outcome(done)
  report:info(next_step)
  report:event({ event = "result", code = engine.OK, addon = o.addon.name,
    undone = #restored, version = at })
  return engine.OK
end

--- The user's yes to --accept-current: --yes, or a terminal's answer
--- (lua/cmd/confirm.lua); an offline world has only --yes.
local function accept_yes(o, c, report, begin, n)
  local what = string.format("keep %s as it is now: the %d change%s of the "
    .. "interrupted upgrade %s -> %s stay, none is undone", o.addon.name, n,
    n == 1 and "" or "s", tostring(begin.from or "(none)"), tostring(begin.to))
  local confirm = require("uphook.cmd.confirm").new(o, report, nil,
    c.broker.interrupted)
  if confirm then return confirm({ what .. "." }, what) end
  if o.yes then report:info("yes (--yes) to " .. what); return true end
  return false, "no terminal to ask on: --yes allows it"
end

--- `recover --accept-current`: undo nothing; the cluster as it is now is
--- the addon's. The journal is archived beside itself (its backups
--- removed), the history says "accepted", the Lease is released.
local function recover_accept(o, c, report, run, L, begin, body)
  local steps = rollback.preview(run, body)
  for _, st in ipairs(steps) do
    report:info("kept as it is now: " .. st.what)
  end
  local ok, why = accept_yes(o, c, report, begin, #steps)
  if not ok then
    report:error(string.format("not accepted: keeping %s as it is needs your "
      .. "yes (%s); nothing was changed", o.addon.name, why))
    return engine.EARLY
  end
  local archived = string.format("%s.accepted-%s", L.journal_path,
    (require("uphook.core.timefmt").format(c.sys.wall()):gsub("[^%w]", "")))
  local moved, merr = os.rename(L.journal_path, archived)
  if not moved then
    report:error(string.format("cannot archive the journal %s: %s",
      L.journal_path, tostring(merr)))
    return engine.STUCK
  end
  -- its backups were only for the undo the user declined
  rollback.remove(c.journal, c.fs, L.journal_path, body)
  if begin.from then
    state.note(run, { from = begin.from, to = begin.to, code = engine.OK,
      result = "accepted" })
  end
  release_lease(o, c, report, L, run, true)
  report:info(string.format("Accepted: %s is kept as it is now (%d change%s "
    .. "of the interrupted upgrade to %s not undone); the journal is "
    .. "archived at %s.", o.addon.name, #steps, #steps == 1 and "" or "s",
    tostring(begin.to), archived))
  report:info(string.format("Next: %s (what an upgrade would do from here)",
    selfcmd.line(o, c, "plan", o.addon.name)))
  report:event({ event = "result", code = engine.OK, addon = o.addon.name,
    accepted = true, kept = #steps, journal = archived })
  return engine.OK
end

local function recover(o, c, report)
  local L = layout(o, c, o.addon)
  local recs, torn, version = c.journal.replay(L.journal_path)
  if not recs and torn then
    report:error(string.format("cannot read the journal %s: %s; it is kept "
      .. "for manual recovery", L.journal_path, tostring(torn)))
    return engine.STUCK
  end
  if not recs then
    report:info("nothing to recover: " .. o.addon.name .. " has no journal")
    -- a run of this node may still be on: then its Lease is no one's to
    -- release, and the lock says so at once
    if not o.dry_run and node_lock(o, c, "recover", L, 0) then
      release_lease(o, c, report, L, nil, false)
    end
    return engine.OK
  end
  -- a running upgrade's journal is not an interrupted one's
  local running = inventory.in_progress(o, c, L.journal_path)
  if running then
    report:error(string.format("an upgrade of %s is %s: it is not "
      .. "interrupted, nothing to recover; wait for it to end", o.addon.name,
      running))
    return engine.LOCKED
  end
  if not o.dry_run then
    local lock, lerr = node_lock(o, c, "recover", L, nil, report)
    if not lock then report:error(lerr); return engine.LOCKED end
  end
  local begin = recs[1] and recs[1].op == "begin" and recs[1] or {}
  -- the state and Lease the interrupted run used (a journal of an older
  -- uphook names none: it used uphook-<addon>, docs/state.md), and the
  -- node folder of that state
  local state_name = lease.journaled(o.addon.name, begin.state)
  local roots = tables.shallow(L.roots)
  roots.state = lease.state_root(L.roots.state, o.addon.name, state_name)
  local refused, warning = rollback.check_journal(begin, version, roots,
    { snap_data = o.snap_data, snap_common = o.snap_common }, o.addon.name)
  if refused then
    report:error(string.format("%s: %s; it is kept", L.journal_path, refused))
    return engine.STUCK
  end
  if warning then report:log("warn", warning) end
  local backend, _, host = Backend.connect(o, c, report, L)
  -- recover is not bounded by --timeout: each request by its own
  if backend.set_deadline then backend:set_deadline(nil) end
  -- today's roots, never the journal's: every path is checked under them
  local run = R.new { addon = o.addon.name, c = c, state_name = state_name,
    backend = backend, hostname = host, roots = roots, report = report,
    journal_path = L.journal_path, clock_wall = c.sys.wall }
  if torn then report:log("warn", "the journal's last record was torn "
    .. "(the crash came while writing it); it is ignored") end
  local body = {}
  for i = 2, #recs do body[#body + 1] = recs[i] end
  if o.dry_run then
    return recover_preview(o, c, report, run, begin, body, L)
  end
  if o.accept_current then
    return recover_accept(o, c, report, run, L, begin, body)
  end
  return recover_undo(o, c, report, run, L, begin, body)
end

local COMMANDS = {
  upgrade = function(o, c, r)
    local worker = worker_node(o, c)
    if worker then
      r:error(string.format("This MicroK8s deployment is acting as a node "
        .. "in a cluster (%s): upgrade %s on a control-plane node", worker,
        o.addon.name))
      return engine.EARLY
    end
    return (o.addon.script and script or upgrade)(o, c, r)
  end,
  plan = upgrade, recover = recover,
  test = function(o, c) return require("uphook.cmd.test").main(o, c) end,
  lint = function(o, c, r) return require("uphook.cmd.lint").main(o, c, r) end,
  list = function(o, c, r) return require("uphook.cmd.list").main(o, c, r) end,
  doctor = function(o, c, r) return require("uphook.cmd.doctor").main(o, c, r) end,
  fixture = function(o, c, r) return require("uphook.cmd.fixture").main(o, c, r) end,
  history = function(o, c, r) return require("uphook.cmd.history").main(o, c, r) end,
}

---@param o table options from host/cli.c
---@return integer exit code
function M.main(o)
  local c = require("uphook.core.cfamilies").load()
  local report = new_report(o, c)
  for _, w in ipairs(o.warnings or {}) do
    if o.verbosity > 0 then report:log("warn", w) end
  end
  local ok, code = pcall(COMMANDS[o.command], o, c, report)
  if o.temporary_dir then c.sys.rmtree(o.temporary_dir) end
  local err
  if not ok then
    err = require("uphook.core.hookerror").message(code)
    report:error(err)
    code = engine.EARLY
  end
  -- every JSON run ends with exactly one result event (docs/output.md)
  if not report.result_sent then
    report:event({ event = "result", code = code, command = o.command,
      addon = o.addon and o.addon.name or nil,
      error = err or (code ~= 0 and report.last_error or nil) })
  end
  return code
end

return M
