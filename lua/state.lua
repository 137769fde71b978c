--- uphook.state: addon state (docs/contract.md §7).
---
--- State is the ConfigMap uphook-<addon> in kube-system (data: version,
--- params as YAML, history as YAML: the last 10 upgrades, permissions as
--- YAML: those of the last successful upgrade, lua/consent.lua). It goes
--- through the backend, so the mock keeps it exactly as a live cluster
--- does. The lock, the Lease of the same name, is lua/lease.lua's.
local rollback = require "uphook.rollback"
local lease = require "uphook.lease"
local consent = require "uphook.consent"

local M = {}

local NS = lease.NAMESPACE
local cm_name = lease.name

---@return {version:string, params:table, history:table,
---  permissions:string[]|nil}|nil
---@param run uphook.Run
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
  -- no record (a state of an older uphook, or hand-made): nothing granted
  local perms = d.permissions and yaml_of(d.permissions, "permissions")
  if perms then
    for _, p in ipairs(perms) do
      if type(p) ~= "string" then perms = nil; break end
    end
  end
  return { version = d.version ~= "" and d.version or nil,
           params = yaml_of(d.params, "params"),
           history = yaml_of(d.history, "history"), permissions = perms }
end

local function now_iso(run)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(run.clock_wall
    and run.clock_wall() or os.time()))
end

local HISTORY = 10      -- entries kept, oldest dropped first

---Record a failed run in the history, after its rollback (not journaled:
---the run is over): its time, versions, exit code and the error's first
---line. Only an addon with state has a history: a failed first upgrade
---leaves no ConfigMap behind, as its rollback promised.
---@param run uphook.Run
---@param code integer the run's exit code (1: rolled back, 4: failed first)
---@return boolean recorded
function M.record_failure(run, code)
  local cm = run.backend:get("v1/ConfigMap", cm_name(run.addon), NS)
  if not cm or type(cm.data) ~= "table" then return false end
  local ok, history = pcall(run.yaml.decode, cm.data.history or "")
  if not ok or type(history) ~= "table" then history = {} end
  local first = tostring(run.error or "failed"):match("^[^\n]*")
  if #first > 200 then first = first:sub(1, 197) .. "..." end
  history[#history + 1] = { from = run.from, to = run.to,
    time = now_iso(run), code = code,
    result = code == 1 and "rolled back" or "failed", error = first }
  while #history > HISTORY do table.remove(history, 1) end
  local data = {}
  for k, v in pairs(cm.data) do data[k] = v end
  data.history = run.yaml.encode(history)
  run.backend:apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = cm_name(run.addon), namespace = NS,
      labels = { ["addon.microk8s.io/name"] = run.addon,
                 ["app.kubernetes.io/managed-by"] = "uphook" } },
    data = data }, {})
  return true
end

---Write the new version, params and history (the last step of an upgrade).
---@param run uphook.Run
---@param saved table|nil what read returned at the start
function M.commit(run, saved)
  local history = {}
  for _, h in ipairs(saved and saved.history or {}) do
    history[#history + 1] = h
  end
  history[#history + 1] = { from = run.from, to = run.to,
    time = now_iso(run), code = 0,
    result = run.repaired and "repaired"
      or run.reconfigure and "reconfigured" or "upgraded",
    params = run.reconfigure }
  while #history > HISTORY do table.remove(history, 1) end
  local perms = consent.record(run.hook)
  if #perms == 0 and run.yaml.array then perms = run.yaml.array {} end
  local obj = { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = cm_name(run.addon), namespace = NS,
      labels = { ["addon.microk8s.io/name"] = run.addon,
                 ["app.kubernetes.io/managed-by"] = "uphook" } },
    data = { version = run.to,
             params = run.yaml.encode(next(run.params) and run.params
                                      or run.yaml.array and {} or {}),
             history = run.yaml.encode(history),
             permissions = run.yaml.encode(perms) } }
  local prior = run.backend:get("v1/ConfigMap", cm_name(run.addon), NS)
  local key = { apiVersion = "v1", kind = "ConfigMap",
    name = cm_name(run.addon), namespace = NS }
  rollback.record(run, { op = "kube", ref = key, prior = prior,
    applied = obj })
  rollback.made(run, key, run.backend:apply(obj, {}), obj)
  rollback.changed(run)
end

return M
