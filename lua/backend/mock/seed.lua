--- uphook.backend.mock.seed: how a fixture's objects are stored as if the
--- cluster had made them (server fields, the API defaults, a settled
--- status where the fixture has none, the workloads' Pods), and who made
--- an object no request wrote: the managers a fixture's object without
--- managedFields, or a controller's Pod or ReplicaSet, is owned by.
--- Methods of the mock cluster (lua/backend/mock/cluster.lua installs
--- them).
local kinds = require "uphook.backend.mock.kinds"
local fieldmanager = require "uphook.backend.mock.fieldmanager"
local fieldset = require "uphook.core.fieldset"
local tables = require "uphook.core.tables"
local names = require "uphook.core.kinds"
local ctl = require "uphook.backend.mock.controllers"

local M = {}
local copy, shallow = tables.copy, tables.shallow
local norm_ns = kinds.norm_ns

-- Who made an object of a fixture that has no managedFields: the
-- controllers and kubelet made what they make, the API server its own
-- namespaces and Service; kubectl apply (client side, as `microk8s
-- enable` runs it) the rest, with its last-applied-configuration.
local SYSTEM_MADE = { Node = "kubelet", Pod = "kube-controller-manager",
  ReplicaSet = "kube-controller-manager",
  ControllerRevision = "kube-controller-manager",
  Endpoints = "kube-controller-manager",
  EndpointSlice = "kube-controller-manager",
  Event = "kube-controller-manager",
  PersistentVolume = "kube-controller-manager" }
M.CLIENT_SIDE_APPLY = "kubectl-client-side-apply"

---Give the mock cluster's class these methods.
---@param Cluster table the class of lua/backend/mock/cluster.lua
---@param builtin_ns table<string, boolean> the namespaces every cluster has
function M.install(Cluster, builtin_ns)

---Seed a fixture's objects: CRDs first, then the rest, then the
---workloads' Pods where the fixture lists none.
function Cluster:_seed_all(objs)
  self.seeding = true        -- Pods at the end, where the fixture has none
  -- CRDs first, so custom resources in the same fixture resolve.
  for _, o in ipairs(objs) do
    if type(o) == "table" and o.kind == "CustomResourceDefinition" then
      self:_seed(o)
    end
  end
  for _, o in ipairs(objs) do
    if type(o) ~= "table" or o.kind ~= "CustomResourceDefinition" then
      self:_seed(o)
    end
  end
  -- the workloads' Pods, where the fixture lists none of them
  self.seeding = nil
  for kind in pairs(ctl.POD_OWNERS) do
    for _, w in pairs(self.store["apps/" .. kind] or {}) do
      if not self:_has_pods(w) then self:_sync_pods(w) end
    end
  end
end

---Give a fixture's object, or a controller's, the managedFields of who
---made it (SYSTEM_MADE above; kubectl apply with its
---last-applied-configuration for the rest).
function Cluster:_seed_owner(info, obj)
  local md = obj.metadata
  local who = not info.versions and SYSTEM_MADE[info.kind]
  if not who and ((info.kind == "Namespace" and not info.versions
                   and builtin_ns[md.name])
                  or (info.kind == "Service" and md.name == "kubernetes"
                      and md.namespace == "default")) then
    who = "kube-apiserver"
  end
  if not who then
    who = M.CLIENT_SIDE_APPLY
    local a = type(md.annotations) == "table" and md.annotations or nil
    if self.json_encode and not (a and a[fieldset.LAST_APPLIED]) then
      local applied = names.clean(obj)
      local amd = applied.metadata
      amd.annotations = a and shallow(a) or nil
      if amd.annotations then amd.annotations[fieldset.LAST_APPLIED] = nil end
      if amd.annotations and next(amd.annotations) == nil then
        amd.annotations = nil
      end
      if not info.namespaced then amd.namespace = nil end
      md.annotations = a or {}
      md.annotations[fieldset.LAST_APPLIED] = self.json_encode(applied) .. "\n"
    end
  end
  local content = shallow(obj)
  if info.status then content.status = nil end
  fieldmanager.update(self.ssa, self:_ref(info), nil, content,
                      self:_fm(who, obj.apiVersion, { sent = {} }))
  md.managedFields = content.metadata.managedFields
end

---Store one fixture object as the API server would have stored it.
function Cluster:_seed(o)
  if type(o) ~= "table" or type(o.apiVersion) ~= "string"
      or type(o.kind) ~= "string" or type(o.metadata) ~= "table"
      or type(o.metadata.name) ~= "string" then
    error("mock cluster: a fixture object needs apiVersion, kind and " ..
          "metadata.name", 3)
  end
  local info = self:_resolve(o.apiVersion .. "/" .. o.kind)
  -- stored as the API server stores what it decodes: a null field (an
  -- empty `data:` in a manifest) is no field
  local obj = copy(self:_copy(o), self.null, true)
  local md = obj.metadata
  md.namespace = norm_ns(info, md.namespace)
  if md.uid == nil then md.uid = self:_next_uid() end
  if md.creationTimestamp == nil or md.creationTimestamp == self.null then
    md.creationTimestamp = self.clock:timestamp()
  end
  if info.gen and md.generation == nil then md.generation = 1 end
  local rv = tonumber(md.resourceVersion)
  if rv and rv > self.rv then self.rv = math.floor(rv) end
  self:_defaults(info, obj)
  if md.managedFields == nil or md.managedFields == self.null then
    self:_seed_owner(info, obj)
  end
  self:_storage(info, obj, nil)
  local given = md.resourceVersion
  self:_put(info, obj)
  if given ~= nil then md.resourceVersion = given end
  if info.kind == "CustomResourceDefinition" then self:_refresh_custom() end
  -- A fixture without status describes a settled cluster.
  if obj.status == nil then
    local before = md.resourceVersion
    self:_reconcile(info, obj)
    local cur = self:_lookup(info, md.name, md.namespace)
    cur.metadata.resourceVersion = before   -- ours: made just now
  end
end

end

return M
