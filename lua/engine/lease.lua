--- uphook.engine.lease: the cluster-wide lock of an addon and its pending marker
--- (docs/state.md, "Lease kube-system/uphook-<addon>"; its name, M.resolve).
---
--- The Lease uphook-<addon> in kube-system is held by the run that
--- upgrades the addon (holder `<hostname>/uphook-<pid>`). While that run
--- has a journal, the Lease carries the annotation
--- `uphook.microk8s.io/pending: <hostname>`: an upgrade on any node
--- refuses then (exit 6) until `uphook recover` on that node has undone
--- it, because an upgrade from a half-done state would be reverted by
--- that later recover. Everything goes through the backend, so the mock
--- keeps the Lease exactly as a live cluster does.
local timefmt = require "uphook.core.timefmt"
local R = require "uphook.core.run"
local consent = require "uphook.engine.consent"

local M = {}

local NS = "kube-system"
local KIND = "coordination.k8s.io/v1/Lease"
local LEASE_SECONDS = 60
M.NAMESPACE, M.LEASE_SECONDS = NS, LEASE_SECONDS
M.PENDING = "uphook.microk8s.io/pending"

--- The names of an addon's Lease and state ConfigMap in kube-system
--- (docs/state.md "Which repository"): uphook-<addon>, or
--- uphook-<addon>-<10 hex digits> for a repository whose same-named addon
--- another repository's state already holds uphook-<addon>. uphook's own
--- objects: a hook writes none of them (lua/engine/permissions.lua
--- host_owned).
M.PREFIX = "uphook-"
M.SUFFIX_LEN = 10     -- hex digits of the SHA-256 of the repository's identity

---The name of an addon's Lease and state ConfigMap: the one naming
---function of every command, the backends and `uphook test`.
---@param addon string
---@param suffix? string a repository's suffix (M.suffix); nil: uphook-<addon>
---@return string
function M.name(addon, suffix)
  return M.PREFIX .. addon .. (suffix and ("-" .. suffix) or "")
end

---A repository's suffix: the first 10 hex digits of the SHA-256 of its
---identity (lua/engine/consent.lua identity).
---@param c table the C families (c.hash)
---@param repository string
---@return string
function M.suffix(c, repository)
  return c.hash.sha256(repository):sub(1, M.SUFFIX_LEN)
end

local function recorded(cm)
  local r = cm and type(cm.data) == "table" and cm.data.repository
  return type(r) == "string" and r ~= "" and r or nil
end

