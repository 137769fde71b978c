--- uphook.backend.mock.storage: what the mock API server's storage layer
--- does to every write, after the field manager: a Service's cluster IP
--- allocated (the requested one kept when free), a new PVC given the
--- default StorageClass, a Secret's stringData folded into data. Methods
--- of the mock cluster (lua/backend/mock/cluster.lua installs them).
local refusals = require "uphook.backend.mock.refusals"
local validate = require "uphook.backend.mock.validate"
local ctl = require "uphook.backend.mock.controllers"

local M = {}

--- The Service cluster IP range MicroK8s uses (10.152.183.0/24).
M.SERVICE_CIDR = "10.152.183."

local function raise(e) error(e, 0) end

---Give the mock cluster's class these methods.
---@param Cluster table the class of lua/backend/mock/cluster.lua
function M.install(Cluster)


function Cluster:_alloc_ip()
  for i = 2, 254 do
    local ip = M.SERVICE_CIDR .. i
    if i ~= 10 and not self.ips[ip] then return ip end
  end
  error("mock cluster: service CIDR exhausted")
end

-- Service cluster IPs: keep the requested one if free, else allocate.
function Cluster:_service_ip(info, obj, old)
  local spec = obj.spec
  if type(spec) ~= "table" or spec.type == "ExternalName" then return end
  local want = spec.clusterIP
  if (want == nil or want == "") and old then
    want = validate.get(old, "spec", "clusterIP")   -- PUT keeps it
    spec.clusterIP = want
    spec.clusterIPs = self:_copy(validate.get(old, "spec", "clusterIPs"))
  end
  if want == "None" then
    if spec.clusterIPs == nil then spec.clusterIPs = { "None" } end
    return
  end
  if want == nil or want == "" then
    want = self:_alloc_ip()
    spec.clusterIP = want
  elseif not old and self.ips[want] then
    raise(refusals.invalid(info, obj.metadata.name, {
      string.format('spec.clusterIPs: Invalid value: []string{"%s"}: ' ..
        'failed to allocate IP %s: provided IP is already allocated',
        want, want) }))
  end
  if spec.clusterIPs == nil then spec.clusterIPs = { want } end
end

-- Secret stringData is write-only: the server folds it into data.
local function fold_string_data(obj)
  if type(obj.stringData) ~= "table" then return end
  obj.data = type(obj.data) == "table" and obj.data or {}
  for k, v in pairs(obj.stringData) do
    obj.data[k] = ctl.base64(tostring(v))
  end
  obj.stringData = nil
end

function Cluster:_default_class()
  for _, sc in pairs(self.store["storage.k8s.io/StorageClass"] or {}) do
    local a = sc.metadata.annotations
    if type(a) == "table"
        and a["storageclass.kubernetes.io/is-default-class"] == "true" then
      return sc.metadata.name
    end
  end
end

-- What the storage layer does to every write (in place), after the
-- field manager: allocate a Service's cluster IP, give a new PVC the
-- default class, fold a Secret's stringData into data.
function Cluster:_storage(info, obj, old)
  if info.kind == "Secret" then fold_string_data(obj) end
  if info.kind == "Service" then
    if old then validate.drop_type_dependent(old, obj) end
    self:_service_ip(info, obj, old)
  end
  if info.kind == "PersistentVolumeClaim" and not old
      and type(obj.spec) == "table" and obj.spec.storageClassName == nil then
    obj.spec.storageClassName = self:_default_class()
  end
end

end

return M
