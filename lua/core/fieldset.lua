--- uphook.core.fieldset: sets of field paths, the unit of field ownership in
--- server-side apply, and the managedFields entries that carry them.
---
--- A set is what structured-merge-diff's fieldpath.Set is (kubernetes-
--- sigs/structured-merge-diff@ccf7a061 (v4.4.2):fieldpath/set.go): the
--- paths that are members, kept as a tree,
---
---     { m = {[pe] = true}, c = {[pe] = <set>} }
---
--- where a path element `pe` is the string managedFields' FieldsV1 uses
--- (fieldpath/serialize-pe.go): "f:<field>", "k:<key fields as JSON>"
--- for an item of a list keyed by fields, "v:<value as JSON>" for an item
--- of a set, "i:<index>". FieldsV1 itself is that tree as a map, with
--- "." marking a node that is also a member. Everything here is plain
--- data and pure Lua: the mock cluster's field manager, the engine's
--- client-side-apply upgrade and the plan of the live backend share it.
---
--- A FieldsV1 table is never changed once made or decoded (the mock
--- cluster shares them between the objects it stores and returns), so its
--- set is decoded once: M.set_of.
local tables = require "uphook.core.tables"

local M = {}

---@class FieldSet
---@field m table<string, boolean>   members at this level
---@field c table<string, FieldSet>  children (paths below a member or not)

---An empty set.
---@return FieldSet
local function new() return { m = {}, c = {} } end
M.new = new

---Is the set empty?
---@param s FieldSet
---@return boolean
local function empty(s)
  if next(s.m) then return false end
  for _, sub in pairs(s.c) do
    if not empty(sub) then return false end
  end
  return true
end
M.empty = empty

---Add a path (a list of path elements). Parents are not added.
---@param s FieldSet
---@param path string[]
function M.insert(s, path)
  local n = #path
  if n == 0 then return end
  for i = 1, n - 1 do
    local pe = path[i]
    local sub = s.c[pe]
    if not sub then sub = new(); s.c[pe] = sub end
    s = sub
  end
  s.m[path[n]] = true
end

---Is the path a member?
---@param s FieldSet
---@param path string[]
---@return boolean
function M.has(s, path)
  local n = #path
  if n == 0 then return false end
  for i = 1, n - 1 do
    s = s.c[path[i]]
    if not s then return false end
  end
  return s.m[path[n]] == true
end

---a ∪ b (new set; the arguments are not changed).
---@param a FieldSet
---@param b FieldSet
---@return FieldSet
local function union(a, b)
  local out = new()
  for pe in pairs(a.m) do out.m[pe] = true end
  for pe in pairs(b.m) do out.m[pe] = true end
  for pe, sub in pairs(a.c) do
    local other = b.c[pe]
    out.c[pe] = other and union(sub, other) or sub
  end
  for pe, sub in pairs(b.c) do
    if not a.c[pe] then out.c[pe] = sub end
  end
  return out
end
M.union = union

---a ∩ b: the members in both.
---@param a FieldSet
---@param b FieldSet
---@return FieldSet
local function intersection(a, b)
  local out = new()
  for pe in pairs(a.m) do
    if b.m[pe] then out.m[pe] = true end
  end
  for pe, sub in pairs(a.c) do
    local other = b.c[pe]
    if other then
      local i = intersection(sub, other)
      if not empty(i) then out.c[pe] = i end
    end
  end
  return out
end
M.intersection = intersection

---a − b: the members of a that are not members of b (a member of b does
---not take a's members below it: parent − child = parent, child − parent
---= child, as fieldpath.Set.Difference).
---@param a FieldSet
---@param b FieldSet
---@return FieldSet
local function difference(a, b)
  local out = new()
  for pe in pairs(a.m) do
    if not b.m[pe] then out.m[pe] = true end
  end
  for pe, sub in pairs(a.c) do
    local other = b.c[pe]
    if other then
      local d = difference(sub, other)
      if not empty(d) then out.c[pe] = d end
    else
      out.c[pe] = sub
    end
  end
  return out
