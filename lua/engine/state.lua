--- uphook.engine.state: addon state (docs/contract.md §7).
---
--- State is the ConfigMap uphook-<addon> in kube-system (or
--- uphook-<addon>-<suffix>: lua/engine/lease.lua resolve; data: version,
--- params as YAML, history as YAML: the last 10 runs (upgrades, failed
--- runs, recoveries), permissions as
--- YAML: those of the last successful upgrade, lua/engine/consent.lua). It goes
--- through the backend, so the mock keeps it exactly as a live cluster
--- does. The lock, the Lease of the same name, is lua/engine/lease.lua's.
local timefmt = require "uphook.core.timefmt"
local rollback = require "uphook.engine.rollback"
local lease = require "uphook.engine.lease"
local consent = require "uphook.engine.consent"
local hookerror = require "uphook.core.hookerror"

local M = {}

local NS = lease.NAMESPACE
local cm_name = lease.of

---The addon's state; its version, params and permissions are nil in a
---record of failed runs only (no upgrade succeeded yet).
---@param run uphook.Run
---@return {version:string|nil, params:table|nil, history:table,
---  permissions:string[]|nil}|nil state
function M.read(run)
  local cm = run.backend:get("v1/ConfigMap", cm_name(run), NS)
  if not cm or type(cm.data) ~= "table" then return nil end
  local d = cm.data
  local function yaml_of(s, what)
    if type(s) ~= "string" or s == "" then return {} end
    local ok, v = pcall(run.c.yaml.decode, s)
    if not ok or type(v) ~= "table" then
      run.report:log("warn", string.format("ConfigMap %s/%s: %s is not "
        .. "valid YAML; ignoring it", NS, cm_name(run), what))
      return {}
    end
    return v
  end
  -- no record (a state of an older uphook, or hand-made): nothing granted
  local perms = d.permissions and yaml_of(d.permissions, "permissions")
  if perms then
    for _, p in ipairs(perms) do
      if type(p) ~= "string" then perms = nil; break end
    end
  end
  local version = d.version ~= "" and d.version or nil
  -- a ConfigMap without a version holds only the history of failed runs
  -- (a failed first upgrade, record below): detect still tells the
  -- version and the parameters, and the next upgrade is a first one
  return { version = version,
           params = version and yaml_of(d.params, "params") or nil,
           history = yaml_of(d.history, "history"),
           permissions = version and perms or nil,
           repository = type(d.repository) == "string" and d.repository
             ~= "" and d.repository or nil }
end

local function now_iso(run)
  return timefmt.format(timefmt.wall(run))
end

local HISTORY = 10      -- entries kept, oldest dropped first
M.HISTORY = HISTORY

--- What every history entry says of the run besides its outcome: the
--- node it ran on, the addon's repository, the parameters and the
--- permissions granted (docs/state.md); a field the run does not know is
--- left out (`uphook history` shows `?`).
local function who(run, entry)
  entry.node = entry.node or run.hostname
  entry.repo = entry.repo or run.repo
  if run.params and entry.parameters == nil and next(run.params) then
    entry.parameters = run.params
  end
  return entry
end

local RESULTS = { [1] = "rolled back", [4] = "failed",
  [6] = "rollback incomplete" }

--- Whether `records` (a journal kept for recover) hold a change of the
--- state ConfigMap itself: then recover puts it back, and a history entry
--- written now would make it look changed by someone else.
local function state_pending(run, records)
  for _, r in ipairs(records or {}) do
    local ref = r.op == "kube" and r.ref
    if ref and ref.kind == "ConfigMap" and ref.namespace == NS
        and ref.name == cm_name(run) then
      return true
    end
  end
  return false
end

