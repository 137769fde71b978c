--- uphook.engine.rollback: the journal policy, the same for every backend.
---
--- Before each change the engine appends a record holding what undoing
--- it needs, and the record is on disk (fsynced) before the change is
--- made. Undo walks the records in reverse. `uphook recover` replays a
--- journal left by a crashed run through the same undo.
local kinds = require "uphook.core.kinds"
local kubeerror = require "uphook.core.kubeerror"
local tables = require "uphook.core.tables"
local lease = require "uphook.engine.lease"
local nodes = require "uphook.engine.nodes"
local wait = require "uphook.engine.wait"

local M = {}

local clean = kinds.clean

--- Roots as a journal keeps them (version 2): relative to $SNAP_DATA or
--- $SNAP_COMMON where they are beneath one, so that a journal survives a
--- snap refresh (a new revision path); absolute otherwise.
---@param roots table<string, string>
---@param bases? {snap_data?: string, snap_common?: string}
---@return table<string, string>
function M.portable_roots(roots, bases)
  local out = {}
  for k, p in pairs(roots or {}) do
    out[k] = p
    for name, base in pairs { ["$SNAP_DATA"] = bases and bases.snap_data,
        ["$SNAP_COMMON"] = bases and bases.snap_common } do
      if base and base ~= "" and p:sub(1, #base + 1) == base .. "/" then
        out[k] = name .. p:sub(#base + 1)
      end
    end
  end
  return out
end

---The roots a journal's begin record names, under today's bases.
function M.expand_roots(roots, bases)
  local out = {}
  for k, p in pairs(roots or {}) do
    if type(p) == "string" then
      out[k] = p:gsub("^%$SNAP_DATA/", (bases.snap_data or "") .. "/", 1)
        :gsub("^%$SNAP_COMMON/", (bases.snap_common or "") .. "/", 1)
    end
  end
  return out
end

local function journal(run)
  if not run.journal then
    -- cluster-wide, before the journal exists: no node upgrades this
    -- addon while it is pending here (docs/state.md)
    lease.mark_pending(run)
    local j, err = run.c.journal.open(run.journal_path)
    if not j then error("cannot open the journal: " .. tostring(err), 0) end
    run.journal = j
    -- state: the name of the addon's state and Lease, which recover
    -- writes and releases (docs/state.md "Which repository")
    local ok, e = j:append({ op = "begin", addon = run.addon,
      state = run.state_name, from = run.from, to = run.to,
      roots = M.portable_roots(run.roots, run.bases),
      time = run.clock_wall and run.clock_wall() or 0 })
    if not ok and e then error("journal: " .. tostring(e), 0) end
  end
  return run.journal
end

-- Once on disk, an object's record (kube: its prior and what was
-- applied; made: what the server stored) stays in memory as its op and
-- ref alone: the journal holds the rest, and an undo within the run
-- reads it back (M.full_records), as recover does. The priors of a large
-- apply are most of its heap (docs/bench.md, "Peak RSS").
local SLIM = { kube = true, made = true }
local function keep(run, rec)
  run.records[#run.records + 1] = SLIM[rec.op]
    and { op = rec.op, ref = rec.ref, slim = true } or rec
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
  keep(run, rec)
end

---Append the records of changes that go out together (another node's
---args, a batch of kube.apply) durably in one write, before any of them
---is made.
---@param run table
---@param recs table[]
function M.record_all(run, recs)
  if #recs == 0 then return end
  local ok, err = journal(run):append(table.unpack(recs))
  if not ok and err then
    error("journal: cannot record the change: " .. tostring(err), 0)
  end
  for _, rec in ipairs(recs) do keep(run, rec) end
end

---The run's records whole, for its undo: the slim ones (keep) read back
---from the journal, whose records after `begin` are run.records in order.
---@param run uphook.Run
---@return table[]
function M.full_records(run)
  local out, disk = {}, nil
  for i, rec in ipairs(run.records) do
    if rec.slim and not disk then
      local torn
      disk, torn = run.c.journal.replay(run.journal_path)
      if not disk then
        error("cannot read the journal back: " .. tostring(torn), 0)
      end
    end
    local full = rec
    if rec.slim then
      full = disk[i + 1]
      if type(full) ~= "table" or full.op ~= rec.op
          or kinds.label(full.ref) ~= kinds.label(rec.ref) then
        error("the journal does not hold the run's change " .. i, 0)
      end
    end
    out[i] = full
  end
  return out
end

---Mark that a journaled change happened (exit 1 from now on). The
---test-only UPHOOK_CRASH_AFTER=N makes uphook die right after the Nth
---change, as a power cut would, for the crash-injection tests.
---@param run uphook.Run
function M.changed(run)
  run.changed = true
  run.nchanges = (run.nchanges or 0) + 1
  if run.crash_after and run.nchanges == run.crash_after then
    run.c.testpoint.crash(99)
  end
end

---What the server stored for a change just made: the object's uid and
---the fields uphook applied, with the values the server keeps for them.
---Undo checks them before it touches the object (docs/state.md).
---@param run table
---@param key table the object's ref
---@param stored table what the apply returned
---@param applied table what uphook applied
function M.made(run, key, stored, applied)
  M.record(run, M.made_record(key, stored, applied))
end

---The record M.made appends, for M.record_all.
---@param key table the object's ref
---@param stored table what the apply returned
---@param applied table what uphook applied
---@return table record
function M.made_record(key, stored, applied)
  local md = type(stored) == "table" and stored.metadata or {}
  return { op = "made", ref = key, uid = md.uid,
    want = M.project(clean(stored), clean(applied)) }
end

---Keep the prior bytes of a file (hard link or copy) and record them; the
---record names the backup relative to the journal's folder.
---@param run uphook.Run
---@param root string the root's name (bin, plugins, args, state)
---@param dir string the root's absolute folder
---@param rel string the file, relative to it
function M.record_backup(run, root, dir, rel)
  journal(run)
  local n = #run.records + 1
  local dest = string.format("%s.%d", run.journal_path, n)
  local had, err = run.c.fs.backup(dir, rel, dest)
  if had == nil then
    error("cannot back up " .. root .. ":" .. rel .. ": " .. tostring(err), 0)
  end
  local st = had and run.c.fs.stat(dir, rel)
  M.record(run, { op = "file", root = root, path = rel,
    backup = had and dest:match("([^/]+)$") or nil, mode = st and st.mode })
end

--- A backup's absolute path, only ever inside the journal's folder
--- (version 1 journals named it absolutely; it is checked the same).
local function backup_path(journal_path, b)
  local dir = journal_path:match("^(.*)/[^/]+$")
  if type(b) ~= "string" or not dir then return nil end
  if b:sub(1, 1) == "/" then b = b:sub(1, #dir + 1) == dir .. "/"
    and b:sub(#dir + 2) or "" end
  if b == "" or b:find("/", 1, true) or b == "." or b == ".." then
    return nil
  end
  return dir .. "/" .. b, dir, b
end

--- A write refused as stale is read again and retried (kubeerror).
local CONFLICT_TRIES = kubeerror.CONFLICT_TRIES
local conflict = kubeerror.is_conflict

--- Left alone: the change is not undone and the run ends with exit 6.
local function left_alone(why)
  error("left alone: " .. why, 0)
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
    elseif kinds.DATA_LOSS[r.kind] then
      -- deleting it would lose its data (a claim's volume goes with it)
      left_alone(string.format("a %s is never deleted to undo a change; "
        .. "the server refuses to put it back: %s", r.kind,
        tostring(e.message)))
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
  return what, cur
end

--- `stored` cut down to the fields `applied` has: what uphook owns of
--- what the server stored (lua/core/tables.lua, in C where the state has it).
M.project = tables.project

--- Does `cur` still hold every field of `want`, with its value? The path
--- of the first that differs otherwise. Status and the server's metadata
--- are not compared: controllers rewrite them after every apply.
local function holds(cur, want, null, path)
  if type(want) ~= "table" or want == null then
    if want == null then want = nil end
    if cur == null then cur = nil end
    return cur == want, path
  end
  if type(cur) ~= "table" then return false, path end
  if want[1] ~= nil and #cur ~= #want then return false, path end
  for k, v in pairs(want) do
    local here = path and (path .. "." .. tostring(k)) or tostring(k)
    if not (path == nil and k == "status")
       and not (path == "metadata" and kinds.IS_SERVER_METADATA[k]) then
      local ok, at = holds(cur[k], v, null, here)
      if not ok then return false, at end
    end
  end
  return true
end

--- The uids of objects this undo created again (an object the run made,
--- then deleted: a chart hook's Job under hook-succeeded), old -> new:
--- undoing the earlier record of the same object finds it under its new
--- uid and it is still uphook's (tests/lua/helm_test.lua).
local remade = {}

--- Is the object still the one uphook made? Its uid (when the journal
--- knows it) and the fields uphook applied, with their values. A record
--- of journal version 1 knows neither: the check is then the prior's uid.
local function still_ours(run, rec, cur)
  local md = cur.metadata or {}
  local uid = rec.made and rec.made.uid
    or (rec.prior and rec.prior.metadata and rec.prior.metadata.uid)
  uid = remade[uid] or uid
  if uid and md.uid ~= uid then
    left_alone("it was deleted and created again since (uid " .. tostring(md.uid)
      .. ", uphook's was " .. tostring(uid) .. ")")
  end
  local want = rec.made and rec.made.want or rec.applied
  if want then
    local ok, at = holds(cur, want, run.null)
    if not ok then
      left_alone("it changed since uphook applied it (" .. tostring(at) .. ")")
    end
  end
end

--- What undoing a kube record does to the object as it is now (`cur`):
--- "delete", "recreate", "restore", "same" (already as before) or nil
--- (gone already); raises left_alone when it is no longer uphook's.
local function kube_action(run, rec, cur)
  if rec.prior == nil then
    if not cur then return nil end
    still_ours(run, rec, cur)
    return "delete"
  end
  if rec.deleted then
    -- uphook deleted it: recreate it unless someone made another since
    if cur and cur.metadata.uid ~= rec.prior.metadata.uid then
      left_alone("someone created it again since uphook deleted it")
    end
    return cur and "restore" or "recreate"
  end
  if cur and tables.equal(clean(cur), clean(rec.prior)) then return "same" end
  if (rec.applied or rec.made) and not cur then
    left_alone("it was deleted since uphook applied it")
  end
  if cur then still_ours(run, rec, cur) end  -- v1 journals: the uid only
  return cur and "restore" or "recreate"
end

--- A CRD goes back to its prior spec only when that spec serves every
--- version the server stores its objects in (status.storedVersions):
--- objects stored in a version the old spec does not serve could not be
--- read. Else the new CRD stays, named in the rollback summary, and the
--- run still exits 1 (docs/state.md "The journal"). The versions not served.
local function crd_unserved(rec, cur)
  if rec.ref.kind ~= "CustomResourceDefinition" or not cur or rec.deleted
     or type(rec.prior) ~= "table" then return nil end
  local served = {}
  local spec = type(rec.prior.spec) == "table" and rec.prior.spec or {}
  for _, v in ipairs(type(spec.versions) == "table" and spec.versions or {})
  do
    if type(v) == "table" and v.served ~= false then served[v.name] = true end
  end
  local missing = {}
  local st = type(cur.status) == "table" and cur.status or {}
  for _, v in ipairs(type(st.storedVersions) == "table" and st.storedVersions
      or {}) do
    if not served[v] then missing[#missing + 1] = tostring(v) end
  end
  return #missing > 0 and table.concat(missing, ", ") or nil
end

local function undo_kube(run, rec)
  local b, r = run.backend, rec.ref
  local gvk = r.apiVersion .. "/" .. r.kind
  local cur = b:get(gvk, r.name, r.namespace)
  local action = kube_action(run, rec, cur)
  if action == nil then return nil end
  local unserved = action == "restore" and crd_unserved(rec, cur)
  if unserved then
    return string.format("kept the new spec (objects stored as %s, which "
      .. "the spec before does not serve) of ", unserved)
  end
  if action == "delete" then
    b:delete(gvk, r.name, r.namespace)
    return "deleted "
  end
  local want = clean(rec.prior)
  local mf = rec.prior.metadata and rec.prior.metadata.managedFields
  for try = 1, CONFLICT_TRIES do
    local ok, what, now = pcall(restore_kube, b, gvk, r, want, mf)
    if ok then
      local old = rec.prior.metadata and rec.prior.metadata.uid
      if rec.deleted and old and now and now.metadata then
        remade[old] = now.metadata.uid
      end
      return what
    end
    if not conflict(what) or try == CONFLICT_TRIES then error(what, 0) end
  end
end
M.CONFLICT_TRIES = CONFLICT_TRIES

local function undo_file(run, rec)
  local dir = run.roots[rec.root ~= "addon" and rec.root or nil]
  local function must(v, err)
    if v == nil and err then error(err, 0) end
    return v
  end
  if not dir then error("no root " .. tostring(rec.root) .. ": today", 0) end
  if rec.backup then
    local src = backup_path(run.journal_path, rec.backup)
    if not src then
      error("its backup " .. tostring(rec.backup) .. " is not beside the "
        .. "journal", 0)
    end
    must(run.c.fs.install(src, dir, rec.path, rec.mode or "0644"))
  elseif rec.prior ~= nil then
    must(run.c.fs.write(dir, rec.path, rec.prior, rec.mode))
  else
    must(run.c.fs.remove(dir, rec.path))
  end
  return "restored "
end

local function describe(rec)
  if rec.op == "kube" then return kinds.label(rec.ref) end
  if rec.op == "file" then return rec.root .. ":" .. rec.path end
  if rec.op == "node_args" then
    return "args:" .. tostring(rec.service) .. " on " .. nodes.label(rec)
  end
  if rec.op == "node_restart" then
    return "restart " .. tostring(rec.service) .. " on " .. nodes.label(rec)
  end
  return rec.op
end

--- What the user can do about an object left alone, concretely: look at
--- it, then either keep the cluster as it is (recover --accept-current)
--- or make the object what recover can undo and run recover again.
---@param addon string|nil
---@param rec table a kube record
---@param why string the left_alone message
---@return string
function M.fix(addon, rec, why)
  local r = rec.ref or {}
  local obj = string.format("%s %s%s", tostring(r.kind), tostring(r.name),
    r.namespace and (" -n " .. r.namespace) or "")
  local again
  if rec.prior == nil then
    again = "if it should go, `microk8s kubectl delete " .. obj
      .. "`, then run recover again"
  elseif why:find("deleted since", 1, true) then
    again = "to have it back as before the upgrade, create it by hand "
      .. "(`uphook recover " .. tostring(addon) .. " --dry-run` names it), "
      .. "then run recover again"
  elseif why:find("created it again", 1, true)
      or why:find("created again", 1, true) then
    again = "to have uphook's prior back, `microk8s kubectl delete " .. obj
      .. "`, then run recover again (it recreates it)"
  else
    again = "to have it back as before the upgrade, edit it by hand, then "
      .. "run recover again"
  end
  return string.format("fix: look at it (`microk8s kubectl get %s -o "
    .. "yaml`); to keep the cluster as it is now, `uphook recover %s "
    .. "--accept-current`; or %s", obj, tostring(addon), again)
end

local function msg_of(e)
  return type(e) == "table" and tostring(e.message or "error")
         or tostring(e)
end

--- Services restarted on new settings restart again on the old ones:
--- the other nodes first, one at a time (each Ready again before the
--- next), then this node, as the upgrade rolled them. A node restarts
--- again only when its args were restored.
local function restart_again(run, remote, here, restored_on, problems, step)
  for _, rec in ipairs(remote) do
    if restored_on[rec.node] then
      local ok, e = pcall(nodes.restart_again, run, rec)
      if not ok then
        problems[#problems + 1] = describe(rec) .. ": " .. msg_of(e)
      end
      step(ok, describe(rec), ok and "restarted " or msg_of(e))
    end
  end
  for _, svc in ipairs(here) do
    local ok, e = pcall(run.backend.restart, run.backend, svc)
    if ok and svc == "kubelite" then
      ok, e = pcall(nodes.after_local_restart, run, nodes.UNDO_WAIT)
    end
    if not ok then problems[#problems + 1] = "restart " .. svc .. ": "
      .. msg_of(e) end
    step(ok, svc .. " on this node", ok and "restarted " or msg_of(e))
  end
end

--- The changes a signal during the rollback left undone (the journal
--- keeps them for recover).
local function stopped(records, i, problems)
  local n = 0
  for k = i, 1, -1 do
    local op = records[k].op
    if op ~= "made" and op ~= "begin" then n = n + 1 end
  end
  problems[#problems + 1] = string.format("%d change%s: %s", n,
    n == 1 and "" or "s", wait.ABANDONED)
end

--- A "made" record belongs to the change of the same object before it.
local function pair_made(records)
  local last = {}
  for _, rec in ipairs(records) do
    local key = type(rec.ref) == "table" and kinds.label(rec.ref)
    if rec.op == "kube" and key then last[key] = rec
    elseif rec.op == "made" and key and last[key] then last[key].made = rec end
  end
end

---Undo every record in reverse. Returns true, or false and the list of
---changes that could not be undone (the journal is then kept). A signal
---during the rollback stops it before its next step (docs/state.md
---"Signals"); the write in flight is not interrupted. `on_step(ok, what,
---how)` hears of each step as it is done (recover streams them).
---@return boolean ok, string[] problems, string[] restored
---@param run uphook.Run|table a run, or recover's {backend, roots, fs}
---@param records table[] journal records, oldest first
---@param on_step? fun(ok: boolean, text: string)
function M.undo(run, records, on_step)
  local problems, restored = {}, {}
  local here, remote, seen, restored_on = {}, {}, {}, {}
  local function step(ok, what, how)
    if on_step then on_step(ok, ok and (how .. what) or (what .. ": " .. how)) end
  end
  pair_made(records)
  remade = {}
  for i = #records, 1, -1 do
    local rec = records[i]
    if wait.abandoned(run) then
      stopped(records, i, problems)
      return false, problems, restored
    end
    local ok, what = pcall(function()
      if rec.op == "kube" then return undo_kube(run, rec)
      elseif rec.op == "file" then return undo_file(run, rec)
      elseif rec.op == "node_args" and not rec.unsent then
        nodes.undo_args(run, rec)
        restored_on[rec.node] = true
        return "restored "
      elseif rec.op == "restart" and not seen[rec.service] then
        seen[rec.service] = true
        table.insert(here, 1, rec.service)
      elseif rec.op == "node_restart" and not rec.unsent then
        local key = rec.node .. "\0" .. rec.service
        if not seen[key] then
          seen[key] = true
          table.insert(remote, 1, rec)
        end
      end
    end)
    if not ok then
      local m = msg_of(what)
      if rec.op == "kube" and m:find("^left alone: ") then
        m = m .. "; " .. M.fix(run.addon, rec, m)
      end
      problems[#problems + 1] = describe(rec) .. ": " .. m
      step(false, describe(rec), m)
    elseif what then
      restored[#restored + 1] = what .. describe(rec)
      step(true, describe(rec), what)
    end
  end
  if wait.abandoned(run) then
    problems[#problems + 1] = "the restarts again: " .. wait.ABANDONED
  else
    restart_again(run, remote, here, restored_on, problems, step)
  end
  return #problems == 0, problems, restored
end

local KUBE_WORDS = {
  delete = "delete %s: uphook created it",
  recreate = "create %s again, as it was before the upgrade",
  restore = "put %s back as it was before the upgrade",
  same = "nothing for %s: it is as it was before the upgrade",
  none = "nothing for %s: it is gone already",
}

local function file_words(rec)
  local what = "file " .. describe(rec)
  if rec.backup then return "restore", "put back " .. what .. " from its backup" end
  if rec.prior ~= nil then return "restore", "put back " .. what .. " as it was" end
  return "remove", "remove " .. what .. ": uphook created it"
end

--- `view` holds what the steps before this one left of each object (false:
--- deleted), so that a later record of the same object (a recreate after
--- an immutable change: delete, then create) is judged as undo finds it.
local function preview_kube(run, rec, view)
  local r, what = rec.ref, describe(rec)
  local key = table.concat({ r.apiVersion, r.kind, r.namespace or "",
    r.name }, "\0")
  local ok, a = pcall(function()
    local cur = view[key]
    if cur == nil then
      cur = run.backend:get(r.apiVersion .. "/" .. r.kind, r.name,
        r.namespace)
    end
    return kube_action(run, rec, cur or nil)
  end)
  if ok then
    if a == "delete" then view[key] = false
    elseif a == "recreate" or a == "restore" then view[key] = rec.prior end
    return a or "none", KUBE_WORDS[a or "none"]:format(what)
  end
  local m = msg_of(a)
  if m:find("^left alone: ") then
    return "leave", "leave " .. what .. " alone: " .. m:sub(13) .. "; "
      .. M.fix(run.addon, rec, m)
  end
  return "unknown", "cannot tell what happens to " .. what .. ": " .. m
end

---What undoing `records` would do, in words, without doing it, in the
---order undo works (restarts last). The objects are read to tell which
---are still uphook's: undo leaves the others alone (exit 6).
---@param run table recover's run (backend, roots, journal_path)
---@param records table[] journal records, oldest first
---@return {action:string, what:string, text:string}[] steps
function M.preview(run, records)
  pair_made(records)
  local steps, restarts, seen, restored_on, view = {}, {}, {}, {}, {}
  local function add(list, action, rec, text)
    list[#list + 1] = { action = action, what = describe(rec), text = text }
  end
  for i = #records, 1, -1 do
    local rec = records[i]
    if rec.op == "kube" then
      local a, text = preview_kube(run, rec, view)
      add(steps, a, rec, text)
    elseif rec.op == "file" then
      local a, text = file_words(rec)
      add(steps, a, rec, text)
    elseif rec.op == "node_args" and not rec.unsent then
      restored_on[rec.node] = true
      add(steps, "restore", rec, "put back " .. describe(rec) .. " as it was")
    end
  end
  -- the restarts as undo makes them: the other nodes first, one at a
  -- time, then this node
  local here = {}
  for i = #records, 1, -1 do
    local rec = records[i]
    if rec.op == "restart" and not seen[rec.service] then
      seen[rec.service] = true
      table.insert(here, 1, { action = "restart", what = "restart "
        .. tostring(rec.service), text = "restart " .. tostring(rec.service)
        .. " on this node" })
    elseif rec.op == "node_restart" and not rec.unsent
        and restored_on[rec.node] and not seen[rec.node .. "\0" .. rec.service] then
      seen[rec.node .. "\0" .. rec.service] = true
      local what = describe(rec)
      table.insert(restarts, 1, { action = "restart", what = what, text = what })
    end
  end
  for _, l in ipairs { restarts, here } do
    for _, r in ipairs(l) do steps[#steps + 1] = r end
  end
  return steps
end

---Delete the journal, then the backups its records name (config.install
---keeps them beside it as <journal>.<n>): a crash between the two leaves
---only stale backups, never a journal whose backups are gone.
---@param journal_lib table c.journal
---@param fs table c.fs
---@param journal_path string
---@param records table[]|nil the journal's records (for their backups)
function M.remove(journal_lib, fs, journal_path, records)
  journal_lib.remove(journal_path)
  for _, rec in ipairs(records or {}) do
    local _, dir, name = backup_path(journal_path, rec.backup)
    if name then fs.remove(dir, name) end
  end
end

---Is this journal one `uphook recover <addon>` may replay? nil, or why
---not: it names another addon (or none). Its roots are never used:
---recover works under today's, and every path of a record is checked
---under them; the second result warns when the journal's roots (version
---2: under today's $SNAP_DATA and $SNAP_COMMON) are not today's.
---@return string|nil why, string|nil warning
function M.check_journal(begin, version, roots, bases, addon)
  if begin.op ~= "begin" then return "it has no begin record" end
  if begin.addon ~= addon then
    return string.format("the journal belongs to addon %s, not %s",
      tostring(begin.addon), addon)
  end
  local theirs = (version or 1) >= 2 and M.expand_roots(begin.roots, bases)
    or begin.roots or {}
  for _, k in ipairs { "args", "bin", "plugins", "state" } do
    if type(theirs[k]) == "string" and roots[k] and theirs[k] ~= roots[k] then
      return nil, string.format("the journal's %s: root was %s, today's is "
        .. "%s: its changes are undone under today's", k, theirs[k], roots[k])
    end
  end
end

---Close and delete the journal (after commit or a complete rollback).
---@param run uphook.Run
function M.finish(run)
  if run.journal then
    run.journal:close()
    run.journal = nil
    M.remove(run.c.journal, run.c.fs, run.journal_path, run.records)
    lease.clear_pending(run)
  end
end

return M
