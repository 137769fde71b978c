--- uphook.backend.mock.reconcile: the controllers' side of the mock cluster
--- (docs/mock.md): what runs after a write, as kube-controller-manager
--- and the API server's own controllers would: rollouts and their status,
--- a Deployment's ReplicaSets, a workload's Pods on the mock's Nodes, a
--- CRD Established, a Namespace Active, and the DaemonSets that follow a
--- Node change. Methods of the mock cluster (lua/backend/mock/cluster.lua
--- installs them); the rules themselves are lua/backend/mock/controllers.lua.
local kinds = require "uphook.backend.mock.kinds"
local tables = require "uphook.core.tables"
local validate = require "uphook.backend.mock.validate"
local ctl = require "uphook.backend.mock.controllers"

local M = {}

local equal, shallow = tables.equal, tables.shallow
local gk, okey = kinds.gk, kinds.okey

local norm_ns = kinds.norm_ns

---Give the mock cluster's class its controllers' methods.
---@param Cluster table the class of lua/backend/mock/cluster.lua
function M.install(Cluster)

-- Run the controllers after a write of `obj` (the stored table).
function Cluster:_reconcile(info, obj)
  if info.versions then return end
  local kind, ts = info.kind, self.clock:timestamp()
  if ctl.ROLLOUT[kind] then
    if ctl.observed(obj) then return end   -- caught up, or stalled
    local key = gk(info) .. "/" .. okey(obj.metadata.namespace,
                                         obj.metadata.name)
    local stall = self.stalls[key]
    local new = self:_set_status(info, obj,
      ctl[kind](obj, ts, stall ~= nil and (stall.fail and "fail" or true),
        self:_nodes()))
    self:_sync_pods(new)
    if stall and stall.seconds then
      local gen = obj.metadata.generation
      self.clock:after(stall.seconds, function()
        local cur = self:_lookup(info, obj.metadata.name,
                                 obj.metadata.namespace)
        if cur and cur.metadata.generation == gen then
          self.stalls[key] = nil
          self:_complete(info, cur)
        end
      end)
    end
  elseif kind == "CustomResourceDefinition" then
    self:_refresh_custom()
    if not ctl.condition_true(obj, "Established") then
      self:_set_status(info, obj, ctl.crd_status(obj, ts))
    else
      local stored = ctl.crd_stored_after(obj)
      if stored then
        local st = tables.copy(obj.status)
        st.storedVersions = stored
        self:_set_status(info, obj, st)
      end
    end
  elseif kind == "APIService" then
    if not ctl.condition_true(obj, "Available") then
      self:_set_status(info, obj, ctl.apiservice_status(obj, ts))
    end
  elseif kind == "Namespace" then
    if validate.get(obj, "status", "phase") == nil then
      self:_set_status(info, obj, { phase = "Active" })
    end
  elseif kind == "Node" then
    self:_nodes_changed()
  end
end

-- Finish a rollout now.
function Cluster:_complete(info, obj)
  self:_sync_pods(self:_set_status(info, obj, ctl[info.kind](obj,
    self.clock:timestamp(), false, self:_nodes())))
end

-- Is `pod` (a Pod, or a ReplicaSet) one of the workload `w`'s? (A
-- Deployment's Pods through its ReplicaSets <name>-<hash>.) By names, as
-- a fixture's uids are not the stored ones.
local function owned_by(pod, w)
  local md = pod.metadata
  if md.namespace ~= w.metadata.namespace then return false end
  local o = type(md.ownerReferences) == "table" and md.ownerReferences[1]
  if type(o) ~= "table" then return false end
  if w.kind == "Deployment" and pod.kind ~= "ReplicaSet" then
    return o.kind == "ReplicaSet"
       and tostring(o.name):match("^(.*)%-%w+$") == w.metadata.name
  end
  return o.kind == w.kind and o.name == w.metadata.name
end

