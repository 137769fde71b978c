--- uphook.core.fielddiff: what changed between two versions of an object, by
--- meaning rather than by position (docs/guide.md, "Plan").
---
--- * Maps are compared key by key; `metadata.labels` and
---   `metadata.annotations` always per key, so one added label is one
---   change.
--- * Lists of objects are matched by what identifies their items: `name`
---   (containers, env, volumes, webhooks, named ports), `mountPath`,
---   `containerPort`/`port` with the protocol, an RBAC rule's API groups
---   and resources, a condition's `type`, a toleration's key. Only when
---   every item has such a key, and the keys are unique on both sides;
---   otherwise by position. An item whose key changed at the same place
---   (a renamed container) is compared with its old self.
--- * A list of scalars (`verbs`, `args`) is one value.
--- * A Secret's `data` and `stringData` are compared per key and every
---   value is replaced by its redaction (lua/core/redact.lua).
---
--- Each change is `{path=, old=, new=}` with the values themselves (nil:
--- absent; the host's null: null), for JSON; lua/engine/plantext.lua renders
--- them for people.
local kinds = require "uphook.core.kinds"
local tables = require "uphook.core.tables"

local M = {}

--- kubectl's client-side apply keeps the whole object here; in a Secret
--- it holds the data too.
M.LAST_APPLIED =
  "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"

local SERVER_META = kinds.IS_SERVER_METADATA

local function is_list(t, null)
  return type(t) == "table" and t ~= null and t[1] ~= nil
end

local function join(t)
  local out = {}
  for i, v in ipairs(type(t) == "table" and t or {}) do out[i] = tostring(v) end
  return table.concat(out, ",")
end

--- The key that identifies a list item, or nil.
local function item_key(x)
  if type(x) ~= "table" then return nil end
  if type(x.name) == "string" then return x.name end
  if type(x.mountPath) == "string" then return x.mountPath end
  local port = x.containerPort or x.port
  if math.type(port) == "integer" then
    return tostring(port) .. "/" .. tostring(x.protocol or "TCP")
  end
  if type(x.verbs) == "table" then          -- an RBAC PolicyRule
    if x.nonResourceURLs then return "urls " .. join(x.nonResourceURLs) end
    local g = join(x.apiGroups)
    local k = (g ~= "" and (g .. ": ") or "") .. join(x.resources)
    if x.resourceNames then k = k .. " (" .. join(x.resourceNames) .. ")" end
    return k
  end
  if type(x.type) == "string" and x.status ~= nil then return x.type end
  if type(x.key) == "string" then
    return x.key .. (x.operator and (" " .. tostring(x.operator)) or "")
  end
  return nil
end

--- Keys of every item of a and b, or nil when some item has none or a
--- key repeats.
local function keys_of(list)
  local keys, seen = {}, {}
  for i, x in ipairs(list) do
    local k = item_key(x)
    if k == nil or seen[k] then return nil end
    keys[i], seen[k] = k, true
  end
  return keys
end

local diff_into

local function diff_list(a, b, path, out, ctx, depth)
  local ka, kb = keys_of(a), keys_of(b)
  if not (ka and kb) then
    for i = 1, math.max(#a, #b) do
      diff_into(a[i], b[i], path .. "[" .. i .. "]", out, ctx, depth + 1)
    end
    return
  end
  local ia, ib = {}, {}
  for i, k in ipairs(ka) do ia[k] = i end
  for i, k in ipairs(kb) do ib[k] = i end
  -- a key that changed at one position: compare the item with its old self
  local renamed = {}
  for i, k in ipairs(kb) do
    local old = ka[i]
    if ia[k] == nil and old and ib[old] == nil then
      renamed[k], renamed[old] = old, k
    end
  end
  for i, k in ipairs(ka) do
    if ib[k] then
      diff_into(a[i], b[ib[k]], path .. "[" .. k .. "]", out, ctx, depth + 1)
    elseif not renamed[k] then
      diff_into(a[i], nil, path .. "[" .. k .. "]", out, ctx, depth + 1)
    end
  end
  for i, k in ipairs(kb) do
    if not ia[k] then
      local old = renamed[k]
      diff_into(old and a[ia[old]] or nil, b[i], path .. "[" .. k .. "]",
        out, ctx, depth + 1)
    end
  end
end

--- Maps compared per key even when one side is absent.
local function per_key(path)
  return path == "metadata.labels" or path == "metadata.annotations"
end

local function diff_map(a, b, path, out, ctx, depth)
  local order, seen = {}, {}
  for k in pairs(a or {}) do order[#order + 1] = tostring(k); seen[tostring(k)] = true end
  for k in pairs(b or {}) do
    if not seen[tostring(k)] then order[#order + 1] = tostring(k) end
  end
  table.sort(order)
  for _, k in ipairs(order) do
    local skip = (path == "metadata" and SERVER_META[k])
                 or (path == "" and k == "status")
    if not skip then
      local p = path == "" and k or (path .. "." .. k)
      local x, y = a and a[k], b and b[k]
      if ctx.secret and path == "" and (k == "data" or k == "stringData") then
        M._secret_map(x, y, k, out, ctx)
      elseif ctx.secret and p == M.LAST_APPLIED then
        -- kubectl's copy of the whole object, data included
        if x ~= y then
          out[#out + 1] = { path = p, old = ctx.redact("annotation", x),
            new = ctx.redact("annotation", y), redacted = true }
        end
      else
        diff_into(x, y, p, out, ctx, depth + 1)
      end
    end
  end
end

function M._secret_map(a, b, field, out, ctx)
  local null = ctx.null
  a = type(a) == "table" and a ~= null and a or {}
  b = type(b) == "table" and b ~= null and b or {}
  local order, seen = {}, {}
  for k in pairs(a) do order[#order + 1] = k; seen[k] = true end
  for k in pairs(b) do if not seen[k] then order[#order + 1] = k end end
  table.sort(order, function(x, y) return tostring(x) < tostring(y) end)
  for _, k in ipairs(order) do
    if a[k] ~= b[k] then
      out[#out + 1] = { path = field .. "." .. tostring(k),
        old = ctx.redact(field, a[k]), new = ctx.redact(field, b[k]),
        redacted = true }
    end
  end
end

local same = tables.equal   -- deep equality, for lists of scalars

-- Down to this depth a subtree equal on both sides (deep equality in C,
-- where the state has it) is skipped whole: the walk in Lua goes only
-- where something differs (a new image: the path down to it), and a
-- node is compared in C at most once per differing table above it.
local SKIP_EQUAL_DEPTH = tables.fast_equal and 8 or -1

function diff_into(a, b, path, out, ctx, depth)
  if a == b then return end
  local null = ctx.null
  local ta = type(a) == "table" and a ~= null
  local tb = type(b) == "table" and b ~= null
  if per_key(path) and (ta or a == nil) and (tb or b == nil) then
    return diff_map(a, b, path, out, ctx, depth)
  end
  if ta and tb and depth <= SKIP_EQUAL_DEPTH and same(a, b) then return end
  if not (ta and tb) or depth > 40 then
    out[#out + 1] = { path = path, old = a, new = b }
    return
  end
  local la, lb = is_list(a, null), is_list(b, null)
  if (la and not lb and next(b) ~= nil) or (lb and not la and next(a) ~= nil)
  then                                  -- a list became a map, or back
    out[#out + 1] = { path = path, old = a, new = b }
    return
  end
  if la or lb then
    local scalars = true
    for _, x in ipairs(a) do if type(x) == "table" then scalars = false end end
    for _, x in ipairs(b) do if type(x) == "table" then scalars = false end end
    if scalars then
      if not same(a, b) then out[#out + 1] = { path = path, old = a, new = b } end
      return
    end
    return diff_list(a, b, path, out, ctx, depth)
  end
  return diff_map(a, b, path, out, ctx, depth)
end

---The changes from a to b (objects, or any decoded values).
---@param a any
---@param b any
---@param opts? {null?: any, secret?: boolean, redact?: fun(field: string, v: any): any}
---@return {path: string, old: any, new: any, redacted?: boolean}[]
function M.diff(a, b, opts)
  local out = {}
  diff_into(a, b, "", out, opts or {}, 0)
  return out
end

return M
