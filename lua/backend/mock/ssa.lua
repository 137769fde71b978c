--- uphook.backend.mock.ssa: server-side apply and field ownership, as the API
--- server computes them, for the mock cluster.
---
--- A port of what kube-apiserver's field manager does with structured-
--- merge-diff (kubernetes-sigs/structured-merge-diff@ccf7a061 (v4.4.2):
--- typed/tofieldset.go, merge.go, compare.go, remove.go, merge/update.go;
--- the managedFields bookkeeping of k8s.io/apimachinery's
--- util/managedfields/internal: stripmeta.go, managedfieldsupdater.go,
--- skipnonapplied.go), over the schema of uphook.backend.mock.schema or one a
--- CRD declares (uphook.backend.mock.crdschema):
---
--- * an object's fields belong to the managers in metadata.managedFields
---   (manager + operation Apply|Update + subresource), as sets of paths
---   (uphook.core.fieldset);
--- * apply merges the applied configuration in (structs and maps field by
---   field unless atomic; lists atomic, sets, or maps keyed by fields),
---   takes the fields it sets, and removes the fields the same manager
---   applied last time and no longer applies, unless another manager owns
---   them (prune);
--- * an update (PUT, patch) gives the changed fields to its manager and
---   takes them from the others; a field removed is nobody's.
---
--- Values are plain decoded data: a table carrying `array_mt` (or with
--- items 1..n) is a list, another table a map; `null` is the host's null.
local fieldset = require "uphook.core.fieldset"
local tables = require "uphook.core.tables"

local M = {}

local new_set, empty = fieldset.new, fieldset.empty
local union, difference = fieldset.union, fieldset.difference
local intersection = fieldset.intersection

