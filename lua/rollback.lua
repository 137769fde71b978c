--- uphook.rollback: the journal policy, the same for every backend.
---
--- Before each change the engine appends a record holding what undoing
--- it needs, and the record is on disk (fsynced) before the change is
--- made. Undo walks the records in reverse. `uphook recover` replays a
--- journal left by a crashed run through the same undo.
local kinds = require "uphook.kinds"
local tables = require "uphook.tables"
local lease = require "uphook.lease"

local M = {}

local clean = kinds.clean

local function journal(run)
  if not run.journal then
    -- cluster-wide, before the journal exists: no node upgrades this
    -- addon while it is pending here (docs/state.md)
    lease.mark_pending(run)
    local j, err = run.journal_lib.open(run.journal_path)
    if not j then error("cannot open the journal: " .. tostring(err), 0) end
    run.journal = j
    local ok, e = j:append({ op = "begin", addon = run.addon,
      from = run.from, to = run.to, roots = run.roots,
      time = run.clock_wall and run.clock_wall() or 0 })
    if not ok and e then error("journal: " .. tostring(e), 0) end
  end
  return run.journal
end

---Append a record durably, before the change it describes. The caller
---sets run.changed once the change itself succeeded: a change that
---failed leaves nothing to undo, so the exit code stays 4.
---@param run table
---@param rec table
function M.record(run, rec)
  local ok, err = journal(run):append(rec)
  if not ok and err then
    error("journal: cannot record the change: " .. tostring(err), 0)
  end
  run.records[#run.records + 1] = rec
end

---Mark that a journaled change happened (exit 1 from now on). The
---test-only UPHOOK_CRASH_AFTER=N makes uphook die right after the Nth
---change, as a power cut would, for the crash-injection tests.
function M.changed(run)
  run.changed = true
  run.nchanges = (run.nchanges or 0) + 1
  if run.crash_after and run.nchanges == run.crash_after then
    run.c.sys.crash(99)
  end
end

---Keep the prior bytes of a file (hard link or copy) and record them.
function M.record_backup(run, root, dir, rel)
  journal(run)
  local n = #run.records + 1
  local dest = string.format("%s.%d", run.journal_path, n)
  local had, err = run.fs.backup(dir, rel, dest)
  if had == nil then
    error("cannot back up " .. root .. ":" .. rel .. ": " .. tostring(err), 0)
  end
  local st = had and run.fs.stat(dir, rel)
  M.record(run, { op = "file", root = root, path = rel,
    backup = had and dest or nil, mode = st and st.mode })
end

--- A controller writing the object's status between our read and our
--- write (a Deployment's rollout does, every few hundred ms) makes the
--- server refuse the write as stale: read again and retry, as client-go's
--- RetryOnConflict does. Only that 409 is retried, and only a few times.
local CONFLICT_TRIES = 5

local function conflict(e)
  return type(e) == "table" and e.code == 409 and e.reason == "Conflict"
end

-- Put the object back as `want` (its content), then its record of
-- field ownership as `mf` (restored apart: a write of the content gives
-- the changed fields to the writer; only a write of managedFields alone
-- sets them exactly).
local function restore_kube(b, gvk, r, want, mf)
  local cur = b:get(gvk, r.name, r.namespace)
  local what
  if cur == nil then
    cur, what = b:create(want), "recreated "
  elseif not tables.equal(clean(cur), want) then
    want.metadata.resourceVersion = cur.metadata.resourceVersion
    local ok, e = pcall(b.replace, b, want)
    want.metadata.resourceVersion = nil
    if ok then
      cur = e
    elseif type(e) ~= "table" or e.code ~= 422 then
      error(e, 0)
    else
      -- an immutable field changed: only delete and create restores it
      b:delete(gvk, r.name, r.namespace)
      cur = b:create(want)
    end
    what = "restored "
  end
  if type(mf) == "table" and b.set_managed_fields
      and not tables.equal(cur.metadata.managedFields, mf) then
    b:set_managed_fields(gvk, r.name, r.namespace, mf,
                         cur.metadata.resourceVersion)
    what = what or "restored "
  end
  return what
end

local function undo_kube(run, rec)
  local b, r = run.backend, rec.ref
  local gvk = r.apiVersion .. "/" .. r.kind
  if rec.prior == nil then
    local cur = b:get(gvk, r.name, r.namespace)
    if cur then b:delete(gvk, r.name, r.namespace) end
    return cur and "deleted " or nil
  end
  local want = clean(rec.prior)
  local mf = rec.prior.metadata and rec.prior.metadata.managedFields
  for try = 1, CONFLICT_TRIES do
    local ok, what = pcall(restore_kube, b, gvk, r, want, mf)
    if ok then return what end
    if not conflict(what) or try == CONFLICT_TRIES then error(what, 0) end
  end
end
M.CONFLICT_TRIES = CONFLICT_TRIES

local function undo_file(run, rec)
  local dir = run.roots[rec.root]
  local function must(v, err)
    if v == nil and err then error(err, 0) end
    return v
  end
  if rec.backup then
    must(run.fs.install(rec.backup, dir, rec.path, rec.mode or "0644"))
  elseif rec.prior ~= nil then
    must(run.fs.write(dir, rec.path, rec.prior, rec.mode))
  else
    must(run.fs.remove(dir, rec.path))
  end
  return "restored "
end

local function describe(rec)
  if rec.op == "kube" then return kinds.label(rec.ref) end
  if rec.op == "file" then return rec.root .. ":" .. rec.path end
  return rec.op
end

---Undo every record in reverse. Returns true, or false and the list of
---changes that could not be undone (the journal is then kept).
---@return boolean ok, string[] problems, string[] restored
function M.undo(run, records)
  local problems, restored, restarts = {}, {}, {}
  for i = #records, 1, -1 do
    local rec = records[i]
    local ok, what = pcall(function()
      if rec.op == "kube" then return undo_kube(run, rec)
      elseif rec.op == "file" then return undo_file(run, rec)
      elseif rec.op == "restart" then restarts[rec.service] = true
      end
    end)
    if not ok then
      local msg = type(what) == "table" and (what.message or "error")
                  or tostring(what)
      problems[#problems + 1] = describe(rec) .. ": " .. msg
    elseif what then
      restored[#restored + 1] = what .. describe(rec)
    end
  end
  -- a service restarted on new settings restarts again on the old ones
  for svc in pairs(restarts) do
    local ok, e = pcall(run.backend.restart, run.backend, svc)
    if not ok then problems[#problems + 1] = "restart " .. svc .. ": "
      .. tostring(e) end
  end
  return #problems == 0, problems, restored
end

---Delete the journal, then the backups its records name (config.install
---keeps them beside it as <journal>.<n>): a crash between the two leaves
---only stale backups, never a journal whose backups are gone.
function M.remove(journal_lib, fs, journal_path, records)
  journal_lib.remove(journal_path)
  local dir = journal_path:match("^(.*)/[^/]+$")
  for _, rec in ipairs(records or {}) do
    local b = type(rec.backup) == "string" and rec.backup
    if b and dir and b:sub(1, #dir + 1) == dir .. "/" then
      fs.remove(dir, b:sub(#dir + 2))
    end
  end
end

---Close and delete the journal (after commit or a complete rollback).
function M.finish(run)
  if run.journal then
    run.journal:close()
    run.journal = nil
    M.remove(run.journal_lib, run.fs, run.journal_path, run.records)
    lease.clear_pending(run)
  end
end

return M
