--- uphook.backend.mock.validate: the API server's validation that a hook can run
--- into, with its messages.
---
--- Field errors are strings "path: Type: detail" as apimachinery prints
--- them. Values in "Invalid value:" are printed the way Kubernetes 1.32
--- does (Go's %#v: `v1.LabelSelector{MatchLabels:map[string]string{...},
--- ...}`, `[]string{"10.0.0.1"}`), like the fake API server in
--- tests/fakes, so the mock and the live path say the same thing.
local tables = require "uphook.core.tables"
local names = require "uphook.core.names"
local kinds = require "uphook.core.kinds"

local M = {}
local equal = tables.equal

-- Field order Go's encoding/json would use for the structs we print.
local ORDER = {
  matchLabels = 1, matchExpressions = 2,
  key = 1, operator = 2, values = 3,
  apiGroup = 1, kind = 2, name = 3,
  metadata = 1, spec = 2,
}

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local esc = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n",
                  ["\t"] = "\\t", ["\r"] = "\\r" }
    return esc[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

---Compact JSON of plain data, for messages (maps sorted like Go).
---@param v any
---@param null? any
---@return string
local function json(v, null)
  local t = type(v)
  if v == nil or (null ~= nil and v == null) then return "null" end
  if t == "string" then return json_string(v) end
  if t == "number" then
    return (math.type(v) == "integer" or v ~= math.floor(v))
           and tostring(v) or string.format("%d", v)
  end
  if t == "boolean" then return tostring(v) end
  if t ~= "table" then return json_string(tostring(v)) end
  if tables.is_list(v) then
    local out = {}
    for i, x in ipairs(v) do out[i] = json(x, null) end
    return "[" .. table.concat(out, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys, function(a, b)
    local pa, pb = ORDER[a] or 99, ORDER[b] or 99
    if pa ~= pb then return pa < pb end
    return a < b
  end)
  local out = {}
  for i, k in ipairs(keys) do
    out[i] = json_string(k) .. ":" .. json(v[k], null)
  end
  return "{" .. table.concat(out, ",") .. "}"
end
M.json = json

local SUFFIX = {
  [""] = 1, m = 1e-3, k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15,
  E = 1e18, Ki = 2 ^ 10, Mi = 2 ^ 20, Gi = 2 ^ 30, Ti = 2 ^ 40,
  Pi = 2 ^ 50, Ei = 2 ^ 60,
}

---Parse a Kubernetes quantity ("10Gi", "500M", "1.5", "1e3") into a
---number, or nil when malformed.
---@param q any
---@return number|nil
function M.quantity(q)
  if type(q) == "number" then return q end
  if type(q) ~= "string" then return nil end
  local num, suf = q:match("^([+-]?[%d.]+)(%a*)$")
  if num and SUFFIX[suf] and tonumber(num) then
    return tonumber(num) * SUFFIX[suf]
  end
  local n = tonumber(q)
  return n
end

local function get(t, ...)
  for i = 1, select("#", ...) do
    if type(t) ~= "table" then return nil end
    t = t[select(i, ...)]
  end
  return t
end
M.get = get

local function quote(s) return json_string(tostring(s)) end

local function go_map(m)
  if type(m) ~= "table" then return "map[string]string(nil)" end
  local keys, parts = {}, {}
  for k in pairs(m) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do
    parts[i] = quote(k) .. ":" .. quote(m[k])
  end
  return "map[string]string{" .. table.concat(parts, ", ") .. "}"
end

local function all_strings(t)
  for _, v in pairs(t) do
    if type(v) ~= "string" then return false end
  end
  return true
end

---A value as field.Invalid prints it (Kubernetes 1.32, Go %#v).
---@param v any
---@return string
local function go_value(v)
  local t = type(v)
  if v == nil then return "null" end
  if t == "string" then return quote(v) end
  if t == "number" or t == "boolean" then return tostring(v) end
  if t == "table" and all_strings(v) then
    if tables.is_list(v) then
      local parts = {}
      for i, x in ipairs(v) do parts[i] = quote(x) end
      return "[]string{" .. table.concat(parts, ", ") .. "}"
    end
    return go_map(v)
  end
  return json(v)
end

---%#v of a metav1.LabelSelector.
---@param sel table|nil
---@return string
local function go_selector(sel)
  sel = type(sel) == "table" and sel or {}
  local ex = "[]v1.LabelSelectorRequirement(nil)"
  if type(sel.matchExpressions) == "table" and sel.matchExpressions[1] then
    local parts = {}
    for i, e in ipairs(sel.matchExpressions) do
      local vals = "[]string(nil)"
      if type(e.values) == "table" then
        local vs = {}
        for j, x in ipairs(e.values) do vs[j] = quote(x) end
        vals = "[]string{" .. table.concat(vs, ", ") .. "}"
      end
      parts[i] = string.format(
        "v1.LabelSelectorRequirement{Key:%s, Operator:%s, Values:%s}",
        quote(e.key or ""), quote(e.operator or ""), vals)
    end
    ex = "[]v1.LabelSelectorRequirement{" .. table.concat(parts, ", ") .. "}"
  end
  return string.format("v1.LabelSelector{MatchLabels:%s, " ..
    "MatchExpressions:%s}", go_map(sel.matchLabels), ex)
end

local function immutable(path, shown)
  return string.format("%s: Invalid value: %s: field is immutable", path,
                       shown)
end

-- Spec selector vs template labels (apps and batch validation).
local function check_selector(obj, kind, errs)
  local sel = get(obj, "spec", "selector")
  if sel == nil then
    if kind ~= "Job" then errs[#errs + 1] = "spec.selector: Required value" end
    return
  end
  local labels = get(obj, "spec", "template", "metadata", "labels") or {}
  for k, v in pairs(type(sel.matchLabels) == "table" and sel.matchLabels
                    or {}) do
    if labels[k] ~= v then
      errs[#errs + 1] = "spec.template.metadata.labels: Invalid value: " ..
        go_map(labels) .. ": `selector` does not match template `labels`"
      return
    end
  end
end

local WORKLOADS = kinds.WORKLOADS

local SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower " ..
  "case alphanumeric characters, '-' or '.', and must start and end " ..
  "with an alphanumeric character (e.g. 'example.com', regex used for " ..
  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*" ..
  "[a-z0-9])?)*')"
local LABEL1123 = "a lowercase RFC 1123 label must consist of lower case " ..
  "alphanumeric characters or '-', and must start and end with an " ..
  "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used " ..
  "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
local LABEL1035 = "a DNS-1035 label must consist of lower case " ..
  "alphanumeric characters or '-', start with an alphabetic character, " ..
  "and end with an alphanumeric character (e.g. 'my-name',  or " ..
  "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

local function check_name(kind, group, name, errs)
  local bad
  if group == "rbac.authorization.k8s.io" then
    if name == "." or name == ".." or name:find("[/%%]") then
      errs[#errs + 1] = string.format(
        'metadata.name: Invalid value: %s: may not contain "/" or "%%"',
        quote(name))
    end
    return
  end
  if kind == "Service" then
    bad = not (names.is_label(name) and name:match("^[a-z]")) and LABEL1035
  elseif kind == "Namespace" then
    bad = not names.is_label(name) and LABEL1123
  else
    bad = not names.is_subdomain(name) and SUBDOMAIN
  end
  if bad then
    errs[#errs + 1] = string.format("metadata.name: Invalid value: %s: %s",
                                    quote(name), bad)
  end
end

local service_type_errors   -- below, with the Service update rules

---Field errors for creating `obj` (a KindInfo `info`).
---@param info KindInfo
---@param obj table
---@return string[]
function M.create(info, obj)
  local errs = {}
  check_name(info.kind, info.group, obj.metadata.name, errs)
  if WORKLOADS[info.kind] then check_selector(obj, info.kind, errs) end
  if info.kind == "Service" and info.versions == nil then
    service_type_errors(obj.spec, errs)
  end
  if info.kind == "CustomResourceDefinition" then
    local plural = get(obj, "spec", "names", "plural")
    local group = get(obj, "spec", "group")
    if type(plural) ~= "string" or type(group) ~= "string"
        or obj.metadata.name ~= plural .. "." .. group then
      errs[#errs + 1] = string.format('metadata.name: Invalid value: %s: ' ..
        'must be spec.names.plural+"."+spec.group', quote(obj.metadata.name))
    end
  end
  return errs
end

local update = {}

function update.StorageClass(old, new, errs)
  if not equal(old.parameters, new.parameters) then
    errs[#errs + 1] = "parameters: Forbidden: updates to parameters are " ..
                      "forbidden."
  end
  if old.provisioner ~= new.provisioner then
    errs[#errs + 1] = "provisioner: Forbidden: updates to provisioner " ..
                      "are forbidden."
  end
  if old.reclaimPolicy ~= new.reclaimPolicy then
    errs[#errs + 1] = "reclaimPolicy: Forbidden: updates to " ..
                      "reclaimPolicy are forbidden."
  end
  if old.volumeBindingMode ~= new.volumeBindingMode then
    errs[#errs + 1] = immutable("volumeBindingMode",
                                go_value(new.volumeBindingMode))
  end
end

local function selector_immutable(old, new, errs)
  local a, b = get(old, "spec", "selector"), get(new, "spec", "selector")
  if not equal(a, b) then
    errs[#errs + 1] = immutable("spec.selector", go_selector(b))
  end
end

function update.Deployment(old, new, errs)
  check_selector(new, "Deployment", errs)
  selector_immutable(old, new, errs)
end
update.DaemonSet = update.Deployment
update.ReplicaSet = update.Deployment

local STS_MUTABLE = { replicas = true, ordinals = true, template = true,
  updateStrategy = true, persistentVolumeClaimRetentionPolicy = true,
  minReadySeconds = true }

function update.StatefulSet(old, new, errs)
  check_selector(new, "StatefulSet", errs)
  local a, b = old.spec or {}, new.spec or {}
  for _, pair in ipairs({ { a, b }, { b, a } }) do
    for k, v in pairs(pair[1]) do
      if not STS_MUTABLE[k] and not equal(v, pair[2][k]) then
        errs[#errs + 1] = "spec: Forbidden: updates to statefulset spec " ..
          "for fields other than 'replicas', 'ordinals', 'template', " ..
          "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' " ..
          "and 'minReadySeconds' " ..
          "are forbidden"
        return
      end
    end
  end
end

function update.Job(old, new, errs)
  selector_immutable(old, new, errs)
  local a, b = get(old, "spec", "template"), get(new, "spec", "template")
  if not equal(a, b) then
    errs[#errs + 1] = immutable("spec.template",
                                "core.PodTemplateSpec" .. json(b))
  end
end

-- Service update validation (core ValidateServiceUpdate, in its order:
-- validateUpgradeDowngradeClusterIPs, validateUpgradeDowngradeIPFamilies,
-- validateLoadBalancerClassField, then ValidateService's checks that
-- depend on the type). The strategy has already dropped the fields a
-- type change leaves behind (M.drop_type_dependent).
local function headless(spec)
  return type(spec) == "table" and spec.clusterIP == "None"
end

local function family_of(ip)
  return tostring(ip):find(":", 1, true) and "IPv6" or "IPv4"
end

-- The families a Service has: its ipFamilies, or (the mock does not
-- store the default) those of its cluster IPs, as the server fills them.
local function families(spec)
  if type(spec) ~= "table" then return {} end
  if type(spec.ipFamilies) == "table" then return spec.ipFamilies end
  local out = {}
  for i, ip in ipairs(type(spec.clusterIPs) == "table" and spec.clusterIPs
                      or { spec.clusterIP }) do
    if ip ~= "None" and ip ~= "" then out[i] = family_of(ip) end
  end
  return out
end

local function go_families(f)
  local parts = {}
  for i, x in ipairs(f) do parts[i] = quote(x) end
  return "[]core.IPFamily{" .. table.concat(parts, ", ") .. "}"
end

-- core ValidateService's ExternalName case (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go): no cluster IPs or IP families
-- (the strategy has put clusterIP into clusterIPs before), and an
-- externalName that is a DNS-1123 subdomain, a trailing dot allowed.
local EXT_FORBIDDEN = "Forbidden: may not be set for ExternalName services"

local function external_name_errors(spec, errs)
  local ips = spec.clusterIPs
  if (type(ips) == "table" and ips[1] ~= nil)
      or (type(spec.clusterIP) == "string" and spec.clusterIP ~= "") then
    errs[#errs + 1] = "spec.clusterIPs: " .. EXT_FORBIDDEN
  end
  if type(spec.ipFamilies) == "table" and spec.ipFamilies[1] ~= nil then
    errs[#errs + 1] = "spec.ipFamilies: " .. EXT_FORBIDDEN
  end
  if spec.ipFamilyPolicy ~= nil then
    errs[#errs + 1] = "spec.ipFamilyPolicy: " .. EXT_FORBIDDEN
  end
  local name = type(spec.externalName) == "string" and spec.externalName
    or ""
  local clean = name:gsub("%.$", "")
  if clean == "" then
    errs[#errs + 1] = "spec.externalName: Required value"
  elseif not names.is_subdomain(clean) then
    errs[#errs + 1] = string.format("spec.externalName: Invalid value: " ..
      "%s: %s", quote(name), SUBDOMAIN)
  end
end

function service_type_errors(spec, errs)
  if type(spec) ~= "table" then return end
  if spec.type == "ExternalName" then external_name_errors(spec, errs) end
  if (spec.type or "ClusterIP") == "ClusterIP" then
    for i, p in ipairs(type(spec.ports) == "table" and spec.ports or {}) do
      if type(p) == "table" and p.nodePort ~= nil and p.nodePort ~= 0 then
        errs[#errs + 1] = string.format("spec.ports[%d].nodePort: " ..
          "Forbidden: may not be used when `type` is 'ClusterIP'", i - 1)
      end
    end
  end
end

function update.Service(old, new, errs)
  local os_, ns = old.spec or {}, new.spec or {}
  local ext = os_.type == "ExternalName" or ns.type == "ExternalName"
  if not ext then
    local a, b = os_.clusterIP, ns.clusterIP
    if a and a ~= "" and b ~= a then
      local ips = ns.clusterIPs
      if type(ips) ~= "table" or ips[1] ~= b then ips = { b } end
      errs[#errs + 1] = "spec.clusterIPs[0]: Invalid value: " ..
                        go_value(ips) .. ": may not change once set"
    end
  end
  if not ext and not headless(os_) and not headless(ns)
      and type(ns.ipFamilies) == "table" then
    local a, b = families(os_), ns.ipFamilies
    local changed = false
    if #a == #b then
      for i = 1, #a do if a[i] ~= b[i] then changed = true end end
    elseif #a > #b and #b > 0 then
      changed = a[1] ~= b[1]
    end
    if changed then
      errs[#errs + 1] = "spec.ipFamilies[0]: Invalid value: " ..
        go_families(b) .. ": may not change once set"
    end
  end
  if os_.type == "LoadBalancer" and ns.type == "LoadBalancer"
      and os_.loadBalancerClass ~= ns.loadBalancerClass then
    errs[#errs + 1] = "spec.loadBalancerClass: Invalid value: " ..
      go_value(ns.loadBalancerClass) .. ": may not change once set"
  end
  service_type_errors(ns, errs)
  -- validateServiceClusterIPsRelatedFields: each cluster IP of the
  -- family ipFamilies names
  if not ext and not headless(ns) and type(ns.ipFamilies) == "table" then
    for i, ip in ipairs(type(ns.clusterIPs) == "table" and ns.clusterIPs
                        or {}) do
      local want = ns.ipFamilies[i]
      if want and want ~= family_of(ip) then
        errs[#errs + 1] = string.format("spec.clusterIPs[%d]: Invalid " ..
          "value: %s: expected an %s value as indicated by `ipFamilies[%d]`",
          i - 1, quote(ip), want, i - 1)
      end
    end
  end
end

local function same_node_ports(a, b)
  local had = {}
  for _, p in ipairs(type(a.ports) == "table" and a.ports or {}) do
    if type(p) == "table" and p.nodePort then had[p.nodePort] = true end
  end
  for _, p in ipairs(type(b.ports) == "table" and b.ports or {}) do
    if type(p) == "table" and p.nodePort and not had[p.nodePort] then
      return false
    end
  end
  return true
end

---What the Service strategy does to an update before validation (core
---registry service/strategy.go dropTypeDependentFields): a type change
---drops the fields the new type has no use for, when the request left
---them as they were (so a changed one is still refused). In place on
---`new`, a fresh copy.
---@param old table
---@param new table
function M.drop_type_dependent(old, new)
  local a, b = old.spec, new.spec
  if type(a) ~= "table" or type(b) ~= "table" then return end
  local ta, tb = a.type or "ClusterIP", b.type or "ClusterIP"
  if ta == tb then return end
  -- the merged spec may share subtrees with the stored object
  b = tables.shallow(b)
  new.spec = b
  if type(b.ports) == "table" then b.ports = tables.copy(b.ports) end
  if ta ~= "ExternalName" and tb == "ExternalName" then
    if equal(a.clusterIP, b.clusterIP) and equal(a.clusterIPs, b.clusterIPs)
    then
      b.clusterIP, b.clusterIPs = nil, nil
    end
    if equal(a.ipFamilies, b.ipFamilies) then b.ipFamilies = nil end
    if equal(a.ipFamilyPolicy, b.ipFamilyPolicy) then
      b.ipFamilyPolicy = nil
    end
  end
  local np = { NodePort = true, LoadBalancer = true }
  if np[ta] and not np[tb] then
    if same_node_ports(a, b) then
      for _, p in ipairs(type(b.ports) == "table" and b.ports or {}) do
        if type(p) == "table" then p.nodePort = nil end
      end
    end
    if a.externalTrafficPolicy == b.externalTrafficPolicy
        and not (type(b.externalIPs) == "table" and b.externalIPs[1]) then
      b.externalTrafficPolicy = nil
    end
  end
  if ta == "LoadBalancer" and tb ~= "LoadBalancer" then
    if a.healthCheckNodePort == b.healthCheckNodePort then
      b.healthCheckNodePort = nil
    end
    if a.allocateLoadBalancerNodePorts == b.allocateLoadBalancerNodePorts
    then
      b.allocateLoadBalancerNodePorts = nil
    end
    if a.loadBalancerClass == b.loadBalancerClass then
      b.loadBalancerClass = nil
    end
    if type(new.status) == "table" then new.status = { loadBalancer = {} } end
  end
end

local PVC_SPEC_MSG = "spec: Forbidden: spec is immutable after creation " ..
  "except resources.requests and volumeAttributesClassName for bound claims"

local function go_field(k)
  return k:sub(1, 1):upper() .. k:sub(2)
end

-- The tail of an immutable-spec message: the fields of the two specs
-- that differ, as the API server's cmp.Diff prints them (one "-" line
-- of the old value and one "+" line of the new, in key order).
local function spec_diff(go_type, a, b)
  local diff = { "\n  " .. go_type .. "{" }
  local keys = {}
  for k in pairs(a) do keys[#keys + 1] = k end
  for k in pairs(b) do if a[k] == nil then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if not equal(a[k], b[k]) then
      diff[#diff + 1] = string.format("- \t%s: %s,", go_field(k),
                                      go_value(a[k]))
      diff[#diff + 1] = string.format("+ \t%s: %s,", go_field(k),
                                      go_value(b[k]))
    end
  end
  diff[#diff + 1] = "  }\n"
  return table.concat(diff, "\n")
end

function update.PersistentVolumeClaim(old, new, errs)
  local a, b = tables.copy(old.spec or {}), tables.copy(new.spec or {})
  local bound = get(old, "status", "phase") == "Bound"
  local old_req = get(a, "resources", "requests", "storage")
  local new_req = get(b, "resources", "requests", "storage")
  if bound then
    if type(a.resources) == "table" then a.resources.requests = nil end
    if type(b.resources) == "table" then b.resources.requests = nil end
  end
  a.volumeAttributesClassName, b.volumeAttributesClassName = nil, nil
  if a.volumeName == nil or a.volumeName == "" then
    a.volumeName = b.volumeName   -- binding sets it once
  end
  if a.storageClassName == nil then
    a.storageClassName = b.storageClassName -- retroactive default class
  end
  if not equal(a, b) then
    errs[#errs + 1] = PVC_SPEC_MSG ..
                      spec_diff("core.PersistentVolumeClaimSpec", a, b)
  end
  local os_, ns = M.quantity(old_req), M.quantity(new_req)
  if os_ and ns and ns < os_ then
    local cap = M.quantity(get(old, "status", "capacity", "storage"))
    if cap and ns <= cap then
      errs[#errs + 1] = "spec.resources.requests.storage: Forbidden: " ..
                        "field can not be less than status.capacity"
    elseif not cap then
      errs[#errs + 1] = "spec.resources.requests.storage: Forbidden: " ..
                        "field can not be less than previous value"
    end
  end
end

-- core ValidatePodUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go): containers may not be added
-- or removed (ValidateContainerUpdates), and the spec may not change but
-- for the fields it munges before comparing: the containers' and init
-- containers' images, activeDeadlineSeconds, tolerations (additions),
-- schedulingGates (removals), a negative terminationGracePeriodSeconds
-- set to 1. The real message goes on with a cmp.Diff of the specs.
local POD_UPDATABLE = "pod updates may not change fields other than " ..
  "`spec.containers[*].image`,`spec.initContainers[*].image`," ..
  "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to " ..
  "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it " ..
  "to be set to 1 if it was previously negative)"

function update.Pod(old, new, errs)
  local a, b = old.spec or {}, tables.copy(new.spec or {})
  for _, f in ipairs({ "containers", "initContainers" }) do
    local oc = type(a[f]) == "table" and a[f] or {}
    local nc = type(b[f]) == "table" and b[f] or {}
    if #oc ~= #nc then
      errs[#errs + 1] = "spec." .. f .. ": Forbidden: pod updates may " ..
                        "not add or remove containers"
      return
    end
    for i, c in ipairs(nc) do
      if type(c) == "table" and type(oc[i]) == "table" then
        c.image = oc[i].image
      end
    end
  end
  b.activeDeadlineSeconds = a.activeDeadlineSeconds
  b.tolerations, b.schedulingGates = a.tolerations, a.schedulingGates
  local tg = a.terminationGracePeriodSeconds
  if type(tg) == "number" and tg < 0 and b.terminationGracePeriodSeconds == 1
  then
    b.terminationGracePeriodSeconds = tg
  end
  if not equal(a, b) then
    errs[#errs + 1] = "spec: Forbidden: " .. POD_UPDATABLE ..
                      spec_diff("core.PodSpec", a, b)
  end
end

local function immutable_data(old, new, errs)
  if old.immutable ~= true then return end
  if not equal(old.data, new.data) then
    errs[#errs + 1] = "data: Forbidden: field is immutable when " ..
                      "`immutable` is set"
  end
  if not equal(old.binaryData, new.binaryData) then
    errs[#errs + 1] = "binaryData: Forbidden: field is immutable when " ..
                      "`immutable` is set"
  end
  if new.immutable ~= true then
    errs[#errs + 1] = "immutable: Forbidden: field is immutable when " ..
                      "`immutable` is set"
  end
end
update.ConfigMap = immutable_data
update.Secret = immutable_data

function update.RoleBinding(old, new, errs)
  if not equal(old.roleRef, new.roleRef) then
    local r = type(new.roleRef) == "table" and new.roleRef or {}
    errs[#errs + 1] = string.format("roleRef: Invalid value: " ..
      "rbac.RoleRef{APIGroup:%s, Kind:%s, Name:%s}: cannot change roleRef",
      quote(r.apiGroup or ""), quote(r.kind or ""), quote(r.name or ""))
  end
end
update.ClusterRoleBinding = update.RoleBinding

function update.CustomResourceDefinition(old, new, errs)
  local a, b = get(old, "spec", "scope"), get(new, "spec", "scope")
  if a ~= b then errs[#errs + 1] = immutable("spec.scope", go_value(b)) end
  a, b = get(old, "spec", "group"), get(new, "spec", "group")
  if a ~= b then errs[#errs + 1] = immutable("spec.group", go_value(b)) end
end

-- Fields that may not change once set, as data: kind -> { path, rule,
-- source }. rule "immutable" is apimachinery's ValidateImmutableField
-- ("<path>: Invalid value: <new>: field is immutable"); "forbidden" a
-- field.Forbidden with the given detail. Sources are Kubernetes 1.32's
-- update validation (kubernetes/kubernetes@v1.32.3):
--   N  pkg/apis/networking/validation/validation.go ValidateIngressClassUpdate
--   S  pkg/apis/storage/validation/validation.go ValidateCSIDriverUpdate
--      (attachRequired; podInfoOnMount and fsGroupPolicy mutable since 1.29),
--      ValidateVolumeAttachmentUpdate
--   C  pkg/apis/core/validation/validation.go ValidateSecretUpdate,
--      ValidatePersistentVolumeUpdate
--   P  pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate
--   B  pkg/apis/batch/validation/validation.go validateJobSpecUpdate,
--      validateCompletions (elastic: an Indexed Job's completions may
--      change in tandem with parallelism, ElasticIndexedJob GA in 1.31)
M.IMMUTABLE = {
  IngressClass = {
    { path = { "spec", "controller" }, rule = "immutable", source = "N" } },
  CSIDriver = {
    { path = { "spec", "attachRequired" }, rule = "immutable", source = "S" } },
  VolumeAttachment = {
    { path = { "spec" }, rule = "immutable", source = "S" } },
  Secret = { { path = { "type" }, rule = "immutable", source = "C" } },
  PriorityClass = { { path = { "value" }, rule = "forbidden",
    detail = "may not be changed in an update.", source = "P" } },
  PersistentVolume = {
    { path = { "spec", "volumeMode" }, rule = "immutable", source = "C" } },
  Job = {
    { path = { "spec", "completions" }, rule = "immutable", source = "B",
      elastic = true },
    { path = { "spec", "completionMode" }, rule = "immutable", source = "B" },
    { path = { "spec", "podFailurePolicy" }, rule = "immutable",
      source = "B" },
    { path = { "spec", "backoffLimitPerIndex" }, rule = "immutable",
      source = "B" } },
}

-- PersistentVolume: the volume source is fixed once created (C).
local PV_SOURCE_SKIP = { capacity = true, accessModes = true,
  claimRef = true, persistentVolumeReclaimPolicy = true,
  storageClassName = true, mountOptions = true, volumeMode = true,
  nodeAffinity = true, volumeAttributesClassName = true }

local function pv_source(spec)
  local out = {}
  for k, v in pairs(type(spec) == "table" and spec or {}) do
    if not PV_SOURCE_SKIP[k] then out[k] = v end
  end
  return out
end

local function check_immutable(kind, old, new, errs)
  for _, f in ipairs(M.IMMUTABLE[kind] or {}) do
    local a, b = get(old, table.unpack(f.path)), get(new, table.unpack(f.path))
    if not equal(a, b) then
      local path = table.concat(f.path, ".")
      if f.rule == "forbidden" then
        errs[#errs + 1] = path .. ": Forbidden: " .. f.detail
      elseif f.elastic and get(new, "spec", "completionMode") == "Indexed" then
        -- an Indexed Job scales: completions with parallelism (nil is
        -- refused by the spec's own validation)
        local par = get(new, "spec", "parallelism")
        if b ~= nil and b ~= (par == nil and 1 or par) then
          errs[#errs + 1] = path .. ": Invalid value: " .. go_value(b) ..
            ": can only be modified in tandem with spec.parallelism"
        end
      else
        errs[#errs + 1] = immutable(path, go_value(b))
      end
    end
  end
  if kind == "PersistentVolume"
      and not equal(pv_source(old.spec), pv_source(new.spec)) then
    errs[#errs + 1] = "spec.persistentvolumesource: Forbidden: " ..
      "spec.persistentvolumesource is immutable after creation"
  end
end

---Field errors for changing `old` into `new` (both full objects).
---@param info KindInfo
---@param old table
---@param new table
---@return string[]
function M.update(info, old, new)
  local errs = {}
  if info.versions ~= nil then return errs end
  local f = update[info.kind]
  if f then f(old, new, errs) end
  check_immutable(info.kind, old, new, errs)
  return errs
end

return M
