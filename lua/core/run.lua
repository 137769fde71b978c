--- uphook.core.run: the run record, everything one upgrade, plan, recover or
--- declaration read knows, passed to every engine module; and the exit
--- codes with the failure that ends a run (docs/contract.md §1).
---
--- It sits at the bottom of the Lua engine and requires nothing, so that
--- engine, prims, rollback, plan and state all build on it without
--- importing one another upward.
local M = {}

-- exit codes (docs/contract.md §1)
M.OK, M.FAILED, M.USAGE, M.NOHOOK, M.EARLY, M.LOCKED, M.STUCK =
  0, 1, 2, 3, 4, 5, 6

--- Seconds a run may take without --timeout (host/luax.h
--- UH_DEFAULT_TIMEOUT, the command line's default).
M.DEFAULT_TIMEOUT = 900

--- A failure that ends the run with an exit code.
---@class uphook.Stop
---@field code integer the exit code
---@field message string
local Stop = {}

---Raise a failure that ends the run with `code`.
---@param code integer one of the exit codes above
---@param msg string
function M.stop(code, msg)
  error(setmetatable({ code = code, message = msg }, Stop), 0)
end

---Is `err` (a caught error) a failure raised by `stop`?
---@param err any
---@return boolean
function M.is_stop(err) return getmetatable(err) == Stop end

--- The run record. Its fields come in three groups, in this order: what
--- the caller gives `new`, what the engine accumulates (from `phase`
--- on), and the outcome (from `noop` on).
---@class uphook.Run
---@field addon string the addon's name
---@field argv string[] the command-line arguments after the addon name
---@field plan boolean true under `uphook plan`: record, change nothing
---@field plan_fetch? boolean `plan --plan-fetch`: probe downloads with HEAD
---@field backend uphook.Backend the cluster (lua/core/backend.lua): live or the mock
---@field net? table the transfer backend (lua/backend/transfer.lua: live or mock)
---@field roots table<string, string> the file roots: args, bin, plugins, addon, state, and certs (config.exists only)
---@field c table the C families (lua/core/cfamilies.lua)
---@field null any yaml.null (= json.null)
---@field journal_path? string the journal file of this addon
---@field cache_dir? string where verified downloads are kept by sha256
---@field ca_file? string the CA bundle for downloads
---@field helm_path? string `--helm PATH`: the Helm that renders charts (lua/engine/helm/render.lua)
---@field hostname? string this node's name, for nodes.this and the Lease
---@field repo? string the addon's repository (`core`, `community`): history entries name it
---@field repository? string the repository's identity, whose grant the state records (lua/engine/consent.lua)
---@field state_name? string the name of its state ConfigMap and Lease (lua/engine/lease.lua resolve; nil: uphook-<addon>)
---@field report table the output (lua/cmd/report.lua)
---@field clock_wall? fun(): number wall-clock seconds (mocked under test)
---@field pid? integer this process, for the Lease holder's identity
---@field crash_after? integer test-only: die after the Nth change
---@field deadline number c.sys.now() at which the run's time is up
---@field state_quota? integer bytes the state: files may take (--state-quota)
---@field bases? {snap_data?: string, snap_common?: string} $SNAP_DATA and $SNAP_COMMON, for the journal's roots
---@field state_used? integer what they take, as the run has changed them
---@field phase string load, detect, check, upgrade, verify or commit
---@field perms table<string, true> the hook's declared permissions
---@field granted? table<string, true> until the user's yes: the permissions reads and requests may use (lua/engine/permissions.lua now)
---@field withheld? table<string, true> what waited for the yes (the plan's "after your yes" entries)
---@field entries table[] the plan's entries (lua/engine/plan.lua)
---@field records table[] the journal records of this run, in order
---@field calls? {name: string, args: table}[] the primitives called (uphook test only, bounded: lua/engine/prims.lua)
---@field planned table<string, table|false> under plan: deleted or recreated
---@field helm_records? table<string, table> Helm release records decoded this run, by Secret uid@resourceVersion (lua/engine/helm/record.lua)
---@field planned_kinds? table<string, true> under plan: the kinds ("group/version/Kind") the plan's CRDs would serve (lua/engine/batch.lua)
---@field applied table<string, true> the objects this run applied, by plan key (kube.prune keeps them)
---@field redact_key? string the run's key for Secret redactions (lua/core/redact.lua), drawn on first use
---@field deleted table<string, table> objects deleted, by plan key
---@field changed boolean a journaled change happened: exit 1 from now on
---@field nchanges? integer the number of changes made
---@field step_no? integer the last log.step's number
---@field logged? {lines: integer, bytes: integer, dropped?: boolean} what the hook has logged, against the log budget (lua/engine/prims/addon.lua)
---@field journal? table the open journal (rollback.lua)
---@field handler? fun(name: string, args: table): any serves the child
---@field child? table the hook child (host/broker.c)
---@field hook? table the validated hook declarations (lua/engine/hookdecl.lua validate)
---@field to? string the version the hook installs
---@field from? string the installed version
---@field detected? table the parameters detect read back
---@field params? table<string, string> the merged parameters
---@field positional? string[] the positional arguments
---@field given? table<string, string> the params given on the command line
---@field reset? boolean `--reset-params`: saved params are not used
---@field reconfigure? string at the current version: the params that change ("name old -> new, ...")
---@field identity? string the Lease holder's identity
---@field locked? boolean the Lease is held
---@field pending? string this node's name while the Lease marks its journal pending (lua/engine/lease.lua)
---@field renewed? number when the Lease was last renewed (wall clock)
---@field host_root? string where this node's /etc/resolv.conf etc. are read (tests, offline worlds; nil: the real host)
---@field topology? uphook.Topology the cluster's nodes, as last listed (lua/engine/nodes.lua)
---@field preflight? uphook.Topology the nodes the preflight checked: a change goes to these
---@field changed_nodes table<string, true> the other nodes whose args this run changed
---@field changed_here? boolean this node's args changed in this run
---@field rolling_back? boolean a rollback (or recover) runs: a signal now stops it, the journal kept (lua/engine/wait.lua)
---@field other_nodes? integer the other nodes a hook with node settings changes (the consent question says their priors may be assumed)
---@field repaired? boolean at the current version: node drift is being repaired
---@field noop? boolean already at the target version: nothing ran
---@field error? string what ended the run
---@field trace? string the hook's traceback
---@field problems? string[] the changes rollback could not undo
---@field restored? string[] the changes rollback undid
---@field elapsed? number seconds the run took
local Run = {}
Run.__index = Run
M.Run = Run

---Seconds left before the run's deadline.
---@return number
function Run:remaining()
  return math.max(0, self.deadline - self.c.sys.now())
end

---@class uphook.RunOptions
---@field addon string
---@field c table the C families
---@field argv? string[]
---@field plan? boolean
---@field plan_fetch? boolean
---@field backend? uphook.Backend
---@field net? table
---@field roots? table<string, string>
---@field journal_path? string
---@field cache_dir? string
---@field ca_file? string
---@field helm_path? string `--helm PATH`
---@field hostname? string
---@field repo? string
---@field repository? string
---@field state_name? string
---@field report table
---@field clock_wall? fun(): number
---@field pid? integer
---@field crash_after? integer
---@field record_calls? boolean keep run.calls (uphook test's env:calls)
---@field state_quota? integer bytes the addon's state: files may take
---@field bases? {snap_data?: string, snap_common?: string} what the journal's roots are relative to
---@field phase? string the phase to start in (default "load")
---@field perms? table<string, true>
---@field timeout? number seconds until the deadline (default M.DEFAULT_TIMEOUT)
---@field confirm? fun(lines: string[], what: string): boolean, string|nil asks the user (lua/cmd/confirm.lua; nil: never asked)
---@field host_root? string where nodes.resolv_conf reads this node's files (offline worlds, tests)

---The one constructor of a run record.
---@param o uphook.RunOptions
---@return uphook.Run
function M.new(o)
  local c = o.c
  local run = setmetatable({ addon = o.addon, argv = o.argv or {},
    plan = o.plan or false, plan_fetch = o.plan_fetch,
    backend = o.backend, net = o.net, roots = o.roots or {}, c = c,
    null = c.yaml and c.yaml.null,
    journal_path = o.journal_path, cache_dir = o.cache_dir,
    ca_file = o.ca_file, helm_path = o.helm_path, hostname = o.hostname,
    report = o.report, repo = o.repo, repository = o.repository,
    state_name = o.state_name,
    state_quota = o.state_quota, bases = o.bases,
    clock_wall = o.clock_wall, pid = o.pid, crash_after = o.crash_after,
    phase = o.phase or "load", perms = o.perms or {}, confirm = o.confirm,
    entries = {}, records = {}, calls = o.record_calls and {} or nil,
    planned = {}, deleted = {}, applied = {}, changed_nodes = {},
    host_root = o.host_root, changed = false }, Run)
  run.deadline = c.sys.now() + (o.timeout or M.DEFAULT_TIMEOUT)
  return run
end

return M
