--- uphook.backend.mock.fieldmanager: metadata.managedFields as the API server
--- keeps it, around the merges of uphook.backend.mock.ssa.
---
--- As k8s.io/apimachinery's util/managedfields/internal does
--- (kubernetes/apimachinery, the field manager kube-apiserver 1.32 runs):
--- an entry per manager + operation + subresource, sorted Apply before
--- Update, then by time, manager and apiVersion (managedfields.go,
--- sortEncodedManagedFields); the metadata fields of stripmeta.go never
--- owned; an entry's time set when its manager changed the object
--- (managedfieldsupdater.go); an apply to an object without managedFields
--- first gives its fields to "before-first-apply" (skipnonapplied.go); an
--- update of such an object keeps them untracked; an update that sends
--- managedFields starts from them, and `[{}]` clears them.
local fieldset = require "uphook.core.fieldset"
local ssa = require "uphook.backend.mock.ssa"
local kubeerror = require "uphook.core.kubeerror"
local tables = require "uphook.core.tables"

local M = {}

-- stripmeta.go: never owned by anyone
local STRIP = fieldset.new()
for _, p in ipairs {
  { "f:apiVersion" }, { "f:kind" }, { "f:metadata" },
  { "f:metadata", "f:name" }, { "f:metadata", "f:namespace" },
  { "f:metadata", "f:creationTimestamp" }, { "f:metadata", "f:selfLink" },
  { "f:metadata", "f:uid" }, { "f:metadata", "f:clusterName" },
  { "f:metadata", "f:generation" }, { "f:metadata", "f:managedFields" },
  { "f:metadata", "f:resourceVersion" },
} do fieldset.insert(STRIP, p) end

M.BEFORE_FIRST_APPLY = "before-first-apply"

local function set_of(entry) return fieldset.set_of(entry.fieldsV1) end

-- managedFields entries copied, their FieldsV1 tables shared (none: nil)
local function copy_entries(mf)
  if type(mf) ~= "table" then return mf end
  local list = {}
  for i, e in ipairs(mf) do list[i] = tables.shallow(e) end
  return setmetatable(list, getmetatable(mf))
end

---Deep copy of an object keeping the `null` sentinel itself; its
---managedFields entries are copied, their FieldsV1 tables shared: nothing
---changes them (uphook.core.fieldset), and they are as big as the object.
---@param v any
---@param null any
---@return any
function M.copy_object(v, null)
  local md = type(v) == "table" and v.metadata
  local mf = type(md) == "table" and md.managedFields
  if type(mf) ~= "table" then return tables.copy(v, null) end
  local out, omd = {}, {}
  for k, x in pairs(v) do
    if k ~= "metadata" then out[k] = tables.copy(x, null) end
  end
  for k, x in pairs(md) do
    if k ~= "managedFields" then omd[k] = tables.copy(x, null) end
  end
  omd.managedFields = copy_entries(mf)
  out.metadata = omd
  return out
end

---The managers of an object: id -> {set, entry} (entry: the stored
---entry, whose manager/operation/apiVersion/subresource/time are kept).
---@param mf table[]|nil
---@return table<string, {set: FieldSet, entry: table}>
function M.decode(mf)
  local out = {}
  for _, e in ipairs(type(mf) == "table" and mf or {}) do
    if type(e) == "table" and type(e.manager) == "string" then
      out[fieldset.manager_id(e)] = { set = set_of(e), entry = e }
    end
  end
  return out
end

local function before(a, b)
  if a.operation ~= b.operation then
    return tostring(a.operation) < tostring(b.operation)
  end
  if (a.time or "") ~= (b.time or "") then
    return (a.time or "") < (b.time or "")
  end
  if a.manager ~= b.manager then return a.manager < b.manager end
  if (a.apiVersion or "") ~= (b.apiVersion or "") then
    return (a.apiVersion or "") < (b.apiVersion or "")
  end
  return (a.subresource or "") < (b.subresource or "")
end
M.before = before

-- Entries as the server stores them: sorted, a sequence; none is nil.
local function as_stored(out, array_mt)
  if #out == 0 then return nil end
  table.sort(out, before)
  if array_mt then setmetatable(out, array_mt) end
  return out
end