---The name this repository's addon uses (docs/state.md "Which
---repository"): uphook-<addon> when its state records this repository,
---records none (an older uphook's, claimed by the next upgrade) or does
---not exist, unless this repository already has its own
---uphook-<addon>-<suffix>; that one when uphook-<addon> is another
---repository's. No repository (`uphook test`): uphook-<addon>.
---@param backend uphook.Backend
---@param c table the C families
---@param addon string
---@param repository? string this run's repository (consent.identity)
---@return string
function M.resolve(backend, c, addon, repository)
  local shared = M.name(addon)
  if not repository then return shared end
  local cm = backend:get("v1/ConfigMap", shared, NS)
  local owner = recorded(cm)
  if cm and owner == repository then return shared end
  local own = M.name(addon, M.suffix(c, repository))
  if backend:get("v1/ConfigMap", own, NS) then return own end
  return owner and own or shared
end

---An addon's repository identity (docs/state.md "Which repository"),
---from the addon as the command line found it: its folder after symlinks.
---@param c table the C families
---@param a {name:string, repo:string, dir:string}
---@return string
function M.repository(c, a)
  return consent.identity(a.repo, c.sys.realpath(a.dir) or a.dir, a.name)
end

---The name of an addon's state and Lease as the command line found the
---addon (M.resolve with its repository, M.repository): what `list`,
---`history`, `fixture` and recover without a journal read.
---@param backend uphook.Backend
---@param c table the C families
---@param a {name:string, repo:string, dir:string}
---@return string
function M.of_addon(backend, c, a)
  return M.resolve(backend, c, a.name, M.repository(c, a))
end

---The name a journal's begin record gives (lua/engine/rollback.lua), when
---it is one of this addon's: uphook-<addon> or uphook-<addon>-<suffix>.
---@param addon string
---@param name any the begin record's `state`
---@return string|nil
function M.journaled(addon, name)
  if type(name) ~= "string" then return nil end
  local rest = name:sub(#M.name(addon) + 1)
  if name:sub(1, #M.name(addon)) ~= M.name(addon) then return nil end
  if rest == "" or rest:match("^%-" .. ("%x"):rep(M.SUFFIX_LEN) .. "$") then
    return name
  end
  return nil
end

---The node folder of a state (the config root `state:`): the one named
---as its ConfigMap, less `uphook-`. root is uphook-<addon>'s
---(`addons/<addon>` under the state dir); uphook-<addon>-<suffix>'s is
---root-<suffix> (docs/state.md "Which repository").
---@param root string the folder of uphook-<addon>
---@param addon string
---@param name? string the state ConfigMap's name (M.resolve, M.journaled)
---@return string
function M.state_root(root, addon, name)
  local shared = M.name(addon)
  if type(name) ~= "string" or name:sub(1, #shared) ~= shared then
    return root
  end
  return root .. name:sub(#shared + 1)
end

---The name of the run's Lease and state ConfigMap: the one it resolved
---(run.state_name), else uphook-<addon>.
---@param run {addon:string, state_name?:string}
---@return string
function M.of(run) return run.state_name or M.name(run.addon) end

local function label(run) return NS .. "/" .. M.of(run) end

local wall = timefmt.wall

local function micro(run) return timefmt.format(wall(run), true) end

local function lease_obj(run, rv, acquired)
  return { apiVersion = "coordination.k8s.io/v1", kind = "Lease",
    metadata = { name = M.of(run), namespace = NS,
      resourceVersion = rv,
      labels = { ["addon.microk8s.io/name"] = run.addon },
      annotations = run.pending and { [M.PENDING] = run.pending } or nil },
    spec = { holderIdentity = run.identity,
      leaseDurationSeconds = LEASE_SECONDS, acquireTime = acquired
        or micro(run), renewTime = micro(run) } }
end

local function message(e)
  return type(e) == "table" and (e.message or "error") or tostring(e)
end

---The node a Lease's pending marker names, or nil.
---@param lease table|nil
---@return string|nil
function M.pending_node(lease)
  local a = lease and lease.metadata and lease.metadata.annotations
  local n = type(a) == "table" and a[M.PENDING]
  return type(n) == "string" and n ~= "" and n or nil
end

-- Is the holder a run of this host that no longer runs? (Only asked by
-- a run that holds the node lock, so no other run of this node is on.)
local function dead_here(run, holder)
  local host, pid = tostring(holder):match("^(.*)/uphook%-(%d+)$")
  if host ~= run.hostname then return false end
  pid = math.tointeger(tonumber(pid))
  if pid == run.pid then return true end
  local alive = run.c and run.c.sys and run.c.sys.alive
  return not (pid and pid > 0 and (not alive or alive(pid)))
end

---Why a Lease no run holds any more may be taken, or nil while it is held.
---@return string|nil why
---@param run uphook.Run
---@param lease table the Lease object as read
function M.stale(run, lease)
  local spec = lease.spec or {}
  if M.pending_node(lease) == run.hostname then
    return "it marks a pending journal of this node, and this node has none"
  end
  if spec.holderIdentity and dead_here(run, spec.holderIdentity) then
    return "that run of this node is no longer running"
  end
  local renewed = timefmt.parse(spec.renewTime or spec.acquireTime)
  local dur = spec.leaseDurationSeconds or LEASE_SECONDS
  if renewed and wall(run) < renewed + dur and spec.holderIdentity then
    return nil
  end
  return "it expired"
end

---Take the Lease, or stop: exit 6 while another node's journal is
---pending, exit 5 while another run holds it.
---@param run uphook.Run
function M.lock(run)
  run.identity = string.format("%s/uphook-%s", tostring(run.hostname),
    tostring(run.pid or 0))
  local b = run.backend
  local cur = b:get(KIND, M.of(run), NS)
  local ok, e
  if cur then
    local spec, node = cur.spec or {}, M.pending_node(cur)
    local holder = tostring(spec.holderIdentity or "")
    if node and node ~= run.hostname and holder:sub(1, #node + 1) == node .. "/"
        and not M.stale(run, cur) then
      -- its holder renews it: that node's upgrade runs (docs/state.md)
      R.stop(R.LOCKED, string.format("an upgrade of %s is in progress on "
        .. "node %s (Lease %s held by %s since %s, renewed %s): wait for it "
        .. "to end", run.addon, node, label(run), holder,
        tostring(spec.acquireTime), tostring(spec.renewTime)))
    end
    if node and node ~= run.hostname then
      R.stop(R.STUCK, string.format("an interrupted upgrade of %s "
        .. "on node %s left a journal there: run 'uphook recover %s' on %s "
        .. "first (Lease %s is marked %s=%s)", run.addon, node, run.addon,
        node, label(run), M.PENDING, node))
    end
    local why = M.stale(run, cur)
    if not why then
      R.stop(R.LOCKED, string.format("another upgrade of %s holds "
        .. "the lock: Lease %s is held by %s (renewed %s)", run.addon,
        label(run), tostring(spec.holderIdentity), tostring(spec.renewTime)))
    end
    run.report:log("warn", string.format("taking over the stale Lease %s of "
      .. "%s: %s", label(run), tostring(spec.holderIdentity), why))
    ok, e = pcall(b.replace, b, lease_obj(run, cur.metadata.resourceVersion))
  else
    ok, e = pcall(b.create, b, lease_obj(run))
  end
  if not ok then
    R.stop(R.LOCKED, "lost the race for the Lease: " .. message(e))
  end
  run.locked = true
  run.renewed = wall(run)
end

-- Write the Lease again with what the run holds (renewal, marker).
local function rewrite(run)
  local b = run.backend
  local cur = b:get(KIND, M.of(run), NS)
  if not cur then return false, "the Lease " .. label(run) .. " is gone" end
  run.renewed = wall(run)
  local ok, e = pcall(b.replace, b, lease_obj(run,
    cur.metadata.resourceVersion, cur.spec and cur.spec.acquireTime))
  if not ok then return false, message(e) end
  return true
end

---Seconds between two renewals of the Lease during a wait (a quarter of
---its duration: every wait ticks at least every 0.2 s, lua/engine/wait.lua).
M.RENEW = LEASE_SECONDS / 4

---Renew the Lease during long waits (every M.RENEW seconds).
---@param run uphook.Run
function M.renew(run)
  if not run.locked then return end
  if run.renewed and wall(run) - run.renewed < M.RENEW then return end
  local ok, err = rewrite(run)
  if not ok then run.report:log("warn", "could not renew the Lease: " .. err) end
end

---Mark the Lease pending on this node, before the run's journal is
---created (lua/engine/rollback.lua calls it). Raises when it cannot: nothing is
---changed yet, so the run stops with exit 4.
---@param run uphook.Run
function M.mark_pending(run)
  if not run.locked or run.pending then return end
  run.pending = run.hostname
  local ok, err = rewrite(run)
  if not ok then
    run.pending = nil
    error("cannot mark the Lease " .. label(run) .. " pending before the "
      .. "first change: " .. err, 0)
  end
end

---The run's journal is gone (committed or rolled back): the Lease is
---released as usual at the end of the run.
---@param run uphook.Run
function M.clear_pending(run) run.pending = nil end

---Release the Lease (best effort: a stale one is taken over later). A
---Lease marked pending stays, with its journal, until `uphook recover`.
---@param run uphook.Run
function M.unlock(run)
  if not run.locked or run.pending then return end
  run.locked = false
  local ok, e = pcall(run.backend.delete, run.backend, KIND,
    M.of(run), NS)
  if not ok then
    run.report:log("warn", string.format("could not release the Lease "
      .. "%s: %s", label(run), message(e)))
  end
end

---`uphook recover` on this node (holding the node lock): delete the
---Lease of an interrupted run of this node. `recovered`: its journal was
---just undone, so a Lease held or marked by this node is that run's.
---Returns what it did, or nil.
---@param run {backend:table, addon:string, hostname:string, c:table, pid?:integer, state_name?:string}
---@param recovered boolean
---@return string|nil
function M.release(run, recovered)
  local b = run.backend
  local cur = b:get(KIND, M.of(run), NS)
  if not cur then return nil end
  local holder = cur.spec and cur.spec.holderIdentity or ""
  local ours = M.pending_node(cur) == run.hostname
    or tostring(holder):sub(1, #run.hostname + 1) == run.hostname .. "/"
  if not ours or (not recovered and not M.stale(run, cur)) then return nil end
  b:delete(KIND, M.of(run), NS)
  return string.format("released the Lease %s of the interrupted upgrade "
    .. "(%s)", label(run), holder)
end

return M
