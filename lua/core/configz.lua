--- uphook.core.configz: which kubelet flags a node's running configuration
--- shows, and where (docs/contract.md §4, `nodes.kubelet_config`).
---
--- `GET /api/v1/nodes/<name>/proxy/configz` is the only remote read of a
--- node setting Kubernetes offers. The engine reads the prior value of a
--- kubelet flag on another node from it (lua/engine/nodes.lua); the mock derives
--- each node's configz from the kubelet args that node's kubelet last
--- started with (lua/backend/mock/agent.lua). This table is the one home of the
--- mapping: data only, no imports.
---
--- `default` is what the kubelet runs with when the flag is absent: the
--- flag defaults, as MicroK8s runs it (flags only, no --config file).
--- Flags whose values are paths with `${SNAP_DATA}` (expanded by the snap
--- wrapper, so never equal to the file's text) are left out.
local M = {}

---@class uphook.ConfigzFlag
---@field path string[]   keys in the kubeletconfig object
---@field type "string"|"list"|"bool"|"number"
---@field default? string the value when the flag is absent (nil: none shown)

---@type table<string, uphook.ConfigzFlag>
M.FLAGS = {
  ["--cluster-dns"] = { path = { "clusterDNS" }, type = "list" },
  ["--cluster-domain"] = { path = { "clusterDomain" }, type = "string",
    default = "" },
  ["--resolv-conf"] = { path = { "resolvConf" }, type = "string",
    default = "/etc/resolv.conf" },
  ["--authentication-token-webhook"] = {
    path = { "authentication", "webhook", "enabled" }, type = "bool",
    default = "false" },
  ["--anonymous-auth"] = { path = { "authentication", "anonymous",
    "enabled" }, type = "bool", default = "true" },
  ["--authorization-mode"] = { path = { "authorization", "mode" },
    type = "string", default = "AlwaysAllow" },
  ["--read-only-port"] = { path = { "readOnlyPort" }, type = "number",
    default = "10255" },
  ["--fail-swap-on"] = { path = { "failSwapOn" }, type = "bool",
    default = "true" },
  ["--max-pods"] = { path = { "maxPods" }, type = "number",
    default = "110" },
  ["--serialize-image-pulls"] = { path = { "serializeImagePulls" },
    type = "bool", default = "true" },
  ["--cgroup-driver"] = { path = { "cgroupDriver" }, type = "string",
    default = "cgroupfs" },
  ["--tls-cipher-suites"] = { path = { "tlsCipherSuites" }, type = "list" },
}

---The flag's value as a kubeletconfig shows it, as the string the args
---file would hold (`"10.152.183.10,fd00::a"`, `"true"`, `"0"`), or nil
---when the kubelet shows none.
---@param kc table the `kubeletconfig` object
---@param flag string
---@param null? any the host's null value
---@return string|nil
function M.value(kc, flag, null)
  local f = M.FLAGS[flag]
  if not f or type(kc) ~= "table" then return nil end
  local v = kc
  for _, k in ipairs(f.path) do
    if type(v) ~= "table" then return nil end
    v = v[k]
  end
  if v == nil or v == null then return nil end
  if f.type == "list" then
    if type(v) ~= "table" then return nil end
    local parts = {}
    for _, x in ipairs(v) do parts[#parts + 1] = tostring(x) end
    return #parts > 0 and table.concat(parts, ",") or nil
  elseif f.type == "number" and math.type(v) == "float"
         and v == math.floor(v) then
    return string.format("%d", v)
  end
  return tostring(v)
end

---Normalize an args-file value for comparison with configz: a bare
---boolean flag (`true`) is `"true"`.
---@param v string|boolean|nil
---@return string|nil
function M.normal(v)
  if v == true then return "true" end
  if v == false then return nil end
  return v
end

---The kubeletconfig a kubelet started with these parsed args shows
---(the mock's configz): every mapped flag, its default when absent.
---@param args table<string, string|true> parsed kubelet args
---@return table kubeletconfig
function M.derive(args)
  local kc = {}
  for flag, f in pairs(M.FLAGS) do
    local s = M.normal(args[flag]) or f.default
    if s ~= nil then
      local v
      if f.type == "list" then
        v = {}
        for x in s:gmatch("[^,]+") do v[#v + 1] = x end
      elseif f.type == "bool" then v = s == "true"
      elseif f.type == "number" then v = math.tointeger(tonumber(s)) or s
      else v = s end
      local t = kc
      for i = 1, #f.path - 1 do
        t[f.path[i]] = t[f.path[i]] or {}
        t = t[f.path[i]]
      end
      t[f.path[#f.path]] = v
    end
  end
  return kc
end

return M