---Add one entry to the history of the state ConfigMap, outside the
---journal (the run is over): `time` is added, the oldest entries go past
---10. Without a ConfigMap (no upgrade succeeded yet) one is made that
---holds only the history: no version, params or permissions, so detect
---still tells the version and the next upgrade is still a first one.
---@param run uphook.Run backend, addon, yaml, clock_wall
---@param entry {from:string, to:string, code:integer, result:string, error?:string}
---@param pending? table[] the journal's records when it is kept (exit 6)
---@return boolean recorded false: the ConfigMap is in `pending`
function M.record(run, entry, pending)
  if state_pending(run, pending) then return false end
  who(run, entry)
  local cm = run.backend:get("v1/ConfigMap", cm_name(run), NS)
  local data = {}
  for k, v in pairs(cm and type(cm.data) == "table" and cm.data or {}) do
    data[k] = v
  end
  local ok, history = pcall(run.c.yaml.decode, data.history or "")
  if not ok or type(history) ~= "table" then history = {} end
  entry.time = now_iso(run)
  if entry.error then
    local first = tostring(entry.error):match("^[^\n]*")
    entry.error = #first > 200 and (first:sub(1, 197) .. "...") or first
  end
  history[#history + 1] = entry
  while #history > HISTORY do table.remove(history, 1) end
  data.history = run.c.yaml.encode(history)
  -- a new record is this repository's (docs/state.md "Which repository"):
  -- it holds no grant, so naming it claims nothing but the name
  if not cm then data.repository = run.repository end
  run.backend:apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = cm_name(run), namespace = NS,
      labels = { ["addon.microk8s.io/name"] = run.addon,
                 ["app.kubernetes.io/managed-by"] = "uphook" } },
    data = data }, {})
  return true
end

local NOTE_SECONDS = 5  -- the most M.note waits for the cluster

---M.record, as far as the cluster lets it be written within 5 s: when it
---cannot be, a warning says so and the command's outcome stays what it was.
---@param run uphook.Run
---@param entry table as M.record's
---@param pending? table[]
function M.note(run, entry, pending)
  -- bounded: the run is over, and when the cluster is why it failed, each
  -- request would wait its own timeout (30 s) for nothing
  local b, prev = run.backend, run.backend.deadline
  if b.set_deadline then b:set_deadline(run.c.sys.now() + NOTE_SECONDS) end
  local ok, err = pcall(M.record, run, entry, pending)
  if b.set_deadline then b:set_deadline(prev ~= math.huge and prev or nil) end
  if not ok then
    run.report:log("warn", string.format("could not record the %s run in "
      .. "the history of ConfigMap %s/%s: %s", entry.result, NS,
      cm_name(run), hookerror.message(err)))
  end
end

---Record a failed run in the history, after its rollback: its versions,
---exit code and the error's first line (200 characters at most). With
---exit 6 the journal is kept: its records are pending.
---@param run uphook.Run
---@param code integer the run's exit code: 1 rolled back, 4 failed before
---  any change, 6 rollback incomplete
function M.record_failure(run, code)
  M.note(run, { from = run.from, to = run.to, code = code,
    result = RESULTS[code] or "failed", error = run.error or "failed" },
    code == 6 and run.records or nil)
end

---Write the new version, params and history (the last step of an upgrade).
---@param run uphook.Run
---@param saved table|nil what read returned at the start
function M.commit(run, saved)
  local history = {}
  for _, h in ipairs(saved and saved.history or {}) do
    history[#history + 1] = h
  end
  local perms = consent.record(run.hook)
  history[#history + 1] = who(run, { from = run.from, to = run.to,
    time = now_iso(run), code = 0,
    result = run.repaired and "repaired"
      or run.reconfigure and "reconfigured" or "upgraded",
    params = run.reconfigure, permissions = #perms > 0 and perms or nil })
  while #history > HISTORY do table.remove(history, 1) end
  if #perms == 0 and run.c.yaml.array then perms = run.c.yaml.array {} end
  local obj = { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = cm_name(run), namespace = NS,
      labels = { ["addon.microk8s.io/name"] = run.addon,
                 ["app.kubernetes.io/managed-by"] = "uphook" } },
    data = { version = run.to,
             params = run.c.yaml.encode(next(run.params) and run.params
                                      or run.c.yaml.array and {} or {}),
             history = run.c.yaml.encode(history),
             permissions = run.c.yaml.encode(perms),
             -- whose grant `permissions` is (lua/engine/consent.lua)
             repository = run.repository } }
  local prior = run.backend:get("v1/ConfigMap", cm_name(run), NS)
  local key = { apiVersion = "v1", kind = "ConfigMap",
    name = cm_name(run), namespace = NS }
  rollback.record(run, { op = "kube", ref = key, prior = prior,
    applied = obj })
  rollback.made(run, key, run.backend:apply(obj, {}), obj)
  rollback.changed(run)
end

return M
