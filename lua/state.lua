--- uphook.state: addon state and the cluster-wide lock (docs/contract.md §7).
---
--- State is the ConfigMap uphook-<addon> in kube-system (data: version,
--- params as YAML, history as YAML: the last 10 upgrades). The lock is
--- the Lease uphook-<addon> in kube-system. Both go through the backend,
--- so the mock keeps them exactly as a live cluster does.
local rollback = require "uphook.rollback"
local R = require "uphook.run"

local M = {}

local NS = "kube-system"
local LEASE_SECONDS = 60
M.LEASE_SECONDS = LEASE_SECONDS

local function cm_name(addon) return "uphook-" .. addon end

---@return {version:string, params:table, history:table}|nil
function M.read(run)
  local cm = run.backend:get("v1/ConfigMap", cm_name(run.addon), NS)
  if not cm or type(cm.data) ~= "table" then return nil end
  local d = cm.data
  local function yaml_of(s, what)
    if type(s) ~= "string" or s == "" then return {} end
    local ok, v = pcall(run.yaml.decode, s)
    if not ok or type(v) ~= "table" then
      run.report:log("warn", string.format("ConfigMap %s/%s: %s is not "
        .. "valid YAML; ignoring it", NS, cm_name(run.addon), what))
      return {}
    end
    return v
  end
  return { version = d.version ~= "" and d.version or nil,
           params = yaml_of(d.params, "params"),
           history = yaml_of(d.history, "history") }
end

local function now_iso(run)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(run.clock_wall
    and run.clock_wall() or os.time()))
end

---Write the new version, params and history (the last step of an upgrade).
function M.commit(run, saved)
  local history = {}
  for _, h in ipairs(saved and saved.history or {}) do
    history[#history + 1] = h
  end
  history[#history + 1] = { from = run.from, to = run.to,
    time = now_iso(run), code = 0,
    result = run.reconfigure and "reconfigured" or "upgraded",
    params = run.reconfigure }
  while #history > 10 do table.remove(history, 1) end
  local obj = { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = cm_name(run.addon), namespace = NS,
      labels = { ["addon.microk8s.io/name"] = run.addon,
                 ["app.kubernetes.io/managed-by"] = "uphook" } },
    data = { version = run.to,
             params = run.yaml.encode(next(run.params) and run.params
                                      or run.yaml.array and {} or {}),
             history = run.yaml.encode(history) } }
  local prior = run.backend:get("v1/ConfigMap", cm_name(run.addon), NS)
  rollback.record(run, { op = "kube",
    ref = { apiVersion = "v1", kind = "ConfigMap", name = cm_name(run.addon),
            namespace = NS }, prior = prior })
  run.backend:apply(obj, {})
  rollback.changed(run)
end

--- Lease -----------------------------------------------------------------------

local function parse_time(s)
  if type(s) ~= "string" then return nil end
  local y, mo, d, h, mi, sec = s:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then return nil end
  local t = os.time({ year = y, month = mo, day = d, hour = h, min = mi,
                      sec = sec, isdst = false })
  -- os.time reads local time; correct to UTC
  local utc = os.time(os.date("!*t", t))
  return t + (t - utc)
end

local function micro(run)
  return os.date("!%Y-%m-%dT%H:%M:%S.000000Z", math.floor(run.clock_wall
    and run.clock_wall() or os.time()))
end

local function lease_obj(run, rv)
  return { apiVersion = "coordination.k8s.io/v1", kind = "Lease",
    metadata = { name = cm_name(run.addon), namespace = NS,
      resourceVersion = rv,
      labels = { ["addon.microk8s.io/name"] = run.addon } },
    spec = { holderIdentity = run.identity,
      leaseDurationSeconds = LEASE_SECONDS, acquireTime = micro(run),
      renewTime = micro(run) } }
end

---Take the Lease, or stop with exit 5 naming its live holder.
function M.lock(run)
  run.identity = string.format("%s/uphook-%s", tostring(run.hostname),
    tostring(run.pid or 0))
  local b = run.backend
  local cur = b:get("coordination.k8s.io/v1/Lease", cm_name(run.addon), NS)
  if cur then
    local spec = cur.spec or {}
    local renewed = parse_time(spec.renewTime or spec.acquireTime)
    local dur = spec.leaseDurationSeconds or LEASE_SECONDS
    local now = run.clock_wall and run.clock_wall() or os.time()
    if renewed and now < renewed + dur and spec.holderIdentity then
      R.stop(R.LOCKED, string.format("another upgrade of %s holds "
        .. "the lock: Lease %s/%s is held by %s (renewed %s)", run.addon, NS,
        cm_name(run.addon), spec.holderIdentity, spec.renewTime))
    end
    run.report:log("warn", string.format("taking over the stale Lease %s/%s"
      .. " of %s", NS, cm_name(run.addon), tostring(spec.holderIdentity)))
    local ok, e = pcall(b.replace, b, lease_obj(run,
      cur.metadata.resourceVersion))
    if not ok then R.stop(R.LOCKED, "lost the race for the Lease: "
      .. (type(e) == "table" and e.message or tostring(e))) end
  else
    local ok, e = pcall(b.create, b, lease_obj(run))
    if not ok then R.stop(R.LOCKED, "lost the race for the Lease: "
      .. (type(e) == "table" and e.message or tostring(e))) end
  end
  run.locked = true
  run.renewed = run.clock_wall and run.clock_wall() or os.time()
end

---Renew the Lease during long waits (every third of its duration).
function M.renew(run)
  if not run.locked then return end
  local now = run.clock_wall and run.clock_wall() or os.time()
  if run.renewed and now - run.renewed < LEASE_SECONDS / 3 then return end
  run.renewed = now
  local b = run.backend
  local cur = b:get("coordination.k8s.io/v1/Lease", cm_name(run.addon), NS)
  if not cur then return end
  local l = lease_obj(run, cur.metadata.resourceVersion)
  l.spec.acquireTime = cur.spec and cur.spec.acquireTime or l.spec.acquireTime
  local ok, e = pcall(b.replace, b, l)
  if not ok then
    run.report:log("warn", "could not renew the Lease: "
      .. (type(e) == "table" and e.message or tostring(e)))
  end
end

---Release the Lease (best effort: a stale one is taken over later).
function M.unlock(run)
  if not run.locked then return end
  run.locked = false
  local ok, e = pcall(run.backend.delete, run.backend,
    "coordination.k8s.io/v1/Lease", cm_name(run.addon), NS)
  if not ok then
    run.report:log("warn", string.format("could not release the Lease "
      .. "%s/%s: %s", NS, cm_name(run.addon),
      type(e) == "table" and e.message or tostring(e)))
  end
end

return M