end
M.difference = difference

---Every member path, depth first (path elements sorted at each level).
---@param s FieldSet
---@param fn fun(path: string[])
function M.each(s, fn)
  local function walk(set, prefix)
    local pes = {}
    for pe in pairs(set.m) do pes[#pes + 1] = pe end
    for pe in pairs(set.c) do
      if not set.m[pe] then pes[#pes + 1] = pe end
    end
    table.sort(pes)
    for _, pe in ipairs(pes) do
      prefix[#prefix + 1] = pe
      if set.m[pe] then fn(prefix) end
      if set.c[pe] then walk(set.c[pe], prefix) end
      prefix[#prefix] = nil
    end
  end
  walk(s, {})
end

--- FieldsV1 ------------------------------------------------------------

---A set from FieldsV1 (the decoded `fieldsV1` of a managedFields entry).
---@param f table|nil
---@return FieldSet
local function from_fields(f)
  local s = new()
  if type(f) ~= "table" then return s end
  for pe, sub in pairs(f) do
    if pe ~= "." and type(pe) == "string" then
      local leaf = type(sub) ~= "table" or next(sub) == nil
      if leaf then
        s.m[pe] = true
      else
        if sub["."] ~= nil then s.m[pe] = true end
        local child = from_fields(sub)
        if not empty(child) then s.c[pe] = child end
      end
    end
  end
  return s
end
M.from_fields = from_fields

---FieldsV1 of a set (plain tables; an empty one is an empty map).
---@param s FieldSet
---@return table
local function to_fields(s)
  local out = {}
  for pe, sub in pairs(s.c) do
    if not empty(sub) then
      local f = to_fields(sub)
      if s.m[pe] then f["."] = {} end
      out[pe] = f
    end
  end
  for pe in pairs(s.m) do
    if out[pe] == nil then out[pe] = {} end
  end
  return out
end

-- Sets of FieldsV1 tables already decoded (or made by to_fields).
local decoded = setmetatable({}, { __mode = "k" })

---The set of a FieldsV1 table, decoded once per table (see the header:
---FieldsV1 tables are never changed).
---@param f table|nil
---@return FieldSet
function M.set_of(f)
  if type(f) ~= "table" then return new() end
  local s = decoded[f]
  if not s then
    s = from_fields(f)
    decoded[f] = s
  end
  return s
end

---FieldsV1 of a set, remembered as its decoding.
---@param s FieldSet
---@return table
function M.fields_of(s)
  local f = to_fields(s)
  decoded[f] = s
  return f
end

--- Path elements ---------------------------------------------------------

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r",
  ["\t"] = "\\t", ["\b"] = "\\b", ["\f"] = "\\f", ["<"] = "\\u003c",
  [">"] = "\\u003e", ["&"] = "\\u0026" }

---A scalar as the path-element serializer writes it (Go's JSON with
---HTML escaping: fieldpath/serialize-pe.go uses jsoniter's
---ConfigCompatibleWithStandardLibrary).
---@param v any
---@return string
local function scalar(v)
  local t = type(v)
  if t == "string" then
    return '"' .. v:gsub('[%c"\\<>&]', function(ch)
      return ESC[ch] or string.format("\\u%04x", ch:byte())
    end):gsub("\226\128([\168\169])", function(b)
      return b == "\168" and "\\u2028" or "\\u2029"
    end) .. '"'
  elseif t == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    if v == math.floor(v) and v > -2 ^ 53 and v < 2 ^ 53 then
      return string.format("%d", v)
    end
    return string.format("%.17g", v)
  elseif t == "boolean" then
    return tostring(v)
  end
  return "null"
end
M.scalar = scalar

---"f:<name>"
---@param name string
---@return string
function M.field(name) return "f:" .. name end

---"k:{...}" of a list item keyed by `keys` (their values, with the
---defaults of absent key fields), or nil when a key field is missing.
---@param item table
---@param keys string[]
---@param defaults? table<string, any>
---@return string|nil
function M.key(item, keys, defaults)
  local names = {}
  for i, k in ipairs(keys) do names[i] = k end
  table.sort(names)
  local parts = {}
  for i, k in ipairs(names) do
    local v = item[k]
    if v == nil and defaults then v = defaults[k] end
    if v == nil then return nil end
    parts[i] = scalar(k) .. ":" .. scalar(v)
  end
  return "k:{" .. table.concat(parts, ",") .. "}"
end

---"v:<value>" of an item of a set.
---@param v any
---@return string
function M.value(v) return "v:" .. scalar(v) end

---A path as structured-merge-diff prints it in conflicts and messages:
---.spec.containers[name="x"].image
---@param path string[]
---@return string
function M.path_string(path)
  local out = {}
  for _, pe in ipairs(path) do
    local kind, rest = pe:sub(1, 1), pe:sub(3)
    if kind == "f" then
      out[#out + 1] = "." .. rest
    elseif kind == "k" then
      local body = rest:sub(2, -2):gsub('"([^"]+)":', "%1=")
      out[#out + 1] = "[" .. body .. "]"
    elseif kind == "v" then
      out[#out + 1] = "[=" .. rest .. "]"
    else
      out[#out + 1] = "[" .. rest .. "]"
    end
  end
  return table.concat(out)
end

--- Removing fields without a schema --------------------------------------

-- Does this list item or map value sit at path element `pe`?
local function item_at(item, pe, decode)
  local kind = pe:sub(1, 2)
  if kind == "v:" then return type(item) ~= "table" and M.value(item) == pe end
  if kind ~= "k:" or type(item) ~= "table" then return false end
  local ok, keys = pcall(decode, pe:sub(3))
  if not ok or type(keys) ~= "table" then return false end
  local names = {}
  for k in pairs(keys) do names[#names + 1] = k end
  return M.key(item, names) == pe
end

-- Is `pe` kept: a list item when it is owned itself, a field when
-- anything at or below it is (the struct fields above an owned field are
-- owned: EnsureNamedFieldsAreMembers).
local function kept(owned, pe)
  if owned == nil then return false end
  if owned.m[pe] then return true end
  if pe:sub(1, 2) ~= "f:" then return false end
  local sub = owned.c[pe]
  return sub ~= nil and not empty(sub)
end

-- Remove from `v` (in place) the members of `last` that nothing in
-- `owned` is at or below; drop maps and lists the removal empties.
local function prune_walk(v, last, owned, decode, is_list)
  if type(v) ~= "table" then return end
  local function gone(pe)
    return last.m[pe] and not kept(owned, pe)
  end
  if is_list(v) then
    local keep = {}
    for _, item in ipairs(v) do
      local drop = false
      for pe, _ in pairs(last.m) do
        if item_at(item, pe, decode) and gone(pe) then drop = true end
      end
      if not drop then
        for pe, sub in pairs(last.c) do
          if item_at(item, pe, decode) then
            prune_walk(item, sub, owned and owned.c[pe], decode, is_list)
          end
        end
        keep[#keep + 1] = item
      end
    end
    for i = #v, 1, -1 do v[i] = nil end
    for i, item in ipairs(keep) do v[i] = item end
    return
  end
  for key, cv in pairs(v) do
    local pe = "f:" .. tostring(key)
    if gone(pe) then
      v[key] = nil
    elseif last.c[pe] and type(cv) == "table" then
      prune_walk(cv, last.c[pe], owned and owned.c[pe], decode, is_list)
      if next(cv) == nil then v[key] = nil end
    end
  end
end

---Remove from `obj` (in place) the fields of `last` that no path of
---`owned` keeps (a list item owned itself, a field owned at or below):
---what server-side apply prunes when the manager that applied `last`
---applies again and the managers then own `owned` (merge/update.go,
---Updater.prune), for a client without the schema. It differs from the
---server only where a struct field above `last`'s members holds fields
---nobody owns, or a map key (not a struct field) holds only owned fields
---and is not owned itself. `decode` reads a "k:" key (JSON).
---@param obj table
---@param last FieldSet
---@param owned FieldSet
---@param decode fun(s: string): any
---@param is_list fun(t: table): boolean
function M.prune_unowned(obj, last, owned, decode, is_list)
  prune_walk(obj, last, owned, decode, is_list)
end

--- managedFields ---------------------------------------------------------

---The field manager a managedFields entry stands for: manager, operation
---and subresource together (fieldmanager's manager identifier).
---@param e table
---@return string
function M.manager_id(e)
  return tostring(e.manager) .. "\0" .. tostring(e.operation) .. "\0"
    .. tostring(e.subresource or "")
end

M.LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

-- Does a FieldsV1 own .metadata.annotations[last-applied-configuration]?
local function owns_last_applied(f)
  local md = type(f) == "table" and f["f:metadata"]
  local an = type(md) == "table" and md["f:annotations"]
  return type(an) == "table" and an["f:" .. M.LAST_APPLIED] ~= nil
end

local function entries_of(mf)
  return type(mf) == "table" and mf or {}
end

---The Update managers that own the last-applied-configuration annotation:
---the client-side apply managers kubectl's `apply --server-side` migrates
---(kubernetes/kubectl@fd89c3d1 (v0.32.3):pkg/cmd/apply/apply.go,
---migrateToSSAIfNecessary with csaupgrade.FindFieldsOwners).
---@param mf table[]|nil  metadata.managedFields
---@return table<string, boolean> names
function M.csa_managers(mf)
  local names = {}
  for _, e in ipairs(entries_of(mf)) do
    if type(e) == "table" and e.operation == "Update"
        and (e.subresource or "") == "" and owns_last_applied(e.fieldsV1) then
      names[e.manager] = true
    end
  end
  return names
end

local function copy_entry(e)
  local out = {}
  for k, v in pairs(e) do out[k] = v end
  return out
end

-- client-go's upgradedManagedFields for one client-side manager name.
local function upgrade_one(entries, csa, ssa)
  local target
  for i, e in ipairs(entries) do
    if e.manager == ssa and e.operation == "Apply"
        and (e.subresource or "") == "" then
      target = i
      break
    end
  end
  if not target then
    for i, e in ipairs(entries) do
      if e.manager == csa and e.operation == "Update"
          and (e.subresource or "") == "" then
        target = i
        break
      end
    end
    if not target then return entries end
    entries[target] = copy_entry(entries[target])
    entries[target].operation = "Apply"
    entries[target].manager = ssa
  end
  local t = entries[target]
  for _, e in ipairs(entries) do
    if e.manager == csa and e.operation == "Update"
        and (e.subresource or "") == "" and e.apiVersion == t.apiVersion then
      entries[target] = copy_entry(t)
      entries[target].fieldsV1 = M.fields_of(union(M.set_of(t.fieldsV1),
                                                   M.set_of(e.fieldsV1)))
      break
    end
  end
  local out = {}
  for _, e in ipairs(entries) do
    if not (e.manager == csa and e.operation == "Update"
            and (e.subresource or "") == "") then
      out[#out + 1] = e
    end
  end
  return out
end

---Move the fields of client-side apply managers to the Apply manager
---`ssa`, as client-go's csaupgrade.UpgradeManagedFields does
---(kubernetes/client-go@c106b238 (v0.32.3):util/csaupgrade/upgrade.go):
---the most recent Update entry of each becomes (or is merged into) the
---`ssa` Apply entry, and every Update entry of that name goes. Returns
---the new managedFields, or nil when there is nothing to move.
---@param mf table[]|nil
---@param csa table<string, boolean>  manager names to migrate
---@param ssa string
---@return table[]|nil
function M.upgrade(mf, csa, ssa)
  local entries = {}
  for i, e in ipairs(entries_of(mf)) do entries[i] = e end
  local names = {}
  for n in pairs(csa) do names[#names + 1] = n end
  table.sort(names)
  for _, n in ipairs(names) do entries = upgrade_one(entries, n, ssa) end
  if tables.equal(entries, entries_of(mf)) then return nil end
  return entries
end

return M
