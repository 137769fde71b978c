--- uphook.mock.merge: the server-side apply merge of the mock cluster.
---
--- The merge is what a hook can observe of server-side apply with
--- conflicts forced: maps merge recursively and keep the fields the
--- applied object does not set; the associative lists below merge item
--- by item on their keys; every other list is replaced (atomic).
--- A value equal to `null` in the applied object removes the field.
local M = {}

local tables = require "uphook.tables"

local copy, is_list = tables.copy, tables.is_list

local function key_of(fields)
  return function(item)
    if type(item) ~= "table" then return nil end
    local parts = {}
    for i, f in ipairs(fields) do
      local x = item[f]
      if x == nil then
        if f == "protocol" then x = "TCP" else return nil end
      end
      parts[i] = tostring(x)
    end
    return table.concat(parts, "\0")
  end
end

local BY_NAME = key_of({ "name" })
local CONTAINER_PORT = key_of({ "containerPort", "protocol" })
local SERVICE_PORT = key_of({ "port", "protocol" })

-- Associative lists by field name (x-kubernetes-list-map-keys).
local KEYED = {
  containers = BY_NAME, initContainers = BY_NAME,
  ephemeralContainers = BY_NAME, env = BY_NAME, volumes = BY_NAME,
  imagePullSecrets = BY_NAME, webhooks = BY_NAME,
  volumeMounts = key_of({ "mountPath" }),
  volumeDevices = key_of({ "devicePath" }),
  hostAliases = key_of({ "ip" }),
  conditions = key_of({ "type" }),
  ownerReferences = key_of({ "uid" }),
  topologySpreadConstraints = key_of({ "topologyKey", "whenUnsatisfiable" }),
  resourceClaims = BY_NAME,
}

-- The key function for a list field in context, or nil (atomic).
local function list_key(field, parent_field, kind)
  if field == "ports" then
    if parent_field == "containers" or parent_field == "initContainers"
        or parent_field == "ephemeralContainers" then
      return CONTAINER_PORT
    end
    if parent_field == "spec" and kind == "Service" then
      return SERVICE_PORT
    end
    return nil
  end
  return KEYED[field]
end

local merge_map

-- Merge an associative list: applied items merge into the existing item
-- with the same key, new ones are appended, the rest are kept.
local function merge_keyed(dst, src, keyf, field, ctx)
  local out, index = {}, {}
  for i, item in ipairs(dst) do
    out[i] = item
    local k = keyf(item)
    if k ~= nil then index[k] = i end
  end
  for _, item in ipairs(src) do
    local k = keyf(item)
    local at = k ~= nil and index[k]
    if at and type(out[at]) == "table" and type(item) == "table" then
      merge_map(out[at], item, field, ctx)
    else
      out[#out + 1] = copy(item, ctx.null, true)
      if k ~= nil then index[k] = #out end
    end
  end
  local mt = getmetatable(src) or getmetatable(dst)
  if mt then setmetatable(out, mt) end
  return out
end

-- A set (finalizers): union, existing order first.
local function merge_set(dst, src)
  local out, seen = {}, {}
  for _, x in ipairs(dst) do out[#out + 1] = x; seen[x] = true end
  for _, x in ipairs(src) do
    if not seen[x] then out[#out + 1] = x; seen[x] = true end
  end
  local mt = getmetatable(src) or getmetatable(dst)
  if mt then setmetatable(out, mt) end
  return out
end

-- Merge map src into map dst (dst is owned and modified in place).
function merge_map(dst, src, field, ctx)
  for k, v in pairs(src) do
    local old = dst[k]
    if v == ctx.null and ctx.null ~= nil then
      dst[k] = nil
    elseif type(v) ~= "table" or type(old) ~= "table" then
      dst[k] = copy(v, ctx.null, true)
    else
      local list = is_list(v, ctx.array_mt) or is_list(old, ctx.array_mt)
      if not list then
        merge_map(old, v, k, ctx)
      elseif k == "finalizers" then
        dst[k] = merge_set(old, v)
      else
        local keyf = list_key(k, field, ctx.kind)
        dst[k] = keyf and merge_keyed(old, v, keyf, k, ctx)
                 or copy(v, ctx.null, true)
      end
    end
  end
end

---Server-side apply merge: a new object, `existing` with `applied`
---merged in. Neither argument is modified.
---@param existing table
---@param applied table
---@param opts? {kind?: string, null?: any, array_mt?: table}
---@return table
function M.apply(existing, applied, opts)
  local ctx = { kind = opts and opts.kind, null = opts and opts.null,
                array_mt = opts and opts.array_mt }
  local out = copy(existing, ctx.null)
  merge_map(out, applied, nil, ctx)
  return out
end

return M
