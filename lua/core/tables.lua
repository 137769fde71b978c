--- uphook.core.tables: plain decoded data (what YAML, JSON and the RPC give),
--- the one home for deep copy and deep equality.
---
--- Decoded sequences carry a metatable (the array marker of
--- docs/internals.md, "Shared value conventions"); copies keep it, and
--- equality ignores it. `null` is the host's null value (yaml.null).
local M = {}

---Deep copy. Tables keep their metatable (the array marker), so `[]`
---stays a sequence. With `drop_null`, map fields equal to `null` are left
---out (list items stay: a null item is data). With `note` (a table),
---`note.null` is set to true when a `null` was met (an applied null is
---data to the mock's merge), and `note.empty` when a table of the copy is
---empty (the mock looks for empty maps to drop only then).
---@generic T
---@param v T
---@param null? any
---@param drop_null? boolean
---@param note? {null?: boolean, empty?: boolean}
---@return T
local function lua_copy(v, null, drop_null, note)
  if type(v) ~= "table" or v == null then return v end
  local out = {}
  for k, x in pairs(v) do
    if x == null and null ~= nil then
      if note then note.null = true end
      if not drop_null or type(k) == "number" then out[k] = x end
    else
      out[k] = (type(x) == "table") and lua_copy(x, null, drop_null, note)
        or x
    end
  end
  if note and next(out) == nil then note.empty = true end
  local mt = getmetatable(v)
  if mt then setmetatable(out, mt) end
  return out
end

-- The same copy in C (host/tables.c) where the state has it: the trusted
-- parent's; a confined child copies in Lua.
local has_c, ctables = pcall(require, "uphook.c.tables")
local ccopy = has_c and type(ctables) == "table" and ctables.copy or nil

local function copy(v, null, drop_null, note)
  if type(v) ~= "table" or v == null then return v end
  if ccopy then
    local out, saw_null, saw_empty = ccopy(v, null, drop_null)
    if out then
      if note then
        if saw_null then note.null = true end
        if saw_empty then note.empty = true end
      end
      return out
    end
  end
  return lua_copy(v, null, drop_null, note)
end
M.copy = copy

---The keys of a table, sorted (all strings or all numbers).
---@param t table
---@return any[]
function M.keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

---A copy of the top level only (values shared).
---@param t table
---@return table
function M.shallow(t)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  return out
end

local function lua_equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  for k, x in pairs(a) do
    if not lua_equal(x, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

local cequal = has_c and type(ctables) == "table" and ctables.equal or nil

---Deep equality of plain data (metatables ignored).
---@param a any
---@param b any
---@return boolean
local function equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  if cequal then
    local r = cequal(a, b)
    if r ~= nil then return r end
  end
  return lua_equal(a, b)
end
M.equal = equal
--- Is equal done in C here (cheap enough to try before a walk)?
M.fast_equal = cequal ~= nil

local function lua_same(a, b)
  local t = type(a)
  if t == "number" then      -- before rawequal: 1 == 1.0, raw too
    return math.type(a) == math.type(b) and a == b
  end
  if rawequal(a, b) then return true end
  if t ~= type(b) or t ~= "table" or getmetatable(a) ~= getmetatable(b) then
    return false
  end
  for k, v in next, a do
    local w = rawget(b, k)
    if w == nil or not lua_same(v, w) then return false end
  end
  for k in next, b do
    if rawget(a, k) == nil then return false end
  end
  return true
end

---Stricter than equal: also the same number subtype (1 is not 1.0) and
---the same metatables (`[]` is not `{}`), tables compared raw: two values
---any function of plain data treats alike (what a memo can key on).
---@param a any
---@param b any
---@return boolean
function M.same(a, b)
  if cequal and type(a) == "table" and type(b) == "table" then
    if rawequal(a, b) then return true end
    local r = cequal(a, b, true)
    if r ~= nil then return r end
  end
  return lua_same(a, b)
end

local function lua_weight(v, left, depth)
  if type(v) == "string" then return #v end
  if type(v) ~= "table" or depth > 8 then return 8 end
  local w = 16
  for k, x in next, v do
    local tk, tx = type(k), type(x)
    w = w + (tk == "string" and #k or tk == "table" and lua_weight(k, left,
      depth + 1) or 8)
    if tx == "string" then w = w + #x
    elseif tx == "table" then w = w + lua_weight(x, left, depth + 1)
    else w = w + 8 end
    if w > left then return w end
  end
  return w
end

local cweight = has_c and type(ctables) == "table" and ctables.weight or nil

---Bytes of strings in v, counted until past `left` (then it stops, and
---what it returns is only known to be more): a string its length, a
---table 16 and its keys and values (below depth 8: 8), anything else 8.
---Tables are walked raw. A bound for what keeping v costs, cheap to take.
---@param v any
---@param left integer
---@return integer
function M.weight(v, left)
  if cweight then return cweight(v, left) end
  return lua_weight(v, left, 0)
end

local function lua_project(stored, applied)
  if type(applied) ~= "table" or type(stored) ~= "table" then return stored end
  if applied[1] ~= nil or getmetatable(applied) then
    if #stored ~= #applied then return stored end
    local out = {}
    for i = 1, #applied do out[i] = lua_project(stored[i], applied[i]) end
    return setmetatable(out, getmetatable(stored))
  end
  local out = {}
  for k, v in pairs(applied) do
    if stored[k] ~= nil then out[k] = lua_project(stored[k], v) end
  end
  return out
end

local cproject = has_c and type(ctables) == "table" and ctables.project
  or nil

---`stored` cut down to the fields `applied` has (lists whose length
---changed are kept whole, values that are not tables on both sides are
---stored's): what an applier owns of what the server stored. New tables
---down to where the two differ in shape; stored's values below that are
---shared.
---@param stored any
---@param applied any
---@return any
function M.project(stored, applied)
  if cproject and type(stored) == "table" and type(applied) == "table" then
    local out = cproject(stored, applied)
    if out ~= nil then return out end
  end
  return lua_project(stored, applied)
end

local function key_text(k)
  if type(k) == "string" and k:match("^[%a_][%w_%-]*$") then
    return "." .. k
  elseif type(k) == "number" then
    return "[" .. tostring(k) .. "]"
  end
  return "[" .. string.format("%q", tostring(k)) .. "]"
end

local function sorted_keys(a, b)
  local keys, seen = {}, {}
  for _, t in ipairs { a, b } do
    for k in pairs(t) do
      if not seen[k] then seen[k] = true; keys[#keys + 1] = k end
    end
  end
  table.sort(keys, function(x, y)
    if type(x) == type(y) and (type(x) == "number" or type(x) == "string")
    then return x < y end
    return type(x) < type(y)
  end)
  return keys
end

-- Collect up to `max` paths where a and b differ (depth first, keys in
-- order); a table seen again with the same partner is not walked twice.
local function walk(a, b, path, out, max, seen)
  if a == b or #out >= max then return end
  if type(a) ~= "table" or type(b) ~= "table" then
    out[#out + 1] = { path = path, a = a, b = b }
    return
  end
  if seen[a] == b then return end
  seen[a] = b
  for _, k in ipairs(sorted_keys(a, b)) do
    walk(a[k], b[k], path .. key_text(k), out, max, seen)
    if #out >= max then return end
  end
end

---The paths where two values differ: up to `max` (default 1) entries
---{path = ".spec.replicas", a = <a's value>, b = <b's value>}, depth first
---with keys sorted; an empty list when they are equal.
---@param a any
---@param b any
---@param max? integer
---@return {path: string, a: any, b: any}[]
function M.differences(a, b, max)
  local out = {}
  walk(a, b, "", out, max or 1, {})
  return out
end

---Deep equality that says where: true, or false and the path of the
---first difference (".spec.replicas", "" for the values themselves).
---@param a any
---@param b any
---@return boolean equal, string|nil path
function M.diff(a, b)
  local d = M.differences(a, b, 1)[1]
  if not d then return true end
  return false, d.path
end

---Apply a JSON merge patch (RFC 7386) to `target`: maps merge key by key,
---a `null` in the patch removes the key, anything else (lists included)
---replaces. Returns a new value; neither argument is changed.
---@param target any
---@param patch any
---@param null any      the null value
---@param array_mt? table
---@return any
function M.merge_patch(target, patch, null, array_mt)
  local function is_map(v)
    return type(v) == "table" and v ~= null and not M.is_list(v, array_mt)
  end
  if not is_map(patch) then return copy(patch, null, true) end
  local out = is_map(target) and M.shallow(target) or {}
  for k, v in pairs(patch) do
    if v == null then
      out[k] = nil
    else
      out[k] = M.merge_patch(out[k], v, null, array_mt)
    end
  end
  return out
end

---Is t a sequence (a non-empty 1..n table, or one marked as an array)?
---@param t table
---@param array_mt? table
---@return boolean
function M.is_list(t, array_mt)
  if t[1] ~= nil then return true end
  local mt = getmetatable(t)
  return mt ~= nil and mt == array_mt
end

return M