---managedFields from managers: the entries whose set is unchanged are
---the stored tables themselves, the others new ones.
---@param managers table
---@param array_mt? table
---@return table[]|nil
function M.encode(managers, array_mt)
  local out = {}
  for _, m in pairs(managers) do
    local e = m.entry
    if e.fieldsV1 == nil or m.set ~= fieldset.set_of(e.fieldsV1) or m.time
    then
      local n = { manager = e.manager, operation = e.operation,
        apiVersion = e.apiVersion, time = m.time or e.time,
        fieldsType = "FieldsV1", subresource = e.subresource }
      n.fieldsV1 = fieldset.fields_of(m.set)
      e = n
    end
    out[#out + 1] = e
  end
  return as_stored(out, array_mt)
end

---A new manager record.
---@param name string
---@param operation "Apply"|"Update"
---@param api_version string
---@return string id, table manager
function M.manager(name, operation, api_version)
  local e = { manager = name, operation = operation, apiVersion = api_version }
  return fieldset.manager_id(e), { set = fieldset.new(), entry = e }
end

-- A Conflict as the API server words it (fieldmanager's
-- internal.NewConflictError: one conflict alone, several by manager).
local function conflict_error(conflicts, managers)
  local found = {}
  for id, set in pairs(conflicts) do
    local e = managers[id].entry
    local who = string.format("%q", e.manager)
    if (e.subresource or "") ~= "" then
      who = who .. string.format(" with subresource %q", e.subresource)
    end
    if e.operation == "Update" then
      who = who .. " using " .. tostring(e.apiVersion)
    end
    fieldset.each(set, function(path)
      found[#found + 1] = { who = who, path = fieldset.path_string(path) }
    end)
  end
  table.sort(found, function(a, b)
    if a.who ~= b.who then return a.who < b.who end
    return a.path < b.path
  end)
  local causes = {}
  for i, f in ipairs(found) do
    causes[i] = { reason = "FieldManagerConflict",
                  message = "conflict with " .. f.who, field = f.path }
  end
  local msg
  if #found == 1 then
    msg = string.format("Apply failed with 1 conflict: conflict with %s: %s",
      found[1].who, found[1].path)
  else
    local lines, last = {}, nil
    for _, f in ipairs(found) do
      if f.who ~= last then
        lines[#lines + 1] = "conflicts with " .. f.who .. ":"
        last = f.who
      end
      lines[#lines + 1] = "- " .. f.path
    end
    msg = string.format("Apply failed with %d conflicts: %s", #found,
      table.concat(lines, "\n"))
  end
  return kubeerror.new(409, "Conflict", msg, { causes = causes })
end

-- The typed value the field manager works on: the object without
-- managedFields (RemoveObjectManagedFields).
local function content(obj)
  if obj == nil then return nil end
  local o = tables.shallow(obj)
  o.metadata = tables.shallow(obj.metadata or {})
  o.metadata.managedFields = nil
  return o
end

-- M.apply without the memo (below).
local function apply_uncached(ctx, ref, live, config, o)
  local managers = M.decode(live and live.metadata.managedFields)
  local base = content(live)
  if live and next(managers) == nil then
    local id, m = M.manager(M.BEFORE_FIRST_APPLY, "Update", o.api_version)
    m.set = fieldset.difference(ssa.compare(ctx, ref, nil, base).added, STRIP)
    if not fieldset.empty(m.set) then managers[id] = m end
  end
  local id, fresh = M.manager(o.manager, "Apply", o.api_version)
  if managers[id] then
    local e = tables.shallow(managers[id].entry)
    e.apiVersion = o.api_version
    managers[id] = { set = managers[id].set, entry = e }
  else
    managers[id] = fresh
  end
  local before_set = managers[id].set
  local merged, conflicts, changed = ssa.apply(ctx, ref, base, config,
    managers, id, o.force, STRIP)
  if not merged then error(conflict_error(conflicts, managers), 0) end
  if managers[id] and (changed or managers[id].set ~= before_set
                       and not tables.equal(managers[id].set, before_set)) then
    managers[id].time = o.now
  end
  merged.metadata = tables.shallow(merged.metadata or {})
  merged.metadata.managedFields = M.encode(managers, o.array_mt)
  return merged, changed
end

-- M.update without the memo (below).
local function update_uncached(ctx, ref, live, new, o)
  local sent = o.sent
  if type(sent) == "table" and #sent == 1 and type(sent[1]) == "table"
      and next(sent[1]) == nil then
    new.metadata.managedFields = nil       -- [{}]: clear, track nothing
    return
  end
  local managers
  if type(sent) == "table" and #sent > 0 then
    managers = M.decode(sent)
  else
    managers = M.decode(live and live.metadata.managedFields)
    if live and next(managers) == nil then
      new.metadata.managedFields = nil     -- never tracked: stays so
      return
    end
  end
  local id, fresh = M.manager(o.manager, "Update", o.api_version)
  local mine = managers[id]
  if mine then
    local e = tables.shallow(mine.entry)
    e.apiVersion = o.api_version
    managers[id] = { set = mine.set, entry = e }
  end
  local took = ssa.update(ctx, ref, content(live), content(new), managers, id,
                          STRIP)
  if managers[id] then
    if not mine then managers[id].entry = fresh.entry end
    if took then managers[id].time = o.now end
  end
  new.metadata.managedFields = M.encode(managers, o.array_mt)
end

--- Memo ----------------------------------------------------------------
-- apply and update are pure functions of their arguments (the schema
-- behind ref and ctx is fixed): a test suite repeats the same writes
-- case after case (the same fixture, the same hook), so the last result
-- per object and manager is kept and given again, a copy (FieldsV1
-- shared, as M.copy_object does), when every argument is the same: same
-- type, number subtype, metatable and keys (tables.same). A raised error
-- is never kept.

local MEMO_MAX = 256
local memo, memo_n = {}, 0

local same = tables.same

local function memo_key(op, ref, md, o)
  md = type(md) == "table" and md or {}
  return table.concat({ op, tostring(ref), tostring(o.manager),
    tostring(md.namespace), tostring(md.name) }, "\0")
end

local function memo_get(key, ctx, ref, o)
  local m = memo[key]
  if m and rawequal(m.ref, ref) and rawequal(m.types, ctx.types)
      and rawequal(m.null, ctx.null) and rawequal(m.array_mt, ctx.array_mt)
      and same(m.o, o) then
    return m
  end
end

local function memo_put(key, ctx, ref, o, m)
  if memo_n >= MEMO_MAX then memo, memo_n = {}, 0 end
  if memo[key] == nil then memo_n = memo_n + 1 end
  local oc = tables.shallow(o)
  if type(oc.sent) == "table" then oc.sent = tables.copy(oc.sent, ctx.null) end
  m.ref, m.types, m.null, m.array_mt, m.o = ref, ctx.types, ctx.null,
    ctx.array_mt, oc
  memo[key] = m
end

---Server-side apply by `name` (operation Apply): the merged object
---(managedFields set) or a 409 Conflict raised. `live` may be nil (a
---create). `ref` is the kind's type in the schema.
---@param ctx SsaContext
---@param ref any
---@param live table|nil
---@param config table  the applied configuration (status and server
---                     metadata already left out)
---@param o {manager: string, force: boolean, api_version: string, now: string, array_mt?: table}
---@return table merged, boolean changed  (a field's value, not ownership)
function M.apply(ctx, ref, live, config, o)
  local key = memo_key("apply", ref, config.metadata, o)
  local m = memo_get(key, ctx, ref, o)
  if m and same(m.live, live) and same(m.config, config) then
    return M.copy_object(m.merged, ctx.null), m.changed
  end
  local merged, changed = apply_uncached(ctx, ref, live, config, o)
  memo_put(key, ctx, ref, o, { live = tables.copy(live, ctx.null),
    config = tables.copy(config, ctx.null),
    merged = tables.copy(merged, ctx.null), changed = changed })
  return merged, changed
end

---An update (create, PUT, patch) to `new` by `name` (operation Update).
---Sets new.metadata.managedFields in place.
---@param ctx SsaContext
---@param ref any
---@param live table|nil  nil for a create
---@param new table
---@param o {manager: string, api_version: string, now: string, array_mt?: table, sent?: any}
function M.update(ctx, ref, live, new, o)
  if live ~= nil then return update_uncached(ctx, ref, live, new, o) end
  local key = memo_key("create", ref, new.metadata, o)
  local m = memo_get(key, ctx, ref, o)
  if m and same(m.new, new) then
    new.metadata.managedFields = copy_entries(m.mf)
    return
  end
  local given = tables.copy(new, ctx.null)
  update_uncached(ctx, ref, nil, new, o)
  memo_put(key, ctx, ref, o, { new = given,
    mf = tables.copy(new.metadata.managedFields, ctx.null) })
end

---The managedFields a client sets as they are (a JSON patch of
---/metadata/managedFields alone changes no field, so no manager takes
---any): sorted as the server keeps them; `[{}]` or an empty list clears.
---The entries are copied, their FieldsV1 tables shared (never changed).
---@param mf table[]
---@param array_mt? table
---@return table[]|nil
function M.given(mf, array_mt)
  local out = {}
  for _, e in ipairs(type(mf) == "table" and mf or {}) do
    if type(e) == "table" and next(e) ~= nil then
      out[#out + 1] = tables.shallow(e)
    end
  end
  return as_stored(out, array_mt)
end

return M