local SCALAR = { s = true }
local DEDUCED_NAME = "__untyped_deduced_"
-- an unknown field of a struct, or a type the schema lacks: maps merge by
-- key, lists are atomic (structured-merge-diff's deduced type)
local DEDUCED = { s = true, m = DEDUCED_NAME, l = "__untyped_atomic_" }
local ATOMIC = { s = true, m = "__untyped_atomic_", ma = true,
                 l = "__untyped_atomic_" }
M.DEDUCED = DEDUCED
M.DEDUCED_NAME = DEDUCED_NAME

local FPE = setmetatable({}, { __index = function(t, k)
  local pe = "f:" .. k
  t[k] = pe
  return pe
end })

---@class SsaContext
---@field types table<string, table>  named atoms (uphook.mock.schema.types)
---@field null any
---@field array_mt table|nil

local function resolve(ctx, ref)
  if type(ref) == "table" then return ref end
  if ref == 1 then return SCALAR end
  if ref == DEDUCED_NAME then return DEDUCED end
  if ref == "__untyped_atomic_" then return ATOMIC end
  return ctx.types[ref] or DEDUCED
end
M.resolve = resolve

local linked = setmetatable({}, { __mode = "k" })

---Replace the type names in a schema's atoms by the atoms themselves
---(once per schema), so that walking a value looks nothing up by name.
---@param types table<string, table>
---@return table<string, table> types
function M.link(types)
  if linked[types] then return types end
  local ctx = { types = types }
  local function ln(ref)
    if type(ref) == "string" then return resolve(ctx, ref) end
    return ref
  end
  for _, atom in pairs(types) do
    if atom.f then
      for k, r in pairs(atom.f) do atom.f[k] = ln(r) end
    end
    if atom.m ~= nil then atom.m = ln(atom.m) end
    if atom.l ~= nil then atom.l = ln(atom.l) end
  end
  linked[types] = true
  return types
end

-- "scalar", "list" or "map" for a value; nil for nil/null.
local function shape(ctx, v)
  local t = type(v)
  if t ~= "table" then
    if v == nil then return nil end
    return "scalar"
  end
  if v == ctx.null then return nil end
  if v[1] ~= nil then return "list" end
  local amt = ctx.array_mt
  if amt and getmetatable(v) == amt then return "list" end
  return "map"
end

-- The atom's view of a value, as deduceAtom: a map value is read as the
-- atom's map, a list as its list, anything else as its scalar.
local function kind_of(atom, sh)
  if sh == "map" and (atom.f or atom.m) then return "map" end
  if sh == "list" and atom.l then return "list" end
  if sh == "scalar" and atom.s then return "scalar" end
  if sh == nil then
    if atom.f or atom.m then return "map" end
    if atom.l then return "list" end
  end
  return "scalar"
end

local function field_type(atom, k)
  local f = atom.f and atom.f[k]
  if f ~= nil then return f, true end
  if atom.m ~= nil then return atom.m, false end
  return DEDUCED_NAME, false
end

local function is_empty_map(ctx, v)
  return shape(ctx, v) == "map" and next(v) == nil
end

-- Path elements of list items, by item (an item is a table that is
-- never changed once merged or stored; it is always read by one list).
local pe_cache = setmetatable({}, { __mode = "k" })

---The path element of a list item (nil for an item the list cannot key:
---a missing key field, or a map in a set).
local function item_pe(atom, item)
  if atom.lk then
    if type(item) ~= "table" then return nil end
    local pe = pe_cache[item]
    if pe == nil then
      pe = fieldset.key(item, atom.lk, atom.ldefaults) or false
      pe_cache[item] = pe
    end
    return pe or nil
  end
  if type(item) == "table" then return nil end
  return fieldset.value(item)
end

-- Defaults of the key fields live on the element type; cache them on the
-- list atom the first time.
local function list_atom(ctx, atom)
  if atom.lk and atom.ldefaults == nil then
    local el = resolve(ctx, atom.l)
    atom.ldefaults = el.d or false
  end
  return atom
end

--- ToFieldSet ------------------------------------------------------------

-- The set of paths below v (relative to it), and whether v itself is a
-- member (scalars and atomic values are).
local function contrib(ctx, ref, v)
  local atom = resolve(ctx, ref)
  local sh = shape(ctx, v)
  local k = kind_of(atom, sh)
  if k == "scalar" or sh == nil then return true, nil end
  if k == "list" then
    if not (atom.lk or atom.ls) then return true, nil end
    list_atom(ctx, atom)
    local s = new_set()
    for _, item in ipairs(v) do
      local pe = item_pe(atom, item)
      if pe then
        local _, sub = contrib(ctx, atom.l, item)
        if sub and not empty(sub) then s.c[pe] = sub end
        s.m[pe] = true
      end
    end
    return false, s
  end
  if atom.ma then return true, nil end
  local s = new_set()
  for key, cv in pairs(v) do
    if type(cv) ~= "table" then
      s.m[FPE[key]] = true           -- a scalar (or null): a member
    else
      local ft, named = field_type(atom, key)
      local pe = FPE[key]
      local self, sub = contrib(ctx, ft, cv)
      if sub and not empty(sub) then s.c[pe] = sub end
      if self or cv == ctx.null or is_empty_map(ctx, cv) or not named then
        s.m[pe] = true
      end
    end
  end
  return false, s
end

---The fields a value sets (typed.TypedValue.ToFieldSet).
---@param ctx SsaContext
---@param ref any  the value's type
---@param v any
---@return FieldSet
function M.to_set(ctx, ref, v)
  local _, s = contrib(ctx, ref, v)
  return s or new_set()
end

--- EnsureNamedFieldsAreMembers ---------------------------------------------

---The set with the struct fields above its members made members too
---(fieldpath.Set.EnsureNamedFieldsAreMembers): "a.b.c" also owns "a"
---when `a` is a struct field, not "a.b" when `a` is a map.
---@param ctx SsaContext
---@param ref any
---@param s FieldSet
---@return FieldSet
local function ensure_named(ctx, ref, s)
  local atom = ref and resolve(ctx, ref) or nil
  local out = new_set()
  for pe in pairs(s.m) do out.m[pe] = true end
  for pe, sub in pairs(s.c) do
    local cref
    if atom and pe:sub(1, 2) == "f:" then
      local name = pe:sub(3)
      if atom.f and atom.f[name] ~= nil then
        out.m[pe] = true
        cref = atom.f[name]
      else
        cref = atom.m
      end
    elseif atom and pe:sub(1, 2) == "k:" then
      cref = atom.l
    end
    out.c[pe] = ensure_named(ctx, cref, sub)
  end
  return out
end

--- Merge -----------------------------------------------------------------

local merge

-- Merge two lists item by item, in structured-merge-diff's order
-- (typed/merge.go visitListItems): live items keep their places, applied
-- ones come in where the applied order puts them.
-- The two lists of merge_list by their items' path elements: the applied
-- one's in order and by element (an item without a key, or two with one
-- key, is an error), the live one's in order with their items and by
-- element (the first item of an element).
local function index_lists(atom, lhs, rhs)
  local lpes, litems, lobs, rpes, robs = {}, {}, {}, {}, {}
  for i, item in ipairs(rhs or {}) do
    local pe = item_pe(atom, item)
    if pe == nil then return nil, "element " .. (i - 1) .. " has no key" end
    if robs[pe] ~= nil then
      return nil, "duplicate entries for key " .. fieldset.path_string({ pe })
    end
    rpes[#rpes + 1], robs[pe] = pe, item
  end
  for _, item in ipairs(lhs or {}) do
    local pe = item_pe(atom, item)
    if pe then
      local n = #lpes + 1
      lpes[n], litems[n] = pe, item
      if lobs[pe] == nil then lobs[pe] = item end
    end
  end
  return { lpes = lpes, litems = litems, lobs = lobs, rpes = rpes,
           robs = robs }
end

local function merge_list(ctx, atom, lhs, rhs)
  local ix, err = index_lists(atom, lhs, rhs)
  if not ix then return nil, err end
  local lpes, litems, lobs, rpes, robs = ix.lpes, ix.litems, ix.lobs,
    ix.rpes, ix.robs
  local shared, si = {}, 1
  for _, pe in ipairs(rpes) do
    if lobs[pe] ~= nil then shared[#shared + 1] = pe end
  end
  local next_shared = shared[si]
  local merged, out = {}, {}
  local li, ri, ln, rn = 1, 1, #lpes, #rpes
  local function add(l, r)
    local v = merge(ctx, atom.l, l, r)
    if v ~= nil then out[#out + 1] = v end
  end
  while li <= ln or ri <= rn do
    if li <= ln and ri <= rn then
      local pe = lpes[li]
      if pe == rpes[ri] then
        merged[pe] = true
        add(lobs[pe], robs[pe])
        li, ri = li + 1, ri + 1
        si = si + 1
        next_shared = shared[si]
        goto continue
      end
      if robs[pe] ~= nil and next_shared ~= nil and next_shared ~= pe then
        li = li + 1
        goto continue
      end
    end
    if li <= ln then
      local pe = lpes[li]
      if robs[pe] == nil then
        add(litems[li], nil)
        li = li + 1
        goto continue
      elseif merged[pe] then
        li = li + 1
      end
    end
    if ri <= rn then
      local pe = rpes[ri]
      merged[pe] = true
      add(lobs[pe], robs[pe])
      ri = ri + 1
      if next_shared ~= nil and next_shared == pe then
        si = si + 1
        next_shared = shared[si]
      end
    end
    ::continue::
  end
  if #out == 0 then return nil end
  if ctx.array_mt then setmetatable(out, ctx.array_mt) end
  return out
end

---Merge the applied value `rhs` into the live value `lhs`
---(typed.TypedValue.Merge with the applied side winning every leaf).
---Returns a new value sharing unchanged subtrees with its arguments.
---@param ctx SsaContext
---@param ref any
---@param lhs any
---@param rhs any
---@return any merged, string|nil err
function merge(ctx, ref, lhs, rhs)
  if rhs == nil then return lhs end
  if lhs == nil then return rhs end
  local atom = resolve(ctx, ref)
  local ls, rs = shape(ctx, lhs), shape(ctx, rhs)
  local lk, rk = kind_of(atom, ls), kind_of(atom, rs)
  if lk ~= rk or rk == "scalar" then return rhs end
  if rk == "list" then
    local lempty = ls == nil or #lhs == 0
    local rempty = rs == nil or #rhs == 0
    if not (atom.lk or atom.ls) or (lempty and rempty) then return rhs end
    list_atom(ctx, atom)
    return merge_list(ctx, atom, ls == "list" and lhs or nil,
                      rs == "list" and rhs or nil)
  end
  local lm, rm = ls == "map" and lhs or nil, rs == "map" and rhs or nil
  if atom.ma or ((lm == nil or next(lm) == nil)
                 and (rm == nil or next(rm) == nil)) then
    return rhs
  end
  local out = {}
  for k, lv in pairs(lm or {}) do
    local rv = rm and rm[k]
    if rv == nil then
      out[k] = lv
    elseif type(rv) ~= "table" then
      out[k] = rv                    -- an applied scalar (or null) wins
    else
      local v, err = merge(ctx, (field_type(atom, k)), lv, rv)
      if err then return nil, err end
      out[k] = v
    end
  end
  for k, rv in pairs(rm or {}) do
    if out[k] == nil and (lm == nil or lm[k] == nil) then out[k] = rv end
  end
  return out
end
M.merge = merge

--- Compare ---------------------------------------------------------------

local compare

local function leaf(path, lhs, rhs, cmp)
  if lhs == nil then
    fieldset.insert(cmp.added, path)
  elseif rhs == nil then
    fieldset.insert(cmp.removed, path)
  elseif not tables.equal(lhs, rhs) then
    fieldset.insert(cmp.modified, path)
  end
end

-- What compare finds below a value that only the right side has: every
-- path under it is added (relative to it: a set, nil when none). Built
-- directly instead of inserting each path from the root.
local function added_below(ctx, ref, v)
  local atom = resolve(ctx, ref)
  local sh = shape(ctx, v)
  local k = kind_of(atom, sh)
  if k == "scalar" then return nil end
  local s
  if k == "list" then
    if sh ~= "list" or #v == 0 or not (atom.lk or atom.ls) then return nil end
    list_atom(ctx, atom)
    s = new_set()
    for _, item in ipairs(v) do
      local pe = item_pe(atom, item)
      if pe and not s.m[pe] then
        s.m[pe] = true
        s.c[pe] = added_below(ctx, atom.l, item)
      end
    end
    return next(s.m) ~= nil and s or nil
  end
  if sh ~= "map" or atom.ma or next(v) == nil then return nil end
  s = new_set()
  for key, cv in pairs(v) do
    local pe = FPE[key]
    s.m[pe] = true
    if type(cv) == "table" then
      s.c[pe] = added_below(ctx, (field_type(atom, key)), cv)
    end
  end
  return s
end

-- Add `sub` (a set relative to `path`) and `path` itself to `set`.
local function graft(set, path, sub)
  fieldset.insert(set, path)
  if sub == nil then return end
  for i = 1, #path do
    local pe = path[i]
    local c = set.c[pe]
    if not c then c = new_set(); set.c[pe] = c end
    set = c
  end
  for pe in pairs(sub.m) do set.m[pe] = true end
  for pe, c in pairs(sub.c) do
    set.c[pe] = set.c[pe] and union(set.c[pe], c) or c
  end
end

-- lhs/rhs nil means absent; a null value is present
local fast_equal = tables.fast_equal and tables.equal

-- compare below two lists (either may be nil) that are sets or keyed:
-- item by item, matched by their path elements.
local function compare_list(ctx, atom, ll, rl, path, cmp)
  local n = #path
  list_atom(ctx, atom)
  local order, lv, rv = {}, {}, {}
  for _, item in ipairs(ll or {}) do
    local pe = item_pe(atom, item)
    if pe and lv[pe] == nil then lv[pe] = item; order[#order + 1] = pe end
  end
  for _, item in ipairs(rl or {}) do
    local pe = item_pe(atom, item)
    if pe and rv[pe] == nil then
      rv[pe] = item
      if lv[pe] == nil then order[#order + 1] = pe end
    end
  end
  for _, pe in ipairs(order) do
    local l, r = lv[pe], rv[pe]
    if l ~= r then                 -- one value: nothing differs below
      path[n + 1] = pe
      compare(ctx, atom.l, l, r, path, cmp)
      path[n + 1] = nil
    end
  end
end

-- compare below two maps or structs (either may be nil), field by field.
local function compare_map(ctx, atom, lm, rm, path, cmp)
  local n = #path
  for key, v in pairs(lm or {}) do
    local r = rm and rm[key]
    if v ~= r then
      path[n + 1] = FPE[key]
      compare(ctx, (field_type(atom, key)), v, r, path, cmp)
    end
  end
  for key, v in pairs(rm or {}) do
    if lm == nil or lm[key] == nil then
      path[n + 1] = FPE[key]
      compare(ctx, (field_type(atom, key)), nil, v, path, cmp)
    end
  end
  path[n + 1] = nil
end

function compare(ctx, ref, lhs, rhs, path, cmp)
  if lhs == rhs then return end        -- one value (merges share subtrees)
  -- equal values differ nowhere (checked in C where it is cheaper than
  -- the walk)
  if fast_equal and type(lhs) == "table" and type(rhs) == "table"
      and fast_equal(lhs, rhs) then
    return
  end
  if lhs == nil then
    return graft(cmp.added, path, added_below(ctx, ref, rhs))
  end
  local atom = resolve(ctx, ref)
  local ls, rs = shape(ctx, lhs), shape(ctx, rhs)
  local k = kind_of(atom, rs or ls)
  if lhs ~= nil and rhs ~= nil and kind_of(atom, ls) ~= kind_of(atom, rs)
  then
    k = "scalar"
  end
  if k == "scalar" then return leaf(path, lhs, rhs, cmp) end
  if k == "list" then
    local ll, rl = ls == "list" and lhs or nil, rs == "list" and rhs or nil
    if not (atom.lk or atom.ls) or ((ll == nil or #ll == 0)
                                    and (rl == nil or #rl == 0)) then
      return leaf(path, lhs, rhs, cmp)
    end
    compare_list(ctx, atom, ll, rl, path, cmp)
  else
    local lm, rm = ls == "map" and lhs or nil, rs == "map" and rhs or nil
    if atom.ma or ((lm == nil or next(lm) == nil)
                   and (rm == nil or next(rm) == nil)) then
      return leaf(path, lhs, rhs, cmp)
    end
    compare_map(ctx, atom, lm, rm, path, cmp)
  end
  if lhs == nil then
    fieldset.insert(cmp.added, path)
  elseif rhs == nil then
    fieldset.insert(cmp.removed, path)
  end
end

---The fields added, modified and removed between two values
---(typed.TypedValue.Compare).
---@param ctx SsaContext
---@param ref any
---@param lhs any
---@param rhs any
---@return {added: FieldSet, modified: FieldSet, removed: FieldSet}
function M.compare(ctx, ref, lhs, rhs)
  local cmp = { added = new_set(), modified = new_set(), removed = new_set() }
  compare(ctx, ref, lhs, rhs, {}, cmp)
  return cmp
end

--- RemoveItems -----------------------------------------------------------

---The value without the members of `s` (typed.TypedValue.RemoveItems):
---a member goes with everything below it; a map or list left empty goes
---too. Returns nil when nothing is left.
---@param ctx SsaContext
---@param ref any
---@param v any
---@param s FieldSet
---@return any
local function remove(ctx, ref, v, s)
  local atom = resolve(ctx, ref)
  local sh = shape(ctx, v)
  local k = kind_of(atom, sh)
  if k == "scalar" then return v end
  if k == "list" then
    if sh ~= "list" or #v == 0 or not (atom.lk or atom.ls) then return nil end
    list_atom(ctx, atom)
    local out = {}
    for _, item in ipairs(v) do
      local pe = item_pe(atom, item)
      if not (pe and s.m[pe]) then
        local sub = pe and s.c[pe]
        if sub and not empty(sub) then item = remove(ctx, atom.l, item, sub) end
        if item ~= nil then out[#out + 1] = item end
      end
    end
    if #out == 0 then return nil end
    if ctx.array_mt then setmetatable(out, ctx.array_mt) end
    return out
  end
  if sh ~= "map" or next(v) == nil or atom.ma then return nil end
  local out = {}
  for key, cv in pairs(v) do
    local pe = FPE[key]
    if not s.m[pe] then
      local sub = s.c[pe]
      if sub and not empty(sub) then
        cv = remove(ctx, (field_type(atom, key)), cv, sub)
      end
      if cv ~= nil then out[key] = cv end
    end
  end
  if next(out) == nil then return nil end
  return out
end
M.remove = remove

---Drop, in place, the empty maps of `v` where its type has a map (not a
---struct, not a deduced or atomic type): a built-in kind's map fields
---are `omitempty` in its Go type, so the API server stores and serves
---none that is empty (a merge patch that removes a ConfigMap's last key
---leaves no `data`). `v` must be the caller's own copy.
---@param ctx SsaContext
---@param ref any
---@param v any
function M.drop_empty_maps(ctx, ref, v)
  local atom = resolve(ctx, ref)
  -- FieldsV1 is a struct holding raw JSON in Go: its {} leaves stay
  if atom == ctx.types["meta.v1.FieldsV1"] then return end
  local sh = shape(ctx, v)
  if sh == "list" and atom.l then
    for _, item in ipairs(v) do M.drop_empty_maps(ctx, atom.l, item) end
    return
  end
  if sh ~= "map" or atom.ma or atom == DEDUCED then return end
  for key, cv in pairs(v) do
    local t, known = field_type(atom, key)
    if known or atom.f == nil then
      local ct = resolve(ctx, t)
      if ct.m ~= nil and ct.f == nil and not ct.ma and ct ~= DEDUCED
          and is_empty_map(ctx, cv) then
        v[key] = nil
      elseif type(cv) == "table" then
        M.drop_empty_maps(ctx, ct, cv)
      end
    end
  end
end

--- The updater (merge/update.go) ------------------------------------------

---@class Managers  manager id -> {set: FieldSet, entry: table}

-- Other managers lose the fields this change modified or added, and
-- every manager the fields it removed. Returns the conflicts (manager id
-- -> set) and the comparison.
local function take_over(ctx, ref, old, new, managers, workflow)
  local cmp = M.compare(ctx, ref, old, new)
  local changed = union(cmp.modified, cmp.added)
  local conflicts = {}
  for id, m in pairs(managers) do
    if id ~= workflow then
      local c = intersection(m.set, changed)
      if not empty(c) then conflicts[id] = c end
    end
  end
  return conflicts, cmp
end

local function settle(managers, workflow, conflicts, removed)
  for id, c in pairs(conflicts) do
    managers[id].set = difference(managers[id].set, c)
  end
  if not empty(removed) then
    for id, m in pairs(managers) do
      if id ~= workflow then m.set = difference(m.set, removed) end
    end
  end
  for id, m in pairs(managers) do
    if empty(m.set) then managers[id] = nil end
  end
end

-- Can the prune remove nothing? When every member of `last` (struct
-- fields above members made members) is owned, and every list item or
-- map key above one is owned too (or the value is not there), no phase
-- of the prune below removes anything: the common case of re-applying
-- what was applied, checked without building the objects' field sets.
local function child_of(ctx, atom, sh, v, pe)
  if pe:sub(1, 2) == "f:" then
    if sh ~= "map" then return nil end
    local key = pe:sub(3)
    local cref, named = field_type(atom, key)
    return v[key], cref, named
  end
  if sh ~= "list" or not (atom.lk or atom.ls) then return nil end
  list_atom(ctx, atom)
  for _, item in ipairs(v) do
    if item_pe(atom, item) == pe then return item, atom.l, false end
  end
  return nil
end

local function prune_is_noop(ctx, ref, v, last, managed)
  local atom = resolve(ctx, ref)
  local sh = shape(ctx, v)
  if sh == nil or sh == "scalar" then return true end
  for pe in pairs(last.m) do
    if not (managed and managed.m[pe]) then
      local cv, _, named = child_of(ctx, atom, sh, v, pe)
      local sub = managed and managed.c[pe]
      if cv ~= nil and not (named and sub and not empty(sub)) then
        return false
      end
    end
  end
  for pe, sub in pairs(last.c) do
    local cv, cref, named = child_of(ctx, atom, sh, v, pe)
    if cv ~= nil then
      if not named and not last.m[pe] and not (managed and managed.m[pe])
      then
        return false
      end
      if not prune_is_noop(ctx, cref, cv, sub, managed and managed.c[pe]) then
        return false
      end
    end
  end
  return true
end

---Remove what `manager` applied last time and no longer applies, unless
---another manager (or its new configuration) owns it (Updater.prune,
---addBackOwnedItems, addBackDanglingItems).
local function prune(ctx, ref, merged, managers, last)
  if last == nil or empty(last) then return merged end
  local managed = new_set()
  for _, m in pairs(managers) do managed = union(managed, m.set) end
  if prune_is_noop(ctx, ref, merged, last, managed) then return merged end
  local last_e = ensure_named(ctx, ref, last)
  local pruned = remove(ctx, ref, merged, last_e)
  local merged_e = ensure_named(ctx, ref, M.to_set(ctx, ref, merged))
  local pruned_e = ensure_named(ctx, ref, M.to_set(ctx, ref, pruned))
  local managed_e = ensure_named(ctx, ref, managed)
  pruned = remove(ctx, ref, merged, difference(merged_e,
    union(pruned_e, managed_e)))
  pruned_e = ensure_named(ctx, ref, M.to_set(ctx, ref, pruned))
  return remove(ctx, ref, merged,
    intersection(difference(merged_e, pruned_e), last_e)) or {}
end

---Server-side apply of `config` over `live` by `manager`
---(Updater.Apply). `managers` (see ssa.managers) is updated in place.
---Returns the new value (and whether it differs from `live`), or nil and
---the conflicts when another manager owns a field this apply changes and
---`force` is not set.
---@param ctx SsaContext
---@param ref any
---@param live table|nil
---@param config table
---@param managers table
---@param manager string  the manager id (fieldset.manager_id)
---@param force boolean
---@param strip FieldSet  paths no manager keeps (stripmeta.go)
---@return table|nil new, table|nil conflicts, boolean changed
function M.apply(ctx, ref, live, config, managers, manager, force, strip)
  local merged, err = merge(ctx, ref, live, config)
  if err then error(err, 0) end
  local last = managers[manager] and managers[manager].set
  local set = M.to_set(ctx, ref, config)
  managers[manager] = managers[manager] or {}
  managers[manager].set = set
  merged = prune(ctx, ref, merged, managers, last)
  local conflicts, cmp = take_over(ctx, ref, live, merged, managers, manager)
  if not force and next(conflicts) then return nil, conflicts end
  settle(managers, manager, conflicts, cmp.removed)
  if managers[manager] then
    managers[manager].set = difference(managers[manager].set, strip)
    if empty(managers[manager].set) then managers[manager] = nil end
  end
  return merged, nil, not (empty(cmp.added) and empty(cmp.modified)
                           and empty(cmp.removed))
end

---An update (PUT or patch) from `live` to `new` by `manager`
---(Updater.Update): the changed fields become the manager's. Returns
---whether the manager took any field (its entry's time then changes).
---@param ctx SsaContext
---@param ref any
---@param live table|nil
---@param new table
---@param managers table
---@param manager string
---@param strip FieldSet
---@return boolean took
function M.update(ctx, ref, live, new, managers, manager, strip)
  local conflicts, cmp = take_over(ctx, ref, live, new, managers, manager)
  settle(managers, manager, conflicts, cmp.removed)
  local took = difference(union(cmp.modified, cmp.added), strip)
  local prev = managers[manager] and managers[manager].set or new_set()
  local set = difference(union(difference(prev, cmp.removed), took), strip)
  if empty(set) then
    managers[manager] = nil
  else
    managers[manager] = managers[manager] or {}
    managers[manager].set = set
  end
  return not empty(took)
end

return M