local function revision(rs)
  local a = type(rs.metadata.annotations) == "table"
    and rs.metadata.annotations[ctl.REVISION]
  return tonumber(a) or 0
end

-- A Deployment's ReplicaSets as its controller keeps them: the current
-- template's (uphook.backend.mock.controllers replicaset) with the replicas, the
-- older ones scaled to 0, up to spec.revisionHistoryLimit (10) of them.
-- Returns the current one's uid.
function Cluster:_sync_replicasets(d)
  local info = kinds.builtin.ReplicaSet
  local bucket = self:_bucket(info)
  local name = d.metadata.name .. "-" .. ctl.template_hash(d)
  local cur = bucket[okey(d.metadata.namespace, name)]
  local top, old = 0, {}
  for _, rs in pairs(bucket) do
    if owned_by(rs, d) then
      top = math.max(top, revision(rs))
      if rs.metadata.name ~= name then old[#old + 1] = rs end
    end
  end
  for _, rs in ipairs(old) do
    if validate.get(rs, "spec", "replicas") ~= 0 then
      local new = shallow(rs)
      new.metadata, new.spec = shallow(rs.metadata), shallow(rs.spec)
      new.spec.replicas = 0
      new.metadata.generation = (rs.metadata.generation or 1) + 1
      new.status = { observedGeneration = new.metadata.generation,
                     replicas = 0 }
      self:_put(info, new)
    end
  end
  local want = ctl.replicaset(d, cur and revision(cur) == top and top
                                   or top + 1)
  if cur and equal(cur.spec, want.spec) and equal(cur.status, want.status)
      and equal(cur.metadata.annotations, want.metadata.annotations) then
    return cur.metadata.uid
  end
  local md = want.metadata
  md.uid = cur and cur.metadata.uid or self:_next_uid()
  md.creationTimestamp = cur and cur.metadata.creationTimestamp
    or self.clock:timestamp()
  md.generation = cur and ((cur.metadata.generation or 1)
    + (equal(cur.spec, want.spec) and 0 or 1)) or 1
  want.status.observedGeneration = md.generation
  self:_seed_owner(info, want)
  self:_put(info, want)
  local limit = validate.get(d, "spec", "revisionHistoryLimit")
  limit = type(limit) == "number" and limit or 10
  table.sort(old, function(a, b) return revision(a) < revision(b) end)
  for i = 1, #old - limit do self:_remove(info, old[i]) end
  return md.uid
end

-- Does the fixture have Pods of this workload (its owner's, or matching
-- its selector's labels)?
function Cluster:_has_pods(w)
  local sel = validate.get(w, "spec", "selector", "matchLabels")
  for _, p in pairs(self.store["/Pod"] or {}) do
    if owned_by(p, w) then return true end
    if type(sel) == "table" and next(sel) ~= nil
        and p.metadata.namespace == w.metadata.namespace then
      local labels, all = p.metadata.labels or {}, true
      for k, v in pairs(sel) do
        if labels[k] ~= v then all = false break end
      end
      if all then return true end
    end
  end
  return false
end

-- Keep a workload's Pods as its controller would (uphook.backend.mock.controllers
-- pods): made, replaced and removed with the rollout, owned by
-- kube-controller-manager.
function Cluster:_sync_pods(w)
  if self.seeding or not ctl.POD_OWNERS[w.kind]
      or w.apiVersion ~= "apps/v1" then
    return
  end
  local info = kinds.builtin.Pod
  local want = {}
  local rs_uid = w.kind == "Deployment" and self:_sync_replicasets(w) or nil
  for _, p in ipairs(ctl.pods(w, self:_nodes(), self.this_node_name,
                              rs_uid)) do
    want[p.metadata.name] = p
  end
  local bucket = self:_bucket(info)
  local ns = w.metadata.namespace
  for _, p in pairs(bucket) do
    if owned_by(p, w) and not want[p.metadata.name] then
      self:_remove(info, p)
    end
  end
  for name, p in pairs(want) do
    local cur = bucket[okey(ns, name)]
    if not (cur and equal(cur.status, p.status)
            and equal(cur.spec, p.spec)) then
      local md = p.metadata
      md.uid = cur and cur.metadata.uid or self:_next_uid()
      md.creationTimestamp = cur and cur.metadata.creationTimestamp
        or self.clock:timestamp()
      self:_seed_owner(info, p)
      self:_put(info, p)
    end
  end
end

-- Remove the Pods (and a Deployment's ReplicaSets) of a deleted workload
-- (the garbage collector, at once).
function Cluster:_drop_pods(w)
  if not ctl.POD_OWNERS[w.kind] then return end
  local info = kinds.builtin.Pod
  for _, p in pairs(self:_bucket(info)) do
    if owned_by(p, w) then self:_remove(info, p) end
  end
  if w.kind == "Deployment" then
    info = kinds.builtin.ReplicaSet
    for _, rs in pairs(self:_bucket(info)) do
      if owned_by(rs, w) then self:_remove(info, rs) end
    end
  end
end

-- The stored Node objects (the controllers only read them).
function Cluster:_nodes()
  local out = {}
  for _, n in pairs(self.store["/Node"] or {}) do out[#out + 1] = n end
  return out
end

-- DaemonSets follow the nodes: their number, readiness, labels and taints;
-- Deployments and StatefulSets whether any Ready node takes their pods.
function Cluster:_nodes_changed()
  local nodes = self:_nodes()
  for _, kind in ipairs({ "Deployment", "StatefulSet" }) do
    local info = kinds.builtin[kind]
    for k, w in pairs(self.store["apps/" .. kind] or {}) do
      local s = w.status
      if type(s) == "table" and ctl.observed(w)
          and not self.stalls["apps/" .. kind .. "/" .. k] then
        local want = ctl[kind](w, self.clock:timestamp(), false, nodes)
        if want.availableReplicas ~= s.availableReplicas
            or want.readyReplicas ~= s.readyReplicas
            or want.replicas ~= s.replicas then
          self:_sync_pods(self:_set_status(info, w, want))
        end
      end
    end
  end
  local info = kinds.builtin.DaemonSet
  for k, ds in pairs(self.store["apps/DaemonSet"] or {}) do
    local s = ds.status
    if type(s) == "table" and not self.stalls["apps/DaemonSet/" .. k] then
      local want = ctl.DaemonSet(ds, nil, false, nodes)
      if want.desiredNumberScheduled ~= s.desiredNumberScheduled
          or want.numberAvailable ~= s.numberAvailable
          or want.numberReady ~= s.numberReady then
        self:_sync_pods(self:_set_status(info, ds, want))
      end
    end
  end
end

-- "apps/Deployment/ns/name"
function Cluster:_stall_key(kind, name, namespace)
  local info = self:_resolve(kind)
  return gk(info) .. "/" .. okey(norm_ns(info, namespace), name), info
end

---Stall the rollouts of a workload: after a change its status stays
---behind (updated replicas short, observedGeneration caught up). With
---`seconds`, each stalled rollout finishes that many mock seconds later.
---A Job with `fail` fails instead (past its backoffLimit, as the fake API
---server's stall with "fail").
---@param kind string
---@param name string
---@param namespace? string
---@param seconds? number
---@param fail? boolean
function Cluster:stall(kind, name, namespace, seconds, fail)
  local key = self:_stall_key(kind, name, namespace)
  self.stalls[key] = { seconds = seconds, fail = fail or nil }
end

---Lift a stall and finish a pending rollout now.
---@param kind string
---@param name string
---@param namespace? string
function Cluster:unstall(kind, name, namespace)
  local key, info = self:_stall_key(kind, name, namespace)
  self.stalls[key] = nil
  local obj = self:_lookup(info, name, norm_ns(info, namespace))
  if obj and ctl.ROLLOUT[info.kind] then self:_complete(info, obj) end
end
end

return M
